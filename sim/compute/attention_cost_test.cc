#include "sim/compute/attention_cost.h"

#include <gtest/gtest.h>

namespace specsim::compute {
namespace {

AttentionCall Llama8bTp1(int64_t seqs, int64_t q, int64_t context) {
  AttentionCall c;
  c.seqs = seqs;
  c.query_tokens = q;
  c.q_heads = 32;
  c.kv_heads = 8;
  c.context = context;
  c.kv_bytes = double(seqs) * 8 * context * 256 * 2;
  return c;
}

TEST(AttentionGeometry, FlashMmaRowTilesMatchTheKernel) {
  // validate/flash_attention_kernels.cu: FlashMmaRowTilesPerBlock = 1, 2, 4 tiles of 16 for 1, 2,
  // >= 3 tiles of G q rows (G = 4 here).
  const auto impl = SpecsimValidateKernel("flash_mma").value();
  struct Case {
    int64_t q, padded, per_block, row_blocks;
  };
  for (Case c : {Case{1, 16, 16, 1}, Case{4, 16, 16, 1}, Case{8, 32, 32, 1}, Case{12, 48, 64, 1}, Case{16, 64, 64, 1},
                 Case{32, 128, 64, 2}, Case{128, 512, 64, 8}}) {
    const AttentionGeometry g = GeometryOf(impl, Llama8bTp1(1, c.q, 4096), 132);
    EXPECT_EQ(g.rows_padded, c.padded) << c.q;
    EXPECT_EQ(g.rows_per_block, c.per_block) << c.q;
    EXPECT_EQ(g.row_blocks, c.row_blocks) << c.q;
  }
}

TEST(AttentionGeometry, SplitPolicyMatchesValidate) {
  // Splits recorded by specsim-validate (traces/h200-1x-2026-11-30, 132 SMs, flash_mma):
  // b1 q1 ctx4096: ceil(264 / 8) = 33 capped at 4096 / 128 = 32; b8 q1: ceil(264 / 64) = 5;
  // b1 q32: 2 row blocks -> ceil(264 / 16) = 17; b8 q128: 8 row blocks -> 1; b1 q1 ctx1024: 8.
  const auto impl = SpecsimValidateKernel("flash_mma").value();
  EXPECT_EQ(GeometryOf(impl, Llama8bTp1(1, 1, 4096), 132).splits, 32);
  EXPECT_EQ(GeometryOf(impl, Llama8bTp1(8, 1, 4096), 132).splits, 5);
  EXPECT_EQ(GeometryOf(impl, Llama8bTp1(1, 32, 4096), 132).splits, 17);
  EXPECT_EQ(GeometryOf(impl, Llama8bTp1(8, 128, 4096), 132).splits, 1);
  EXPECT_EQ(GeometryOf(impl, Llama8bTp1(1, 1, 1024), 132).splits, 8);
  // A recorded split count wins over the policy.
  AttentionCall c = Llama8bTp1(8, 1, 4096);
  c.splits = 3;
  EXPECT_EQ(GeometryOf(impl, c, 132).splits, 3);
}

TEST(AttentionGeometry, RoundsAndTiles) {
  // b8 q1 ctx4096: 64 blocks x 5 splits = 320 blocks, ceil(320 / 132) = 3 on the busiest SM; one
  // 16-row tile per block -> 3 resident (167 registers): one round. A split is ceil(4096 / 5) =
  // 820 -> 832 tokens = 13 tiles of 64. q8: 32-row blocks, 2 resident: 2 rounds.
  const auto impl = SpecsimValidateKernel("flash_mma").value();
  AttentionGeometry g = GeometryOf(impl, Llama8bTp1(8, 1, 4096), 132);
  EXPECT_EQ(g.blocks, 320);
  EXPECT_EQ(g.resident, 3);
  EXPECT_EQ(g.sm_blocks, 3);
  EXPECT_EQ(g.rounds, 1);
  EXPECT_EQ(g.kv_tiles, 13);
  EXPECT_EQ(g.valid_rows, 4);
  // Merge pass: 8 x 32 (row, head) blocks over 16 x 132 slots: one wave.
  EXPECT_EQ(g.combine_waves, 1);
  g = GeometryOf(impl, Llama8bTp1(8, 8, 4096), 132);
  EXPECT_EQ(g.resident, 2);
  EXPECT_EQ(g.rounds, 2);
  EXPECT_EQ(g.valid_rows, 32);
  // b8 q128: 8 x 128 x 32 = 32768 (row, head) pairs but one split: no merge pass.
  EXPECT_EQ(GeometryOf(impl, Llama8bTp1(8, 128, 4096), 132).combine_waves, 0);
}

// flash_mla (validate/flash_mla_kernels.cu): one 16-row tile per block, two resident blocks per SM,
// 32-token tiles; splits rounded down to 2 x SMs blocks (validate/attention.cc AttentionSplits),
// as recorded in traces/h200-1x-mla-tp8-2026-12-01 (DeepSeek-V3 at TP8: 16 heads per GPU, one KV
// head): b32 q1 ctx16384: floor(264 / 32) = 8 splits (256 blocks: one round); b8: 33; b1: 264
// capped at 16384 / 128 = 128. The merge pass: one block per (row, head), four per SM.
TEST(AttentionGeometry, FlashMlaSplitsRoundDownAndOneRound) {
  const auto impl = SpecsimValidateKernel("flash_mla").value();
  auto call = [](int64_t seqs, int64_t q, int64_t context) {
    AttentionCall c;
    c.seqs = seqs;
    c.query_tokens = q;
    c.q_heads = 16;
    c.kv_heads = 1;
    c.context = context;
    c.kv_bytes = double(seqs) * context * 576 * 2;
    return c;
  };
  AttentionGeometry g = GeometryOf(impl, call(32, 1, 16384), 132);
  EXPECT_EQ(g.splits, 8);
  EXPECT_EQ(g.blocks, 256);
  EXPECT_EQ(g.resident, 2);
  EXPECT_EQ(g.sm_blocks, 2);
  EXPECT_EQ(g.rounds, 1);
  EXPECT_EQ(g.kv_tiles, 16384 / 8 / 32);
  // 32 x 16 (row, head) pairs = 512 merge blocks over 4 x 132 = 528 slots: one wave.
  EXPECT_EQ(g.combine_waves, 1);
  // b8: 33 splits of 512 tiles, interleaved: at most ceil(512 / 33) = 16 tiles a block.
  g = GeometryOf(impl, call(8, 1, 16384), 132);
  EXPECT_EQ(g.splits, 33);
  EXPECT_EQ(g.kv_tiles, 16);
  // Verify at b32, q = 2: 32 x 2 x 16 = 1024 (row, head) pairs over 528 slots: two waves.
  EXPECT_EQ(GeometryOf(impl, call(32, 2, 4096), 132).combine_waves, 2);
  EXPECT_EQ(GeometryOf(impl, call(1, 1, 16384), 132).splits, 128);
  // Verify: 16 heads x 4 tokens = 64 rows = 4 row blocks of one tile each.
  g = GeometryOf(impl, call(8, 4, 4096), 132);
  EXPECT_EQ(g.row_blocks, 4);
  EXPECT_EQ(g.rows_per_block, 16);
  EXPECT_EQ(g.splits, 264 / 32);
}

TEST(AttentionTime, HandSolved) {
  AttentionImplementation impl = SpecsimValidateKernel("flash_mma").value();
  impl.ramp_ns = 10000;
  impl.memory_efficiency = 0.8;
  impl.tile_ns = 500;
  impl.row_ns = 30;
  impl.tile_latency_ns = 2000;
  impl.row_latency_ns = 10;
  impl.block_ns = 400;
  impl.block_row_ns = 100;
  impl.block_row_latency_ns = 50;
  impl.combine_ns = 1000;
  impl.combine_block_ns = 2000;
  impl.combine_split_ns = 200;
  // b8 q16 ctx4096 on 132 SMs at 4800 GB/s: 64 rows in one block (2 resident), 5 splits, 320
  // blocks -> 3 on the busiest SM, 2 rounds, 13 tiles.
  //   blocks = max(2 * (400 + 50*64), 3 * 100 * 64) = max(7200, 19200) = 19200 ns
  //   memory = 8*8*4096*512 B / (4800 * 0.8) = 34953 ns
  //   tiles  = max(3 * 13 * (500 + 30*64), 2 * 13 * (2000 + 10*64)) = max(94380, 68640) = 94380 ns
  //   merge  = 8*16*32 = 4096 pairs over 2112 slots = 2 waves: 1000 + 2 * (2000 + 200*5) = 7000 ns
  const AttentionTerms t = AttentionTime(impl, Llama8bTp1(8, 16, 4096), 132, 4800);
  EXPECT_NEAR(t.memory_ns, 134217728.0 / 3840, 1e-6);
  EXPECT_DOUBLE_EQ(t.blocks_ns, 19200);
  EXPECT_DOUBLE_EQ(t.tiles_ns, 94380);
  EXPECT_DOUBLE_EQ(t.combine_ns, 7000);
  EXPECT_DOUBLE_EQ(t.main_ns(), 10000 + 19200 + 94380);
  EXPECT_DOUBLE_EQ(t.total_ns(), 10000 + 19200 + 94380 + 7000);
  // b1 q16: 8 KV heads x 32 splits = 256 blocks, 2 on the busiest SM, 1 round, 2 tiles each:
  // throughput 2 * 2 * (500 + 30*64) = 9680 ns; latency 1 * 2 * (2000 + 10*64) = 5280 ns. With a
  // slower tile chain (10 us) the latency path binds: 1 * 2 * (10000 + 640) = 21280 ns.
  EXPECT_DOUBLE_EQ(AttentionTime(impl, Llama8bTp1(1, 16, 4096), 132, 4800).tiles_ns, 9680);
  impl.tile_latency_ns = 10000;
  EXPECT_DOUBLE_EQ(AttentionTime(impl, Llama8bTp1(1, 16, 4096), 132, 4800).tiles_ns, 21280);
}

TEST(AttentionTime, PaddedRowsCostTheSameAndTheStepComesWithANewTile) {
  // At G = 4, q = 1..4 fill one 16-row tile: without per-query costs and with the same splits they
  // cost the same; q = 8 takes a 32-row block and costs more once the tile path binds.
  AttentionImplementation impl = SpecsimValidateKernel("flash_mma").value();
  impl.memory_efficiency = 1;
  impl.block_row_ns = impl.block_row_latency_ns = 0;  // no per-query cost: the padded tile alone
  impl.tile_latency_ns = impl.row_latency_ns = 0;
  impl.combine_block_ns = impl.combine_split_ns = 0;
  AttentionCall c = Llama8bTp1(8, 1, 4096);
  c.splits = 5;
  const double t1 = AttentionTime(impl, c, 132, 4800).total_ns();
  c.query_tokens = 4;
  EXPECT_DOUBLE_EQ(AttentionTime(impl, c, 132, 4800).total_ns(), t1);
  c.query_tokens = 8;
  impl.row_ns = 200;  // tile path binds
  impl.combine_block_ns = impl.combine_split_ns = 0;
  const AttentionTerms t8 = AttentionTime(impl, c, 132, 4800);
  EXPECT_GT(t8.tiles_ns, t8.memory_ns);
  EXPECT_GT(t8.total_ns(), t1);
}

TEST(AttentionRegimes, DecodeAndVerifyPickTheirOwnImplementation) {
  AttentionRegimes r;
  EXPECT_EQ(r.For(1), nullptr);
  r.decode.push_back(SpecsimValidateKernel("simt_reference").value());
  r.verify.push_back(SpecsimValidateKernel("flash_mma").value());
  EXPECT_EQ(r.For(1)->name, "simt_reference");
  EXPECT_EQ(r.For(2)->name, "flash_mma");
}

// Another launch of the same kernel body: the launch geometry of one, every fitted cost of the other.
TEST(AttentionImplementation, WithCostsOfTakesEveryCostAndNoGeometry) {
  AttentionImplementation geometry;
  geometry.name = "launch";
  geometry.row_tile = 32;
  geometry.max_splits = 4;
  geometry.split_policy = SplitPolicy::kFixed;
  geometry.merge_always = true;
  geometry.per_head_blocks = true;
  AttentionImplementation costs;
  costs.name = "fitted";
  costs.row_tile = 16;
  using D = double AttentionImplementation::*;
  const D kCosts[] = {&AttentionImplementation::ramp_ns,
                      &AttentionImplementation::memory_efficiency,
                      &AttentionImplementation::tile_ns,
                      &AttentionImplementation::row_ns,
                      &AttentionImplementation::tile_latency_ns,
                      &AttentionImplementation::row_latency_ns,
                      &AttentionImplementation::block_ns,
                      &AttentionImplementation::block_row_ns,
                      &AttentionImplementation::block_row_latency_ns,
                      &AttentionImplementation::combine_ns,
                      &AttentionImplementation::combine_block_ns,
                      &AttentionImplementation::combine_split_ns};
  double v = 0.01;
  for (D c : kCosts) costs.*c = (v += 0.03);  // distinct from every default
  const AttentionImplementation out = WithCostsOf(geometry, costs);
  for (D c : kCosts) EXPECT_EQ(out.*c, costs.*c);
  EXPECT_EQ(out.name, "launch");
  EXPECT_EQ(out.row_tile, 32);
  EXPECT_EQ(out.max_splits, 4);
  EXPECT_EQ(out.split_policy, SplitPolicy::kFixed);
  EXPECT_TRUE(out.merge_always && out.per_head_blocks);
}

TEST(AttentionImplementationCheck, MessagesNameTheField) {
  AttentionImplementation impl = SpecsimValidateKernel("flash_mma").value();
  EXPECT_TRUE(ValidateAttentionImplementation(impl).ok());
  impl.row_tile = 0;
  EXPECT_NE(ValidateAttentionImplementation(impl).message().find("row_tile"), std::string::npos);
  impl = SpecsimValidateKernel("flash_mma").value();
  impl.memory_efficiency = 1.5;
  EXPECT_NE(ValidateAttentionImplementation(impl).message().find("memory_efficiency"), std::string::npos);
  EXPECT_EQ(SpecsimValidateKernel("flashinfer").status().code(), StatusCode::kNotFound);
}

TEST(FlashInferPlanner, QTileFromThePackedRows) {
  // FA2DetermineCtaTileQ (head_dim 128): > 64 rows 128, 17..64 rows 64, <= 16 rows 16.
  EXPECT_EQ(FlashInferCtaTileQ(1), 16);
  EXPECT_EQ(FlashInferCtaTileQ(16), 16);
  EXPECT_EQ(FlashInferCtaTileQ(17), 64);
  EXPECT_EQ(FlashInferCtaTileQ(64), 64);
  EXPECT_EQ(FlashInferCtaTileQ(65), 128);
  EXPECT_EQ(FlashInferCtaTileQ(100), 128);
}

TEST(FlashInferPlanner, KvTileFromSharedMemory) {
  // F = rows * 256 B, S = 256 * 16 * warps_kv * 2 B (32768 at 16 rows, 8192 above); two CTAs fit on
  // every GPU below, so a block gets min(smem_per_sm / 2, opt-in):
  //   SM90 (233472 / 232448) -> 116736: 16 rows (116736 - 4096) / 32768 = 3 -> 2 steps x 4 warps x 16 = 128
  //                                     64 rows (116736 - 16384) / 8192 = 12, capped at 8 -> 8 x 16 = 128
  //                                     128 rows (116736 - 32768) / 8192 = 10, capped at 8 / 2 = 4 -> 64
  //   SM120 (102400 / 101376) -> 51200: 16 rows 1.4 -> 1 x 64 = 64; 64 rows 4.25 -> 4 x 16 = 64;
  //                                     128 rows 2.25 -> 2 x 16 = 32
  //   SM80 (167936 / 166912) -> 83968: 16 rows 2.4 -> 2 -> 128; 64 rows 8.25 -> 8 -> 128; 128 rows 4 -> 64
  // (docs/reference/flashinfer-attention-geometry.md section 3's table).
  EXPECT_EQ(FlashInferKvTileTokens(16, 233472, 232448), 128);
  EXPECT_EQ(FlashInferKvTileTokens(64, 233472, 232448), 128);
  EXPECT_EQ(FlashInferKvTileTokens(128, 233472, 232448), 64);
  EXPECT_EQ(FlashInferKvTileTokens(16, 102400, 101376), 64);
  EXPECT_EQ(FlashInferKvTileTokens(64, 102400, 101376), 64);
  EXPECT_EQ(FlashInferKvTileTokens(128, 102400, 101376), 32);
  EXPECT_EQ(FlashInferKvTileTokens(16, 167936, 166912), 128);
  EXPECT_EQ(FlashInferKvTileTokens(64, 167936, 166912), 128);
  EXPECT_EQ(FlashInferKvTileTokens(128, 167936, 166912), 64);
  // The opt-in per block binds where it is below half the SM's: 64 rows with 32 KiB -> (32768 -
  // 16384) / 8192 = 2 steps -> 32 tokens; nothing fits in 16 KiB.
  EXPECT_EQ(FlashInferKvTileTokens(64, 233472, 32768), 32);
  EXPECT_EQ(FlashInferKvTileTokens(64, 233472, 16384), 0);
}

TEST(FlashInferPlanner, KvChunkIsTheSmallestThatFitsTheGrid) {
  // SM120 at TP 2: floor(2 * 188 / 4) = 94 work items. 8 sequences of 4096 tokens need
  // ceil(4096 / c) <= 11 -> c >= 372.4 -> 373; one sequence: c >= 43.6, raised to the 128 minimum.
  EXPECT_EQ(FlashInferKvChunkTokens(8, 1, 4096, 94, 128), 373);
  EXPECT_EQ(FlashInferKvChunkTokens(1, 1, 4096, 94, 128), 128);
  // SM90 at TP 2 (66 items): ceil(4096 / c) <= 8 -> 512; two Q tiles per sequence halve the room.
  EXPECT_EQ(FlashInferKvChunkTokens(8, 1, 4096, 66, 128), 512);
  EXPECT_EQ(FlashInferKvChunkTokens(8, 2, 4096, 66, 128), 1024);
  // More sequences than items: the search ends at the whole context (one chunk each), and a context
  // shorter than the minimum keeps the minimum (one chunk).
  EXPECT_EQ(FlashInferKvChunkTokens(100, 1, 4096, 94, 128), 4096);
  EXPECT_EQ(FlashInferKvChunkTokens(1, 1, 100, 94, 128), 128);
}

TEST(FlashAttention3Splits, StaticHeuristicAsTheSourceHasIt) {
  // num_splits_heuristic (causal) on 132 SMs: with m row blocks over the KV heads, the wave
  // efficiency of s splits is w / ceil(w), w = m s / 132; the smallest s within 0.85 of the best.
  //   m 2, 32 KV tiles (4096 tokens): s <= 32, eff = 2s / 132, best 64 / 132; 0.85 of it needs s >= 27.2 -> 28
  //   m 2, unbounded context: s <= 128, best 1.0 at s = 66; 2s / 132 >= 0.85 -> s >= 56.1 -> 57
  //   m 1: best 128 / 132 at s = 128; s >= 0.85 x 128 = 108.8 -> 109;  m 4: 4s / 132 >= 0.85 -> 29;
  //   m 8: best 1.0 at s = 33 (w = 2); 8s / 132 >= 0.85 -> s >= 14.03 -> 15
  EXPECT_EQ(FlashAttention3StaticSplits(2, 132, 32, 128), 28);
  EXPECT_EQ(FlashAttention3StaticSplits(2, 132, int64_t{1} << 30, 128), 57);
  EXPECT_EQ(FlashAttention3StaticSplits(1, 132, int64_t{1} << 30, 128), 109);
  EXPECT_EQ(FlashAttention3StaticSplits(4, 132, int64_t{1} << 30, 128), 29);
  EXPECT_EQ(FlashAttention3StaticSplits(8, 132, int64_t{1} << 30, 128), 15);
  // No split for 4 KV tiles or fewer, nor where the row blocks fill 0.8 of the SMs (106 >= 105.6).
  EXPECT_EQ(FlashAttention3StaticSplits(2, 132, 4, 128), 1);
  EXPECT_EQ(FlashAttention3StaticSplits(106, 132, 1000, 128), 1);
  // 105 blocks: 0.795 of a wave at 1 to 4 splits (w = 0.80, 1.59, 2.39, 3.18), 0.994 at 5 (3.98).
  EXPECT_EQ(FlashAttention3StaticSplits(105, 132, 1000, 128), 5);
}

TEST(FlashAttention3Splits, DynamicSplitPerBatch) {
  // blocks_per_sm = ceil(b m n x 1.1 x kv_heads / 132); splits = min(ceil(n / that), static):
  //   b 1, n 32, 2 KV heads: ceil(0.533) = 1 -> 32, capped at 28;  b 8: ceil(4.27) = 5 -> ceil(32 / 5) = 7
  //   b 64: ceil(34.1) = 35 -> 1;  more than 992 sequences, or a static count of 1: 1
  EXPECT_EQ(FlashAttention3DynamicSplits(1, 1, 32, 2, 132, 28), 28);
  EXPECT_EQ(FlashAttention3DynamicSplits(1, 1, 32, 2, 132, 57), 32);
  EXPECT_EQ(FlashAttention3DynamicSplits(8, 1, 32, 2, 132, 32), 7);
  EXPECT_EQ(FlashAttention3DynamicSplits(64, 1, 32, 2, 132, 32), 1);
  EXPECT_EQ(FlashAttention3DynamicSplits(993, 1, 32, 2, 132, 32), 1);
  EXPECT_EQ(FlashAttention3DynamicSplits(1, 1, 32, 2, 132, 1), 1);
}

TEST(AttentionTime, TileCostsScaleWithTheTilesTokens) {
  // The tile costs are per kv_tile_tokens (128) tokens: a Q tile whose KV tile is 64 tokens walks
  // twice the tiles at half the cost each, so a latency- or throughput-bound walk costs the same.
  AttentionImplementation impl = SpecsimValidateKernel("flash_mma").value();
  impl.kv_tile_tokens = 128;
  impl.tile_ns = 1000;
  impl.row_ns = 0;
  impl.tile_latency_ns = 0;
  impl.row_latency_ns = 0;
  const double at_128 = AttentionTime(impl, Llama8bTp1(1, 1, 4096), 132, 4800).tiles_ns;
  impl.kv_tile_tokens_by_rows = {{16, 64}};
  const AttentionTerms t = AttentionTime(impl, Llama8bTp1(1, 1, 4096), 132, 4800);
  EXPECT_EQ(GeometryOf(impl, Llama8bTp1(1, 1, 4096), 132).kv_tile_tokens, 64);
  EXPECT_DOUBLE_EQ(t.tiles_ns, at_128);
  EXPECT_GT(at_128, 0);
}

TEST(AttentionTime, AMergeStepTakesSeveralPartials) {
  // flash_mma at b1 q1 4096 tokens on 132 SMs: 32 splits; 32 (row, head) pairs in one wave. One
  // partial per step: 1000 + 1 * (2000 + 200 * 32) = 9400 ns; 8 per step (FlashInfer's merge):
  // 1000 + 1 * (2000 + 200 * ceil(32 / 8)) = 3800 ns.
  AttentionImplementation impl = SpecsimValidateKernel("flash_mma").value();
  impl.combine_ns = 1000;
  impl.combine_block_ns = 2000;
  impl.combine_split_ns = 200;
  ASSERT_EQ(GeometryOf(impl, Llama8bTp1(1, 1, 4096), 132).splits, 32);
  EXPECT_DOUBLE_EQ(AttentionTime(impl, Llama8bTp1(1, 1, 4096), 132, 4800).combine_ns, 9400);
  impl.combine_splits_per_step = 8;
  EXPECT_DOUBLE_EQ(AttentionTime(impl, Llama8bTp1(1, 1, 4096), 132, 4800).combine_ns, 3800);
}

}  // namespace
}  // namespace specsim::compute
