// Importing a Hugging Face config.json into specsim's model schema (proto/specsim/model.proto).
//
// Users have their model's config.json; this reads the shape fields from it directly. Supported
// model_type values and the family each becomes:
//   llama -> LLAMA, mistral -> MISTRAL, mixtral -> MIXTRAL, qwen2 -> QWEN2, qwen2_moe -> QWEN2_MOE,
//   qwen3 -> QWEN3, qwen3_moe -> QWEN3_MOE, deepseek_v2 -> DEEPSEEK_V2, deepseek_v3 and kimi_k2 ->
//   DEEPSEEK_V3, gpt_oss -> GPT_OSS, glm4_moe -> GLM4_MOE; an EAGLE-3 head (model_type llama with
//   an architecture named *Eagle3*, or a draft_vocab_size field) -> EAGLE3. Any other model_type
//   is an error listing these. MTP layers: num_nextn_predict_layers (deepseek_v3, glm4_moe).
// Defaults: a field absent from the file (or JSON null) takes the default of transformers'
// configuration_<type>.py (kimi_k2: deepseek_v3's), listed per type in hf_config.cc; the fields
// that took one are named in `source` ("...; transformers' qwen3 defaults for hidden_size").
// Exceptions where null means "none" as in transformers: q_lora_rank null -> 0 (no query
// compression, DeepSeek-V2-Lite), sliding_window null -> no window (mistral / mixtral),
// num_key_value_heads -> num_attention_heads, head_dim -> hidden_size / num_attention_heads.
// A field with no default (DeepseekV2Config's n_routed_experts, ...) is reported missing.
// Field mapping (config.json -> config::Model):
//   num_hidden_layers -> num_layers; hidden_size; num_attention_heads; num_key_value_heads;
//     head_dim (MLA models always qk_nope_head_dim + qk_rope_head_dim); intermediate_size (dense
//     MLP; gpt_oss and mixtral: the per-expert size, so the dense size is 0 and it becomes
//     moe.moe_intermediate_size; qwen2_moe / qwen3_moe: kept when given, unused); vocab_size;
//     tie_word_embeddings;
//   moe.num_experts <- n_routed_experts (deepseek_v2/v3, kimi_k2, glm4_moe) | num_experts (qwen) |
//     num_local_experts (mixtral, gpt_oss); moe.num_shared_experts <- n_shared_experts, or for
//     qwen2_moe shared_expert_intermediate_size / moe_intermediate_size (must divide);
//     moe.experts_per_token <- num_experts_per_tok (gpt_oss: experts_per_token first);
//     moe.moe_intermediate_size; moe.first_dense_layers <- first_k_dense_replace;
//   mla.{q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim};
//   sliding_window: gpt_oss with sliding_window_every from layer_types (layer l is sliding when
//     l % sliding_window_every == 0; without layer_types gpt_oss alternates, every = 2); mistral /
//     mixtral a window on every layer (every = 1);
//   num_nextn_predict_layers; eagle3.draft_vocab_size <- draft_vocab_size (an EAGLE-3 head:
//     num_hidden_layers must be 1 and target_hidden_size, when present, equal hidden_size; the
//     head's config names no target, so eagle3.target stays empty);
//   quantization <- quantization_config (hf_quantization.h: fp8 block-wise, mxfp4, awq, gptq,
//     compressed-tensors; modules_to_not_convert / ignore).
// Multimodal configs that nest the language model under "text_config" work: every field is read
// from text_config when it is there, else from the top level (error messages then say
// "text_config.hidden_size").
// Layouts specsim cannot represent are errors, not silent approximations: qwen MoE with
// mlp_only_layers or decoder_sparse_step != 1, deepseek moe_layer_freq != 1, Qwen's
// use_sliding_window true, gpt_oss layer_types that are not periodic as above, a qwen2_moe shared
// expert that is not a whole number of routed-size experts, quantization it cannot express.
// Every error is InvalidArgument naming the file, the field and what is allowed; all missing or
// mistyped fields are reported together, one line each. The result is not range-checked: pass it
// to ModelFromProto (model_loader.h) for that. name: the config's "_name_or_path" if present,
// else the file name without ".config.json" / ".json"; source: "Hugging Face config.json FILE".
#pragma once

#include <string_view>

#include "sim/core/status.h"
#include "specsim/model.pb.h"

namespace specsim::io {

// Parses `json_text` (the contents of a config.json). `filename` prefixes every error message.
StatusOr<config::Model> ImportHfConfig(std::string_view json_text, std::string_view filename);

}  // namespace specsim::io
