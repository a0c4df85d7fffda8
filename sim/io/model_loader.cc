#include "sim/io/model_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/io/field_ranges.h"
#include "sim/io/file_io.h"
#include "sim/io/hardware_checks.h"
#include "sim/io/hf_config.h"
#include "sim/io/textproto.h"
#include "sim/llm/speculative_cycle.h"

namespace specsim::io {
namespace {

using config::Model;

constexpr const char* kFamilies =
    "LLAMA, QWEN3, QWEN3_MOE, DEEPSEEK_V3, GPT_OSS, EAGLE3, MISTRAL, MIXTRAL, QWEN2, QWEN2_MOE, DEEPSEEK_V2, "
    "GLM4_MOE";

std::string FamilyName(Model::Family f) {
  const std::string& name = Model::Family_Name(f);
  return name.empty() ? std::to_string(static_cast<int>(f)) : name;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsMoeFamily(Model::Family f) {
  return f == Model::QWEN3_MOE || f == Model::DEEPSEEK_V3 || f == Model::GPT_OSS || f == Model::MIXTRAL ||
         f == Model::QWEN2_MOE || f == Model::DEEPSEEK_V2 || f == Model::GLM4_MOE;
}

bool IsMlaFamily(Model::Family f) { return f == Model::DEEPSEEK_V3 || f == Model::DEEPSEEK_V2; }

// Family, the attention shape and the dense MLP.
void CheckShape(const Model& m, ValidationErrors* e) {
  const Model::Family f = m.family();
  const std::string family = FamilyName(f);
  if (f == Model::FAMILY_UNSPECIFIED || !Model::Family_IsValid(f)) {
    e->Add("family", family, fmt::format("must be set, one of {}", kFamilies));
  }
  if (m.num_attention_heads() > 0 && m.num_key_value_heads() > 0 &&
      m.num_attention_heads() % m.num_key_value_heads() != 0) {
    e->Add("num_key_value_heads", std::to_string(m.num_key_value_heads()),
           fmt::format("must divide num_attention_heads = {}", m.num_attention_heads()));
  }

  const bool dense_layers = !IsMoeFamily(f) || m.moe().first_dense_layers() > 0;
  if (dense_layers) {
    if (m.intermediate_size() == 0) {
      e->Add("intermediate_size", std::to_string(m.intermediate_size()),
             IsMoeFamily(f) ? "must be > 0 (moe.first_dense_layers > 0: those layers use the dense MLP)"
                            : fmt::format("must be > 0 (family {} has a dense MLP)", family));
    }
  }
}

void CheckMoe(const Model& m, ValidationErrors* e) {
  const std::string family = FamilyName(m.family());
  const config::MoeConfig& moe = m.moe();
  if (IsMoeFamily(m.family())) {
    if (!m.has_moe()) {
      e->Add("moe", "(absent)", fmt::format("required for family {} (a mixture-of-experts model)", family));
    } else {
      if (moe.num_experts() == 0) e->Add("moe.num_experts", "0", "must be > 0");
      if (moe.experts_per_token() == 0 || (moe.num_experts() > 0 && moe.experts_per_token() > moe.num_experts())) {
        e->Add("moe.experts_per_token", std::to_string(moe.experts_per_token()),
               fmt::format("must be in [1, moe.num_experts = {}]", moe.num_experts()));
      }
      if (moe.moe_intermediate_size() == 0) e->Add("moe.moe_intermediate_size", "0", "must be > 0");
      if (m.num_layers() > 0 && moe.first_dense_layers() >= m.num_layers()) {
        e->Add("moe.first_dense_layers", std::to_string(moe.first_dense_layers()),
               fmt::format("must be in [0, num_layers = {})", m.num_layers()));
      }
    }
  } else if (m.has_moe() && moe.ByteSizeLong() > 0) {
    e->Add("moe", fmt::format("{{ num_experts: {} ... }}", moe.num_experts()),
           fmt::format("must be empty for family {} (MoE families: QWEN3_MOE, DEEPSEEK_V3, GPT_OSS, MIXTRAL, "
                       "QWEN2_MOE, DEEPSEEK_V2, GLM4_MOE)",
                       family));
  }
}

// MLA: DEEPSEEK_V2 / DEEPSEEK_V3 need it (q_lora_rank may be 0: no query compression), the
// others must leave it empty.
void CheckMla(const Model& m, ValidationErrors* e) {
  const config::MlaConfig& mla = m.mla();
  const int mla_fields[] = {mla.q_lora_rank(), mla.kv_lora_rank(), mla.qk_nope_head_dim(), mla.qk_rope_head_dim(),
                            mla.v_head_dim()};
  const char* mla_names[] = {"mla.q_lora_rank", "mla.kv_lora_rank", "mla.qk_nope_head_dim", "mla.qk_rope_head_dim",
                             "mla.v_head_dim"};
  bool any_mla = false;
  for (int v : mla_fields) any_mla = any_mla || v != 0;
  if (IsMlaFamily(m.family())) {
    for (int i = 1; i < 5; ++i) {
      if (mla_fields[i] == 0) {
        e->Add(mla_names[i], std::to_string(mla_fields[i]),
               fmt::format("must be > 0 (family {} uses multi-head latent attention: kv_lora_rank, "
                           "qk_nope_head_dim, qk_rope_head_dim and v_head_dim are required)",
                           FamilyName(m.family())));
      }
    }
  } else if (any_mla) {
    e->Add(
        "mla", fmt::format("{{ kv_lora_rank: {} ... }}", mla.kv_lora_rank()),
        fmt::format("must be empty for family {} (only DEEPSEEK_V2 and DEEPSEEK_V3 use MLA)", FamilyName(m.family())));
  }
}

// The checkpoint's quantization: a format, extents and scale sizes that a checkpoint can have.
void CheckQuantization(const Model& m, ValidationErrors* e) {
  if (!m.has_quantization()) return;
  const config::Quantization& q = m.quantization();
  const std::string at = "quantization.";
  if (q.format() == config::Quantization::FORMAT_UNSPECIFIED || !config::Quantization::Format_IsValid(q.format())) {
    e->Add(at + "format", config::Quantization::Format_Name(q.format()), "must be set, one of FP8, INT4, FP4");
  }
  if (q.scale_bits() != 8 && q.scale_bits() != 16 && q.scale_bits() != 32) {
    e->Add(at + "scale_bits", std::to_string(q.scale_bits()), "must be 8 (e8m0 / e4m3), 16 (bf16 / fp16) or 32 (fp32)");
  }
}

llm::CheckpointQuantization ToQuantization(const config::Quantization& q) {
  llm::CheckpointQuantization c;
  c.quantized = true;
  c.method = q.quant_method();
  switch (q.format()) {
    case config::Quantization::FP8: c.format.dtype = compute::DType::kFp8; break;
    case config::Quantization::INT4: c.format.dtype = compute::DType::kInt4; break;
    default: c.format.dtype = compute::DType::kFp4; break;  // FP4 (validated)
  }
  c.format.block_rows = q.block_rows();
  c.format.block_cols = q.block_cols();
  c.format.scale_bytes = q.scale_bits() / 8.0;
  c.format.zero_point_bytes = q.zero_point_bits() / 8.0;
  c.attention = !q.attention_unquantized();
  c.dense_mlp = !q.dense_mlp_unquantized();
  c.shared_experts = !q.shared_experts_unquantized();
  c.routed_experts = !q.routed_experts_unquantized();
  c.lm_head = q.lm_head_quantized();
  return c;
}

// A published acceptance: its shape, a tau the shape can reach, its source.
void CheckPublishedAcceptance(const config::PublishedAcceptance& a, ValidationErrors* e) {
  const std::string at = "published_acceptance.";
  // The ranges of the fields are checked with the others (model.proto); what the shape can reach here
  // (clamped into the rule's domain: the range checks report out-of-range fields, but run beside this).
  const int64_t most =
      std::max(1, llm::MaxAcceptedPerCycle(std::max(0, a.num_steps()), std::max(1, a.num_draft_tokens())));
  if (a.mean_accept_length() >= 1 && a.mean_accept_length() <= 65 && a.mean_accept_length() > 1 + most)
    e->Add(at + "mean_accept_length", fmt::format("{}", a.mean_accept_length()),
           fmt::format("must be in [1, {}] (tokens per cycle: 1 + the draft tokens the shape can accept)", 1 + most));
  if (a.source().empty())
    e->Add(at + "source", "\"\"", "required: the paper (arXiv id, table) or model card, or [UNVERIFIED] and where");
}

// Sliding windows, the EAGLE-3 head's fields and MTP layers.
void CheckWindowsAndDraftHeads(const Model& m, ValidationErrors* e) {
  if ((m.sliding_window() > 0) != (m.sliding_window_every() > 0)) {
    e->Add("sliding_window_every", std::to_string(m.sliding_window_every()),
           fmt::format("sliding_window = {}: both must be 0 (no sliding window) or both > 0", m.sliding_window()));
  } else if (m.num_layers() > 0 && m.sliding_window_every() > m.num_layers()) {
    e->Add("sliding_window_every", std::to_string(m.sliding_window_every()),
           fmt::format("must be <= num_layers = {}", m.num_layers()));
  }

  const config::Eagle3Config& eagle = m.eagle3();
  if (m.family() == Model::EAGLE3) {
    if (eagle.draft_vocab_size() == 0 || (m.vocab_size() > 0 && eagle.draft_vocab_size() > m.vocab_size())) {
      e->Add("eagle3.draft_vocab_size", std::to_string(eagle.draft_vocab_size()),
             fmt::format("required for family EAGLE3: must be in [1, vocab_size = {}]", m.vocab_size()));
    }
  } else if (m.has_eagle3() && eagle.ByteSizeLong() > 0) {
    e->Add("eagle3", fmt::format("{{ draft_vocab_size: {} ... }}", eagle.draft_vocab_size()),
           fmt::format("must be empty for family {} (only EAGLE3 heads have it)", FamilyName(m.family())));
  }

  if (m.has_published_acceptance()) CheckPublishedAcceptance(m.published_acceptance(), e);
}

void CheckModel(const Model& m, ValidationErrors* e) {
  CheckShape(m, e);
  CheckMoe(m, e);
  CheckMla(m, e);
  CheckWindowsAndDraftHeads(m, e);
  CheckQuantization(m, e);
}

}  // namespace

llm::ModelFamily ToModelFamily(Model::Family f) {
  switch (f) {
    case Model::LLAMA: return llm::ModelFamily::kLlama;
    case Model::QWEN3: return llm::ModelFamily::kQwen3;
    case Model::QWEN3_MOE: return llm::ModelFamily::kQwen3Moe;
    case Model::DEEPSEEK_V3: return llm::ModelFamily::kDeepseekV3;
    case Model::GPT_OSS: return llm::ModelFamily::kGptOss;
    case Model::EAGLE3: return llm::ModelFamily::kEagle3;
    case Model::MISTRAL: return llm::ModelFamily::kMistral;
    case Model::MIXTRAL: return llm::ModelFamily::kMixtral;
    case Model::QWEN2: return llm::ModelFamily::kQwen2;
    case Model::QWEN2_MOE: return llm::ModelFamily::kQwen2Moe;
    case Model::DEEPSEEK_V2: return llm::ModelFamily::kDeepseekV2;
    case Model::GLM4_MOE: return llm::ModelFamily::kGlm4Moe;
    default: break;
  }
  SPECSIM_CHECK(false) << "unvalidated model family " << static_cast<int>(f);
  return llm::ModelFamily::kLlama;
}

StatusOr<llm::ModelSpec> ModelFromProto(const config::Model& model, std::string_view filename,
                                        std::vector<std::string>* warnings) {
  ValidationErrors errors(filename);
  // Every number in the unit and range model.proto declares; then the family's rules, which test
  // a required field against 0 only (a negative one is the range's error, reported once).
  errors.AddLines(CheckFieldRanges(model, filename, warnings));
  CheckModel(model, &errors);
  if (!errors.empty()) return errors.ToStatus();

  llm::ModelSpec s;
  s.name = model.name();
  s.hf_id = model.hf_id();
  s.trust_remote_code = model.trust_remote_code();
  if (model.has_published_acceptance()) {
    const config::PublishedAcceptance& a = model.published_acceptance();
    s.published_acceptance = {a.mean_accept_length(), a.num_steps(), a.topk(), a.num_draft_tokens(), a.source()};
  }
  s.family = ToModelFamily(model.family());
  s.num_layers = model.num_layers();
  s.hidden_size = model.hidden_size();
  s.num_attention_heads = model.num_attention_heads();
  s.num_key_value_heads = model.num_key_value_heads();
  s.head_dim = model.head_dim();
  s.intermediate_size = model.intermediate_size();
  s.vocab_size = model.vocab_size();
  s.tie_word_embeddings = model.tie_word_embeddings();
  s.moe = llm::MoeSpec{
      .num_experts = model.moe().num_experts(),
      .num_shared_experts = model.moe().num_shared_experts(),
      .experts_per_token = model.moe().experts_per_token(),
      .moe_intermediate_size = model.moe().moe_intermediate_size(),
      .first_dense_layers = model.moe().first_dense_layers(),
  };
  s.mla = llm::MlaSpec{
      .q_lora_rank = model.mla().q_lora_rank(),
      .kv_lora_rank = model.mla().kv_lora_rank(),
      .qk_nope_head_dim = model.mla().qk_nope_head_dim(),
      .qk_rope_head_dim = model.mla().qk_rope_head_dim(),
      .v_head_dim = model.mla().v_head_dim(),
  };
  s.sliding_window = model.sliding_window();
  s.sliding_window_every = model.sliding_window_every();
  if (model.family() == Model::EAGLE3) {
    s.eagle3.draft_vocab_size = model.eagle3().draft_vocab_size();
    s.eagle3.fused_hidden_states = model.eagle3().fused_hidden_states() > 0 ? model.eagle3().fused_hidden_states() : 3;
    s.eagle3.target = model.eagle3().target();
  } else {
    s.eagle3 = llm::Eagle3Spec{.draft_vocab_size = 0, .fused_hidden_states = 0, .target = ""};
  }
  s.num_nextn_predict_layers = model.num_nextn_predict_layers();
  if (model.has_quantization()) s.quantization = ToQuantization(model.quantization());
  return s;
}

StatusOr<llm::ModelSpec> ParseModel(std::string_view text, std::string_view filename,
                                    std::vector<std::string>* warnings) {
  ASSIGN_OR_RETURN(config::Model model, ParseTextProto<config::Model>(text, filename));
  return ModelFromProto(model, filename, warnings);
}

StatusOr<config::Model> LoadModelProto(const std::string& path) {
  ASSIGN_OR_RETURN(ConfigText file, ReadConfigFile(path));
  if (EndsWith(path, ".json")) return ImportHfConfig(file.text, file.display_name);
  return ParseTextProto<config::Model>(file.text, file.display_name);
}

StatusOr<llm::ModelSpec> LoadModelFile(const std::string& path, std::vector<std::string>* warnings) {
  ASSIGN_OR_RETURN(ConfigText file, ReadConfigFile(path));
  if (EndsWith(path, ".json")) {
    ASSIGN_OR_RETURN(config::Model model, ImportHfConfig(file.text, file.display_name));
    return ModelFromProto(model, file.display_name, warnings);
  }
  return ParseModel(file.text, file.display_name, warnings);
}

}  // namespace specsim::io
