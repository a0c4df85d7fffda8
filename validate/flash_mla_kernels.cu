// Tensor-core MLA attention over a latent KV cache for decode (q = 1) and verify (q > 1 query tokens
// per sequence, causal among them): DeepSeek-V2/V3's absorbed attention, where every head of a
// sequence reads one shared cache row per token of 576 values (512 latent + 64 rope) and V is the
// first 512 of them. bf16 in and out, fp32 softmax and accumulation. The design of FlashMLA's
// decode kernel, with mma.sync instead of Hopper's wgmma:
//
//   - Rows: the q_heads heads times the q query tokens of a sequence (kv_heads = 1) are G * q
//     "virtual rows" sharing the cache; a block of 4 warps takes one 16-row tile (one
//     mma.m16n8k16 row tile) of one sequence and one split of the context.
//   - Splits interleave: split y walks the 32-token tiles y, y + splits, y + 2 splits, ..., so the
//     blocks of a sequence stream one window of consecutive tiles at a time.
//   - K tiles of 32 tokens x 576 values (36 KiB) go through shared memory with cp.async, double
//     buffered (kStages = 3 measured no faster), 16-byte chunks XOR-swizzled for ldmatrix; V is
//     read from the same tile.
//   - Q stays in registers: every warp holds the 16 rows' 36 k-slices as mma A fragments (144
//     registers), loaded once through the last stage's buffer, so a tile costs shared-memory
//     reads of K and V only (re-reading Q from shared memory per tile, as the 2026-11-30 kernel
//     did, cost twice the shared-memory traffic of K itself).
//   - S = Q K^T: each warp computes its 8 of the tile's 32 tokens for all 16 rows (two
//     accumulator chains). The rows' running max is shared through shared memory, so every warp
//     rescales alike; P (bf16) goes to shared memory. Three barriers per tile.
//   - O += P V: each warp owns 128 of the 512 output columns (64 fp32 accumulators per thread)
//     and multiplies all 32 tokens of P by its columns of V.
//   - Split-KV: with splits > 1 every block writes a partial (unnormalised accumulator; max, sum)
//     and FlashMlaCombineKernel merges them: one block of 8 warps per (query row, head), every
//     warp a share of the splits with their loads in flight at once, launched as a programmatic
//     dependent launch (scheduled while the main kernel drains; griddepcontrol.wait orders it).
//
// Two 36 KiB stages and P in 74 KiB of shared memory, 4 x 32 threads of 255 registers (no
// spills): two resident blocks per SM on sm_90 (the 64 K registers), which the simulator's
// geometry for "flash_mla" states (sim/compute/attention_cost.cc).
//
// Measured on the H200 (traces/h200-1x-mla-tp8-2026-12-01, q = 1, 16K context, cache bytes / call
// time with the merge; main kernel alone in brackets; 4.8 TB/s peak): Kimi-K2 TP8 (8 heads) batch
// 32 4.13 TB/s (4.22), batch 8 3.23 (3.49); DeepSeek-V3 TP8 (16 heads) batch 32 4.06 (4.17), batch
// 8 3.06 (3.33); the 2026-11-30 kernel (Q re-read from shared memory, generic merge) 3.37, 2.39,
// 3.23, 2.23. A plain streaming read of batch 8's 151 MB runs at 4.0 TB/s there; batch 8 loses the
// rest to the merge (3-4 us) and to a fixed cost of the main kernel: its time depends on the tiles
// per block, not on the batch (16 tiles: Kimi-K2 b8 16K and b32 4K both 43.5 us; 64 tiles, b32 16K:
// 143 us), i.e. 4.55 TB/s per added byte plus about 10 us per round of blocks, where the plain read
// has about 4. On long contexts that fixed cost fades (traces/h200-1x-mla-tp8-2026-12-01b, batch 8):
// 32 K 3.84 / 3.72 TB/s (80% / 77.5%, Kimi-K2 / DeepSeek-V3), 64 K 4.20 / 4.12 (87.5% / 86%).
//
// Variants measured 2026-12-01 on the H200 and not kept (kernels suite TP8, this kernel run beside
// each on the same machine, time ratios; traces/logs/h200-1x-mla-variants-2026-12-01b): thread-block
// clusters over consecutive splits merging their partials through distributed shared memory
// (policy: multiples of 8 splits; cudaOccupancyMaxActiveClusters let only clusters of 2 run 256
// blocks at once, so b8 / b32 got clusters of 2, b1 of 8; FlashMlaAttentionMatchesCpuReference
// passed): x1.07 (q = 1) and x1.05 (q > 1), the main kernel 2.3-4.5 us slower at every size (b1
// 16K: 4.5 us, a cluster of 8 packed onto fewer SMs); split partials in bf16 normalised by their
// own sum (half the bytes written and merged): main kernel -0.9..+0.3 us at b8 16K, x1.01-1.03
// overall, with the merge as 4 blocks of 128 values per (row, head) or as the 8-warp merge below.
// Balanced splits (traces/logs/h200-1x-mla-long-2026-12-01): whole rounds interleaved as here, then
// the last, partial round shared out as one partial tile per split (rows past it zero-filled), so
// that no split walks a whole tile more than another: x1.01-1.03 slower at batch 8 16-64 K, x0.998
// geomean over all 74 items; the splits' one-tile imbalance is not what the fixed cost is.
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
constexpr int kKSlices = kDqk / 16;    // mma k-slices of a row (36)
constexpr int kQUint4 = 16 * kChunks;  // the block's 16 query rows
constexpr int kPChunks = 8;            // P row: up to 64 bf16 (8 chunks, swizzled)
constexpr int kPUint4 = 16 * kPChunks;
constexpr int kTileTokens = 32, kWarps = 4;
constexpr int kTileUint4 = kTileTokens * kChunks;  // one K tile in 16-byte units
// Shared memory of an instantiation: kStages K stages, P, and per warp a row max and a row sum.
constexpr size_t SmemBytes(int stages) {
  return (size_t(stages) * kTileUint4 + kPUint4) * sizeof(uint4) + 2 * size_t(kWarps) * 16 * sizeof(float);
}
static_assert(kQUint4 <= kTileUint4 && kTileUint4 % (kWarps * 32) == 0 && kQUint4 % (kWarps * 32) == 0,
              "Q is staged through one K stage; whole copy rounds per thread");
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// 16-byte chunk `c` of row `r` in rows of `chunks` chunks (a multiple of 8), XOR-swizzled over the
// 8 chunks that share banks (each row starts at bank 0: 72 x 16 B = 9 x 128 B).
__device__ __forceinline__ int Swz(int r, int c, int chunks) { return r * chunks + (c ^ (r & 7)); }

// Programmatic dependent launch (sm_90): let the next kernel in the stream be scheduled now / wait
// until the previous kernel has finished and its writes are visible. No-ops without the launch
// attribute.
__device__ __forceinline__ void LaunchDependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::);
#endif
}
__device__ __forceinline__ void WaitForPrerequisite() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// The split partials in the workspace (AttentionWorkspaceBytes(rows, q_heads, 512, splits)): for
// pair = row * q_heads + head, acc[pair][split][512] (16-byte aligned rows), then
// ml[pair][split] = (max in natural-log units, sum).
__device__ __forceinline__ float* PartialAcc(void* ws, int64_t pair, int splits, int split) {
  return static_cast<float*>(ws) + (pair * splits + split) * kDv;
}
__device__ __forceinline__ float2* PartialMl(void* ws, int64_t pairs, int64_t pair, int splits, int split) {
  return reinterpret_cast<float2*>(static_cast<float*>(ws) + pairs * splits * kDv) + pair * splits + split;
}

template <int kStages>
__global__ void __launch_bounds__(kWarps * 32, 2) FlashMlaKernel(AttentionArgs a, int row_blocks, float scale_log2) {
  constexpr int kWarpTokens = kTileTokens / kWarps;  // S columns per warp: one n8 block
  constexpr int kWarpCols = kDv / kWarps;            // O columns per warp
  static_assert(kWarpTokens == 8 && kTileTokens <= 8 * kPChunks, "one n8 block of S per warp");
  static_assert(kStages >= 2, "at least double buffering");
  extern __shared__ uint4 smem[];  // [kStages K stages][P rows][row max | row sum per warp]
  uint4* ps = smem + kStages * kTileUint4;
  float* smax = reinterpret_cast<float*>(ps + kPUint4);  // [warp][16 rows]
  float* ssum = smax + kWarps * 16;

  // The merge kernel (launched with programmatic serialization) may be scheduled from now on; it
  // waits for this grid's completion before it reads the partials.
  LaunchDependents();

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int gid = lane >> 2, tig = lane & 3;
  const int rb = blockIdx.x % row_blocks;
  const int seq = blockIdx.x / row_blocks;
  const int G = a.q_heads;  // kv_heads = 1
  const int V = G * a.q_per_seq;
  const int row0 = rb * 16;
  const int64_t qstride = a.q_row_stride ? a.q_row_stride : int64_t(a.q_heads) * kDqk;
  const __nv_bfloat16* qbase = static_cast<const __nv_bfloat16*>(a.q);

  const int context = static_cast<int>(a.context);  // positions in int (the launcher checks the range)
  int limit[2];                                     // last visible cache position of rows gid, gid + 8
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int vr = row0 + gid + 8 * h;
    limit[h] = vr < V ? context - a.q_per_seq + vr / G : context - 1;
  }

  // Split y of the context walks tiles y, y + splits, y + 2 splits, ... (interleaved: at any time
  // the blocks of a sequence read one window of consecutive tiles; ceil(tiles / splits) at most).
  const int total_tiles = (context + kTileTokens - 1) / kTileTokens;
  const int t0 = blockIdx.y * kTileTokens;  // first token of the block's first tile
  const int t1 = context;
  const int ntiles = total_tiles > int(blockIdx.y) ? (total_tiles - 1 - int(blockIdx.y)) / int(gridDim.y) + 1 : 0;
  const int tile_step = gridDim.y * kTileTokens;

  const __nv_bfloat16* kbase = static_cast<const __nv_bfloat16*>(a.k) + int64_t(seq) * a.context * kDqk;
  // A tile: warp w copies rows 8w..8w+7, each lane chunks lane, lane + 32 and (lanes 0-7) lane + 64
  // of every row: per row 512 + 512 + 128 contiguous bytes per warp instruction.
  auto load_tile = [&](int stage, int tt0) {
    uint4* ks = smem + stage * kTileUint4;
#pragma unroll
    for (int rr = 0; rr < kTileTokens / kWarps; ++rr) {
      const int r = warp * (kTileTokens / kWarps) + rr;
      const int t = tt0 + r;
      const bool ok = t < t1;
      const __nv_bfloat16* src = kbase + int64_t(ok ? t : tt0) * kDqk;  // tt0 < t1 always
#pragma unroll
      for (int cc = 0; cc < 3; ++cc) {
        const int c = lane + 32 * cc;
        if (c < kChunks) CpAsync16(&ks[r * kChunks + (c ^ rr)], src + c * 8, ok);  // r & 7 = rr
      }
    }
  };

  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  float o[kWarpCols / 8][4];
#pragma unroll
  for (int d = 0; d < kWarpCols / 8; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.f;

  if (ntiles > 0) {  // uniform over the block
    // Prologue: the block's query rows (zero for padding rows) into the last stage, the first
    // kStages - 1 tiles into the others; one commit group each.
    uint4* qs = smem + (kStages - 1) * kTileUint4;
#pragma unroll
    for (int j = 0; j < kQUint4 / (kWarps * 32); ++j) {
      const int i = threadIdx.x + j * kWarps * 32;
      const int r = i / kChunks, c = i % kChunks;
      const int vr = row0 + r;
      const bool ok = vr < V;
      const int64_t off = ok ? (int64_t(seq) * a.q_per_seq + vr / G) * qstride + int64_t(vr % G) * kDqk + c * 8 : 0;
      CpAsync16(&qs[Swz(r, c, kChunks)], qbase + off, ok);
    }
    CpAsyncCommit();
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < ntiles) load_tile(s, t0 + s * tile_step);
      CpAsyncCommit();
    }
    CpAsyncWait<kStages - 1>();  // Q's group
    __syncthreads();
  }
  // Q as A fragments of the 36 k-slices: rows lane & 15, 8 values at chunk 2 kk + lane / 16.
  uint32_t qf[kKSlices][4];
  if (ntiles > 0) {
    const uint4* qs = smem + (kStages - 1) * kTileUint4;
#pragma unroll
    for (int kk = 0; kk < kKSlices; ++kk) LdMatrixX4(&qs[Swz(lane & 15, 2 * kk + (lane >> 4), kChunks)], qf[kk]);
  }

  int stage = 0;  // it % kStages
  for (int it = 0; it < ntiles; ++it) {
    // Tile it has landed (kStages - 2 younger groups may still fly); the barrier also retires
    // every warp's reads of tile it - 1 (and at it = 0 of Q), whose stage is refilled now.
    CpAsyncWait<kStages - 2>();
    __syncthreads();
    {
      const int next = it + kStages - 1;
      const int ls = stage == 0 ? kStages - 1 : stage - 1;
      if (next < ntiles) load_tile(ls, t0 + next * tile_step);
      CpAsyncCommit();  // possibly empty: keeps the group count per iteration fixed
    }
    const uint4* ks = smem + stage * kTileUint4;
    const int tt0 = t0 + it * tile_step;
    // S = Q K^T for this warp's 8 tokens (one n8 block): even and odd k-slices in two chains.
    float s2[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
    for (int kp = 0; kp < kKSlices / 2; ++kp) {
      uint32_t kb[4];
      LdMatrixX4(&ks[Swz(warp * kWarpTokens + (lane & 7), 4 * kp + (lane >> 3), kChunks)], kb);
      Mma(s2[0], qf[2 * kp], kb[0], kb[1]);
      Mma(s2[1], qf[2 * kp + 1], kb[2], kb[3]);
    }
    float s[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) s[e] = s2[0][e] + s2[1][e];
    // Scale into base 2, mask, the tile's row max over all warps.
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int t = tt0 + warp * kWarpTokens + tig * 2 + e;
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
    // O[:, warp's 128 columns] += P (16 x 32) V (32 x 128), V = the tile's first 512 values.
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
    stage = stage + 1 == kStages ? 0 : stage + 1;
    // No barrier here: the next iteration's first one orders the stage, P and row-max reuse.
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
    const int64_t pair = out_row * a.q_heads + head;
    if (gridDim.y == 1) {
      __nv_bfloat16* out = static_cast<__nv_bfloat16*>(a.out) + pair * kDv + warp * kWarpCols;
      const float inv = total > 0.f ? 1.f / total : 0.f;
#pragma unroll
      for (int d = 0; d < kWarpCols / 8; ++d)
        *reinterpret_cast<__nv_bfloat162*>(out + d * 8 + tig * 2) =
            __floats2bfloat162_rn(o[d][2 * h] * inv, o[d][2 * h + 1] * inv);
    } else {
      const int splits = gridDim.y;
      float* acc = PartialAcc(a.workspace, pair, splits, blockIdx.y) + warp * kWarpCols;
#pragma unroll
      for (int d = 0; d < kWarpCols / 8; ++d)
        *reinterpret_cast<float2*>(acc + d * 8 + tig * 2) = make_float2(o[d][2 * h], o[d][2 * h + 1]);
      if (warp == 0 && tig == 0) {
        const int64_t pairs = int64_t(a.seqs) * a.q_per_seq * a.q_heads;
        *PartialMl(a.workspace, pairs, pair, splits, blockIdx.y) =
            make_float2(m[h] == -INFINITY ? -1e30f : m[h] * kLn2, total);
      }
    }
  }
}

// The split merge: one block of kCombineWarps warps per (query row, head); warp w takes splits w,
// w + kCombineWarps, ..., kBatch of them (all 512 values: each lane 4 float4 columns) at a time,
// its first batch's loads issued before the splits' weights are known. Every warp finds the
// splits' common max and total sum from the (max, sum) pairs itself, warp 0 puts each split's
// weight exp(max_s - max) in shared memory, and the warps' sums meet in shared memory: one round
// trip to L2 for up to kCombineWarps * kBatch splits.
constexpr int kCombineWarps = 8;
template <int kBatch>
__global__ void __launch_bounds__(kCombineWarps * 32) FlashMlaCombineKernel(AttentionArgs a) {
  WaitForPrerequisite();  // the main kernel's partials (programmatic dependent launch)
  __shared__ float4 red[kCombineWarps][kDv / 4];
  extern __shared__ float weight[];  // [splits]
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t pair = blockIdx.x;
  const int64_t pairs = gridDim.x;
  const int S = a.splits;
  const float2* ml = PartialMl(a.workspace, pairs, pair, S, 0);
  const float4* acc = reinterpret_cast<const float4*>(PartialAcc(a.workspace, pair, S, 0));
  float4 v[kBatch][4];
  auto load_batch = [&](int s0) {
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int s = s0 + b * kCombineWarps;
#pragma unroll
      for (int j = 0; j < 4; ++j)
        v[b][j] = s < S ? __ldcg(acc + int64_t(s) * (kDv / 4) + j * 32 + lane) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
  };
  load_batch(warp);

  float mx = -1e30f;
#pragma unroll 4
  for (int s = lane; s < S; s += 32) mx = fmaxf(mx, ml[s].x);
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
  float total = 0.f;
#pragma unroll 4
  for (int s = lane; s < S; s += 32) {
    const float2 p = ml[s];
    const float w = __expf(p.x - mx);
    total += p.y * w;
    if (warp == 0) weight[s] = w;
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) total += __shfl_xor_sync(0xffffffffu, total, off);
  __syncthreads();

  float4 r[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) r[j] = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int s0 = warp; s0 < S; s0 += kBatch * kCombineWarps) {
    if (s0 != warp) load_batch(s0);
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int s = s0 + b * kCombineWarps;
      const float w = s < S ? weight[s] : 0.f;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        r[j].x += w * v[b][j].x;
        r[j].y += w * v[b][j].y;
        r[j].z += w * v[b][j].z;
        r[j].w += w * v[b][j].w;
      }
    }
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) red[warp][j * 32 + lane] = r[j];
  __syncthreads();
  if (threadIdx.x < kDv / 4) {
    float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int w = 0; w < kCombineWarps; ++w) {
      const float4 x = red[w][threadIdx.x];
      sum.x += x.x;
      sum.y += x.y;
      sum.z += x.z;
      sum.w += x.w;
    }
    const float inv = total > 0.f ? 1.f / total : 0.f;
    __nv_bfloat162 lo = __floats2bfloat162_rn(sum.x * inv, sum.y * inv);
    __nv_bfloat162 hi = __floats2bfloat162_rn(sum.z * inv, sum.w * inv);
    uint2 packed;
    packed.x = *reinterpret_cast<uint32_t*>(&lo);
    packed.y = *reinterpret_cast<uint32_t*>(&hi);
    *reinterpret_cast<uint2*>(static_cast<__nv_bfloat16*>(a.out) + pair * kDv + 4 * threadIdx.x) = packed;
  }
}

// The merge's launch: one block per (query row, head), kBatch = splits per warp rounded up to a
// power of two (at most 8), a programmatic dependent launch of the main kernel.
cudaError_t LaunchFlashMlaCombine(const AttentionArgs& a, cudaStream_t stream) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(int64_t(a.seqs) * a.q_per_seq * a.q_heads));
  cfg.blockDim = dim3(kCombineWarps * 32);
  cfg.dynamicSmemBytes = size_t(a.splits) * sizeof(float);
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  const int per_warp = (a.splits + kCombineWarps - 1) / kCombineWarps;
  if (per_warp <= 1) return cudaLaunchKernelEx(&cfg, FlashMlaCombineKernel<1>, a);
  if (per_warp <= 2) return cudaLaunchKernelEx(&cfg, FlashMlaCombineKernel<2>, a);
  if (per_warp <= 4) return cudaLaunchKernelEx(&cfg, FlashMlaCombineKernel<4>, a);
  return cudaLaunchKernelEx(&cfg, FlashMlaCombineKernel<8>, a);
}

// The instantiation the launcher runs: two stages (measured on the H200 as fast as three, which
// only fit beside a second block with all of shared memory).
constexpr int kLaunchStages = 2;

}  // namespace

FlashMmaOccupancy FlashMlaOccupancyOf() {
  FlashMmaOccupancy o;
  o.row_tiles_per_block = 1;
  constexpr size_t smem = SmemBytes(kLaunchStages);
  auto* kernel = FlashMlaKernel<kLaunchStages>;
  cudaFuncAttributes attr{};
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)) !=
          cudaSuccess ||
      cudaFuncGetAttributes(&attr, kernel) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&o.resident_blocks_per_sm, kernel, kWarps * 32, smem) !=
          cudaSuccess)
    return o;
  o.registers_per_thread = attr.numRegs;
  o.ok = true;
  return o;
}

int FlashMlaBlocks(const AttentionArgs& a) { return a.seqs * ((a.q_heads * a.q_per_seq + 15) / 16); }

cudaError_t LaunchFlashMlaAttention(const AttentionArgs& a, cudaStream_t stream) {
  if (a.head_dim != kDqk || a.v_head_dim != kDv || a.v != a.k || a.kv_heads != 1 || a.q_heads < 1 || a.splits < 1 ||
      a.context < a.q_per_seq || a.context > (int64_t(1) << 30) || a.q_per_seq < 1 ||
      (a.q_row_stride != 0 && a.q_row_stride % 8 != 0))
    return cudaErrorInvalidValue;
  const int row_blocks = (a.q_heads * a.q_per_seq + 15) / 16;
  const float scale_log2 = kLog2e / sqrtf(static_cast<float>(kDqk));
  dim3 grid(a.seqs * row_blocks, a.splits);
  constexpr size_t smem = SmemBytes(kLaunchStages);
  auto* kernel = FlashMlaKernel<kLaunchStages>;
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (e != cudaSuccess) return e;
  kernel<<<grid, kWarps * 32, smem, stream>>>(a, row_blocks, scale_log2);
  e = cudaGetLastError();
  if (e != cudaSuccess || a.splits == 1 || !a.combine) return e;
  return LaunchFlashMlaCombine(a, stream);
}

}  // namespace specsim::validate
