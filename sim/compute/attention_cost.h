// Cost model of one attention implementation over a KV cache (decode: q = 1 query token per
// sequence; verify: q > 1), from how the kernel is launched and what each part of it costs.
//
// A flash-decoding kernel packs the G = q_heads / kv_heads heads of a KV head times the q query
// tokens of a sequence into G * q "rows" that share one K/V stream, pads them to its row tile (16
// for mma.sync tensor cores), gives each block up to `max_rows_per_block` of them and one split of
// the context, and walks that split in tiles of `kv_tile_tokens` tokens; with more than one split
// a second kernel merges the partials, one block per (query row, head). Geometry
// (AttentionGeometry):
//
//   rows_padded     = ceil(G q / row_tile) * row_tile   (per_head_blocks: G = 1 and the query
//                     heads take the KV heads' place in `blocks`)
//   rows_per_block  = min(max_rows_per_block, smallest row_tile * 2^i >= rows_padded)
//   row_blocks      = ceil(rows_padded / rows_per_block)
//   splits          = the item's, else by the split policy:
//                     occupancy: clamp(ceil(split_blocks_per_sm * SMs / (seqs kv_heads row_blocks)),
//                       1, context / min_split_tokens)   (floor instead of ceil: splits_round_down)
//                     sglang_triton (SGLang's Triton backend, SplitPolicy below): its planner's count,
//                       then only the splits that hold tokens: ceil(context / per_split)
//                     flash_infer: ceil(context / FlashInferKvChunkTokens), its rows per block
//                       FlashInferCtaTileQ's (SplitPolicy below)
//   blocks          = seqs * kv_heads * row_blocks * splits
//   resident        = blocks_per_sm (or its entry in blocks_per_sm_by_rows for rows_per_block)
//   sm_blocks       = ceil(blocks / SMs)               (the busiest SM's blocks)
//   rounds          = ceil(sm_blocks / resident)        (of them, `resident` at a time)
//   T               = kv_tile_tokens (or its entry in kv_tile_tokens_by_rows for rows_per_block)
//   kv_tiles        = ceil(ceil(context / splits) rounded up to T / T)
//   valid_rows      = min(rows_per_block, G q)         (rows of a block that hold a query)
//   combine_waves   = ceil(seqs q q_heads combine_value_blocks / (combine_blocks_per_sm * SMs))
//                     (with splits > 1, or always where merge_always: SGLang's stage 2 runs for one split too)
//
// Time (AttentionTime):
//
//   blocks  = max( rounds * (block_ns + block_row_latency_ns * valid_rows),
//                  sm_blocks * block_row_ns * valid_rows )
//   tiles   = max( sm_blocks * kv_tiles * (tile_ns + row_ns * rows_per_block),
//                  rounds * kv_tiles * (tile_latency_ns + row_latency_ns * rows_per_block) )
//             * T / kv_tile_tokens                     (the tile costs are per kv_tile_tokens tokens)
//   main    = ramp + blocks + max( KV_bytes / (bw * e_m),  tiles )
//   combine = [splits > 1] combine_ns + combine_waves * (combine_block_ns + combine_split_ns *
//             ceil(splits / combine_splits_per_step))
//   t       = main + combine
//
// The busiest SM decides. Its blocks pay, outside the cache stream, per round of resident blocks
// the latency of one block's prologue and epilogue (first tile's load, final barrier, and per query
// row: loading its queries, merging the warps' partials, writing the output) or, when it is more,
// the per-query-row work of all its blocks. The
// max streams the cache (bandwidth-bound: long contexts, few rows) or walks the tiles: either the
// SM's throughput over all its blocks' tiles (a fixed part and a part per row of the block, padding
// included: the tensor-core work of S = Q K^T and O = P V) or, when the resident blocks cannot
// fill the SM, the latency of one block's tile chain per round. The merge pass runs its own waves
// of blocks, each walking the splits. The q = 1 -> q > 1 step of production stacks (a decode kernel
// for q = 1, a prefill kernel for verify) is two implementations, one per regime
// (AttentionRegimes), each with its own geometry and fitted costs.
//
// Simplified: blocks of a wave take as long as the busiest; the row blocks of a (sequence, KV
// head) re-read the cache from L2 (DRAM bytes are the cache once); the merge pass does not overlap
// the main kernel; memory stream and tile path do not add (max).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/status.h"

namespace specsim::compute {

// How a launch picks its KV splits when the call does not give them.
//   kOccupancy: the formula above (split_blocks_per_sm, min_split_tokens, max_splits).
//   kSglangTriton: SGLang's Triton backend (docs/reference/triton-attention-geometry.md:
//     sgl-project/sglang python/sglang/srt/layers/attention/triton_backend.py @0085842
//     get_num_kv_splits, _mla_decode_kv_splits_cap -> python/sglang/kernels/ops/attention/metadata.py
//     @1a366c6 get_num_kv_splits_triton; one length for every sequence):
//       cap    = max_splits (--triton-attention-num-kv-splits, 8), for MLA max(8, next_pow2(SMs))
//                [the cap is also bounded by next_pow2(ceil(model context / 32)): taken as larger,
//                true of every MLA model bundled (128k-164k tokens)]
//       grid   = seqs * q_heads for MLA (its planner reads the config's KV heads, as many as the
//                query heads), else seqs * kv_heads * row_blocks
//       s2     = min(ceil(floor(SMs * max(log2(context / 64), 1)) / grid), cap)
//       splits = ceil(context / ceil(context / s2)), each ceil(context / splits) rounded up to
//                min_split_tokens (32, MIN_BLOCK_KV) tokens; the blocks that work: ceil(context / that)
//   kFixed: always max_splits splits of ceil(context / max_splits) tokens (vLLM's TRITON_MLA decode:
//     num_kv_splits = 4, vllm/v1/attention/backends/mla/triton_mla.py @0155494 forward_mqa).
//   kFlashAttention2: FlashAttention-2's num_splits_heuristic (docs/reference/fa2-geometry.md;
//     pytorch/pytorch aten/src/ATen/native/transformers/cuda/flash_attn/flash_api.cpp
//     set_params_splitkv; checked against the 420 launches' grids of
//     traces/torch-kernel-probe/h200-1x-2026-12-04f.flash): FlashAttention2Splits below, with
//     blocks = seqs * heads * ceil(rows / 64), slots = split_blocks_per_sm (2) * SMs, n = the
//     context's kv_tile_tokens blocks, cap max_splits (128); a split walks ceil(n / splits) blocks.
//   kFlashInfer: FlashInfer's prefill planner, which SGLang's FlashInfer backend runs for verify and
//     (GQA group >= 4) decode (docs/reference/flashinfer-attention-geometry.md; flashinfer-ai/
//     flashinfer include/flashinfer/attention/scheduler.cuh @fb28d724 PrefillSplitQOKVIndptr,
//     PrefillBinarySearchKVChunkSize; utils.cuh FA2DetermineCtaTileQ): a block (CTA) takes
//     FlashInferCtaTileQ rows of one KV head's packed G q rows (16, 64 or 128, from the call's
//     rows, or under CUDA graphs, planned_for_graph, from the ragged worst case (seqs (q - 1) + 1) G)
//     and one chunk of the context, FlashInferKvChunkTokens long (at least min_split_tokens, 128;
//     the work items at most floor(split_blocks_per_sm (2) * SMs / kv_heads)); the KV tile
//     follows the Q tile (kv_tile_tokens_by_rows); the merge runs when the plan splits, and always
//     under graphs. Blocks of a graph's fixed grid beyond the work items exit at once: not counted.
//   kFlashAttention3: FlashAttention-3 on Hopper (SM90) as vLLM's fork and SGLang's sgl-attn build
//     it (vllm-project/flash-attention hopper/ @2adfc8c2: tile_size.h, heuristics.h, flash_api.cpp
//     get_num_splits / get_pack_gqa / get_pagedkv_tma, flash_prepare_scheduler.cu; sgl-attn's
//     rules the same but for the one-MMA-warpgroup tile): the KV group's heads packed into the rows
//     (PackGQA: both frameworks' paged caches, 1- and 16-token pages, load K/V without TMA), a block
//     of kBlockM = row_tile rows where the G q rows fit in it (vLLM's fork: 64, one MMA warpgroup)
//     else max_rows_per_block (128), KV tiles of kv_tile_tokens (128: paged, causal); a static
//     split count S = max_splits when the caller passes one (vLLM under full CUDA graphs: 32), else
//     FlashAttention3StaticSplits over the KV heads' row blocks (varlen: as if batch 1) and the
//     context's KV tiles (planned_for_graph: the graph's page table spans the model's context,
//     taken as unbounded); then the per-batch split of its prepare kernel,
//     FlashAttention3DynamicSplits; only the splits that hold KV tiles count. One resident block
//     per SM, the persistent scheduler walking the (sequence, KV head, row block, split) tiles; the
//     combine kernel runs whenever S > 1 (its blocks for an unsplit batch exit at once).
enum class SplitPolicy { kOccupancy, kSglangTriton, kFixed, kFlashAttention2, kFlashInfer, kFlashAttention3 };

struct AttentionImplementation {
  std::string name;  // e.g. "flash_mma" (specsim-validate's tensor-core kernel)
  // Where the costs below come from when not from the scenario's own calibration (a bundled
  // calibration of another GPU, compute/ChooseAttentionCosts); empty: the scenario's calibration.
  std::string costs_source;
  // Launch geometry: properties of the kernel's source and launch policy.
  int row_tile = 16;
  int max_rows_per_block = 64;
  int kv_tile_tokens = 64;
  int blocks_per_sm = 2;  // resident blocks per SM (registers / shared memory)
  // Where the resident count differs by rows per block (one kernel instantiation each):
  // (rows_per_block, blocks_per_sm) pairs overriding blocks_per_sm.
  std::vector<std::pair<int, int>> blocks_per_sm_by_rows;
  // Where the KV tile differs by rows per block (FlashInfer's NUM_MMA_KV, from shared memory):
  // (rows_per_block, tokens) pairs overriding kv_tile_tokens for the geometry. The per-tile costs
  // below are per kv_tile_tokens tokens and scale with a tile's tokens.
  std::vector<std::pair<int, int>> kv_tile_tokens_by_rows;
  int split_blocks_per_sm = 2;     // split-KV target: blocks before splitting x splits ~ this x SMs
  bool splits_round_down = false;  // ... at most this x SMs (full rounds of one resident block)
  int min_split_tokens = 128;      // no split shorter than this
  int max_splits = 0;              // 0: no limit (kSglangTriton: the cap before MLA's raise)
  SplitPolicy split_policy = SplitPolicy::kOccupancy;
  bool merge_always = false;  // the merge pass runs with one split too
  // Planned for a CUDA graph's replays (kFlashInfer: Q tile for the ragged worst case, merge always;
  // kFlashAttention3: the static split heuristic at the graph's page-table width, taken as unbounded).
  bool planned_for_graph = false;
  // At q = 1 with G > 1 the G query heads of a KV head are its rows (FlashAttention-2's
  // seqlenq_ngroups_swapped): the per_head_blocks = false geometry for that call.
  bool gqa_rows_at_q1 = false;
  int combine_blocks_per_sm = 16;   // the merge pass: one block per (query row, head)
  int combine_rows_per_block = 1;   // ... or per this many of them (FlashAttention-2: 4)
  int combine_value_blocks = 1;     // ... and per 128 output values (MLA's 512: 4)
  int combine_splits_per_step = 1;  // partials a merge block takes per step (FlashInfer's merge: 8)
  // Each query head its own blocks (FlashAttention-2, cuDNN's SDPA): rows are the head's q query
  // tokens and blocks multiply by the query heads; false: the G heads of a KV head share its rows.
  bool per_head_blocks = false;
  // Costs (ns), fitted by `specsim calibrate` per implementation.
  double ramp_ns = 5000;
  double memory_efficiency = 0.8;  // of the GPU's memory bandwidth, streaming the cache
  double tile_ns = 500;            // per tile of every block on the SM (throughput)
  double row_ns = 10;
  double tile_latency_ns = 2000;  // per tile of one block per round (latency)
  double row_latency_ns = 5;
  double block_ns = 1000;
  double block_row_ns = 300;          // per query row of every block on the SM (throughput)
  double block_row_latency_ns = 100;  // per query row of one block per round (latency)
  double combine_ns = 2000;
  double combine_block_ns = 2000;
  double combine_split_ns = 150;
  int ResidentBlocks(int64_t rows_per_block) const;
  int KvTileTokens(int64_t rows_per_block) const;
};

// `geometry`'s name and launch geometry with `costs`'s fitted costs (ramp, memory efficiency, the
// tile, row, block and merge costs): another launch of the same kernel body.
AttentionImplementation WithCostsOf(const AttentionImplementation& geometry, const AttentionImplementation& costs);

// Geometry fields >= 1 (max_splits >= 0), efficiency in (0, 1], costs >= 0; messages name the field.
Status ValidateAttentionImplementation(const AttentionImplementation& impl);

// One attention call per GPU.
struct AttentionCall {
  int64_t seqs = 1;
  int64_t query_tokens = 1;  // per sequence
  int64_t q_heads = 1;       // per GPU
  int64_t kv_heads = 1;      // per GPU
  int64_t context = 1;       // cached tokens attended per sequence
  double kv_bytes = 0;       // cache bytes read per call
  int splits = 0;            // 0: the implementation's split policy
  bool latent = false;       // MLA's shared latent cache (one KV head, V within K)
};

// FlashAttention-2's num_splits_heuristic: 1 when `blocks` >= 0.8 `slots`; else, over the
// eligible counts s <= min(max_splits, slots, n_blocks) (s = 1, or ceil(n/s) != ceil(n/(s-1)): a
// larger count that leaves the blocks per split unchanged is the same launch), the smallest whose
// wave efficiency w / ceil(w), w = blocks s / slots, reaches 0.85 of the best. REQUIRES: all >= 1.
int64_t FlashAttention2Splits(int64_t blocks, int64_t slots, int64_t n_blocks, int64_t max_splits);

// FlashAttention-3's num_splits_heuristic for a causal call (heuristics.h @2adfc8c2; both frameworks
// pass causal = True, so the long-context L2 split never applies): 1 when `m_blocks_total` >= 0.8
// `sms` or `n_blocks` <= 4; else, over s <= min(max_splits, sms, n_blocks), the smallest whose wave
// efficiency w / ceil(w), w = m_blocks_total s / sms, reaches 0.85 of the best. REQUIRES: all >= 1.
int64_t FlashAttention3StaticSplits(int64_t m_blocks_total, int64_t sms, int64_t n_blocks, int64_t max_splits);

// FlashAttention-3's per-batch split (flash_prepare_scheduler.cu @2adfc8c2, every sequence with the
// same n_blocks): 1 when `static_splits` <= 1 or more than 992 sequences; else with blocks_per_sm =
// ceil(seqs m_blocks n_blocks x 1.1 x kv_heads / sms), max(min(ceil(n_blocks / blocks_per_sm),
// static_splits), 1). REQUIRES: all >= 1.
int64_t FlashAttention3DynamicSplits(int64_t seqs, int64_t m_blocks, int64_t n_blocks, int64_t kv_heads, int64_t sms,
                                     int64_t static_splits);

// FlashInfer's FA2 Q tile (FA2DetermineCtaTileQ, head_dim 128, compute capability >= 8): 128 rows
// above 64 packed rows, 64 above 16, else 16.
int FlashInferCtaTileQ(int64_t packed_rows);

// FlashInfer's FA2 KV tile in tokens for a Q tile, head_dim 128 and bf16 K / V, from the GPU's
// shared memory (prefill.cuh @fb28d724 BatchPrefillWithPagedKVCacheDispatched): warps 1 x 4 at a
// 16-row tile, else 4 x 1; Q tile bytes F = rows * 128 * 2, per NUM_MMA_KV step S = 256 * 16 *
// warps_kv * 2; CTAs per SM c = 2 if smem_per_sm >= 2 (F + S), else 1; NUM_MMA_KV the largest of 8,
// 4, 2, 1 at most min((min(smem_per_sm / c, smem_per_block_optin) - F) / S, 8 / (rows / 64 at
// 128 rows, else 1)); tokens = NUM_MMA_KV * warps_kv * 16. 0 when not even one step fits.
int FlashInferKvTileTokens(int cta_tile_q, int smem_per_sm_bytes, int smem_per_block_optin_bytes);

// FlashInfer's KV chunk (PrefillBinarySearchKVChunkSize, page size 1, every sequence `context`
// tokens): the smallest chunk in [min_chunk, context] whose work items seqs * q_tiles *
// ceil(context / chunk) are at most max_items, else context (or min_chunk when that is larger).
int64_t FlashInferKvChunkTokens(int64_t seqs, int64_t q_tiles, int64_t context, int64_t max_items, int64_t min_chunk);

// The splits a kSglangTriton implementation's planner gives `call` (before the empty ones are
// dropped); REQUIRES: call fields >= 1, sm_count >= 1 (CHECKed).
int64_t SglangTritonSplits(const AttentionImplementation& impl, const AttentionCall& call, int sm_count);

struct AttentionGeometry {
  int64_t rows_padded = 0;  // per (sequence, KV head)
  int64_t rows_per_block = 0;
  int64_t valid_rows = 0;  // per block
  int64_t row_blocks = 0;
  int64_t splits = 0;
  int64_t blocks = 0;
  int64_t resident = 0;        // blocks per SM
  int64_t sm_blocks = 0;       // on the busiest SM
  int64_t rounds = 0;          // of resident blocks on it
  int64_t kv_tiles = 0;        // per block
  int64_t kv_tile_tokens = 0;  // per tile (KvTileTokens of rows_per_block)
  int64_t combine_waves = 0;   // 0 without a merge pass (one split)
};

// REQUIRES: ValidateAttentionImplementation(impl) OK, call fields >= 1, sm_count >= 1 (CHECKed).
AttentionGeometry GeometryOf(const AttentionImplementation& impl, const AttentionCall& call, int sm_count);

// The terms of the time above, in ns.
struct AttentionTerms {
  double ramp_ns = 0;
  double blocks_ns = 0;     // the busiest SM's blocks' fixed and per-row parts
  double memory_ns = 0;     // KV_bytes / (bw * e_m)
  double tiles_ns = 0;      // the busiest SM's path
  double combine_ns = 0;    // the merge pass
  double main_ns() const;   // ramp + blocks + max(memory, tiles)
  double total_ns() const;  // main + combine
};
AttentionTerms AttentionTime(const AttentionImplementation& impl, const AttentionCall& call, int sm_count,
                             double memory_bandwidth_gbps);

// The implementations a scenario's attention runs per regime: q = 1 (decode) and q > 1 (verify),
// for GQA / MHA caches and, apart, for MLA's latent cache (a GQA kernel's costs never price an MLA
// call, nor the reverse). Empty: the roofline attention model of kernel_cost.h.
struct AttentionRegimes {
  std::vector<AttentionImplementation> decode;      // empty or one
  std::vector<AttentionImplementation> verify;      // empty or one
  std::vector<AttentionImplementation> mla_decode;  // empty or one
  std::vector<AttentionImplementation> mla_verify;  // empty or one
  const AttentionImplementation* For(int64_t query_tokens, bool latent = false) const;
};

// specsim-validate's two kernels (validate/kernels.h AttentionImpl), geometry from their source
// (validate/flash_attention_kernels.cu, validate/attention_kernels.cu, validate/attention.cc) and
// costs as the defaults above until a calibration replaces them: "flash_mma", "simt_reference".
// NotFound listing the names for another name.
StatusOr<AttentionImplementation> SpecsimValidateKernel(const std::string& name);

}  // namespace specsim::compute
