#include "sim/compute/profiled_attention.h"

#include <optional>
#include <regex>

namespace specsim::compute {
namespace {

constexpr const char* kSplitSuffix = "+split";

std::string NameOf(const std::string& family, const std::string& rows, const std::string& tokens, bool split) {
  return family + "/" + rows + "x" + tokens + (split ? kSplitSuffix : "");
}

}  // namespace

std::string ProfiledAttentionName(const std::string& k, bool split_reduction) {
  std::smatch m;
  // cuDNN's generated SDPA kernels: ..._sdpa_sm<arch>_..._<Br>x<Bc>x<D>_<warps>...
  static const std::regex kCudnn(R"(sdpa_(sm\d+)_.*?_(\d+)x(\d+)x\d+_\d+x\d+x\d+)");
  if (k.find("cudnn") != std::string::npos && std::regex_search(k, m, kCudnn))
    return NameOf("cudnn_sdpa_" + m[1].str(), m[2].str(), m[3].str(), split_reduction);
  // FlashAttention-2 as PyTorch builds it: Flash_fwd_kernel_traits<head_dim, kBlockM, kBlockN, warps, ...>.
  // The combine kernel carries the split kernel's traits and can be the longer of the two (many
  // splits of one block each): it names the split kernel's call.
  static const std::regex kFlash(
      R"((flash_fwd(?:_splitkv)?)(_combine)?_kernel<\s*Flash_fwd_kernel_traits<\s*\d+,\s*(\d+),\s*(\d+),)");
  if (std::regex_search(k, m, kFlash)) {
    const bool split = m[1].str() == "flash_fwd_splitkv";
    return NameOf("torch_" + m[1].str(), m[3].str(), m[4].str(), split_reduction || split);
  }
  // xFormers' CUTLASS kernels (PyTorch's memory-efficient SDPA): fmha_cutlassF_<dtype>_aligned_<Br>x<Bc>_...
  static const std::regex kCutlass(R"(fmha_cutlassF_\w+?_(\d+)x(\d+)_)");
  if (std::regex_search(k, m, kCutlass)) return NameOf("torch_mem_efficient", m[1].str(), m[2].str(), split_reduction);
  return "";
}

namespace {

// SGLang's Triton-backend kernels (docs/reference/triton-attention-geometry.md; timed on the GPU
// machine as validate/triton_attention_probe.py's kernels of the same launch geometry):
//   triton_decode[_mla]/RxT  grouped decode stage 1: R = BLOCK_H query heads of one KV head per
//                            block, T = BLOCK_N tokens per step, SGLang's split planner, stage 2
//                            (one block per (sequence, head)) launched for one split too;
//   triton_extend[_mla]/MxT  extend / verify: M = BLOCK_M query tokens of one query head per block,
//                            the whole context walked in T-token steps, no split.
// "_mla": the latent-cache instantiation (576-wide keys, values within them), its own costs.
// [ASSUMED] resident blocks per SM: the MLA kernels and the extend kernel 1 (their key tiles of
// 576 x 32-64 bf16 take 36-74 KiB of shared memory, and SM120 has about 100 KiB); GQA decode 4 (4
// warps, 8 KiB key and value tiles in 2 stages, registers for a 16 x 128 fp32 accumulator). As for
// the profiled kernels above, a wrong count moves the fitted costs, not the geometry's shape.
std::optional<AttentionImplementation> SglangTritonKernel(const std::string& name) {
  // vLLM's TRITON_MLA decode: the same lightllm kernel (vllm/v1/attention/ops/
  // triton_decode_attention.py @0155494: grid (batch, head tiles, splits), BLOCK_H 16, BLOCK_N 32,
  // 4 warps, 2 stages, stage 2 always), with 4 splits whatever the context (triton_mla.py @0155494
  // forward_mqa) and no rounding of a split to 32 tokens.
  static const std::regex kVllm(R"(vllm_triton_decode_mla/(\d{1,5})x(\d{1,5}))");
  std::smatch v;
  if (std::regex_match(name, v, kVllm)) {
    std::optional<AttentionImplementation> impl =
        SglangTritonKernel("triton_decode_mla/" + v[1].str() + "x" + v[2].str());
    if (!impl) return std::nullopt;
    impl->name = name;
    impl->split_policy = SplitPolicy::kFixed;
    impl->max_splits = 4;
    impl->min_split_tokens = 1;
    return impl;
  }
  static const std::regex kName(R"(triton_(decode|extend)(_mla)?/(\d{1,5})x(\d{1,5}))");
  std::smatch m;
  if (!std::regex_match(name, m, kName)) return std::nullopt;
  const int rows = std::stoi(m[3].str()), tokens = std::stoi(m[4].str());
  if (rows < 1 || rows > 1024 || tokens < 1 || tokens > 4096) return std::nullopt;
  AttentionImplementation impl;
  impl.name = name;
  impl.row_tile = rows;
  impl.max_rows_per_block = rows;
  impl.kv_tile_tokens = tokens;
  const bool mla = m[2].matched;
  if (m[1].str() == "decode") {
    impl.blocks_per_sm = mla ? 1 : 4;
    impl.split_policy = SplitPolicy::kSglangTriton;
    impl.max_splits = 8;         // --triton-attention-num-kv-splits (server_args.py), MLA raised per GPU
    impl.min_split_tokens = 32;  // MIN_BLOCK_KV
    impl.merge_always = true;
  } else {
    impl.per_head_blocks = true;
    impl.blocks_per_sm = 1;
    impl.max_splits = 1;
  }
  return impl;
}

// vLLM's FLASH_ATTN backend on FlashAttention-2 (SM80/86/89/120; docs/reference/fa2-geometry.md
// section 5): vllm-project/flash-attention's flash_fwd_splitkv_kernel, always (a paged KV cache
// forces the split kernel: mha_varlen_fwd), vLLM passing num_splits = 0 (vllm/v1/attention/
// backends/flash_attn.py, FA2 even under full CUDA graphs):
//   vllm_fa2_decode/RxT  q = 1: the query heads folded into the rows, num_splits_heuristic, the
//                        combine kernel when it splits;
//   vllm_fa2_verify/RxT  q > 1: the fork splits only folded calls ("Only apply split-k for
//                        decoding"), so one split, one block per (sequence, query head) walking the
//                        whole context, no combine.
// The same kernel body as PyTorch's copy of FlashAttention-2 (SameKernelBodyAs).
std::optional<AttentionImplementation> VllmFlashAttentionKernel(const std::string& name) {
  static const std::regex kName(R"(vllm_fa2_(decode|verify)/(\d{1,5})x(\d{1,5}))");
  std::smatch m;
  if (!std::regex_match(name, m, kName)) return std::nullopt;
  StatusOr<AttentionImplementation> impl =
      ProfiledAttentionKernel("torch_flash_fwd_splitkv/" + m[2].str() + "x" + m[3].str() + "+split");
  if (!impl.ok()) return std::nullopt;
  impl->name = name;
  if (m[1].str() == "verify") {
    impl->split_policy = SplitPolicy::kOccupancy;
    impl->max_splits = 1;
  }
  return *impl;
}

// FlashInfer's FA2 paged kernel (BatchPrefillWithPagedKVCacheKernel) as SGLang's FlashInfer
// backend plans it for verify and, with tensor cores (GQA group >= 4), decode
// (docs/reference/flashinfer-attention-geometry.md; flashinfer-ai/flashinfer @fb28d724):
//   flashinfer_fa2[_graph]/smNN   planned without / for a CUDA graph, on compute capability NN.
// The KV tile per Q tile follows from the architecture's shared memory (FlashInferKvTileTokens;
// per SM / per block opt-in, CUDA C++ Programming Guide, "Technical Specifications per Compute
// Capability": 8.0 164 / 163 KiB, 8.6, 8.9 and 12.0 100 / 99 KiB (FlashInfer's utils.cuh names
// 101376 B for SM86/89/120), 9.0 and 10.0 228 / 227 KiB). Resident blocks 2: ptxas gives the
// kernels 163-255 registers x 128 threads for sm_90 and sm_120 (validate/flashinfer_probe/build.sh
// --resource-usage at @fb28d724), and FlashInfer's planner assumes 2 (num_blocks_per_sm). The merge
// (PersistentVariableLengthMergeStatesKernel<8, 16, 8, 4>): 40 registers x 128 threads, 12 blocks
// per SM, one (query row, head) pair per block at a time, its partials 8 (bdy) per step (cascade.cuh
// @fb28d724: ceil(num_index_sets / bdy) iterations). The tile costs are per 128 KV tokens
// (kv_tile_tokens, FlashAttention-2's split kernel's tile), scaled by each Q tile's KV tile.
std::optional<AttentionImplementation> FlashInferKernel(const std::string& name) {
  static const std::regex kName(R"(flashinfer_fa2(_graph)?/sm(\d{2,3}))");
  std::smatch m;
  if (!std::regex_match(name, m, kName)) return std::nullopt;
  struct Smem {
    const char* arch;
    int per_sm, per_block;
  };
  static constexpr Smem kSmem[] = {{"80", 167936, 166912}, {"86", 102400, 101376},  {"89", 102400, 101376},
                                   {"90", 233472, 232448}, {"100", 233472, 232448}, {"120", 102400, 101376}};
  const Smem* smem = nullptr;
  for (const Smem& s : kSmem)
    if (m[2].str() == s.arch) smem = &s;
  if (smem == nullptr) return std::nullopt;
  AttentionImplementation impl;
  impl.name = name;
  impl.split_policy = SplitPolicy::kFlashInfer;
  impl.planned_for_graph = m[1].matched;
  impl.row_tile = 16;
  impl.max_rows_per_block = 128;
  impl.kv_tile_tokens = 128;
  for (int rows : {16, 64, 128})
    impl.kv_tile_tokens_by_rows.push_back({rows, FlashInferKvTileTokens(rows, smem->per_sm, smem->per_block)});
  impl.blocks_per_sm = 2;
  impl.split_blocks_per_sm = 2;  // num_blocks_per_sm in PrefillPlanImpl
  impl.min_split_tokens = 128;   // min_kv_chunk_size = 128 / page_size, SGLang's page size 1
  impl.combine_blocks_per_sm = 12;
  impl.combine_splits_per_step = 8;  // bdy: the merge's 8 warps-rows each take one partial per step
  return impl;
}

// FlashAttention-3 on Hopper as the frameworks call it for decode and verify (attention_cost.h
// kFlashAttention3; docs/reference/fa3-geometry.md), head_dim 128, bf16, causal, paged:
//   vllm_fa3[_graph]/sm90    vLLM's fork (vllm-project/flash-attention @2adfc8c2, which vLLM's
//                            cmake/external_projects/vllm_flash_attn.cmake pins): kBlockM 64 where
//                            q G <= 64 (use_one_mma_wg), else 128; under full CUDA graphs vLLM passes
//                            num_splits 32 (flash_attn_max_num_splits_for_cuda_graph, vllm/config/
//                            attention.py), without a graph 0 (the heuristic);
//   sglang_fa3[_graph]/sm90  sgl-kernel's build of sgl-project/sgl-attn: kBlockM 128 always; SGLang
//                            passes num_splits 0, so the heuristic, which under a graph sees the
//                            page table's width, the model's context.
// kBlockN 128 (paged without TMA: 1- and 16-token pages are no multiple of the tile; causal), one
// block per SM (~144-160 KiB of shared memory, launch bound 1). The combine kernel
// (flash_fwd_combine, head_dim 128): 8 (token, head) rows x 128 values per 256-thread block, at
// least 2 blocks per SM (its launch bound; more not settled). Costs: FlashAttention-2's split kernel's
// through SameCostClassAs (its 64 x 128 tile is vLLM's one-warpgroup tile; Hopper's wgmma path is
// not measured here: an upper bound where the tiles bind).
std::optional<AttentionImplementation> FlashAttention3Kernel(const std::string& name) {
  static const std::regex kName(R"((vllm|sglang)_fa3(_graph)?/sm90)");
  std::smatch m;
  if (!std::regex_match(name, m, kName)) return std::nullopt;
  const bool vllm = m[1].str() == "vllm", graph = m[2].matched;
  AttentionImplementation impl;
  impl.name = name;
  impl.split_policy = SplitPolicy::kFlashAttention3;
  impl.row_tile = vllm ? 64 : 128;
  impl.max_rows_per_block = 128;
  impl.kv_tile_tokens = 128;
  impl.blocks_per_sm = 1;
  impl.max_splits = vllm && graph ? 32 : 0;
  impl.planned_for_graph = graph && !vllm;
  impl.combine_rows_per_block = 8;
  impl.combine_blocks_per_sm = 2;
  return impl;
}

}  // namespace

StatusOr<AttentionImplementation> ProfiledAttentionKernel(const std::string& name) {
  if (std::optional<AttentionImplementation> triton = SglangTritonKernel(name)) return *triton;
  if (std::optional<AttentionImplementation> vllm = VllmFlashAttentionKernel(name)) return *vllm;
  if (std::optional<AttentionImplementation> fi = FlashInferKernel(name)) return *fi;
  if (std::optional<AttentionImplementation> fa3 = FlashAttention3Kernel(name)) return *fa3;
  static const std::regex kName(
      R"((cudnn_sdpa_sm\d+|torch_flash_fwd|torch_flash_fwd_splitkv|torch_mem_efficient)/(\d{1,9})x(\d{1,9})(\+split)?)");
  std::smatch m;
  if (!std::regex_match(name, m, kName))
    return NotFoundError(
        "attention implementation '" + name +
        "': not a profiled kernel name (cudnn_sdpa_smNN/RxT, torch_flash_fwd/RxT, "
        "torch_flash_fwd_splitkv/RxT, torch_mem_efficient/RxT, '+split' when split over the "
        "context; SGLang's Triton kernels triton_decode[_mla]/RxT, triton_extend[_mla]/RxT; vLLM's "
        "vllm_triton_decode_mla/RxT; vLLM's FlashAttention-2 vllm_fa2_decode/RxT, vllm_fa2_verify/RxT; "
        "FlashInfer's FA2 as SGLang plans it flashinfer_fa2[_graph]/smNN for NN in 80, 86, 89, 90, 100, 120; "
        "FlashAttention-3 as vLLM and SGLang call it vllm_fa3[_graph]/sm90, sglang_fa3[_graph]/sm90)");
  const int rows = std::stoi(m[2].str()), tokens = std::stoi(m[3].str());
  if (rows < 1 || rows > 1024 || tokens < 1 || tokens > 4096)
    return InvalidArgumentError("attention implementation '" + name + "': tile " + m[2].str() + "x" + m[3].str() +
                                " outside 1..1024 rows x 1..4096 tokens");
  AttentionImplementation impl;
  impl.name = name;
  impl.row_tile = rows;
  impl.max_rows_per_block = rows;
  impl.kv_tile_tokens = tokens;
  impl.per_head_blocks = true;
  impl.blocks_per_sm = 1;  // [ASSUMED] see the header
  if (m[1].str() == "torch_flash_fwd" || m[1].str() == "torch_flash_fwd_splitkv") {
    // FlashAttention-2 as PyTorch builds it (docs/reference/fa2-geometry.md; pytorch/pytorch
    // aten/src/ATen/native/transformers/cuda/flash_attn/flash_api.cpp): at q = 1 with fewer KV
    // heads the query heads fold into the rows (seqlenq_ngroups_swapped); flash_fwd_kernel runs
    // when num_splits_heuristic gives one split, flash_fwd_splitkv_kernel (kBlockM 64) and its
    // combine kernel (4 rows per block at head_dim 128, 8 at 64) otherwise. The two kernels are two names:
    // the split one priced with the heuristic's count, the other with none.
    impl.gqa_rows_at_q1 = true;
    if (m[1].str() == "torch_flash_fwd_splitkv") {
      impl.split_policy = SplitPolicy::kFlashAttention2;
      impl.split_blocks_per_sm = 2;  // num_SMs = multiProcessorCount * 2
      impl.max_splits = 128;
      // The combine kernel's kBlockM: 4 at head_dim 128 (kBlockN 128), 8 at 64 (kBlockN 256).
      impl.combine_rows_per_block = tokens == 256 ? 8 : 4;
    } else {
      impl.max_splits = 1;
    }
    return impl;
  }
  if (m[4].matched) {
    impl.split_blocks_per_sm = 2;   // [ASSUMED] two blocks' worth per SM, so that a split call splits
    impl.splits_round_down = true;  // (it ran a reduction) even where one block per head fills the SMs
    impl.min_split_tokens = tokens;
  } else {
    impl.max_splits = 1;
  }
  return impl;
}

std::string SameKernelBodyAs(const std::string& name) {
  static const std::string kVllm = "vllm_triton_decode_mla/";
  if (name.rfind(kVllm, 0) == 0) return "triton_decode_mla/" + name.substr(kVllm.size());
  static const std::regex kFa2(R"(vllm_fa2_(?:decode|verify)/(\d{1,5}x\d{1,5}))");
  std::smatch m;
  if (std::regex_match(name, m, kFa2)) return "torch_flash_fwd_splitkv/" + m[1].str() + "+split";
  return "";
}

std::string SameCostClassAs(const std::string& name) {
  return FlashInferKernel(name) || FlashAttention3Kernel(name) ? "torch_flash_fwd_splitkv/64x128+split" : "";
}

StatusOr<AttentionImplementation> AttentionKernelOfName(const std::string& name) {
  auto validate = SpecsimValidateKernel(name);
  if (validate.ok()) return validate;
  auto profiled = ProfiledAttentionKernel(name);
  if (profiled.ok() || profiled.status().code() != StatusCode::kNotFound) return profiled;
  return NotFoundError(validate.status().message() + "; " + profiled.status().message());
}

}  // namespace specsim::compute
