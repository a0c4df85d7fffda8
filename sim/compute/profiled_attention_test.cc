#include "sim/compute/profiled_attention.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace specsim::compute {
namespace {

// Kernel names as the committed profiles (traces/profiles/torch-tp2-h200-fused-2026-11-30) and
// PyTorch's builds of FlashAttention-2 and xFormers write them.
TEST(ProfiledAttention, NamesFromTheKernelsFamilyAndTile) {
  EXPECT_EQ(
      ProfiledAttentionName(
          "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_cga1x1x1_kernel0_0",
          false),
      "cudnn_sdpa_sm90/64x128");
  EXPECT_EQ(
      ProfiledAttentionName(
          "cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_knob_35_16x128x128_1x4x1_cga1x1x1_kernel0_0",
          true),
      "cudnn_sdpa_sm80/16x128+split");
  EXPECT_EQ(
      ProfiledAttentionName("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, "
                            "false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, "
                            "cutlass::bfloat16_t> >, false, true, false, false, true, true, false>(Flash_fwd_params)",
                            false),
      "torch_flash_fwd/128x64");
  EXPECT_EQ(
      ProfiledAttentionName("void pytorch_flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, "
                            "false, false, cutlass::bfloat16_t>, true>(Flash_fwd_params)",
                            false),
      "torch_flash_fwd_splitkv/64x128+split");
  // The combine kernel, longer than the split kernel at many splits of one block each, names the
  // split kernel's call (traces/torch-kernel-probe/h200-1x-2026-12-04f.flash: 18 such calls).
  EXPECT_EQ(ProfiledAttentionName("void pytorch_flash::flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<128, "
                                  "64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, "
                                  "4, cutlass::bfloat16_t> >, 4, 5, false>(Flash_fwd_params)",
                                  true),
            "torch_flash_fwd_splitkv/64x128+split");
  EXPECT_EQ(ProfiledAttentionName("fmha_cutlassF_bf16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel)",
                                  false),
            "torch_mem_efficient/64x128");
  EXPECT_EQ(ProfiledAttentionName("void at::native::reduce_kernel<512, 1>", false), "");
}

TEST(ProfiledAttention, GeometryFromTheName) {
  const AttentionImplementation verify = ProfiledAttentionKernel("cudnn_sdpa_sm90/64x128").value();
  EXPECT_EQ(verify.row_tile, 64);
  EXPECT_EQ(verify.max_rows_per_block, 64);
  EXPECT_EQ(verify.kv_tile_tokens, 128);
  EXPECT_TRUE(verify.per_head_blocks);
  EXPECT_EQ(verify.max_splits, 1);
  EXPECT_TRUE(ValidateAttentionImplementation(verify).ok());
  const AttentionImplementation decode = ProfiledAttentionKernel("cudnn_sdpa_sm80/16x128+split").value();
  EXPECT_EQ(decode.max_splits, 0);
  EXPECT_TRUE(decode.splits_round_down);
  EXPECT_EQ(decode.min_split_tokens, 128);
  EXPECT_FALSE(ProfiledAttentionKernel("cudnn_sdpa_sm90/64x").ok());
  EXPECT_EQ(ProfiledAttentionKernel("flash_mma").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ProfiledAttentionKernel("cudnn_sdpa_sm90/0x128").status().code(), StatusCode::kInvalidArgument);
  // Either kind through one lookup; an unknown name lists both.
  EXPECT_EQ(AttentionKernelOfName("flash_mma").value().name, "flash_mma");
  EXPECT_EQ(AttentionKernelOfName("torch_mem_efficient/64x128").value().row_tile, 64);
  const Status unknown = AttentionKernelOfName("flashinfer").status();
  EXPECT_NE(unknown.message().find("flash_mla"), std::string::npos) << unknown.message();
  EXPECT_NE(unknown.message().find("cudnn_sdpa_smNN"), std::string::npos) << unknown.message();
}

// Per-head blocks: a Llama-3.1-8B TP2 verify of q = 2 at batch 8 (16 query heads, 4 KV heads per
// GPU, 4098 tokens) as cuDNN's 64x128 kernel runs it: one block per (sequence, query head) of 64
// padded rows holding 2 queries; blocks = 8 * 16 = 128 (packed, it would be 8 * 4 = 32 of 8 rows);
// no split: every block walks ceil(4098 / 128) = 33 tiles.
TEST(ProfiledAttention, PerHeadBlocksCountQueryHeadsNotKvGroups) {
  const AttentionImplementation impl = ProfiledAttentionKernel("cudnn_sdpa_sm90/64x128").value();
  AttentionCall c;
  c.seqs = 8;
  c.query_tokens = 2;
  c.q_heads = 16;
  c.kv_heads = 4;
  c.context = 4098;
  c.kv_bytes = 8.0 * 4 * 4098 * 256 * 2;
  const AttentionGeometry g = GeometryOf(impl, c, 132);
  EXPECT_EQ(g.rows_padded, 64);
  EXPECT_EQ(g.valid_rows, 2);
  EXPECT_EQ(g.blocks, 128);
  EXPECT_EQ(g.splits, 1);
  EXPECT_EQ(g.kv_tiles, 33);
  EXPECT_EQ(g.combine_waves, 0);
  AttentionImplementation packed = impl;
  packed.per_head_blocks = false;
  const AttentionGeometry p = GeometryOf(packed, c, 132);
  EXPECT_EQ(p.blocks, 32);
  EXPECT_EQ(p.valid_rows, 8);
  // The split decode kernel: floor(2 * 132 / (8 * 16)) = 2 splits at batch 8 (a merge pass); at
  // batch 1, floor(264 / 16) = 16 splits of ceil(4097 / 16) = 257 -> 3 tiles of 128.
  const AttentionImplementation decode = ProfiledAttentionKernel("cudnn_sdpa_sm80/16x128+split").value();
  c.query_tokens = 1;
  c.context = 4097;
  const AttentionGeometry eight = GeometryOf(decode, c, 132);
  EXPECT_EQ(eight.splits, 2);
  EXPECT_GT(eight.combine_waves, 0);
  c.seqs = 1;
  const AttentionGeometry one = GeometryOf(decode, c, 132);
  EXPECT_EQ(one.splits, 16);
  EXPECT_EQ(one.kv_tiles, 3);
}

// SGLang's Triton kernels (docs/reference/triton-attention-geometry.md): the worked examples of its
// section 5, Kimi-K2 at TP 8 (8 query heads on one latent head) and Llama-3.1-8B at TP 2 (16 query,
// 4 KV heads), batch 1, 4096 cached tokens.
TEST(ProfiledAttention, SglangTritonDecodeSplitsAsItsPlanner) {
  const AttentionImplementation mla = ProfiledAttentionKernel("triton_decode_mla/16x32").value();
  EXPECT_EQ(mla.split_policy, SplitPolicy::kSglangTriton);
  EXPECT_TRUE(mla.merge_always);
  EXPECT_FALSE(mla.per_head_blocks);
  AttentionCall kimi;
  kimi.q_heads = 8;
  kimi.kv_heads = 1;
  kimi.latent = true;
  kimi.context = 4096;
  // SM120, 188 SMs: cap max(8, 256) = 256; grid 1 x 8 heads (the planner's view); floor(188 log2(64))
  // = 1128 -> s2 = min(ceil(1128 / 8), 256) = 141; ceil(4096 / ceil(4096 / 141)) = ceil(4096 / 30)
  // = 137 splits of ceil(4096 / 137) = 30 -> 32 tokens: 128 splits hold tokens, one 32-token step each.
  EXPECT_EQ(SglangTritonSplits(mla, kimi, 188), 137);
  AttentionGeometry g = GeometryOf(mla, kimi, 188);
  EXPECT_EQ(g.splits, 128);
  EXPECT_EQ(g.blocks, 128);
  EXPECT_EQ(g.kv_tiles, 1);
  EXPECT_GT(g.combine_waves, 0);
  // H200, 132 SMs: 792 -> s2 = 99, chunk 42 -> 98 splits of 42 -> 64 tokens: 64 blocks of 2 steps.
  EXPECT_EQ(SglangTritonSplits(mla, kimi, 132), 98);
  g = GeometryOf(mla, kimi, 132);
  EXPECT_EQ(g.splits, 64);
  EXPECT_EQ(g.kv_tiles, 2);

  const AttentionImplementation gqa = ProfiledAttentionKernel("triton_decode/16x32").value();
  AttentionCall llama;
  llama.q_heads = 16;
  llama.kv_heads = 4;
  llama.context = 4096;
  // Grid 1 x 4 head tiles: s2 = min(ceil(1128 / 4), 8) = 8 -> 8 splits of 512 tokens (16 steps);
  // 4 x 8 = 32 blocks; the cap stays 8 without MLA.
  g = GeometryOf(gqa, llama, 188);
  EXPECT_EQ(g.splits, 8);
  EXPECT_EQ(g.blocks, 32);
  EXPECT_EQ(g.kv_tiles, 16);
  EXPECT_EQ(g.rows_per_block, 16);
  EXPECT_EQ(g.valid_rows, 4);
  // The merge runs with one split too (stage 2 is always launched).
  llama.splits = 1;
  EXPECT_GT(GeometryOf(gqa, llama, 188).combine_waves, 0);
  AttentionImplementation plain = gqa;
  plain.merge_always = false;
  EXPECT_EQ(GeometryOf(plain, llama, 188).combine_waves, 0);
}

// vLLM's TRITON_MLA decode: the same kernel with 4 splits whatever the context (triton_mla.py
// @0155494): at 4096 tokens 4 blocks of 1024 tokens, 32 steps of 32 each (SGLang's planner gives
// 128 blocks of one step on SM120); at 3 tokens, 3 splits of one token.
TEST(ProfiledAttention, VllmTritonMlaDecodeSplitsInFour) {
  const AttentionImplementation vllm = ProfiledAttentionKernel("vllm_triton_decode_mla/16x32").value();
  EXPECT_EQ(vllm.split_policy, SplitPolicy::kFixed);
  EXPECT_EQ(vllm.max_splits, 4);
  EXPECT_TRUE(vllm.merge_always);
  EXPECT_EQ(SameKernelBodyAs("vllm_triton_decode_mla/16x32"), "triton_decode_mla/16x32");
  EXPECT_EQ(SameKernelBodyAs("triton_decode_mla/16x32"), "");
  AttentionCall kimi;
  kimi.q_heads = 8;
  kimi.kv_heads = 1;
  kimi.latent = true;
  kimi.context = 4096;
  AttentionGeometry g = GeometryOf(vllm, kimi, 188);
  EXPECT_EQ(g.splits, 4);
  EXPECT_EQ(g.blocks, 4);
  EXPECT_EQ(g.kv_tiles, 32);
  kimi.context = 3;
  EXPECT_EQ(GeometryOf(vllm, kimi, 188).splits, 3);
}

TEST(ProfiledAttention, SglangTritonExtendWalksTheWholeContextPerHead) {
  const AttentionImplementation sm120 = ProfiledAttentionKernel("triton_extend_mla/32x32").value();
  EXPECT_TRUE(sm120.per_head_blocks);
  EXPECT_EQ(sm120.max_splits, 1);
  AttentionCall verify;
  verify.q_heads = 8;
  verify.kv_heads = 1;
  verify.latent = true;
  verify.query_tokens = 4;
  verify.context = 4100;  // 4096 cached + the 4 new tokens
  // One block per query head (grid (1, 8, ceil(4 / 32))), no split: 8 blocks, each walking
  // ceil(4100 / 32) = 129 steps; on SM120's 188 SMs one round.
  const AttentionGeometry g = GeometryOf(sm120, verify, 188);
  EXPECT_EQ(g.blocks, 8);
  EXPECT_EQ(g.splits, 1);
  EXPECT_EQ(g.kv_tiles, 129);
  EXPECT_EQ(g.rounds, 1);
  EXPECT_EQ(g.valid_rows, 4);
  EXPECT_EQ(g.combine_waves, 0);
  EXPECT_EQ(ProfiledAttentionKernel("triton_extend/128x64").value().kv_tile_tokens, 64);
  EXPECT_EQ(ProfiledAttentionKernel("triton_prefill/32x32").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ProfiledAttentionKernel("triton_extend/0x32").status().code(), StatusCode::kNotFound);
  // Digits past an int are a name error, not a crash (std::stoi would throw).
  EXPECT_FALSE(ProfiledAttentionKernel("triton_extend/99999999999999999999x32").ok());
  EXPECT_FALSE(ProfiledAttentionKernel("cudnn_sdpa_sm90/99999999999999999999x128").ok());
}

// FlashAttention-2's split count against the launches PyTorch made on the H200 (132 SMs):
// traces/torch-kernel-probe/h200-1x-2026-12-04f.flash's Kineto grids, (m blocks, splits, seqs x
// heads) of flash_fwd_splitkv_kernel, or flash_fwd_kernel's (1, seqs, heads) where one split
// (the table holds every split count the 420 launches showed; all 420 agree, checked when the
// trace was committed). The context is the cached tokens plus the q new ones, as the probe's.
TEST(ProfiledAttention, FlashAttention2SplitsAsTheH200Launched) {
  const AttentionImplementation fa2 = ProfiledAttentionKernel("torch_flash_fwd_splitkv/64x128+split").value();
  EXPECT_EQ(fa2.split_policy, SplitPolicy::kFlashAttention2);
  EXPECT_TRUE(fa2.gqa_rows_at_q1);
  EXPECT_EQ(fa2.combine_rows_per_block, 4);  // kBlockM of the combine kernel at head_dim 128 ...
  EXPECT_EQ(ProfiledAttentionKernel("torch_flash_fwd_splitkv/64x256+split").value().combine_rows_per_block,
            8);  // ... and at 64, whose split kernel's tile is 64 x 256
  struct Launch {
    int q_heads, kv_heads, seqs, cached, q, splits, blocks;
  };
  for (const Launch& l :
       std::vector<Launch>{{32, 8, 1, 512, 1, 5, 5 * 8},  // q = 1: 8 KV heads x 4 folded rows
                           {32, 8, 1, 512, 2, 5, 5 * 32},
                           {32, 8, 1, 1024, 1, 9, 9 * 8},
                           {32, 8, 1, 2048, 1, 17, 17 * 8},
                           {32, 8, 1, 2048, 2, 6, 6 * 32},
                           {32, 8, 1, 4096, 1, 33, 33 * 8},
                           {32, 8, 1, 4096, 2, 33, 33 * 32},
                           {32, 8, 1, 8192, 2, 8, 8 * 32},  // 65 blocks: 8 at 0.97 efficiency
                           {32, 8, 2, 512, 2, 3, 3 * 64},   // 4 not eligible (2 blocks each, as 3)
                           {32, 8, 2, 2048, 2, 4, 4 * 64},
                           {32, 8, 4, 512, 2, 2, 2 * 128},
                           {32, 8, 4, 2048, 1, 6, 6 * 32},
                           {32, 8, 4, 8192, 1, 8, 8 * 32},
                           {32, 8, 8, 512, 1, 3, 3 * 64},
                           {32, 8, 8, 512, 2, 1, 8 * 32},  // 256 blocks >= 0.8 x 264: flash_fwd_kernel
                           {32, 8, 8, 2048, 1, 4, 4 * 64},
                           {16, 4, 1, 1024, 2, 9, 9 * 16},
                           {16, 4, 1, 8192, 1, 65, 65 * 4},
                           {8, 2, 1, 2048, 2, 17, 17 * 8}}) {
    AttentionCall call;
    call.seqs = l.seqs;
    call.q_heads = l.q_heads;
    call.kv_heads = l.kv_heads;
    call.query_tokens = l.q;
    call.context = l.cached + l.q;
    const AttentionGeometry g = GeometryOf(fa2, call, 132);
    const std::string at = "h" + std::to_string(l.q_heads) + "/" + std::to_string(l.kv_heads) + " b" +
                           std::to_string(l.seqs) + " c" + std::to_string(l.cached) + " q" + std::to_string(l.q);
    EXPECT_EQ(g.splits, l.splits) << at;
    EXPECT_EQ(g.blocks, l.blocks) << at;
    // A split walks ceil(n_blocks / splits) of the context's 128-token blocks.
    EXPECT_EQ(g.kv_tiles, (call.context + 127) / 128 / l.splits + ((call.context + 127) / 128 % l.splits != 0)) << at;
  }
  // The heuristic alone: 1 at 0.8 x slots; else the first eligible count within 0.85 of the best.
  EXPECT_EQ(FlashAttention2Splits(212, 264, 64, 128), 1);
  // 211 blocks: 1-4 splits fill 0.80 of their last wave, 5 fill 3.996 waves (0.999): 5.
  EXPECT_EQ(FlashAttention2Splits(211, 264, 64, 128), 5);
  EXPECT_EQ(FlashAttention2Splits(8, 264, 32, 128), 32);  // only 32 splits fill a wave (264 of 256)
  EXPECT_EQ(FlashAttention2Splits(8, 264, 32, 16), 16);   // capped: the best of those left
}

// vLLM's FLASH_ATTN on FlashAttention-2 (docs/reference/fa2-geometry.md section 5): its fork
// splits only the folded q = 1 call; a verify call is one split per (sequence, query head).
TEST(ProfiledAttention, VllmFlashAttention2SplitsOnlyDecode) {
  EXPECT_EQ(SameKernelBodyAs("vllm_fa2_decode/64x128"), "torch_flash_fwd_splitkv/64x128+split");
  EXPECT_EQ(SameKernelBodyAs("vllm_fa2_verify/64x128"), "torch_flash_fwd_splitkv/64x128+split");
  AttentionCall call;
  call.q_heads = 32;
  call.kv_heads = 8;
  call.context = 4096;
  const AttentionImplementation decode = ProfiledAttentionKernel("vllm_fa2_decode/64x128").value();
  AttentionGeometry g = GeometryOf(decode, call, 132);
  EXPECT_EQ(g.splits, 32);  // fa2-geometry.md's worked table: grid (1, 32, 8)
  EXPECT_EQ(g.blocks, 32 * 8);
  EXPECT_GT(g.combine_waves, 0);
  call.query_tokens = 4;
  call.context = 4100;
  g = GeometryOf(ProfiledAttentionKernel("vllm_fa2_verify/64x128").value(), call, 132);
  EXPECT_EQ(g.splits, 1);
  EXPECT_EQ(g.blocks, 32);  // (1, 1, 32)
  EXPECT_EQ(g.kv_tiles, 33);
  EXPECT_EQ(g.combine_waves, 0);
}

// A call of the worked examples: `seqs` sequences of 4096 cached tokens (verify's KV length the
// context plus its q tokens).
AttentionCall WorkedExampleCall(int q_heads, int kv_heads, int seqs, int q) {
  AttentionCall call;
  call.seqs = seqs;
  call.q_heads = q_heads;
  call.kv_heads = kv_heads;
  call.query_tokens = q;
  call.context = 4096 + (q > 1 ? q : 0);
  return call;
}

TEST(ProfiledAttention, FlashInferAsSglangPlansIt) {
  // docs/reference/flashinfer-attention-geometry.md section 4 (Llama-3.1-8B, 4096 cached tokens,
  // G = 4; SM120 188 SMs, SM90 132 SMs): the Q tile, the KV tile, the chunks, the working CTAs
  // (work items x KV heads) and the KV tiles a CTA walks, as FlashInfer's planner and dispatcher
  // give them. Verify's KV length is the context plus the draft tokens.
  struct Plan {
    const char* name;
    int sms, q_heads, kv_heads, seqs, q, cta_q, kv_tile, chunks, blocks, tiles;
  };
  for (const Plan& p :
       std::vector<Plan>{// decode, graph: 4 packed rows in a 16-row tile
                         {"flashinfer_fa2_graph/sm120", 188, 16, 4, 1, 1, 16, 64, 32, 128, 2},
                         {"flashinfer_fa2_graph/sm120", 188, 16, 4, 8, 1, 16, 64, 11, 352, 6},
                         {"flashinfer_fa2_graph/sm120", 188, 8, 2, 1, 1, 16, 64, 32, 64, 2},
                         {"flashinfer_fa2_graph/sm120", 188, 8, 2, 8, 1, 16, 64, 23, 368, 3},
                         {"flashinfer_fa2_graph/sm90", 132, 16, 4, 1, 1, 16, 128, 32, 128, 1},
                         {"flashinfer_fa2_graph/sm90", 132, 16, 4, 8, 1, 16, 128, 8, 256, 4},
                         {"flashinfer_fa2_graph/sm90", 132, 8, 2, 8, 1, 16, 128, 16, 256, 2},
                         // verify, graph: the Q tile for the ragged worst case (b (q - 1) + 1) G
                         {"flashinfer_fa2_graph/sm120", 188, 16, 4, 1, 4, 16, 64, 33, 132, 2},
                         {"flashinfer_fa2_graph/sm120", 188, 16, 4, 1, 8, 64, 64, 33, 132, 2},
                         {"flashinfer_fa2_graph/sm120", 188, 16, 4, 8, 4, 128, 32, 11, 352, 12},
                         {"flashinfer_fa2_graph/sm120", 188, 16, 4, 8, 8, 128, 32, 11, 352, 12},
                         {"flashinfer_fa2_graph/sm120", 188, 8, 2, 8, 4, 128, 32, 23, 368, 6},
                         {"flashinfer_fa2_graph/sm90", 132, 16, 4, 8, 4, 128, 64, 8, 256, 9},
                         {"flashinfer_fa2_graph/sm90", 132, 8, 2, 8, 4, 128, 64, 16, 256, 5},
                         // verify, eager: the Q tile from the call's own rows (16 at q = 4, 64 at q = 8)
                         {"flashinfer_fa2/sm120", 188, 16, 4, 8, 4, 16, 64, 11, 352, 6},
                         {"flashinfer_fa2/sm120", 188, 8, 2, 8, 4, 16, 64, 23, 368, 3},
                         {"flashinfer_fa2/sm90", 132, 16, 4, 8, 4, 16, 128, 8, 256, 5},
                         {"flashinfer_fa2/sm90", 132, 8, 2, 8, 8, 64, 128, 16, 256, 3}}) {
    const AttentionImplementation fi = ProfiledAttentionKernel(p.name).value();
    const AttentionGeometry g = GeometryOf(fi, WorkedExampleCall(p.q_heads, p.kv_heads, p.seqs, p.q), p.sms);
    const std::string at = std::string(p.name) + " h" + std::to_string(p.q_heads) + "/" + std::to_string(p.kv_heads) +
                           " b" + std::to_string(p.seqs) + " q" + std::to_string(p.q);
    EXPECT_EQ(g.rows_per_block, p.cta_q) << at;
    EXPECT_EQ(g.kv_tile_tokens, p.kv_tile) << at;
    EXPECT_EQ(g.splits, p.chunks) << at;
    EXPECT_EQ(g.blocks, p.blocks) << at;
    EXPECT_EQ(g.kv_tiles, p.tiles) << at;
    EXPECT_EQ(g.resident, 2) << at;
    EXPECT_EQ(g.combine_waves, 1) << at;  // every call here splits; at most 2 x 188 pairs per SM's 12 blocks
  }
  // Under a graph the merge runs for one chunk too; planned eagerly it does not.
  AttentionCall many;
  many.seqs = 64;
  many.q_heads = 16;
  many.kv_heads = 4;
  many.context = 4096;
  const AttentionImplementation graph = ProfiledAttentionKernel("flashinfer_fa2_graph/sm90").value();
  const AttentionImplementation eager = ProfiledAttentionKernel("flashinfer_fa2/sm90").value();
  EXPECT_EQ(GeometryOf(graph, many, 132).splits, 1);
  EXPECT_EQ(GeometryOf(graph, many, 132).combine_waves, 1);
  EXPECT_EQ(GeometryOf(eager, many, 132).combine_waves, 0);
  // An architecture whose shared memory the name does not know is no FlashInfer name.
  EXPECT_FALSE(ProfiledAttentionKernel("flashinfer_fa2_graph/sm75").ok());
  EXPECT_EQ(SameCostClassAs("flashinfer_fa2/sm120"), "torch_flash_fwd_splitkv/64x128+split");
  EXPECT_EQ(SameCostClassAs("torch_flash_fwd/128x64"), "");
}

// FlashInfer's planner and dispatcher as they ran on the H200 (132 SMs): the plans
// validate/flashinfer_attention_probe.py recorded (traces/flashinfer-attention-probe/*.plans.json;
// FlashInfer @fb28d724 through validate/flashinfer_probe; the sm120 names with SM120's shared memory
// told to FlashInfer, on the H200's SMs): run -05 Llama-3.1-8B's heads at TP 1/2/4, batch 1-16,
// 512-8192 tokens (1,200 calls); run -05b GQA groups of 8 (64/8, 16/2, 8/1), batch 1-64, 1k-16k
// tokens (432); run -05c verify of 16, 32 and 64 tokens (216); run -05d a repeat of part of -05
// (192). Per call: the Q tile, the KV tile of the kernel that ran (its KernelTraits), the KV
// chunks ceil(kv_len / kv_chunk_size), the working CTAs (sequences x Q tiles x chunks x KV heads)
// and whether the merge kernel ran.
TEST(ProfiledAttention, FlashInferAsTheH200Planned) {
  for (const auto& [file, calls] : std::vector<std::pair<std::string, int>>{{"h200-1x-2026-12-05", 1200},
                                                                            {"h200-1x-2026-12-05b", 432},
                                                                            {"h200-1x-2026-12-05c", 216},
                                                                            {"h200-1x-2026-12-05d", 192}}) {
    std::ifstream in(std::string(SPECSIM_SOURCE_DIR) + "/traces/flashinfer-attention-probe/" + file +
                     ".json.plans.json");
    ASSERT_TRUE(in.good()) << file;
    const nlohmann::json plans = nlohmann::json::parse(in);
    ASSERT_EQ(plans["sm_count"].get<int>(), 132);
    int checked = 0;
    for (const nlohmann::json& p : plans["plans"]) {
      const std::string impl = p["implementation"].get<std::string>();
      const std::string at = file + " " + p["label"].get<std::string>();
      AttentionCall call;
      call.seqs = p["batch"].get<int>();
      call.q_heads = p["q_heads"].get<int>();
      call.kv_heads = p["kv_heads"].get<int>();
      call.query_tokens = p["query_tokens"].get<int>();
      call.context = p["kv_len"].get<int64_t>();
      const AttentionGeometry g = GeometryOf(ProfiledAttentionKernel(impl).value(), call, 132);
      const int64_t cta_q = p["cta_tile_q"].get<int64_t>();
      const int64_t chunk = p["kv_chunk_size"].get<int64_t>();
      const int64_t chunks = (call.context + chunk - 1) / chunk;
      const int64_t q_tiles = (call.query_tokens * (call.q_heads / call.kv_heads) + cta_q - 1) / cta_q;
      EXPECT_EQ(g.rows_per_block, cta_q) << at;
      EXPECT_EQ(g.kv_tile_tokens, p["kernel"]["cta_tile_kv"].get<int64_t>()) << at;
      EXPECT_EQ(g.splits, chunks) << at;
      EXPECT_EQ(g.blocks, call.seqs * q_tiles * chunks * call.kv_heads) << at;
      EXPECT_EQ(g.combine_waves > 0, !p["merge_grid"].is_null()) << at;
      ++checked;
    }
    EXPECT_EQ(checked, calls) << file;
  }
}

TEST(ProfiledAttention, FlashAttention3AsTheFrameworksCallIt) {
  // docs/reference/fa3-geometry.md (H200, 132 SMs; Llama-3.1-8B at TP 4: 8 query heads, 2 KV heads,
  // G = 4; 4096 cached tokens, 32 KV tiles of 128; verify's KV length the context plus q): the row
  // tile, the splits that hold KV tiles, the (sequence, KV head, row block, split) tiles and the KV
  // tiles each walks, and whether the combine runs.
  //   vLLM graph, b 1: S 32 passed, per batch min(32 / 1, 32) = 32 -> 1 tile each, 2 x 32 = 64 tiles
  //   vLLM eager, b 1: S = the heuristic, 28; 28 splits of ceil(32 / 28) = 2 tiles: 16 hold tiles
  //   SGLang graph, b 1: 128-row tile, S 57 (the model's context), per batch 32; eager as vLLM's
  //   b 8: ceil(8 x 32 x 1.1 x 2 / 132) = 5 per SM -> 7 splits of 5 tiles; b 64: 35 -> 1 split
  //   verify q 4, b 8, 4100 tokens (33 tiles): ceil(4.4) = 5 -> 7 splits of 5 tiles
  //   G 16 at q 8 (4 KV heads, 33 tiles): 128 rows, over vLLM's 64-row tile: the 128-row one; ceil(1.1)
  //   = 2 per SM -> 17 splits of 2 tiles
  struct Plan {
    const char* name;
    int q_heads, kv_heads, seqs, q, row_tile, splits, blocks, tiles;
    bool combine;
  };
  for (const Plan& p : std::vector<Plan>{{"vllm_fa3_graph/sm90", 8, 2, 1, 1, 64, 32, 64, 1, true},
                                         {"vllm_fa3/sm90", 8, 2, 1, 1, 64, 16, 32, 2, true},
                                         {"sglang_fa3_graph/sm90", 8, 2, 1, 1, 128, 32, 64, 1, true},
                                         {"sglang_fa3/sm90", 8, 2, 1, 1, 128, 16, 32, 2, true},
                                         {"vllm_fa3_graph/sm90", 8, 2, 8, 1, 64, 7, 112, 5, true},
                                         {"vllm_fa3_graph/sm90", 8, 2, 64, 1, 64, 1, 128, 32, true},
                                         {"vllm_fa3_graph/sm90", 8, 2, 8, 4, 64, 7, 112, 5, true},
                                         {"vllm_fa3_graph/sm90", 64, 4, 1, 8, 128, 17, 68, 2, true}}) {
    const AttentionImplementation fa3 = ProfiledAttentionKernel(p.name).value();
    const AttentionGeometry g = GeometryOf(fa3, WorkedExampleCall(p.q_heads, p.kv_heads, p.seqs, p.q), 132);
    const std::string at = std::string(p.name) + " b" + std::to_string(p.seqs) + " q" + std::to_string(p.q);
    EXPECT_EQ(g.rows_per_block, p.row_tile) << at;
    EXPECT_EQ(g.kv_tile_tokens, 128) << at;
    EXPECT_EQ(g.splits, p.splits) << at;
    EXPECT_EQ(g.blocks, p.blocks) << at;
    EXPECT_EQ(g.kv_tiles, p.tiles) << at;
    EXPECT_EQ(g.resident, 1) << at;
    EXPECT_EQ(g.combine_waves > 0, p.combine) << at;
  }
  EXPECT_EQ(SameCostClassAs("vllm_fa3_graph/sm90"), "torch_flash_fwd_splitkv/64x128+split");
  EXPECT_EQ(SameCostClassAs("sglang_fa3/sm90"), "torch_flash_fwd_splitkv/64x128+split");
  EXPECT_FALSE(ProfiledAttentionKernel("vllm_fa3_graph/sm80").ok());  // FlashAttention-3 is Hopper's
}

}  // namespace
}  // namespace specsim::compute
