// Reference decode attention over a KV cache on CUDA cores, flash-decoding style (implementation
// "simt_reference": every head size, MLA's latent cache included; far from the bandwidth of the
// tensor-core kernel in flash_attention_kernels.cu, kept as a second implementation and for MLA).
//
// Grid: (seqs * kv_heads * head_groups, splits). A block of 4 warps takes GT (query token, q head)
// pairs of one sequence that share one KV head, and one contiguous chunk of the context; each warp walks every 4th token of the chunk,
// each lane holding EPL = head_dim / 32 contiguous values of K and V. Scores are warp-reduced,
// softmax is online (running max and sum per head), warps merge through shared memory, and with
// splits > 1 a second kernel merges the per-split partial results (max, sum, accumulator).
#include <cuda_bf16.h>

#include "validate/kernels.h"

namespace specsim::validate {
namespace {

constexpr int kWarps = 4;

template <int EPL>
__device__ __forceinline__ void LoadRow(const __nv_bfloat16* p, float (&x)[EPL]) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(p);
#pragma unroll
  for (int e = 0; e < EPL / 2; ++e) {
    float2 f = __bfloat1622float2(h[e]);
    x[2 * e] = f.x;
    x[2 * e + 1] = f.y;
  }
}

template <int EPL, int GT>
__global__ void __launch_bounds__(kWarps * 32) AttentionKernel(AttentionArgs a, int groups, float scale) {
  // A block serves GT "virtual heads" of one sequence and KV head: the G q heads of the KV head times
  // the q_per_seq query tokens of the sequence (verify), so the KV chunk is read once for all of them.
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int hg = blockIdx.x % groups;
  const int kvh = (blockIdx.x / groups) % a.kv_heads;
  const int seq = blockIdx.x / groups / a.kv_heads;
  const int G = a.q_heads / a.kv_heads;
  const int V = G * a.q_per_seq;
  const int v0 = hg * GT;
  const int nh = min(GT, V - v0);
  const int64_t chunk = (a.context + gridDim.y - 1) / gridDim.y;
  const int64_t t0 = blockIdx.y * chunk, t1 = min(a.context, t0 + chunk);
  const int64_t vstride = a.v == a.k ? a.head_dim : a.v_head_dim;
  const int64_t qstride = a.q_row_stride ? a.q_row_stride : int64_t(a.q_heads) * a.head_dim;
  int vrow[GT], vhead[GT];
  int64_t limit[GT];  // causal: query token j of the sequence sees positions <= context - q + j
#pragma unroll
  for (int g = 0; g < GT; ++g) {
    const int vh = min(v0 + g, V - 1);
    vrow[g] = seq * a.q_per_seq + vh / G;
    vhead[g] = kvh * G + vh % G;
    limit[g] = a.context - a.q_per_seq + vh / G;
  }

  float q[GT][EPL];
#pragma unroll
  for (int g = 0; g < GT; ++g) {
    if (g < nh)
      LoadRow<EPL>(
          static_cast<const __nv_bfloat16*>(a.q) + vrow[g] * qstride + int64_t(vhead[g]) * a.head_dim + lane * EPL,
          q[g]);
    else
#pragma unroll
      for (int e = 0; e < EPL; ++e) q[g][e] = 0;
  }
  const __nv_bfloat16* kbase =
      static_cast<const __nv_bfloat16*>(a.k) + (int64_t(seq) * a.kv_heads + kvh) * a.context * a.head_dim;
  const __nv_bfloat16* vbase =
      static_cast<const __nv_bfloat16*>(a.v) + (int64_t(seq) * a.kv_heads + kvh) * a.context * vstride;

  float m[GT], l[GT], acc[GT][EPL];
#pragma unroll
  for (int g = 0; g < GT; ++g) {
    m[g] = -1e30f;
    l[g] = 0;
#pragma unroll
    for (int e = 0; e < EPL; ++e) acc[g][e] = 0;
  }
  const bool v_lane = lane * EPL < a.v_head_dim;
  for (int64_t t = t0 + warp; t < t1; t += kWarps) {
    float kx[EPL], vx[EPL];
    LoadRow<EPL>(kbase + t * a.head_dim + lane * EPL, kx);
    if (v_lane)
      LoadRow<EPL>(vbase + t * vstride + lane * EPL, vx);
    else
#pragma unroll
      for (int e = 0; e < EPL; ++e) vx[e] = 0;
#pragma unroll
    for (int g = 0; g < GT; ++g) {
      if (t > limit[g]) continue;  // uniform across the warp
      float s = 0;
#pragma unroll
      for (int e = 0; e < EPL; ++e) s += q[g][e] * kx[e];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
      s *= scale;
      float mn = fmaxf(m[g], s);
      float c = __expf(m[g] - mn), p = __expf(s - mn);
      l[g] = l[g] * c + p;
#pragma unroll
      for (int e = 0; e < EPL; ++e) acc[g][e] = acc[g][e] * c + p * vx[e];
      m[g] = mn;
    }
  }
  // Merge the warps: shared [warp][g] (m, l) and acc [warp][g][32*EPL].
  extern __shared__ float smem[];
  float* sm_ml = smem;                     // kWarps * GT * 2
  float* sm_acc = smem + kWarps * GT * 2;  // kWarps * GT * 32 * EPL
#pragma unroll
  for (int g = 0; g < GT; ++g) {
    if (lane == 0) {
      sm_ml[(warp * GT + g) * 2] = m[g];
      sm_ml[(warp * GT + g) * 2 + 1] = l[g];
    }
#pragma unroll
    for (int e = 0; e < EPL; ++e) sm_acc[(warp * GT + g) * 32 * EPL + lane * EPL + e] = acc[g][e];
  }
  __syncthreads();
  const int D = 32 * EPL;
  float* ws = static_cast<float*>(a.workspace);
  for (int idx = threadIdx.x; idx < nh * D; idx += blockDim.x) {
    const int g = idx / D, d = idx % D;
    if (d >= a.v_head_dim) continue;
    float mm = -1e30f;
    for (int w = 0; w < kWarps; ++w) mm = fmaxf(mm, sm_ml[(w * GT + g) * 2]);
    float ll = 0, aa = 0;
    for (int w = 0; w < kWarps; ++w) {
      float c = __expf(sm_ml[(w * GT + g) * 2] - mm);
      ll += sm_ml[(w * GT + g) * 2 + 1] * c;
      aa += sm_acc[(w * GT + g) * D + d] * c;
    }
    const int row = seq * a.q_per_seq + (v0 + g) / G;
    const int h = kvh * G + (v0 + g) % G;
    if (gridDim.y == 1) {
      __nv_bfloat16* out = static_cast<__nv_bfloat16*>(a.out);
      out[(int64_t(row) * a.q_heads + h) * a.v_head_dim + d] = __float2bfloat16(ll > 0 ? aa / ll : 0.f);
    } else {
      // Partial: [row][h][split] -> (m, l, acc[v_head_dim])
      float* p = ws + ((int64_t(row) * a.q_heads + h) * gridDim.y + blockIdx.y) * (2 + a.v_head_dim);
      if (d == 0) {
        p[0] = mm;
        p[1] = ll;
      }
      p[2 + d] = aa;
    }
  }
}

__global__ void CombineKernel(AttentionArgs a) {
  // One block per (row, head) and 128 values of v_head_dim (blockIdx.y); a thread per value.
  const int row = blockIdx.x / a.q_heads, h = blockIdx.x % a.q_heads;
  const float* ws =
      static_cast<const float*>(a.workspace) + (int64_t(row) * a.q_heads + h) * a.splits * (2 + a.v_head_dim);
  float mm = -1e30f;
  for (int s = 0; s < a.splits; ++s) mm = fmaxf(mm, ws[s * (2 + a.v_head_dim)]);
  for (int d = blockIdx.y * blockDim.x + threadIdx.x; d < min(a.v_head_dim, (blockIdx.y + 1) * blockDim.x);
       d += blockDim.x) {
    float ll = 0, aa = 0;
    for (int s = 0; s < a.splits; ++s) {
      const float* p = ws + s * (2 + a.v_head_dim);
      float c = __expf(p[0] - mm);
      ll += p[1] * c;
      aa += p[2 + d] * c;
    }
    static_cast<__nv_bfloat16*>(a.out)[(int64_t(row) * a.q_heads + h) * a.v_head_dim + d] =
        __float2bfloat16(ll > 0 ? aa / ll : 0.f);
  }
}

template <int EPL, int GT>
cudaError_t Launch(const AttentionArgs& a, cudaStream_t stream) {
  const int G = a.q_heads / a.kv_heads;
  const int groups = (G * a.q_per_seq + GT - 1) / GT;
  dim3 grid(a.seqs * a.kv_heads * groups, a.splits);
  size_t smem = sizeof(float) * kWarps * GT * (2 + 32 * EPL);
  if (smem > 48 * 1024) {
    cudaError_t e = cudaFuncSetAttribute(AttentionKernel<EPL, GT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
    if (e != cudaSuccess) return e;
  }
  float scale = 1.0f / sqrtf(static_cast<float>(a.head_dim));
  AttentionKernel<EPL, GT><<<grid, kWarps * 32, smem, stream>>>(a, groups, scale);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess || a.splits == 1 || !a.combine) return e;
  return LaunchAttentionCombine(a, stream);
}

}  // namespace

cudaError_t LaunchAttentionCombine(const AttentionArgs& a, cudaStream_t stream) {
  // head_dim 128: one block per (row, head), as before 2026-11-30; MLA's 512: four.
  const dim3 grid(a.seqs * a.q_per_seq * a.q_heads, (a.v_head_dim + 127) / 128);
  CombineKernel<<<grid, 128, 0, stream>>>(a);
  return cudaGetLastError();
}

int64_t AttentionWorkspaceBytes(int rows, int q_heads, int v_head_dim, int splits) {
  return static_cast<int64_t>(rows) * q_heads * splits * (2 + v_head_dim) * sizeof(float);
}

cudaError_t LaunchReferenceAttention(const AttentionArgs& a, cudaStream_t stream) {
  if (a.kv_heads < 1 || a.q_heads % a.kv_heads != 0 || a.splits < 1 || a.context < 1 || a.v_head_dim > a.head_dim)
    return cudaErrorInvalidValue;
  if (a.head_dim == 64) return Launch<2, 8>(a, stream);  // gpt-oss
  if (a.head_dim == 128) return Launch<4, 8>(a, stream);
  if (a.head_dim == 576) return Launch<18, 2>(a, stream);
  return cudaErrorInvalidValue;
}

}  // namespace specsim::validate
