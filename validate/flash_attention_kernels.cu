// Tensor-core flash attention over a KV cache for decode (q = 1) and verify (q > 1 query tokens per
// sequence, causal among them), head_dim 128, bf16 in and out, fp32 softmax and accumulation.
// The production design (FlashInfer's decode-with-tensor-cores and prefill kernels, FlashAttention
// 2's forward, flash-decoding's split-KV):
//
//   - GQA packing: the G = q_heads / kv_heads heads of one KV head times the q query tokens of a
//     sequence form G * q "virtual rows" that share one K/V stream; rows are cut into tiles of 16
//     (the mma.m16n8k16 tile). A block of 4 warps takes RTB row tiles (1, 2 or 4) of one
//     (sequence, KV head) and one split of the context; with RTB < 4 the warps of a row tile divide
//     each KV tile's tokens among them and merge at the end.
//   - K/V tiles of 64 tokens are staged in shared memory with cp.async, double buffered, 16-byte
//     chunks XOR-swizzled so that ldmatrix is conflict free.
//   - S = Q K^T and O += P V run on tensor cores (mma.sync bf16, fp32 accumulate); softmax is
//     online in base 2 (running max and sum per row), P goes from the accumulator layout straight
//     into the A operand of P V.
//   - Split-KV: with splits > 1 every block writes a partial (max, sum, unnormalised accumulator)
//     and LaunchAttentionCombine merges the splits (attention_kernels.cu).
//
// Causality: query token j of a sequence (0-based among its q) sees cache positions
// t <= context - q + j (the verify tokens are the last q entries of the cache).
#include <cuda_bf16.h>

#include <cstdint>

#include "validate/kernels.h"
#include "validate/mma_primitives.cuh"

namespace specsim::validate {
namespace {

using namespace mma;  // NOLINT: the shared tensor-core building blocks

constexpr int kHeadDim = 128;
constexpr int kTileTokens = 64;        // KV tokens per shared-memory tile
constexpr int kChunks = kHeadDim / 8;  // 16-byte chunks per K/V row
constexpr int kWarps = 4;
constexpr int kTileUint4 = kTileTokens * kChunks;  // one K (or V) tile, in 16-byte units
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// 16-byte chunk `c` of tile row `r`, XOR-swizzled over the 8 chunks that share banks.
__device__ __forceinline__ int Swizzle(int r, int c) { return r * kChunks + (c ^ (r & 7)); }

template <int RTB>
__global__ void __launch_bounds__(kWarps * 32) FlashMmaKernel(AttentionArgs a, int row_blocks, float scale_log2) {
  constexpr int kWarpsPerTile = kWarps / RTB;               // warps sharing one row tile
  constexpr int kWarpTokens = kTileTokens / kWarpsPerTile;  // tokens of each KV tile per warp
  constexpr int kNb = kWarpTokens / 8;                      // n8 blocks of S per warp
  extern __shared__ uint4 smem[];                           // [2 stages][K | V][kTileUint4]

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int gid = lane >> 2, tig = lane & 3;
  const int rb = blockIdx.x % row_blocks;
  const int kvh = (blockIdx.x / row_blocks) % a.kv_heads;
  const int seq = blockIdx.x / row_blocks / a.kv_heads;
  const int G = a.q_heads / a.kv_heads;
  const int V = G * a.q_per_seq;  // virtual rows of this (sequence, KV head)
  const int rt = warp % RTB, part = warp / RTB;
  const int row0 = (rb * RTB + rt) * 16;
  const int64_t qstride = a.q_row_stride ? a.q_row_stride : int64_t(a.q_heads) * kHeadDim;

  // Q fragments (A operand, 8 k-slices of 16 dims): rows gid and gid + 8 of the warp's tile.
  uint32_t qf[kHeadDim / 16][4];
  int64_t limit[2];  // last visible cache position of rows gid, gid + 8
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int vr = row0 + gid + 8 * h;
    const __nv_bfloat16* qp = nullptr;
    if (vr < V) {
      const int j = vr / G, head = kvh * G + vr % G;
      qp = static_cast<const __nv_bfloat16*>(a.q) + (int64_t(seq) * a.q_per_seq + j) * qstride +
           int64_t(head) * kHeadDim;
      limit[h] = a.context - a.q_per_seq + j;
    } else {
      limit[h] = a.context - 1;  // padding row: Q = 0, output discarded
    }
#pragma unroll
    for (int ks = 0; ks < kHeadDim / 16; ++ks) {
      const int c = ks * 16 + tig * 2;
      qf[ks][h] = qp ? *reinterpret_cast<const uint32_t*>(qp + c) : 0u;
      qf[ks][2 + h] = qp ? *reinterpret_cast<const uint32_t*>(qp + c + 8) : 0u;
    }
  }

  // This block's share of the context: whole tiles, the last split possibly short or empty.
  const int64_t per_split = ((a.context + gridDim.y - 1) / gridDim.y + kTileTokens - 1) / kTileTokens * kTileTokens;
  const int64_t t0 = int64_t(blockIdx.y) * per_split;
  const int64_t t1 = min(a.context, t0 + per_split);
  const int ntiles = t1 > t0 ? static_cast<int>((t1 - t0 + kTileTokens - 1) / kTileTokens) : 0;

  const __nv_bfloat16* kbase =
      static_cast<const __nv_bfloat16*>(a.k) + (int64_t(seq) * a.kv_heads + kvh) * a.context * kHeadDim;
  const __nv_bfloat16* vbase =
      static_cast<const __nv_bfloat16*>(a.v) + (int64_t(seq) * a.kv_heads + kvh) * a.context * kHeadDim;
  auto load_tile = [&](int stage, int64_t tt0) {
    uint4* ks = smem + stage * 2 * kTileUint4;
    uint4* vs = ks + kTileUint4;
    for (int i = threadIdx.x; i < kTileUint4; i += kWarps * 32) {
      const int r = i / kChunks, c = i % kChunks;
      const int64_t t = tt0 + r;
      const bool ok = t < t1;
      const int64_t off = (ok ? t : t0) * kHeadDim + c * 8;
      CpAsync16(&ks[Swizzle(r, c)], kbase + off, ok);
      CpAsync16(&vs[Swizzle(r, c)], vbase + off, ok);
    }
    CpAsyncCommit();
  };

  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  float o[kHeadDim / 8][4];
#pragma unroll
  for (int d = 0; d < kHeadDim / 8; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.f;

  if (ntiles > 0) load_tile(0, t0);
  for (int it = 0; it < ntiles; ++it) {
    PrefetchNextTileAndWait(it, ntiles, t0, kTileTokens, load_tile);
    const uint4* ks = smem + (it & 1) * 2 * kTileUint4;
    const uint4* vs = ks + kTileUint4;
    const int64_t tt0 = t0 + int64_t(it) * kTileTokens;

    // S = Q K^T over this warp's kWarpTokens tokens of the tile.
    float s[kNb][4];
#pragma unroll
    for (int nb = 0; nb < kNb; ++nb) {
      s[nb][0] = s[nb][1] = s[nb][2] = s[nb][3] = 0.f;
#pragma unroll
      for (int kp = 0; kp < kHeadDim / 32; ++kp) {
        uint32_t b[4];
        LdMatrixX4(&ks[Swizzle(part * kWarpTokens + nb * 8 + (lane & 7), kp * 4 + (lane >> 3))], b);
        Mma(s[nb], qf[2 * kp], b[0], b[1]);
        Mma(s[nb], qf[2 * kp + 1], b[2], b[3]);
      }
    }
    // Scale into base 2, mask tokens past the split and the causal limit, online softmax.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = -INFINITY;
#pragma unroll
      for (int nb = 0; nb < kNb; ++nb) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int64_t t = tt0 + part * kWarpTokens + nb * 8 + tig * 2 + e;
          float& x = s[nb][2 * h + e];
          x = (t < t1 && t <= limit[h]) ? x * scale_log2 : -INFINITY;
          mx = fmaxf(mx, x);
        }
      }
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      OnlineSoftmaxRow(o, h, m[h], l[h], mx, [&](float base) {
        float sum = 0.f;
#pragma unroll
        for (int nb = 0; nb < kNb; ++nb) {
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            float& x = s[nb][2 * h + e];
            x = exp2f(x - base);
            sum += x;
          }
        }
        return sum;
      });
    }
    // O += P V: P (accumulator layout of two n8 blocks) is the A operand of one k16 slice.
#pragma unroll
    for (int ksl = 0; ksl < kNb / 2; ++ksl) {
      const uint32_t p[4] = {PackBf16(s[2 * ksl][0], s[2 * ksl][1]), PackBf16(s[2 * ksl][2], s[2 * ksl][3]),
                             PackBf16(s[2 * ksl + 1][0], s[2 * ksl + 1][1]),
                             PackBf16(s[2 * ksl + 1][2], s[2 * ksl + 1][3])};
      const int r = part * kWarpTokens + ksl * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
#pragma unroll
      for (int dp = 0; dp < kHeadDim / 16; ++dp) {
        uint32_t b[4];
        LdMatrixX4Trans(&vs[Swizzle(r, 2 * dp + (lane >> 4))], b);
        Mma(o[2 * dp], p, b[0], b[1]);
        Mma(o[2 * dp + 1], p, b[2], b[3]);
      }
    }
    __syncthreads();  // the stage is refilled next iteration
  }

  // Row sums over the quad that shares each row.
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
  }
  // Merge the warps of each row tile through shared memory: per warp [16 rows][2 + kHeadDim] floats.
  constexpr int kRowFloats = 2 + kHeadDim;
  float* sm = reinterpret_cast<float*>(smem);
  float* mine = sm + warp * 16 * kRowFloats;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = gid + 8 * h;
    if (tig == 0) {
      mine[row * kRowFloats] = m[h];
      mine[row * kRowFloats + 1] = l[h];
    }
#pragma unroll
    for (int d = 0; d < kHeadDim / 8; ++d) {
      mine[row * kRowFloats + 2 + d * 8 + tig * 2] = o[d][2 * h];
      mine[row * kRowFloats + 2 + d * 8 + tig * 2 + 1] = o[d][2 * h + 1];
    }
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < RTB * 16 * kHeadDim; idx += kWarps * 32) {
    const int tile = idx / (16 * kHeadDim), row = (idx / kHeadDim) % 16, d = idx % kHeadDim;
    const int vr = (rb * RTB + tile) * 16 + row;
    if (vr >= V) continue;
    float mm = -INFINITY;
#pragma unroll
    for (int w = tile; w < kWarps; w += RTB) mm = fmaxf(mm, sm[(w * 16 + row) * kRowFloats]);
    const float base = mm == -INFINITY ? 0.f : mm;
    float ll = 0.f, aa = 0.f;
#pragma unroll
    for (int w = tile; w < kWarps; w += RTB) {
      const float* p = sm + (w * 16 + row) * kRowFloats;
      const float c = exp2f(p[0] - base);
      ll += p[1] * c;
      aa += p[2 + d] * c;
    }
    const int j = vr / G, head = kvh * G + vr % G;
    const int64_t out_row = int64_t(seq) * a.q_per_seq + j;
    if (gridDim.y == 1) {
      static_cast<__nv_bfloat16*>(a.out)[(out_row * a.q_heads + head) * kHeadDim + d] =
          __float2bfloat16(ll > 0.f ? aa / ll : 0.f);
    } else {
      // The combine kernel's partial format: [row][head][split] -> (max in natural-log units, sum, acc).
      float* p =
          static_cast<float*>(a.workspace) + ((out_row * a.q_heads + head) * gridDim.y + blockIdx.y) * (2 + kHeadDim);
      if (d == 0) {
        p[0] = mm == -INFINITY ? -1e30f : mm * kLn2;
        p[1] = ll;
      }
      p[2 + d] = aa;
    }
  }
}

template <int RTB>
cudaError_t LaunchRtb(const AttentionArgs& a, int row_blocks, cudaStream_t stream) {
  constexpr size_t kSmem = 2 * 2 * kTileUint4 * sizeof(uint4);  // 64 KiB: two stages of K and V
  static_assert(kWarps * 16 * (2 + kHeadDim) * sizeof(float) <= kSmem, "merge area fits the tiles");
  cudaError_t e =
      cudaFuncSetAttribute(FlashMmaKernel<RTB>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSmem));
  if (e != cudaSuccess) return e;
  const float scale_log2 = kLog2e / sqrtf(static_cast<float>(kHeadDim));
  dim3 grid(a.seqs * a.kv_heads * row_blocks, a.splits);
  FlashMmaKernel<RTB><<<grid, kWarps * 32, kSmem, stream>>>(a, row_blocks, scale_log2);
  return cudaGetLastError();
}

template <int RTB>
FlashMmaOccupancy OccupancyRtb() {
  constexpr size_t kSmem = 2 * 2 * kTileUint4 * sizeof(uint4);
  FlashMmaOccupancy o;
  o.row_tiles_per_block = RTB;
  cudaFuncAttributes attr{};
  if (cudaFuncSetAttribute(FlashMmaKernel<RTB>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSmem)) !=
          cudaSuccess ||
      cudaFuncGetAttributes(&attr, FlashMmaKernel<RTB>) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&o.resident_blocks_per_sm, FlashMmaKernel<RTB>, kWarps * 32,
                                                    kSmem) != cudaSuccess)
    return o;
  o.registers_per_thread = attr.numRegs;
  o.ok = true;
  return o;
}

}  // namespace

FlashMmaOccupancy FlashMmaOccupancyOf(int row_tiles_per_block) {
  return row_tiles_per_block == 1   ? OccupancyRtb<1>()
         : row_tiles_per_block == 2 ? OccupancyRtb<2>()
                                    : OccupancyRtb<4>();
}

int FlashMmaRowTilesPerBlock(int q_heads, int kv_heads, int q_per_seq) {
  const int row_tiles = (q_heads / kv_heads * q_per_seq + 15) / 16;
  return row_tiles <= 1 ? 1 : row_tiles == 2 ? 2 : 4;
}

int FlashMmaBlocks(const AttentionArgs& a) {
  const int rtb = FlashMmaRowTilesPerBlock(a.q_heads, a.kv_heads, a.q_per_seq);
  const int row_tiles = (a.q_heads / a.kv_heads * a.q_per_seq + 15) / 16;
  return a.seqs * a.kv_heads * ((row_tiles + rtb - 1) / rtb);
}

cudaError_t LaunchFlashMmaAttention(const AttentionArgs& a, cudaStream_t stream) {
  if (a.head_dim != kHeadDim || a.v_head_dim != kHeadDim || a.v == a.k || a.kv_heads < 1 ||
      a.q_heads % a.kv_heads != 0 || a.splits < 1 || a.context < a.q_per_seq || a.q_per_seq < 1)
    return cudaErrorInvalidValue;
  const int rtb = FlashMmaRowTilesPerBlock(a.q_heads, a.kv_heads, a.q_per_seq);
  const int row_tiles = (a.q_heads / a.kv_heads * a.q_per_seq + 15) / 16;
  const int row_blocks = (row_tiles + rtb - 1) / rtb;
  cudaError_t e = rtb == 1   ? LaunchRtb<1>(a, row_blocks, stream)
                  : rtb == 2 ? LaunchRtb<2>(a, row_blocks, stream)
                             : LaunchRtb<4>(a, row_blocks, stream);
  if (e != cudaSuccess || a.splits == 1 || !a.combine) return e;
  return LaunchAttentionCombine(a, stream);
}

}  // namespace specsim::validate
