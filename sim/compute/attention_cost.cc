#include "sim/compute/attention_cost.h"

#include <algorithm>
#include <cmath>

#include "sim/core/check.h"

namespace specsim::compute {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

Status ValidateAttentionImplementation(const AttentionImplementation& impl) {
  const std::string pre = "attention implementation '" + impl.name + "': ";
  for (auto [field, v] : {std::pair<const char*, int>{"row_tile", impl.row_tile},
                          {"max_rows_per_block", impl.max_rows_per_block},
                          {"kv_tile_tokens", impl.kv_tile_tokens},
                          {"blocks_per_sm", impl.blocks_per_sm},
                          {"split_blocks_per_sm", impl.split_blocks_per_sm},
                          {"min_split_tokens", impl.min_split_tokens},
                          {"combine_blocks_per_sm", impl.combine_blocks_per_sm},
                          {"combine_rows_per_block", impl.combine_rows_per_block},
                          {"combine_value_blocks", impl.combine_value_blocks},
                          {"combine_splits_per_step", impl.combine_splits_per_step}}) {
    if (v < 1) return InvalidArgumentError(pre + field + " = " + std::to_string(v) + ": must be >= 1");
  }
  if (impl.max_rows_per_block < impl.row_tile)
    return InvalidArgumentError(pre + "max_rows_per_block = " + std::to_string(impl.max_rows_per_block) +
                                ": must be >= row_tile (" + std::to_string(impl.row_tile) + ")");
  if (impl.max_splits < 0) return InvalidArgumentError(pre + "max_splits must be >= 0 (0: no limit)");
  for (auto [rows, blocks] : impl.blocks_per_sm_by_rows)
    if (rows < 1 || blocks < 1)
      return InvalidArgumentError(pre + "blocks_per_sm_by_rows (" + std::to_string(rows) + ", " +
                                  std::to_string(blocks) + "): both must be >= 1");
  for (auto [rows, tokens] : impl.kv_tile_tokens_by_rows)
    if (rows < 1 || tokens < 1)
      return InvalidArgumentError(pre + "kv_tile_tokens_by_rows (" + std::to_string(rows) + ", " +
                                  std::to_string(tokens) + "): both must be >= 1");
  if (!(impl.memory_efficiency > 0 && impl.memory_efficiency <= 1))
    return InvalidArgumentError(pre + "memory_efficiency = " + std::to_string(impl.memory_efficiency) +
                                ": must be in (0, 1]");
  for (auto [field, v] : {std::pair<const char*, double>{"ramp_ns", impl.ramp_ns},
                          {"tile_ns", impl.tile_ns},
                          {"row_ns", impl.row_ns},
                          {"tile_latency_ns", impl.tile_latency_ns},
                          {"row_latency_ns", impl.row_latency_ns},
                          {"block_ns", impl.block_ns},
                          {"block_row_ns", impl.block_row_ns},
                          {"block_row_latency_ns", impl.block_row_latency_ns},
                          {"combine_ns", impl.combine_ns},
                          {"combine_block_ns", impl.combine_block_ns},
                          {"combine_split_ns", impl.combine_split_ns}}) {
    if (!(v >= 0) || !std::isfinite(v))
      return InvalidArgumentError(pre + field + " = " + std::to_string(v) + ": must be >= 0");
  }
  return OkStatus();
}

int AttentionImplementation::ResidentBlocks(int64_t rows_per_block) const {
  for (auto [rows, blocks] : blocks_per_sm_by_rows)
    if (rows == rows_per_block) return blocks;
  return blocks_per_sm;
}

int AttentionImplementation::KvTileTokens(int64_t rows_per_block) const {
  for (auto [rows, tokens] : kv_tile_tokens_by_rows)
    if (rows == rows_per_block) return tokens;
  return kv_tile_tokens;
}

int FlashInferCtaTileQ(int64_t packed_rows) {
  if (packed_rows > 64) return 128;
  return packed_rows > 16 ? 64 : 16;
}

int FlashInferKvTileTokens(int cta_tile_q, int smem_per_sm_bytes, int smem_per_block_optin_bytes) {
  SPECSIM_CHECK(cta_tile_q == 16 || cta_tile_q == 64 || cta_tile_q == 128) << cta_tile_q;
  const int warps_kv = cta_tile_q == 16 ? 4 : 1;
  const int mma_q = cta_tile_q == 128 ? 2 : 1;
  const int64_t fixed = int64_t(cta_tile_q) * 128 * 2;              // the Q tile, bf16
  const int64_t per_step = int64_t(128 + 128) * 16 * warps_kv * 2;  // K and V of one NUM_MMA_KV step
  const int ctas = smem_per_sm_bytes >= 2 * (fixed + per_step) ? 2 : 1;
  const int64_t per_block = std::min<int64_t>(smem_per_sm_bytes / ctas, smem_per_block_optin_bytes);
  const int64_t by_smem = (per_block - fixed) / per_step;
  const int64_t bound = std::min<int64_t>(by_smem, 8 / mma_q);
  for (int steps : {8, 4, 2, 1})
    if (bound >= steps) return steps * warps_kv * 16;
  return 0;
}

int64_t FlashInferKvChunkTokens(int64_t seqs, int64_t q_tiles, int64_t context, int64_t max_items, int64_t min_chunk) {
  SPECSIM_CHECK(seqs >= 1 && q_tiles >= 1 && context >= 1 && max_items >= 0 && min_chunk >= 1);
  // The source's binary search over [min_chunk, context] (uniform lengths: the items fall as the
  // chunk grows, so the search finds the smallest chunk that fits, else its upper bound).
  int64_t low = min_chunk, high = context;
  while (low < high) {
    const int64_t mid = (low + high) / 2;
    if (seqs * q_tiles * CeilDiv(context, mid) > max_items)
      low = mid + 1;
    else
      high = mid;
  }
  return low;
}

namespace {

// The Q tile of a call whose blocks stream `rows` query rows (`group` heads of a KV head times the
// query tokens): rows per block, row blocks and padded rows, by the implementation's rule.
void RowTilesOf(const AttentionImplementation& impl, const AttentionCall& call, int64_t group, int64_t rows,
                AttentionGeometry* g) {
  if (impl.split_policy == SplitPolicy::kFlashAttention3) {
    // kBlockM: the small tile where the packed rows fit in it (vLLM's one MMA warpgroup), else the large.
    g->rows_per_block = rows <= impl.row_tile ? impl.row_tile : impl.max_rows_per_block;
    g->row_blocks = CeilDiv(rows, g->rows_per_block);
    g->rows_padded = g->row_blocks * g->rows_per_block;
  } else if (impl.split_policy == SplitPolicy::kFlashInfer) {
    // FlashInfer's Q tile: from the rows of a call, or a graph's ragged worst case.
    g->rows_per_block =
        FlashInferCtaTileQ(impl.planned_for_graph ? (call.seqs * (call.query_tokens - 1) + 1) * group : rows);
    g->row_blocks = CeilDiv(rows, g->rows_per_block);
    g->rows_padded = g->row_blocks * g->rows_per_block;
  } else {
    g->rows_padded = CeilDiv(rows, impl.row_tile) * impl.row_tile;
    g->rows_per_block = impl.row_tile;
    while (g->rows_per_block < g->rows_padded && g->rows_per_block * 2 <= impl.max_rows_per_block)
      g->rows_per_block *= 2;
    g->rows_per_block = std::min<int64_t>(g->rows_per_block, impl.max_rows_per_block);
    g->row_blocks = CeilDiv(g->rows_padded, g->rows_per_block);
  }
}

// The splits a launch picks (SplitPolicy) for `pre_split` blocks before splitting, before the ones
// without work are dropped.
struct SplitPlan {
  int64_t splits = 1;
  int64_t chunk = 0;       // FlashInfer: the KV chunk a block walks (the last one shorter)
  int64_t fa3_static = 0;  // FlashAttention-3: the static split count (the combine runs above 1)
};
SplitPlan PlanSplits(const AttentionImplementation& impl, const AttentionCall& call, const AttentionGeometry& g,
                     int64_t pre_split, int sm_count) {
  SplitPlan p;
  const int64_t tile = g.kv_tile_tokens;
  if (call.splits > 0) {
    p.splits = call.splits;
  } else if (impl.split_policy == SplitPolicy::kFlashAttention3) {
    const int64_t n_blocks = CeilDiv(call.context, tile);
    // A graph's page table spans the model's context: as unbounded (min(128, SMs) caps the count).
    constexpr int64_t kUnbounded = int64_t{1} << 30;
    p.fa3_static = impl.max_splits > 0
                       ? impl.max_splits
                       : FlashAttention3StaticSplits(call.kv_heads * g.row_blocks, sm_count,
                                                     impl.planned_for_graph ? kUnbounded : n_blocks, 128);
    p.splits = FlashAttention3DynamicSplits(call.seqs, g.row_blocks, n_blocks, call.kv_heads, sm_count, p.fa3_static);
  } else if (impl.split_policy == SplitPolicy::kFlashInfer) {
    const int64_t max_items = int64_t(impl.split_blocks_per_sm) * sm_count / call.kv_heads;
    p.chunk = FlashInferKvChunkTokens(call.seqs, g.row_blocks, call.context, max_items, impl.min_split_tokens);
    p.splits = CeilDiv(call.context, p.chunk);
  } else if (impl.split_policy == SplitPolicy::kSglangTriton) {
    p.splits = SglangTritonSplits(impl, call, sm_count);
  } else if (impl.split_policy == SplitPolicy::kFixed) {
    p.splits = std::clamp<int64_t>(impl.max_splits, 1, call.context);
  } else if (impl.split_policy == SplitPolicy::kFlashAttention2) {
    p.splits = FlashAttention2Splits(pre_split, int64_t(impl.split_blocks_per_sm) * sm_count,
                                     CeilDiv(call.context, tile), impl.max_splits > 0 ? impl.max_splits : 128);
  } else {
    const int64_t target = int64_t(impl.split_blocks_per_sm) * sm_count;
    const int64_t want = impl.splits_round_down ? target / pre_split : CeilDiv(target, pre_split);
    int64_t hi = std::max<int64_t>(1, call.context / impl.min_split_tokens);
    if (impl.max_splits > 0) hi = std::min<int64_t>(hi, impl.max_splits);
    p.splits = std::clamp<int64_t>(want, 1, hi);
  }
  return p;
}

}  // namespace

AttentionGeometry GeometryOf(const AttentionImplementation& impl, const AttentionCall& call, int sm_count) {
  SPECSIM_CHECK(call.seqs >= 1 && call.query_tokens >= 1 && call.q_heads >= 1 && call.kv_heads >= 1 &&
                call.context >= 1 && sm_count >= 1 && call.splits >= 0)
      << impl.name;
  AttentionGeometry g;
  // Rows of one block's stream: the G heads of a KV head times the query tokens, or one head's
  // query tokens when every query head has its own blocks (not at q = 1 where the G heads are
  // folded into the rows: gqa_rows_at_q1).
  const bool folded = impl.gqa_rows_at_q1 && call.query_tokens == 1 && call.q_heads > call.kv_heads;
  const bool per_head = impl.per_head_blocks && !folded;
  const int64_t group = per_head ? 1 : std::max<int64_t>(1, call.q_heads / call.kv_heads);
  const int64_t streams = per_head ? call.q_heads : call.kv_heads;
  const int64_t rows = group * call.query_tokens;
  RowTilesOf(impl, call, group, rows, &g);
  g.kv_tile_tokens = impl.KvTileTokens(g.rows_per_block);
  const int64_t tile = g.kv_tile_tokens;
  const int64_t pre_split = call.seqs * streams * g.row_blocks;
  const SplitPlan plan = PlanSplits(impl, call, g, pre_split, sm_count);
  g.splits = plan.splits;
  // ceil(ceil(context / splits) / tile) = ceil(ceil(context / tile) / splits): also FlashAttention-2's
  // n_blocks_per_split, which divides the context's blocks rather than its tokens.
  const int64_t per_split = plan.chunk > 0 ? plan.chunk : CeilDiv(CeilDiv(call.context, g.splits), tile) * tile;
  g.kv_tiles = CeilDiv(std::min(per_split, call.context), tile);
  // FlashAttention-3 walks ceil(n / splits) KV tiles per split: the splits past the last tile hold none.
  if (impl.split_policy == SplitPolicy::kFlashAttention3)
    g.splits = std::min(g.splits, CeilDiv(CeilDiv(call.context, tile), g.kv_tiles));
  // SGLang's splits are rounded up to whole MIN_BLOCK_KV steps: the blocks past the last token exit
  // at once (launched, no work), so only the splits that hold tokens count.
  if (impl.split_policy == SplitPolicy::kSglangTriton) {
    const int64_t rounded = CeilDiv(CeilDiv(call.context, g.splits), impl.min_split_tokens) * impl.min_split_tokens;
    g.splits = std::min(g.splits, CeilDiv(call.context, rounded));
    g.kv_tiles = CeilDiv(std::min(rounded, call.context), tile);
  }
  g.blocks = pre_split * g.splits;
  g.valid_rows = std::min(g.rows_per_block, rows);
  g.resident = impl.ResidentBlocks(g.rows_per_block);
  g.sm_blocks = CeilDiv(g.blocks, sm_count);
  g.rounds = CeilDiv(g.sm_blocks, g.resident);
  const bool graph_merge = impl.split_policy == SplitPolicy::kFlashInfer && impl.planned_for_graph;
  if (g.splits > 1 || impl.merge_always || graph_merge || plan.fa3_static > 1)
    g.combine_waves = CeilDiv(
        CeilDiv(call.seqs * call.query_tokens * call.q_heads * impl.combine_value_blocks, impl.combine_rows_per_block),
        int64_t(impl.combine_blocks_per_sm) * sm_count);
  return g;
}

int64_t FlashAttention3StaticSplits(int64_t m_blocks_total, int64_t sms, int64_t n_blocks, int64_t max_splits) {
  SPECSIM_CHECK(m_blocks_total >= 1 && sms >= 1 && n_blocks >= 1 && max_splits >= 1);
  // The source's arithmetic, in float as it has it.
  if (float(m_blocks_total) >= 0.8F * float(sms)) return 1;
  if (n_blocks <= 4) return 1;
  const int64_t hi = std::min({max_splits, sms, n_blocks});
  auto efficiency = [&](int64_t s) {
    const float waves = float(m_blocks_total * s) / float(sms);
    return waves / std::ceil(waves);
  };
  float best = 0;
  for (int64_t s = 1; s <= hi; ++s) best = std::max(best, efficiency(s));
  for (int64_t s = 1; s <= hi; ++s)
    if (double(efficiency(s)) >= 0.85 * double(best)) return s;
  return 1;
}

int64_t FlashAttention3DynamicSplits(int64_t seqs, int64_t m_blocks, int64_t n_blocks, int64_t kv_heads, int64_t sms,
                                     int64_t static_splits) {
  SPECSIM_CHECK(seqs >= 1 && m_blocks >= 1 && n_blocks >= 1 && kv_heads >= 1 && sms >= 1 && static_splits >= 1);
  if (static_splits <= 1 || seqs > 992) return 1;  // PREPARE_VARLEN_MAX_BATCHES_1CTA
  const auto blocks_per_sm =
      static_cast<int64_t>(std::ceil(float(seqs * m_blocks * n_blocks) * 1.1F * float(kv_heads) / float(sms)));
  return std::max<int64_t>(std::min(CeilDiv(n_blocks, std::max<int64_t>(blocks_per_sm, 1)), static_splits), 1);
}

int64_t FlashAttention2Splits(int64_t blocks, int64_t slots, int64_t n_blocks, int64_t max_splits) {
  SPECSIM_CHECK(blocks >= 1 && slots >= 1 && n_blocks >= 1 && max_splits >= 1);
  // The source's arithmetic, in float as it has it (a tie at the 0.85 bound decides a launch).
  if (float(blocks) >= 0.8F * float(slots)) return 1;
  const int64_t hi = std::min({max_splits, slots, n_blocks});
  auto eligible = [&](int64_t s) { return s == 1 || CeilDiv(n_blocks, s) != CeilDiv(n_blocks, s - 1); };
  auto efficiency = [&](int64_t s) {
    const float waves = float(blocks * s) / float(slots);
    return waves / std::ceil(waves);
  };
  float best = 0;
  for (int64_t s = 1; s <= hi; ++s)
    if (eligible(s)) best = std::max(best, efficiency(s));
  for (int64_t s = 1; s <= hi; ++s)
    if (eligible(s) && double(efficiency(s)) >= 0.85 * double(best)) return s;
  return 1;
}

AttentionImplementation WithCostsOf(const AttentionImplementation& geometry, const AttentionImplementation& costs) {
  AttentionImplementation out = geometry;
  out.ramp_ns = costs.ramp_ns;
  out.memory_efficiency = costs.memory_efficiency;
  out.tile_ns = costs.tile_ns;
  out.row_ns = costs.row_ns;
  out.tile_latency_ns = costs.tile_latency_ns;
  out.row_latency_ns = costs.row_latency_ns;
  out.block_ns = costs.block_ns;
  out.block_row_ns = costs.block_row_ns;
  out.block_row_latency_ns = costs.block_row_latency_ns;
  out.combine_ns = costs.combine_ns;
  out.combine_block_ns = costs.combine_block_ns;
  out.combine_split_ns = costs.combine_split_ns;
  return out;
}

int64_t SglangTritonSplits(const AttentionImplementation& impl, const AttentionCall& call, int sm_count) {
  SPECSIM_CHECK(call.seqs >= 1 && call.q_heads >= 1 && call.kv_heads >= 1 && call.context >= 1 && sm_count >= 1)
      << impl.name;
  int64_t cap = std::max(1, impl.max_splits);
  int64_t pow2_sms = 1;
  while (pow2_sms < sm_count) pow2_sms *= 2;
  if (call.latent) cap = std::max(cap, pow2_sms);
  const int64_t group = std::max<int64_t>(1, call.q_heads / call.kv_heads);
  const int64_t head_tiles = call.latent ? call.q_heads : call.kv_heads * CeilDiv(group, impl.max_rows_per_block);
  const int64_t grid = call.seqs * head_tiles;
  const auto cores = static_cast<int64_t>(double(sm_count) * std::max(std::log2(double(call.context) / 64.0), 1.0));
  const int64_t s2 = std::min(CeilDiv(cores, grid), cap);
  return CeilDiv(call.context, CeilDiv(call.context, s2));
}

double AttentionTerms::main_ns() const { return ramp_ns + blocks_ns + std::max(memory_ns, tiles_ns); }
double AttentionTerms::total_ns() const { return main_ns() + combine_ns; }

AttentionTerms AttentionTime(const AttentionImplementation& impl, const AttentionCall& call, int sm_count,
                             double memory_bandwidth_gbps) {
  SPECSIM_CHECK(memory_bandwidth_gbps > 0) << impl.name;
  const AttentionGeometry g = GeometryOf(impl, call, sm_count);
  AttentionTerms t;
  t.ramp_ns = impl.ramp_ns;
  t.memory_ns = call.kv_bytes / (memory_bandwidth_gbps * impl.memory_efficiency);  // GB/s = bytes per ns
  const double rows = double(g.rows_per_block), tiles = double(g.kv_tiles);
  const double tile_scale = double(g.kv_tile_tokens) / double(impl.kv_tile_tokens);  // costs per kv_tile_tokens
  t.blocks_ns = std::max(double(g.rounds) * (impl.block_ns + impl.block_row_latency_ns * double(g.valid_rows)),
                         double(g.sm_blocks) * impl.block_row_ns * double(g.valid_rows));
  t.tiles_ns = tile_scale * std::max(double(g.sm_blocks) * tiles * (impl.tile_ns + impl.row_ns * rows),
                                     double(g.rounds) * tiles * (impl.tile_latency_ns + impl.row_latency_ns * rows));
  if (g.combine_waves > 0)
    t.combine_ns =
        impl.combine_ns +
        double(g.combine_waves) *
            (impl.combine_block_ns + impl.combine_split_ns * double(CeilDiv(g.splits, impl.combine_splits_per_step)));
  return t;
}

const AttentionImplementation* AttentionRegimes::For(int64_t query_tokens, bool latent) const {
  const auto& v = latent ? (query_tokens <= 1 ? mla_decode : mla_verify) : (query_tokens <= 1 ? decode : verify);
  return v.empty() ? nullptr : &v.front();
}

StatusOr<AttentionImplementation> SpecsimValidateKernel(const std::string& name) {
  AttentionImplementation impl;
  impl.name = name;
  if (name == "flash_mma") {
    // validate/flash_attention_kernels.cu: 16-row mma tiles, 1/2/4 tiles per block of 4 warps,
    // 64-token K/V tiles in 64 KiB of shared memory; registers per thread (ptxas, sm_90) 167 / 214
    // / 227 for 1 / 2 / 4 tiles -> 3 / 2 / 2 resident blocks of 128 threads (65536 registers);
    // validate/attention.cc: splits for 2 blocks per SM, >= 128 tokens each. The merge pass
    // (attention_kernels.cu CombineKernel): 128-thread blocks, 16 per SM.
    impl.row_tile = 16;
    impl.max_rows_per_block = 64;
    impl.kv_tile_tokens = 64;
    impl.blocks_per_sm = 2;
    impl.blocks_per_sm_by_rows = {{16, 3}};
    impl.split_blocks_per_sm = 2;
    impl.min_split_tokens = 128;
    return impl;
  }
  if (name == "flash_mla") {
    // validate/flash_mla_kernels.cu: MLA's latent cache (576 / 512), the heads x query tokens of a
    // sequence in 16-row mma tiles, one tile per block of 4 warps, Q held in registers (255 per
    // thread, sm_90), 32-token K tiles double-buffered in 74 KiB of shared memory -> two resident
    // blocks per SM (registers; measured by validate_gpu_test FlashMlaResidentBlocksAsTheModelAssumes);
    // a split takes every splits-th tile (interleaved), so its busiest block walks ceil(tiles /
    // splits) tiles, which kv_tiles states or exceeds by at most one; validate/attention.cc: splits
    // for at most 2 blocks per SM (rounded down: one full round), >= 128 tokens each. The merge pass
    // (FlashMlaCombineKernel): one block of 256 threads per (query row, head) over all 512 values,
    // at most 4 resident per SM (registers).
    impl.row_tile = 16;
    impl.max_rows_per_block = 16;
    impl.kv_tile_tokens = 32;
    impl.blocks_per_sm = 2;
    impl.combine_value_blocks = 1;
    impl.combine_blocks_per_sm = 4;
    impl.split_blocks_per_sm = 2;
    impl.splits_round_down = true;
    impl.min_split_tokens = 128;
    return impl;
  }
  if (name == "simt_reference") {
    // validate/attention_kernels.cu: 8 (query token, head) rows per block (head_dim 128), 4 warps
    // each on every 4th token (a "tile" of 4 tokens per step); 105 registers x 128 threads -> 4
    // blocks per SM (ptxas, sm_90); splits for 2 blocks per SM, >= 256 tokens each.
    impl.row_tile = 8;
    impl.max_rows_per_block = 8;
    impl.kv_tile_tokens = 4;
    impl.blocks_per_sm = 4;
    impl.split_blocks_per_sm = 2;
    impl.min_split_tokens = 256;
    impl.row_ns = 100;  // CUDA cores: the rows' dot products dominate a tile
    return impl;
  }
  return NotFoundError("attention implementation '" + name +
                       "': specsim-validate's kernels are flash_mma, flash_mla and simt_reference");
}

}  // namespace specsim::compute
