#include "sim/io/hf_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/strings.h"
#include "sim/io/hf_quantization.h"

namespace specsim::io {
namespace {

using nlohmann::json;

// A supported model_type: the family it becomes, how it names its MoE fields, and the defaults
// transformers' configuration_<type>.py gives the fields specsim reads.
// [UNVERIFIED] every default below is from memory of transformers'
// src/transformers/models/<type>/configuration_<type>.py (the __init__ keyword defaults, e.g.
// LlamaConfig(vocab_size=32000, hidden_size=4096, ...)): the transformers repository snapshot is
// 1.33 GB, over the 500 MB this project's source fetch allows, so no commit could be read; check
// them against a checkout (git show HEAD:src/transformers/models/<type>/configuration_<type>.py).
// kimi_k2 has no transformers config: its checkpoint's own configuration_deepseek.py
// (DeepseekV3Config, auto_map) is DeepSeek-V3's, so it takes deepseek_v3's defaults.
enum class MoeStyle {
  kDense,     // no experts
  kQwen,      // num_experts, moe_intermediate_size (+ qwen2_moe's shared_expert_intermediate_size)
  kDeepseek,  // n_routed_experts, n_shared_experts, first_k_dense_replace
  kMixtral,   // num_local_experts; intermediate_size is the per-expert size
  kGptOss,    // num_local_experts, experts_per_token; intermediate_size is the per-expert size
};

struct TypeInfo {
  const char* type;
  config::Model::Family family;
  MoeStyle moe;
  bool mla;
  const char* defaults;  // JSON object: transformers' defaults for the fields specsim reads
};

// DeepseekV3Config's defaults, which Kimi-K2's remote code (model_type kimi_k2) inherits.
constexpr const char* kDeepseekV3Defaults =
    R"({"vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
    "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 1,
    "n_routed_experts": 256, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "kv_lora_rank": 512,
    "q_lora_rank": 1536, "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128,
    "tie_word_embeddings": false})";

constexpr TypeInfo kTypes[] = {
    {"llama", config::Model::LLAMA, MoeStyle::kDense, false,
     R"({"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
         "num_attention_heads": 32, "tie_word_embeddings": false})"},
    {"mistral", config::Model::MISTRAL, MoeStyle::kDense, false,
     R"({"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 8, "sliding_window": 4096,
         "tie_word_embeddings": false})"},
    {"mixtral", config::Model::MIXTRAL, MoeStyle::kMixtral, false,
     R"({"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 8, "num_experts_per_tok": 2,
         "num_local_experts": 8, "tie_word_embeddings": false})"},
    {"qwen2", config::Model::QWEN2, MoeStyle::kDense, false,
     R"({"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 32, "tie_word_embeddings": false})"},
    {"qwen2_moe", config::Model::QWEN2_MOE, MoeStyle::kQwen, false,
     R"({"vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24,
         "num_attention_heads": 16, "num_key_value_heads": 16, "decoder_sparse_step": 1,
         "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632, "num_experts_per_tok": 4,
         "num_experts": 60, "tie_word_embeddings": false})"},
    {"qwen3", config::Model::QWEN3, MoeStyle::kDense, false,
     R"({"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "tie_word_embeddings": false})"},
    {"qwen3_moe", config::Model::QWEN3_MOE, MoeStyle::kQwen, false,
     R"({"vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 24,
         "num_attention_heads": 32, "num_key_value_heads": 4, "decoder_sparse_step": 1,
         "moe_intermediate_size": 768, "num_experts_per_tok": 8, "num_experts": 128,
         "tie_word_embeddings": false})"},
    {"deepseek_v2", config::Model::DEEPSEEK_V2, MoeStyle::kDeepseek, true,
     R"({"vocab_size": 102400, "hidden_size": 4096, "intermediate_size": 11008, "moe_intermediate_size": 1407,
         "num_hidden_layers": 30, "num_attention_heads": 32, "num_key_value_heads": 32,
         "first_k_dense_replace": 0, "moe_layer_freq": 1, "kv_lora_rank": 512, "q_lora_rank": 1536,
         "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "tie_word_embeddings": false})"},
    {"deepseek_v3", config::Model::DEEPSEEK_V3, MoeStyle::kDeepseek, true, kDeepseekV3Defaults},
    {"kimi_k2", config::Model::DEEPSEEK_V3, MoeStyle::kDeepseek, true, kDeepseekV3Defaults},
    {"gpt_oss", config::Model::GPT_OSS, MoeStyle::kGptOss, false,
     R"({"num_hidden_layers": 36, "num_local_experts": 128, "vocab_size": 201088, "hidden_size": 2880,
         "intermediate_size": 2880, "head_dim": 64, "num_attention_heads": 64, "num_key_value_heads": 8,
         "sliding_window": 128, "experts_per_token": 4, "tie_word_embeddings": false})"},
    {"glm4_moe", config::Model::GLM4_MOE, MoeStyle::kDeepseek, false,
     R"({"vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 10944, "num_hidden_layers": 46,
         "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128, "moe_intermediate_size": 1408,
         "num_experts_per_tok": 8, "n_shared_experts": 1, "n_routed_experts": 128, "first_k_dense_replace": 1,
         "tie_word_embeddings": false})"},
};

const char* const kSupportedTypes =
    "llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, deepseek_v2, deepseek_v3, kimi_k2, gpt_oss, "
    "glm4_moe";

const TypeInfo* FindType(const std::string& t) {
  for (const TypeInfo& info : kTypes) {
    if (t == info.type) return &info;
  }
  return nullptr;
}

bool IsSupportedType(const std::string& t) { return FindType(t) != nullptr; }

// Reads fields from "text_config" when present there, else from the top level, else from the
// type's defaults (recorded in defaulted()); collects every problem as one line "FILE: FIELD ...".
class Reader {
 public:
  Reader(const json& root, std::string_view filename) : root_(root), filename_(filename) {
    auto it = root.find("text_config");
    if (it != root.end() && it->is_object()) text_ = &*it;
  }

  void SetDefaults(const json* defaults) { defaults_ = defaults; }

  // The value of `key` in the file (nullptr when absent or null) and its path for messages.
  const json* FindInFile(const std::string& key, std::string* path = nullptr) const {
    if (text_ != nullptr) {
      auto it = text_->find(key);
      if (it != text_->end() && !it->is_null()) {
        if (path != nullptr) *path = "text_config." + key;
        return &*it;
      }
    }
    auto it = root_.find(key);
    if (it != root_.end() && !it->is_null()) {
      if (path != nullptr) *path = key;
      return &*it;
    }
    return nullptr;
  }

  // Whether the file states `key` as JSON null (where null means "none", e.g. q_lora_rank).
  bool IsNullInFile(const std::string& key) const {
    if (text_ != nullptr) {
      auto it = text_->find(key);
      if (it != text_->end()) return it->is_null();
    }
    auto it = root_.find(key);
    return it != root_.end() && it->is_null();
  }

  // The file's value, else the type's default (noted in defaulted()).
  const json* Find(const std::string& key, std::string* path = nullptr) {
    if (const json* v = FindInFile(key, path)) return v;
    if (defaults_ != nullptr) {
      auto it = defaults_->find(key);
      if (it != defaults_->end() && !it->is_null()) {
        if (path != nullptr) *path = key + " (default)";
        if (std::find(defaulted_.begin(), defaulted_.end(), key) == defaulted_.end()) defaulted_.push_back(key);
        return &*it;
      }
    }
    return nullptr;
  }

  bool Has(const std::string& key) { return Find(key) != nullptr; }

  // An integer field; nullopt when absent (or mistyped: then an error is recorded).
  std::optional<int> Int(const std::string& key) {
    std::string path;
    const json* v = Find(key, &path);
    if (v == nullptr) return std::nullopt;
    double d = 0;
    if (v->is_number_integer() || v->is_number_unsigned() || v->is_number_float()) {
      d = v->get<double>();
    } else {
      Error(fmt::format("{} = {}: must be an integer", path, v->dump()));
      return std::nullopt;
    }
    if (!std::isfinite(d) || d != std::floor(d) || d < std::numeric_limits<int>::min() ||
        d > std::numeric_limits<int>::max()) {
      Error(fmt::format("{} = {}: must be an integer in the 32-bit range", path, v->dump()));
      return std::nullopt;
    }
    return static_cast<int>(d);
  }

  // The first of `keys` present (file or default); records "missing" naming them all when none is.
  int RequiredInt(const std::vector<std::string>& keys, const std::string& why) {
    for (const std::string& key : keys) {
      if (FindInFile(key) != nullptr) return Int(key).value_or(0);
    }
    for (const std::string& key : keys) {
      if (Has(key)) return Int(key).value_or(0);
    }
    std::string names;
    for (const std::string& key : keys) names += (names.empty() ? "" : " or ") + key;
    Error(fmt::format("{}: missing (required {})", names, why));
    return 0;
  }

  int OptionalInt(const std::string& key, int default_value) {
    return Has(key) ? Int(key).value_or(default_value) : default_value;
  }

  bool OptionalBool(const std::string& key, bool default_value) {
    std::string path;
    const json* v = Find(key, &path);
    if (v == nullptr) return default_value;
    if (!v->is_boolean()) {
      Error(fmt::format("{} = {}: must be true or false", path, v->dump()));
      return default_value;
    }
    return v->get<bool>();
  }

  std::optional<std::string> String(const std::string& key) {
    std::string path;
    const json* v = FindInFile(key, &path);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) {
      Error(fmt::format("{} = {}: must be a string", path, v->dump()));
      return std::nullopt;
    }
    return v->get<std::string>();
  }

  std::string PathOf(const std::string& key) {
    std::string path = key;
    Find(key, &path);
    return path;
  }

  void Error(const std::string& line) { errors_.push_back(fmt::format("{}: {}", filename_, line)); }

  const std::vector<std::string>& defaulted() const { return defaulted_; }
  bool ok() const { return errors_.empty(); }
  Status ToStatus() const {
    std::string message;
    for (const std::string& line : errors_) message += (message.empty() ? "" : "\n") + line;
    return InvalidArgumentError(message);
  }

 private:
  const json& root_;
  const json* text_ = nullptr;
  const json* defaults_ = nullptr;
  std::string filename_;
  std::vector<std::string> errors_;
  std::vector<std::string> defaulted_;
};

// model_type: text_config's when it is a supported one, else the top level's.
std::optional<std::string> ModelType(const json& root, Reader* r, std::string* path) {
  auto text = root.find("text_config");
  if (text != root.end() && text->is_object()) {
    auto t = text->find("model_type");
    if (t != text->end() && t->is_string() && IsSupportedType(t->get<std::string>())) {
      *path = "text_config.model_type";
      return t->get<std::string>();
    }
  }
  auto t = root.find("model_type");
  if (t == root.end() || t->is_null()) return std::nullopt;
  *path = "model_type";
  if (!t->is_string()) {
    r->Error(fmt::format("model_type = {}: must be a string, one of {}", t->dump(), kSupportedTypes));
    return std::nullopt;
  }
  return t->get<std::string>();
}

bool LooksLikeEagle3(const json& root, const Reader& r) {
  if (r.FindInFile("draft_vocab_size") != nullptr) return true;
  auto arch = root.find("architectures");
  if (arch == root.end() || !arch->is_array()) return false;
  for (const json& a : *arch) {
    if (a.is_string() && AsciiLower(a.get<std::string>()).find("eagle3") != std::string::npos) return true;
  }
  return false;
}

// gpt-oss: layer_types -> sliding_window_every (layer l sliding when l % every == 0), or 0 when
// no layer is sliding. Records an error for other patterns.
int SlidingEveryFromLayerTypes(const json& types, const std::string& path, int num_layers, Reader* r) {
  if (!types.is_array()) {
    r->Error(fmt::format("{}: must be a list of \"sliding_attention\" / \"full_attention\"", path));
    return 0;
  }
  std::vector<bool> sliding;
  for (size_t i = 0; i < types.size(); ++i) {
    const json& t = types[i];
    if (t == "sliding_attention") {
      sliding.push_back(true);
    } else if (t == "full_attention") {
      sliding.push_back(false);
    } else {
      r->Error(
          fmt::format("{}[{}] = {}: allowed values: \"sliding_attention\", \"full_attention\"", path, i, t.dump()));
      return 0;
    }
  }
  if (num_layers > 0 && static_cast<int>(sliding.size()) != num_layers) {
    r->Error(fmt::format("{}: has {} entries, num_hidden_layers = {}: must match", path, sliding.size(), num_layers));
    return 0;
  }
  if (std::none_of(sliding.begin(), sliding.end(), [](bool s) { return s; })) return 0;
  for (size_t every = 1; every <= sliding.size(); ++every) {
    bool matches = true;
    for (size_t l = 0; l < sliding.size() && matches; ++l) matches = sliding[l] == (l % every == 0);
    if (matches) return static_cast<int>(every);
  }
  r->Error(
      fmt::format("{}: pattern not supported: specsim models layer l as sliding exactly when "
                  "l % sliding_window_every == 0 (e.g. sliding, full, sliding, full, ...)",
                  path));
  return 0;
}

std::string BaseName(std::string_view filename) {
  std::string name(filename);
  const size_t embedded = name.find(" (embedded copy)");
  if (embedded != std::string::npos) name.resize(embedded);
  const size_t slash = name.rfind('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  for (const char* suffix : {".config.json", ".json"}) {
    const std::string s = suffix;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      name.resize(name.size() - s.size());
      break;
    }
  }
  return name;
}

// The MoE block, each style naming its fields its own way; refuses layer patterns specsim does not
// model (not every layer from first_dense_layers on MoE).
void ReadMoe(const TypeInfo& t, const std::string& why, Reader& r, config::Model* m) {
  config::MoeConfig* moe = m->mutable_moe();
  switch (t.moe) {
    case MoeStyle::kDense: m->clear_moe(); return;
    case MoeStyle::kDeepseek:
      moe->set_num_experts(r.RequiredInt({"n_routed_experts"}, why + " (a model without routed experts is not "
                                                                     "supported)"));
      moe->set_num_shared_experts(r.OptionalInt("n_shared_experts", 0));
      moe->set_experts_per_token(r.RequiredInt({"num_experts_per_tok"}, why));
      moe->set_moe_intermediate_size(r.RequiredInt({"moe_intermediate_size"}, why));
      moe->set_first_dense_layers(r.OptionalInt("first_k_dense_replace", 0));
      if (std::optional<int> freq = r.Int("moe_layer_freq"); freq && *freq != 1) {
        r.Error(
            fmt::format("{} = {}: not supported: specsim models every layer from "
                        "first_k_dense_replace on as MoE (moe_layer_freq 1)",
                        r.PathOf("moe_layer_freq"), *freq));
      }
      return;
    case MoeStyle::kGptOss:
      moe->set_num_experts(r.RequiredInt({"num_local_experts", "num_experts"}, why));
      moe->set_experts_per_token(r.RequiredInt({"experts_per_token", "num_experts_per_tok"}, why));
      moe->set_moe_intermediate_size(r.RequiredInt({"intermediate_size"}, why + " (the per-expert MLP size)"));
      return;
    case MoeStyle::kMixtral:
      moe->set_num_experts(r.RequiredInt({"num_local_experts"}, why));
      moe->set_experts_per_token(r.RequiredInt({"num_experts_per_tok"}, why));
      moe->set_moe_intermediate_size(r.RequiredInt({"intermediate_size"}, why + " (the per-expert MLP size)"));
      return;
    case MoeStyle::kQwen: break;
  }
  moe->set_num_experts(r.RequiredInt({"num_experts", "num_local_experts"}, why));
  moe->set_experts_per_token(r.RequiredInt({"num_experts_per_tok"}, why));
  moe->set_moe_intermediate_size(r.RequiredInt({"moe_intermediate_size"}, why));
  if (std::optional<int> step = r.Int("decoder_sparse_step"); step && *step != 1) {
    r.Error(
        fmt::format("{} = {}: not supported: specsim models every layer as MoE "
                    "(decoder_sparse_step 1)",
                    r.PathOf("decoder_sparse_step"), *step));
  }
  std::string path;
  if (const json* only = r.FindInFile("mlp_only_layers", &path);
      only != nullptr && !(only->is_array() && only->empty())) {
    r.Error(
        fmt::format("{} = {}: not supported: specsim models every layer as MoE "
                    "(mlp_only_layers [])",
                    path, only->dump()));
  }
  // qwen2_moe: one shared expert of shared_expert_intermediate_size, gated; specsim counts it as
  // shared_expert_intermediate_size / moe_intermediate_size experts of the routed size.
  if (t.family == config::Model::QWEN2_MOE) {
    const int shared = r.OptionalInt("shared_expert_intermediate_size", 0);
    const int each = moe->moe_intermediate_size();
    if (shared > 0 && each > 0 && shared % each != 0) {
      r.Error(
          fmt::format("{} = {}: not supported: must be a multiple of moe_intermediate_size = {} (specsim "
                      "models shared experts as whole experts of the routed size)",
                      r.PathOf("shared_expert_intermediate_size"), shared, each));
    } else if (shared > 0 && each > 0) {
      moe->set_num_shared_experts(shared / each);
    }
  }
}

// MLA ranks (deepseek_v2/v3, kimi_k2) or the head dimension (given, or hidden / heads).
void ReadAttention(const TypeInfo& t, const std::string& why, Reader& r, config::Model* m) {
  if (t.mla) {
    config::MlaConfig* mla = m->mutable_mla();
    // q_lora_rank null: no query compression (transformers' DeepseekV2/V3 attention builds q_proj
    // when config.q_lora_rank is None; DeepSeek-V2-Lite's config.json).
    mla->set_q_lora_rank(r.IsNullInFile("q_lora_rank") ? 0 : r.RequiredInt({"q_lora_rank"}, why));
    mla->set_kv_lora_rank(r.RequiredInt({"kv_lora_rank"}, why));
    mla->set_qk_nope_head_dim(r.RequiredInt({"qk_nope_head_dim"}, why));
    mla->set_qk_rope_head_dim(r.RequiredInt({"qk_rope_head_dim"}, why));
    mla->set_v_head_dim(r.RequiredInt({"v_head_dim"}, why));
    m->set_head_dim(mla->qk_nope_head_dim() + mla->qk_rope_head_dim());
  } else if (r.Has("head_dim")) {
    m->set_head_dim(r.Int("head_dim").value_or(0));
  } else if (m->num_attention_heads() > 0) {
    m->set_head_dim(m->hidden_size() / m->num_attention_heads());
  }
}

// Sliding windows: gpt_oss's alternating layers; mistral / mixtral's window on every layer
// (sliding_window null: none); refused for the Qwen types (use_sliding_window true).
void ReadSlidingWindows(const TypeInfo& t, const std::string& why, Reader& r, config::Model* m) {
  const std::string type = t.type;
  if (type == "gpt_oss") {
    m->set_sliding_window(r.OptionalInt("sliding_window", 0));
    std::string path;
    if (const json* types = r.FindInFile("layer_types", &path)) {
      m->set_sliding_window_every(SlidingEveryFromLayerTypes(*types, path, m->num_layers(), &r));
    } else if (m->sliding_window() > 0) {
      m->set_sliding_window_every(2);  // transformers' GptOssConfig default: even layers slide
    }
    if (m->sliding_window_every() > 0 && m->sliding_window() <= 0) {
      r.Error(
          fmt::format("sliding_window: missing or 0 while layer_types has sliding layers "
                      "(required {})",
                      why));
    }
    if (m->sliding_window_every() == 0) m->set_sliding_window(0);
  } else if (type == "mistral" || type == "mixtral") {
    if (r.IsNullInFile("sliding_window")) return;
    const int window = r.OptionalInt("sliding_window", 0);
    if (window < 0) r.Error(fmt::format("{} = {}: must be >= 0 or null", r.PathOf("sliding_window"), window));
    if (window > 0) {
      m->set_sliding_window(window);
      m->set_sliding_window_every(1);  // every layer slides
    }
  } else if (r.OptionalBool("use_sliding_window", false)) {
    r.Error(
        fmt::format("{} = true: not supported for model_type \"{}\" (specsim models sliding "
                    "windows only for gpt_oss, mistral and mixtral)",
                    r.PathOf("use_sliding_window"), type));
  }
}

// The module each tensor class is matched by in quantization_config (hf_quantization.h), at the
// first layer of the class.
HfModuleNames ModuleNames(const TypeInfo& t, const config::Model& m) {
  HfModuleNames n;
  const int moe_layer = m.has_moe() ? m.moe().first_dense_layers() : 0;
  n.attention = "model.layers.0.self_attn.o_proj";
  if (!m.has_moe() || m.moe().first_dense_layers() > 0) n.dense_mlp = "model.layers.0.mlp.down_proj";
  if (!m.has_moe()) return n;
  const std::string l = "model.layers." + std::to_string(moe_layer) + ".";
  if (m.moe().num_shared_experts() > 0) {
    n.shared_experts =
        l + (t.family == config::Model::QWEN2_MOE ? "mlp.shared_expert.down_proj" : "mlp.shared_experts.down_proj");
  }
  if (t.moe == MoeStyle::kMixtral) {
    n.routed_experts = l + "block_sparse_moe.experts.0.w2";
  } else if (t.moe == MoeStyle::kGptOss) {
    n.routed_experts = l + "mlp.experts.down_proj";
  } else {
    n.routed_experts = l + "mlp.experts.0.down_proj";
  }
  return n;
}

void ReadQuantization(const TypeInfo& t, const json& root, Reader& r, config::Model* m) {
  std::string path;
  const json* qc = r.FindInFile("quantization_config", &path);
  if (qc == nullptr) return;
  std::vector<std::string> errors;
  *m->mutable_quantization() = ReadHfQuantization(*qc, ModuleNames(t, *m), &errors);
  for (const std::string& e : errors) r.Error(e);
  (void)root;
}

// The text as a JSON object; InvalidArgument for malformed text or another top level.
StatusOr<json> ParseConfigJson(std::string_view json_text, std::string_view filename) {
  json root;
  try {
    root = json::parse(json_text.begin(), json_text.end());
  } catch (const json::exception& e) {
    // parse_error for malformed text; out_of_range for a number past a double (1e6666): both are
    // json::exception, caught here.
    return InvalidArgumentError(fmt::format("{}: not valid JSON: {}", filename, e.what()));
  }
  if (!root.is_object()) {
    return InvalidArgumentError(
        fmt::format("{}: not a Hugging Face config.json: the top level must be a JSON object", filename));
  }
  return root;
}

// The transformer's shape: layers, widths, heads, vocabulary, tied embeddings, MTP layers, remote
// code, and the dense MLP size.
void ReadShape(const TypeInfo& t, const std::string& why, Reader& r, config::Model* out) {
  config::Model& m = *out;
  m.set_num_layers(r.RequiredInt({"num_hidden_layers"}, why));
  m.set_hidden_size(r.RequiredInt({"hidden_size"}, why));
  m.set_num_attention_heads(r.RequiredInt({"num_attention_heads"}, why));
  // Absent or null: = num_attention_heads (transformers' convention for num_key_value_heads None).
  m.set_num_key_value_heads(r.OptionalInt("num_key_value_heads", m.num_attention_heads()));
  m.set_vocab_size(r.RequiredInt({"vocab_size"}, why));
  m.set_tie_word_embeddings(r.OptionalBool("tie_word_embeddings", false));
  m.set_num_nextn_predict_layers(r.OptionalInt("num_nextn_predict_layers", 0));
  // Model classes mapped to code shipped with the checkpoint: frameworks need --trust-remote-code.
  m.set_trust_remote_code(r.FindInFile("auto_map") != nullptr);

  // Dense MLP size: none for the all-MoE styles whose intermediate_size is the per-expert size;
  // optional for the Qwen MoE types (every layer MoE).
  if (t.moe == MoeStyle::kGptOss || t.moe == MoeStyle::kMixtral) {
    m.set_intermediate_size(0);
  } else if (t.moe == MoeStyle::kQwen) {
    m.set_intermediate_size(r.FindInFile("intermediate_size") != nullptr ? r.Int("intermediate_size").value_or(0) : 0);
  } else {
    m.set_intermediate_size(r.RequiredInt({"intermediate_size"}, why));
  }
}

// An EAGLE-3 head (SpecForge's LlamaForCausalLMEagle3, specforge/modeling/draft/llama3_eagle.py):
// draft_vocab_size; one decoder layer; fc maps 3 x target_hidden_size (absent: hidden_size) to
// hidden_size, and specsim's head shares the target's embedding, so the two must be equal.
void ReadEagle3(Reader& r, config::Model* m) {
  config::Eagle3Config* e = m->mutable_eagle3();
  e->set_draft_vocab_size(r.RequiredInt({"draft_vocab_size"}, "for an EAGLE-3 head"));
  e->set_fused_hidden_states(3);
  if (m->num_layers() != 1) {
    r.Error(fmt::format("{} = {}: not supported for an EAGLE-3 head: specsim models it as one decoder layer (1)",
                        r.PathOf("num_hidden_layers"), m->num_layers()));
  }
  std::string path;
  if (const json* t = r.FindInFile("target_hidden_size", &path)) {
    const std::optional<int> target = r.Int("target_hidden_size");
    if (target && *target != m->hidden_size()) {
      r.Error(
          fmt::format("{} = {}: not supported: must equal hidden_size = {} (specsim's EAGLE-3 head runs at "
                      "the target's hidden size and shares its embedding)",
                      path, t->dump(), m->hidden_size()));
    }
  }
}

}  // namespace

StatusOr<config::Model> ImportHfConfig(std::string_view json_text, std::string_view filename) {
  ASSIGN_OR_RETURN(const json root, ParseConfigJson(json_text, filename));
  Reader r(root, filename);
  std::string type_path = "model_type";
  const std::optional<std::string> type = ModelType(root, &r, &type_path);
  if (!r.ok()) return r.ToStatus();
  if (!type.has_value()) {
    return InvalidArgumentError(fmt::format("{}: model_type: missing (supported: {})", filename, kSupportedTypes));
  }
  const TypeInfo* info = FindType(*type);
  if (info == nullptr) {
    return InvalidArgumentError(
        fmt::format("{}: {} = \"{}\": not supported; supported model_type "
                    "values: {}",
                    filename, type_path, *type, kSupportedTypes));
  }
  const json defaults = json::parse(info->defaults);
  r.SetDefaults(&defaults);

  config::Model m;
  const std::string why = fmt::format("for model_type \"{}\"", *type);
  const bool eagle3 = LooksLikeEagle3(root, r);
  if (eagle3 && *type != "llama") {
    return InvalidArgumentError(
        fmt::format("{}: an EAGLE-3 head (draft_vocab_size or an *Eagle3* architecture) with {} = \"{}\": "
                    "only llama-style EAGLE-3 heads are supported",
                    filename, type_path, *type));
  }
  m.set_family(eagle3 ? config::Model::EAGLE3 : info->family);

  if (std::optional<std::string> name = r.String("_name_or_path"); name && !name->empty()) {
    m.set_name(*name);
  } else {
    m.set_name(BaseName(filename));
  }

  ReadShape(*info, why, r, &m);
  ReadMoe(*info, why, r, &m);
  ReadAttention(*info, why, r, &m);
  ReadSlidingWindows(*info, why, r, &m);
  ReadQuantization(*info, root, r, &m);

  if (eagle3) ReadEagle3(r, &m);

  std::string source = fmt::format("Hugging Face config.json {}", filename);
  if (!r.defaulted().empty()) {
    std::string fields;
    for (const std::string& f : r.defaulted()) fields += (fields.empty() ? "" : ", ") + f;
    source += fmt::format("; transformers' {} defaults for {}", *type, fields);
  }
  m.set_source(source);

  if (!r.ok()) return r.ToStatus();
  return m;
}

}  // namespace specsim::io
