// Importing a Hugging Face config.json into specsim's model schema (proto/specsim/model.proto).
//
// Users have their model's config.json; this reads the shape fields from it directly. Supported
// model_type values and the family each becomes:
//   llama -> LLAMA, qwen3 -> QWEN3, qwen3_moe -> QWEN3_MOE, deepseek_v3 and kimi_k2 ->
//   DEEPSEEK_V3, gpt_oss -> GPT_OSS; an EAGLE-3 head (model_type llama with an architecture
//   named *Eagle3*, or a draft_vocab_size field) -> EAGLE3.
// Field mapping (config.json -> config::Model):
//   num_hidden_layers -> num_layers; hidden_size; num_attention_heads; num_key_value_heads
//     (absent: = num_attention_heads, HF's convention); head_dim (absent: hidden_size /
//     num_attention_heads; MLA models always qk_nope_head_dim + qk_rope_head_dim, the query/key
//     head size); intermediate_size (dense MLP; gpt_oss: the per-expert size, so the dense size is
//     0 and it becomes moe.moe_intermediate_size); vocab_size; tie_word_embeddings (absent: false);
//   moe.num_experts <- n_routed_experts | num_experts | num_local_experts; moe.num_shared_experts
//     <- n_shared_experts (absent: 0); moe.experts_per_token <- num_experts_per_tok (gpt_oss:
//     experts_per_token first); moe.moe_intermediate_size; moe.first_dense_layers <-
//     first_k_dense_replace (absent: 0);
//   mla.{q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim};
//   sliding_window (gpt_oss only) and sliding_window_every from layer_types (layer l is sliding
//     when l % sliding_window_every == 0; without layer_types gpt_oss alternates, every = 2);
//   num_nextn_predict_layers (absent: 0); eagle3.draft_vocab_size <- draft_vocab_size.
// Required per family: num_hidden_layers, hidden_size, num_attention_heads, vocab_size; dense
// families and deepseek_v3/kimi_k2 intermediate_size; MoE families their expert count, top-k and
// expert size; deepseek_v3/kimi_k2 the five MLA fields. JSON null counts as absent.
// Multimodal configs that nest the language model under "text_config" work: every field is read
// from text_config when it is there, else from the top level (error messages then say
// "text_config.hidden_size").
// Layouts specsim cannot represent are errors, not silent approximations: qwen3_moe with
// mlp_only_layers or decoder_sparse_step != 1, deepseek moe_layer_freq != 1, Qwen's
// use_sliding_window true, gpt_oss layer_types that are not periodic as above.
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
