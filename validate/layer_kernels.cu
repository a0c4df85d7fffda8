// Pieces of a transformer layer for the synthetic decode loop: RMSNorm (optionally fused with the
// residual add, or over strided rows), SiLU-and-multiply, vocab-parallel embedding, KV append
// (GQA and MLA latent rows), argmax, and the MoE router top-k, dispatch and combine.
#include <cuda_bf16.h>

#include "validate/kernels.h"

namespace specsim::validate {
namespace {

// One block per token; each thread handles 8 consecutive values per step (16-byte accesses).
__global__ void RmsNormKernel(const __nv_bfloat16* x, __nv_bfloat16* residual, const __nv_bfloat16* w,
                              __nv_bfloat16* out, int hidden, float eps, int64_t in_stride, int64_t out_stride) {
  const int64_t base = int64_t(blockIdx.x) * in_stride;
  const int64_t obase = int64_t(blockIdx.x) * out_stride;
  const int vecs = hidden / 8;
  float ss = 0;
  for (int v = threadIdx.x; v < vecs; v += blockDim.x) {
    uint4 xv = reinterpret_cast<const uint4*>(x + base)[v];
    __nv_bfloat162* xh = reinterpret_cast<__nv_bfloat162*>(&xv);
    if (residual) {
      uint4 rv = reinterpret_cast<const uint4*>(residual + base)[v];
      const __nv_bfloat162* rh = reinterpret_cast<const __nv_bfloat162*>(&rv);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        float2 a = __bfloat1622float2(xh[i]), b = __bfloat1622float2(rh[i]);
        xh[i] = __floats2bfloat162_rn(a.x + b.x, a.y + b.y);
      }
      reinterpret_cast<uint4*>(residual + base)[v] = xv;
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float2 a = __bfloat1622float2(xh[i]);
      ss += a.x * a.x + a.y * a.y;
    }
  }
  __shared__ float red[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = ss;
  __syncthreads();
  if (threadIdx.x < 32) {
    float s = threadIdx.x < (blockDim.x + 31) / 32 ? red[threadIdx.x] : 0.f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (threadIdx.x == 0) red[0] = s;
  }
  __syncthreads();
  const float inv = rsqrtf(red[0] / hidden + eps);
  const __nv_bfloat16* src = residual ? residual : x;
  for (int v = threadIdx.x; v < vecs; v += blockDim.x) {
    uint4 xv = reinterpret_cast<const uint4*>(src + base)[v];
    uint4 wv = reinterpret_cast<const uint4*>(w)[v];
    __nv_bfloat162* xh = reinterpret_cast<__nv_bfloat162*>(&xv);
    const __nv_bfloat162* wh = reinterpret_cast<const __nv_bfloat162*>(&wv);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float2 a = __bfloat1622float2(xh[i]), b = __bfloat1622float2(wh[i]);
      xh[i] = __floats2bfloat162_rn(a.x * inv * b.x, a.y * inv * b.y);
    }
    reinterpret_cast<uint4*>(out + obase)[v] = xv;
  }
}

__global__ void SiluMulKernel(const __nv_bfloat16* gu, __nv_bfloat16* out, int64_t tokens, int inter) {
  const int64_t n = tokens * inter;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i / inter, j = i % inter;
    float g = __bfloat162float(gu[t * 2 * inter + j]);
    float u = __bfloat162float(gu[t * 2 * inter + inter + j]);
    out[i] = __float2bfloat16(g / (1.f + __expf(-g)) * u);
  }
}

__global__ void EmbeddingKernel(const int* ids, const __nv_bfloat16* table, __nv_bfloat16* out, int hidden,
                                int64_t vocab_start, int64_t vocab_local) {
  const int64_t id = ids[blockIdx.x] - vocab_start;
  const bool mine = id >= 0 && id < vocab_local;
  uint4* o = reinterpret_cast<uint4*>(out + int64_t(blockIdx.x) * hidden);
  const uint4* src = mine ? reinterpret_cast<const uint4*>(table + id * hidden) : nullptr;
  for (int v = threadIdx.x; v < hidden / 8; v += blockDim.x) o[v] = mine ? src[v] : make_uint4(0, 0, 0, 0);
}

__global__ void KvAppendKernel(const __nv_bfloat16* qkv, __nv_bfloat16* kc, __nv_bfloat16* vc, int q_per_seq,
                               int q_heads, int kv_heads, int head_dim, int64_t context, int64_t pos) {
  const int row = blockIdx.x, seq = row / q_per_seq;
  const int64_t t = (pos + row % q_per_seq) % context;
  const int width = (q_heads + 2 * kv_heads) * head_dim;
  const __nv_bfloat16* k = qkv + int64_t(row) * width + q_heads * head_dim;
  const __nv_bfloat16* v = k + kv_heads * head_dim;
  for (int i = threadIdx.x; i < kv_heads * head_dim; i += blockDim.x) {
    const int h = i / head_dim, d = i % head_dim;
    const int64_t dst = ((int64_t(seq) * kv_heads + h) * context + t) * head_dim + d;
    kc[dst] = k[i];
    vc[dst] = v[i];
  }
}

// Reduces every thread's (best, idx) to the block's largest value, the lowest index among equal
// ones; the result is valid on thread 0. sv, si: shared scratch of one entry per warp.
__device__ __forceinline__ void BlockArgmax(float& best, int& idx, float* sv, int* si) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    float ov = __shfl_xor_sync(0xffffffffu, best, o);
    int oi = __shfl_xor_sync(0xffffffffu, idx, o);
    if (ov > best || (ov == best && oi < idx)) {
      best = ov;
      idx = oi;
    }
  }
  if ((threadIdx.x & 31) == 0) {
    sv[threadIdx.x >> 5] = best;
    si[threadIdx.x >> 5] = idx;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < blockDim.x / 32; ++w)
      if (sv[w] > best || (sv[w] == best && si[w] < idx)) {
        best = sv[w];
        idx = si[w];
      }
  }
}

__global__ void ArgmaxKernel(const __nv_bfloat16* logits, int* ids, int64_t vocab) {
  const __nv_bfloat16* row = logits + int64_t(blockIdx.x) * vocab;
  float best = -3.0e38f;
  int idx = 0;
  for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) {
    float v = __bfloat162float(row[j]);
    if (v > best) {
      best = v;
      idx = static_cast<int>(j);
    }
  }
  __shared__ float sv[32];
  __shared__ int si[32];
  BlockArgmax(best, idx, sv, si);
  if (threadIdx.x == 0) ids[blockIdx.x] = idx;
}

__global__ void RowsToCacheKernel(const __nv_bfloat16* src, int64_t src_stride, int width, __nv_bfloat16* cache,
                                  int q_per_seq, int64_t context, int64_t pos) {
  const int row = blockIdx.x, seq = row / q_per_seq;
  const int64_t t = (pos + row % q_per_seq) % context;
  const __nv_bfloat16* s = src + int64_t(row) * src_stride;
  __nv_bfloat16* d = cache + (int64_t(seq) * context + t) * width;
  for (int i = threadIdx.x; i < width; i += blockDim.x) d[i] = s[i];
}

// One block per token: k rounds of a block argmax over the token's expert logits (in shared
// memory), then a softmax over the k picked logits.
__global__ void TopKKernel(const __nv_bfloat16* logits, int experts, int k, int* ids, float* weights) {
  extern __shared__ float vals[];  // experts
  __shared__ float bv[32];
  __shared__ int bi[32];
  __shared__ float picked[64];
  const __nv_bfloat16* row = logits + int64_t(blockIdx.x) * experts;
  for (int e = threadIdx.x; e < experts; e += blockDim.x) vals[e] = __bfloat162float(row[e]);
  __syncthreads();
  for (int r = 0; r < k; ++r) {
    float best = -3.0e38f;
    int idx = 0x7fffffff;
    for (int e = threadIdx.x; e < experts; e += blockDim.x)
      if (vals[e] > best || (vals[e] == best && e < idx)) {
        best = vals[e];
        idx = e;
      }
    BlockArgmax(best, idx, bv, bi);
    if (threadIdx.x == 0) {
      ids[int64_t(blockIdx.x) * k + r] = idx;
      picked[r] = best;
      vals[idx] = -3.0e38f;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    float mx = picked[0], sum = 0;
    for (int r = 0; r < k; ++r) sum += __expf(picked[r] - mx);
    for (int r = 0; r < k; ++r) weights[int64_t(blockIdx.x) * k + r] = __expf(picked[r] - mx) / sum;
  }
}

__global__ void MoeGatherKernel(const __nv_bfloat16* in, __nv_bfloat16* out, int64_t tokens, int k, int hidden) {
  const int64_t slot = blockIdx.x;
  const int64_t t = slot < tokens * k ? slot / k : slot % tokens;
  const uint4* s = reinterpret_cast<const uint4*>(in + t * hidden);
  uint4* d = reinterpret_cast<uint4*>(out + slot * hidden);
  for (int v = threadIdx.x; v < hidden / 8; v += blockDim.x) d[v] = s[v];
}

__global__ void MoeCombineKernel(const __nv_bfloat16* eout, const float* w, const __nv_bfloat16* shared,
                                 __nv_bfloat16* out, int k, int hidden) {
  const int64_t t = blockIdx.x;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
    float acc = shared ? __bfloat162float(shared[t * hidden + i]) : 0.f;
    for (int j = 0; j < k; ++j) acc += w[t * k + j] * __bfloat162float(eout[(t * k + j) * hidden + i]);
    out[t * hidden + i] = __float2bfloat16(acc);
  }
}

int Grid(int64_t n) {
  int64_t g = (n + 255) / 256;
  return static_cast<int>(g < 1 ? 1 : (g > 8192 ? 8192 : g));
}

}  // namespace

cudaError_t LaunchRmsNorm(const void* x, void* residual, const void* weight, void* out, int64_t tokens, int hidden,
                          float eps, cudaStream_t stream) {
  if (hidden % 8 != 0 || tokens < 1) return cudaErrorInvalidValue;
  int threads = hidden / 8 >= 1024 ? 1024 : ((hidden / 8 + 31) / 32) * 32;
  RmsNormKernel<<<static_cast<unsigned>(tokens), threads, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(x), static_cast<__nv_bfloat16*>(residual),
      static_cast<const __nv_bfloat16*>(weight), static_cast<__nv_bfloat16*>(out), hidden, eps, hidden, hidden);
  return cudaGetLastError();
}

cudaError_t LaunchRmsNormRows(const void* x, int64_t x_stride, const void* weight, void* out, int64_t out_stride,
                              int64_t tokens, int hidden, float eps, cudaStream_t stream) {
  if (hidden % 8 != 0 || x_stride % 8 != 0 || out_stride % 8 != 0 || tokens < 1) return cudaErrorInvalidValue;
  int threads = hidden / 8 >= 1024 ? 1024 : ((hidden / 8 + 31) / 32) * 32;
  RmsNormKernel<<<static_cast<unsigned>(tokens), threads, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(x), nullptr, static_cast<const __nv_bfloat16*>(weight),
      static_cast<__nv_bfloat16*>(out), hidden, eps, x_stride, out_stride);
  return cudaGetLastError();
}

cudaError_t LaunchRowsToCache(const void* src, int64_t src_stride, int width, void* cache, int seqs, int q_per_seq,
                              int64_t context, int64_t pos, cudaStream_t stream) {
  RowsToCacheKernel<<<seqs * q_per_seq, 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(src), src_stride, width,
                                                          static_cast<__nv_bfloat16*>(cache), q_per_seq, context, pos);
  return cudaGetLastError();
}

cudaError_t LaunchTopK(const void* logits, int64_t tokens, int experts, int k, int* ids, float* weights,
                       cudaStream_t stream) {
  if (k < 1 || k > 64 || k > experts || tokens < 1) return cudaErrorInvalidValue;
  const size_t smem = sizeof(float) * experts;
  if (smem > 48 * 1024) return cudaErrorInvalidValue;
  TopKKernel<<<static_cast<unsigned>(tokens), 256, smem, stream>>>(static_cast<const __nv_bfloat16*>(logits), experts,
                                                                   k, ids, weights);
  return cudaGetLastError();
}

cudaError_t LaunchMoeGather(const void* in, void* out, int64_t tokens, int k, int64_t slots, int hidden,
                            cudaStream_t stream) {
  if (hidden % 8 != 0 || slots < 1 || tokens < 1) return cudaErrorInvalidValue;
  MoeGatherKernel<<<static_cast<unsigned>(slots), 256, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(in), static_cast<__nv_bfloat16*>(out), tokens, k, hidden);
  return cudaGetLastError();
}

cudaError_t LaunchMoeCombine(const void* expert_out, const float* weights, const void* shared, void* out,
                             int64_t tokens, int k, int hidden, cudaStream_t stream) {
  MoeCombineKernel<<<static_cast<unsigned>(tokens), 256, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(expert_out), weights, static_cast<const __nv_bfloat16*>(shared),
      static_cast<__nv_bfloat16*>(out), k, hidden);
  return cudaGetLastError();
}

cudaError_t LaunchSiluMul(const void* gu, void* out, int64_t tokens, int inter, cudaStream_t stream) {
  SiluMulKernel<<<Grid(tokens * inter), 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(gu),
                                                          static_cast<__nv_bfloat16*>(out), tokens, inter);
  return cudaGetLastError();
}

cudaError_t LaunchEmbedding(const int* ids, const void* table, void* out, int64_t tokens, int hidden,
                            int64_t vocab_start, int64_t vocab_local, cudaStream_t stream) {
  if (hidden % 8 != 0) return cudaErrorInvalidValue;
  EmbeddingKernel<<<static_cast<unsigned>(tokens), 256, 0, stream>>>(ids, static_cast<const __nv_bfloat16*>(table),
                                                                     static_cast<__nv_bfloat16*>(out), hidden,
                                                                     vocab_start, vocab_local);
  return cudaGetLastError();
}

cudaError_t LaunchKvAppend(const void* qkv, void* k_cache, void* v_cache, int seqs, int q_per_seq, int q_heads,
                           int kv_heads, int head_dim, int64_t context, int64_t pos, cudaStream_t stream) {
  KvAppendKernel<<<seqs * q_per_seq, 256, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(qkv), static_cast<__nv_bfloat16*>(k_cache),
      static_cast<__nv_bfloat16*>(v_cache), q_per_seq, q_heads, kv_heads, head_dim, context, pos);
  return cudaGetLastError();
}

cudaError_t LaunchArgmax(const void* logits, int* ids, int rows, int64_t vocab, cudaStream_t stream) {
  ArgmaxKernel<<<rows, 512, 0, stream>>>(static_cast<const __nv_bfloat16*>(logits), ids, vocab);
  return cudaGetLastError();
}

}  // namespace specsim::validate
