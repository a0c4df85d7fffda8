// Loading a model's shape (proto/specsim/model.proto in text format, or a Hugging Face
// config.json) into the simulator's plain llm::ModelSpec, with every input error as a Status.
//
// File kinds: a path ending in ".json" is a Hugging Face config.json (hf_config.h); anything else
// is a specsim.config.Model textproto (models/*.textproto). Both go through ReadConfigFile
// (file_io.h): the file on disk, else the embedded copy of a bundled path such as
// "models/kimi-k2.textproto" or "models/hf/kimi-k2.config.json".
//
// Checks of ModelFromProto (each error: "FILE: FIELD = VALUE: RULE", all problems together):
//   numbers: every numeric field in the unit and range model.proto declares beside it
//     (field_ranges.h: e.g. num_layers in [1, 1024], hidden_size in [1, 1e6], heads and head_dim
//     >= 1, counts and extents >= 0); values no model of today has are warnings;
//   family set (LLAMA, QWEN3, QWEN3_MOE, DEEPSEEK_V3, GPT_OSS, EAGLE3, MISTRAL, MIXTRAL, QWEN2,
//     QWEN2_MOE, DEEPSEEK_V2, GLM4_MOE);
//   num_attention_heads divisible by num_key_value_heads;
//   intermediate_size > 0 for the dense families and for MoE families with dense layers
//     (moe.first_dense_layers > 0);
//   MoE (QWEN3_MOE, DEEPSEEK_V3, GPT_OSS, MIXTRAL, QWEN2_MOE, DEEPSEEK_V2, GLM4_MOE need it, the
//     others must leave `moe` empty):
//     num_experts > 0, 1 <= experts_per_token <= num_experts, moe_intermediate_size > 0,
//     first_dense_layers < num_layers;
//   MLA: DEEPSEEK_V2 / DEEPSEEK_V3 need kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
//     v_head_dim > 0 (q_lora_rank 0: no query compression), other families none;
//   sliding_window and sliding_window_every both 0 or both > 0, every <= num_layers
//     (convention: layer l uses the sliding window when l % sliding_window_every == 0);
//   EAGLE3 needs eagle3.draft_vocab_size in (0, vocab_size] (eagle3.fused_hidden_states 0 = the
//     default 3); other families leave `eagle3` empty;
//   published_acceptance: mean_accept_length at most 1 + the drafts its shape can accept; a source;
//   quantization (when present): format FP8, INT4 or FP4; scale_bits 8, 16 or 32. It becomes
//     ModelSpec::quantization.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/core/status.h"
#include "sim/llm/model.h"
#include "specsim/model.pb.h"

namespace specsim::io {

// Validates `model` (rules above) and converts it. `filename` prefixes every error message and
// warning (added to `warnings` when given).
StatusOr<llm::ModelSpec> ModelFromProto(const config::Model& model, std::string_view filename,
                                        std::vector<std::string>* warnings = nullptr);

// Parses a text-format specsim.config.Model (errors as in textproto.h), then ModelFromProto.
StatusOr<llm::ModelSpec> ParseModel(std::string_view text, std::string_view filename,
                                    std::vector<std::string>* warnings = nullptr);

// The file at `path` (ReadConfigFile's embedded fallback) as a config::Model, unvalidated:
// ImportHfConfig for ".json", the textproto parser otherwise. For tools that show or compare the
// proto itself.
StatusOr<config::Model> LoadModelProto(const std::string& path);

// The simulator's family for a model file's. REQUIRES: a declared family other than
// FAMILY_UNSPECIFIED (the loaders check it first).
llm::ModelFamily ToModelFamily(config::Model::Family family);

// LoadModelProto, then ModelFromProto. Errors name "<path>" or "<path> (embedded copy)".
StatusOr<llm::ModelSpec> LoadModelFile(const std::string& path, std::vector<std::string>* warnings = nullptr);

}  // namespace specsim::io
