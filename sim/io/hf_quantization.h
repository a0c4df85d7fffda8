// A Hugging Face config.json's `quantization_config` as specsim's config::Quantization: the value
// format, its scale (and zero-point) blocks, and which tensor classes stay unquantized.
//
// quant_method (each default cites where it comes from; [UNVERIFIED] ones are from memory of the
// transformers / compressed-tensors sources, which could not be read here, see hf_quantization.cc):
//   fp8                 FP8 e4m3; weight_block_size [r, c] -> one fp32 scale per r x c block
//                       (absent: [128, 128], transformers' FineGrainedFP8Config default);
//                       modules_to_not_convert.
//   mxfp4               FP4 e2m1, one 8-bit E8M0 scale per 32 inputs; modules_to_not_convert.
//   awq                 INT4 (bits must be 4), groups of group_size inputs (default 128; -1: per
//                       output channel), fp16 scale + 4-bit zero point per group (zero_point,
//                       default true); modules_to_not_convert.
//   gptq                INT4 (bits must be 4), group_size as awq, fp16 scale + packed 4-bit zero
//                       point per group (GPTQ stores qzeros even when sym); g_idx (4 B per input
//                       row, < 0.2% of a matrix) is not counted.
//   compressed-tensors  one config_groups entry (more: error) whose weights give num_bits / type
//                       (int 4 -> INT4, float 8 -> FP8, float 4 -> FP4) and strategy (group:
//                       1 x group_size, channel: 1 x all, tensor: one scale, block:
//                       block_structure, tensor_group: NVFP4's 1 x group_size with e4m3 scales);
//                       scales bf16 for int, fp32 for fp8, e4m3 for fp4; symmetric false adds a
//                       zero point of num_bits per block; `targets` other than "Linear" and
//                       `ignore` choose the quantized classes.
// Tensor classes and the module each is matched by (HF parameter names; L = a layer of the class):
//   attention "model.layers.L.self_attn.o_proj", dense MLP "model.layers.L.mlp.down_proj", shared
//   experts "...mlp.shared_experts.down_proj" (qwen2_moe: shared_expert), routed experts
//   "...mlp.experts.0.down_proj" (mixtral: block_sparse_moe.experts.0.w2; gpt_oss:
//   mlp.experts.down_proj), LM head "lm_head" (kept bf16 unless a compressed-tensors target names it
//   and no ignore entry does). A class is unquantized when a modules_to_not_convert / ignore entry
//   matches its module: "re:REGEX" matches from the start of the name (compressed-tensors), an entry
//   with '*' is a glob matched from the start, any other entry matches as a substring (transformers'
//   `key in name`). Norms, the embedding and the router are bf16 regardless.
// Errors (appended to `errors`, one line each, "quantization_config.FIELD = VALUE: RULE") for an
// unknown quant_method (listing the supported ones), unsupported bits or types, malformed fields.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "specsim/model.pb.h"

namespace specsim::io {

// The module each tensor class is matched by (see above).
struct HfModuleNames {
  std::string attention, dense_mlp, shared_experts, routed_experts, lm_head = "lm_head";
};

// `qc`: the quantization_config object. Returns the Quantization (meaningful when `errors` gained
// no line).
config::Quantization ReadHfQuantization(const nlohmann::json& qc, const HfModuleNames& names,
                                        std::vector<std::string>* errors);

// Supported quant_method values, for messages and docs/commands.md.
extern const char* const kSupportedQuantMethods;

}  // namespace specsim::io
