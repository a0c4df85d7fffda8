// Tensor-core MLA attention over a latent KV cache for decode (q = 1) and verify (q > 1 query tokens
// per sequence, causal among them): DeepSeek-V2/V3's absorbed attention, where every head of a
// sequence reads one shared cache row per token of 576 values (512 latent + 64 rope) and V is the
// first 512 of them. bf16 in and out, fp32 softmax and accumulation. The design of FlashMLA's
// decode kernel, with mma.sync instead of Hopper's wgmma:
//
//   - Rows: the q_heads heads times the q query tokens of a sequence (kv_heads = 1) are G * q
//     "virtual rows" sharing the cache; a block of 4 warps takes one 16-row tile (one
//     mma.m16n8k16 row tile) of one sequence and one split of the context.
//   - K tiles of 32 tokens x 576 values (36 KiB) are staged in shared memory with cp.async, double
//     buffered, 16-byte chunks XOR-swizzled for ldmatrix; V is read from the same tile.
//   - S = Q K^T: each warp computes its 8 of the tile's 32 tokens for all 16 rows (Q stays in
//     shared memory: 36 k-slices of 16 would not fit in registers). The rows' running max is
//     shared through shared memory, so every warp rescales alike; P (bf16) goes to shared memory.
//   - O += P V: each warp owns 128 of the 512 output columns (64 fp32 accumulators per thread)
//     and multiplies all 32 tokens of P by its columns of V.
//   - Split-KV as flash_mma: with splits > 1 every block writes a partial (max, sum, unnormalised
//     accumulator) and LaunchAttentionCombine merges them (attention_kernels.cu).
//
// 93 KiB of shared memory per block: two resident blocks per SM on sm_90 (227 KiB), which the
// simulator's geometry for "flash_mla" states (sim/compute/attention_cost.cc). Measured on the H200
// (2026-11-30, DeepSeek-V3 at TP8: 16 heads, batch 32, 16K context): this instantiation streams the
// cache at 3.4 TB/s (main kernel) where one block of 8 warps over 64-token tiles (168 KiB, one
// resident block per SM) reached 2.6: two blocks per SM hide each other's tile latency.
//
// Causality: query token j of a sequence (0-based among its q) sees cache positions
// t <= context - q + j. Softmax scale 1 / sqrt(head_dim), as the reference kernels.
#include <cuda_bf16.h>

#include <cstdint>

#include "validate/kernels.h"
#include "validate/mma_primitives.cuh"

namespace specsim::validate {
namespace {

using namespace mma;  // NOLINT: the shared tensor-core building blocks

constexpr int kDqk = 576;              // latent + rope
constexpr int kDv = 512;               // latent: V
constexpr int kChunks = kDqk / 8;      // 16-byte chunks per cache row (72)
constexpr int kQUint4 = 16 * kChunks;  // the block's 16 query rows
constexpr int kPChunks = 8;            // P row: up to 64 bf16 (8 chunks, swizzled)
constexpr int kPUint4 = 16 * kPChunks;
// Shared memory of an instantiation: two K stages, Q, P, and per warp a row max and a row sum.
constexpr size_t SmemBytes(int tile_tokens, int warps) {
  return (2 * size_t(tile_tokens) * kChunks + kQUint4 + kPUint4) * sizeof(uint4) +
         2 * size_t(warps) * 16 * sizeof(float);
}
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// 16-byte chunk `c` of row `r` in rows of `chunks` chunks (a multiple of 8), XOR-swizzled over the
// 8 chunks that share banks (each row starts at bank 0: 72 x 16 B = 9 x 128 B).
__device__ __forceinline__ int Swz(int r, int c, int chunks) { return r * chunks + (c ^ (r & 7)); }

// kTileTokens tokens per K tile, kWarps warps: each warp computes S for 8 tokens (one n8 block)
// and O for kDv / kWarps columns.
template <int kTileTokens, int kWarps>
__global__ void __launch_bounds__(kWarps * 32) FlashMlaKernel(AttentionArgs a, int row_blocks, float scale_log2) {
  constexpr int kWarpTokens = kTileTokens / kWarps;  // S columns per warp: one n8 block
  constexpr int kWarpCols = kDv / kWarps;            // O columns per warp
  constexpr int kTileUint4 = kTileTokens * kChunks;  // one K tile in 16-byte units
  static_assert(kWarpTokens == 8 && kTileTokens <= 8 * kPChunks, "one n8 block of S per warp");
  extern __shared__ uint4 smem[];  // [2 K stages][Q rows][P rows][row max | row sum per warp]
  uint4* qs = smem + 2 * kTileUint4;
  uint4* ps = qs + kQUint4;
  float* smax = reinterpret_cast<float*>(ps + kPUint4);  // [warp][16 rows]
  float* ssum = smax + kWarps * 16;

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int gid = lane >> 2, tig = lane & 3;
  const int rb = blockIdx.x % row_blocks;
  const int seq = blockIdx.x / row_blocks;
  const int G = a.q_heads;  // kv_heads = 1
  const int V = G * a.q_per_seq;
  const int row0 = rb * 16;
  const int64_t qstride = a.q_row_stride ? a.q_row_stride : int64_t(a.q_heads) * kDqk;
  const __nv_bfloat16* qbase = static_cast<const __nv_bfloat16*>(a.q);

  int64_t limit[2];  // last visible cache position of rows gid, gid + 8
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int vr = row0 + gid + 8 * h;
    limit[h] = vr < V ? a.context - a.q_per_seq + vr / G : a.context - 1;
  }

  const int64_t per_split = ((a.context + gridDim.y - 1) / gridDim.y + kTileTokens - 1) / kTileTokens * kTileTokens;
  const int64_t t0 = int64_t(blockIdx.y) * per_split;
  const int64_t t1 = min(a.context, t0 + per_split);
  const int ntiles = t1 > t0 ? static_cast<int>((t1 - t0 + kTileTokens - 1) / kTileTokens) : 0;

  const __nv_bfloat16* kbase = static_cast<const __nv_bfloat16*>(a.k) + int64_t(seq) * a.context * kDqk;
  auto load_tile = [&](int stage, int64_t tt0) {
    uint4* ks = smem + stage * kTileUint4;
    for (int i = threadIdx.x; i < kTileUint4; i += kWarps * 32) {
      const int r = i / kChunks, c = i % kChunks;
      const int64_t t = tt0 + r;
      const bool ok = t < t1;
      CpAsync16(&ks[Swz(r, c, kChunks)], kbase + (ok ? t : t0) * kDqk + c * 8, ok);
    }
    CpAsyncCommit();
  };

  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  float o[kWarpCols / 8][4];
#pragma unroll
  for (int d = 0; d < kWarpCols / 8; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.f;

  if (ntiles > 0) {
    // The block's query rows (zero for padding rows), in the first tile's group.
    for (int i = threadIdx.x; i < kQUint4; i += kWarps * 32) {
      const int r = i / kChunks, c = i % kChunks;
      const int vr = row0 + r;
      const bool ok = vr < V;
      const int64_t off = ok ? (int64_t(seq) * a.q_per_seq + vr / G) * qstride + int64_t(vr % G) * kDqk + c * 8 : 0;
      CpAsync16(&qs[Swz(r, c, kChunks)], qbase + off, ok);
    }
    load_tile(0, t0);
  }
  for (int it = 0; it < ntiles; ++it) {
    PrefetchNextTileAndWait(it, ntiles, t0, kTileTokens, load_tile);
    const uint4* ks = smem + (it & 1) * kTileUint4;
    const int64_t tt0 = t0 + int64_t(it) * kTileTokens;

    // S = Q K^T for this warp's 8 tokens (one n8 block), two k-slices of 16 per step.
    float s[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll 3
    for (int kp = 0; kp < kDqk / 32; ++kp) {
      uint32_t qa0[4], qa1[4], kb[4];
      LdMatrixX4(&qs[Swz(lane & 15, 4 * kp + (lane >> 4), kChunks)], qa0);
      LdMatrixX4(&qs[Swz(lane & 15, 4 * kp + 2 + (lane >> 4), kChunks)], qa1);
      LdMatrixX4(&ks[Swz(warp * kWarpTokens + (lane & 7), 4 * kp + (lane >> 3), kChunks)], kb);
      Mma(s, qa0, kb[0], kb[1]);
      Mma(s, qa1, kb[2], kb[3]);
    }
    // Scale into base 2, mask, the tile's row max over all warps.
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int64_t t = tt0 + warp * kWarpTokens + tig * 2 + e;
        float& x = s[2 * h + e];
        x = (t < t1 && t <= limit[h]) ? x * scale_log2 : -INFINITY;
        mx[h] = fmaxf(mx[h], x);
      }
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
      if (tig == 0) smax[warp * 16 + gid + 8 * h] = mx[h];
    }
    __syncthreads();
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float tmax = -INFINITY;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) tmax = fmaxf(tmax, smax[w * 16 + gid + 8 * h]);
      OnlineSoftmaxRow(o, h, m[h], l[h], tmax, [&](float base) {
        float sum = 0.f;
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& x = s[2 * h + e];
          x = exp2f(x - base);
          sum += x;
        }
        return sum;
      });
      // P row gid + 8h, this warp's 8 tokens: chunk `warp`, bf16 pair tig of it.
      reinterpret_cast<uint32_t*>(&ps[Swz(gid + 8 * h, warp, kPChunks)])[tig] = PackBf16(s[2 * h], s[2 * h + 1]);
    }
    __syncthreads();
    // O[:, warp's 64 columns] += P (16 x 64) V (64 x 64), V = the tile's first 512 values.
#pragma unroll
    for (int ksl = 0; ksl < kTileTokens / 16; ++ksl) {
      uint32_t pa[4];
      LdMatrixX4(&ps[Swz(lane & 15, 2 * ksl + (lane >> 4), kPChunks)], pa);
      const int r = ksl * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
#pragma unroll
      for (int dl = 0; dl < kWarpCols / 16; ++dl) {
        uint32_t b[4];
        LdMatrixX4Trans(&ks[Swz(r, 2 * (warp * (kWarpCols / 16) + dl) + (lane >> 4), kChunks)], b);
        Mma(o[2 * dl], pa, b[0], b[1]);
        Mma(o[2 * dl + 1], pa, b[2], b[3]);
      }
    }
    __syncthreads();  // the stage, P and the row maxima are rewritten next tile
  }

  // Row sums: the quad's, then every warp's (each summed its own tokens).
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
    if (tig == 0) ssum[warp * 16 + gid + 8 * h] = l[h];
  }
  __syncthreads();
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int vr = row0 + gid + 8 * h;
    if (vr >= V) continue;
    float total = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) total += ssum[w * 16 + gid + 8 * h];
    const int head = vr % G;
    const int64_t out_row = int64_t(seq) * a.q_per_seq + vr / G;
    if (gridDim.y == 1) {
      __nv_bfloat16* out = static_cast<__nv_bfloat16*>(a.out) + (out_row * a.q_heads + head) * kDv + warp * kWarpCols;
      const float inv = total > 0.f ? 1.f / total : 0.f;
#pragma unroll
      for (int d = 0; d < kWarpCols / 8; ++d)
        *reinterpret_cast<__nv_bfloat162*>(out + d * 8 + tig * 2) =
            __floats2bfloat162_rn(o[d][2 * h] * inv, o[d][2 * h + 1] * inv);
    } else {
      // The combine kernel's partial format: [row][head][split] -> (max in natural-log units, sum, acc).
      float* p = static_cast<float*>(a.workspace) + ((out_row * a.q_heads + head) * gridDim.y + blockIdx.y) * (2 + kDv);
      if (warp == 0 && tig == 0) {
        p[0] = m[h] == -INFINITY ? -1e30f : m[h] * kLn2;
        p[1] = total;
      }
#pragma unroll
      for (int d = 0; d < kWarpCols / 8; ++d) {
        p[2 + warp * kWarpCols + d * 8 + tig * 2] = o[d][2 * h];
        p[2 + warp * kWarpCols + d * 8 + tig * 2 + 1] = o[d][2 * h + 1];
      }
    }
  }
}

// The instantiation the launcher runs.
constexpr int kLaunchTileTokens = 32, kLaunchWarps = 4;

}  // namespace

FlashMmaOccupancy FlashMlaOccupancyOf() {
  FlashMmaOccupancy o;
  o.row_tiles_per_block = 1;
  constexpr size_t smem = SmemBytes(kLaunchTileTokens, kLaunchWarps);
  auto* kernel = FlashMlaKernel<kLaunchTileTokens, kLaunchWarps>;
  cudaFuncAttributes attr{};
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)) !=
          cudaSuccess ||
      cudaFuncGetAttributes(&attr, kernel) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&o.resident_blocks_per_sm, kernel, kLaunchWarps * 32, smem) !=
          cudaSuccess)
    return o;
  o.registers_per_thread = attr.numRegs;
  o.ok = true;
  return o;
}

int FlashMlaBlocks(const AttentionArgs& a) { return a.seqs * ((a.q_heads * a.q_per_seq + 15) / 16); }

cudaError_t LaunchFlashMlaAttention(const AttentionArgs& a, cudaStream_t stream) {
  if (a.head_dim != kDqk || a.v_head_dim != kDv || a.v != a.k || a.kv_heads != 1 || a.q_heads < 1 || a.splits < 1 ||
      a.context < a.q_per_seq || a.q_per_seq < 1 || (a.q_row_stride != 0 && a.q_row_stride % 8 != 0))
    return cudaErrorInvalidValue;
  const int row_blocks = (a.q_heads * a.q_per_seq + 15) / 16;
  const float scale_log2 = kLog2e / sqrtf(static_cast<float>(kDqk));
  dim3 grid(a.seqs * row_blocks, a.splits);
  cudaError_t e = cudaSuccess;
  auto launch = [&](auto kernel, int warps, size_t smem) {
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (e == cudaSuccess) {
      kernel<<<grid, warps * 32, smem, stream>>>(a, row_blocks, scale_log2);
      e = cudaGetLastError();
    }
  };
  launch(FlashMlaKernel<kLaunchTileTokens, kLaunchWarps>, kLaunchWarps, SmemBytes(kLaunchTileTokens, kLaunchWarps));
  if (e != cudaSuccess || a.splits == 1 || !a.combine) return e;
  return LaunchAttentionCombine(a, stream);
}

}  // namespace specsim::validate
