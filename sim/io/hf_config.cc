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

namespace specsim::io {
namespace {

using nlohmann::json;

constexpr const char* kSupportedTypes = "llama, qwen3, qwen3_moe, deepseek_v3, kimi_k2, gpt_oss";

bool IsSupportedType(const std::string& t) {
  return t == "llama" || t == "qwen3" || t == "qwen3_moe" || t == "deepseek_v3" || t == "kimi_k2" || t == "gpt_oss";
}

// Reads fields from "text_config" when present there, else from the top level; collects every
// problem as one line "FILE: FIELD ...".
class Reader {
 public:
  Reader(const json& root, std::string_view filename) : root_(root), filename_(filename) {
    auto it = root.find("text_config");
    if (it != root.end() && it->is_object()) text_ = &*it;
  }

  // The value of `key` (nullptr when absent or null) and its path for messages.
  const json* Find(const std::string& key, std::string* path = nullptr) const {
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

  bool Has(const std::string& key) const { return Find(key) != nullptr; }

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

  // The first of `keys` present; records "missing" naming them all when none is.
  int RequiredInt(const std::vector<std::string>& keys, const std::string& why) {
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
    const json* v = Find(key, &path);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) {
      Error(fmt::format("{} = {}: must be a string", path, v->dump()));
      return std::nullopt;
    }
    return v->get<std::string>();
  }

  std::string PathOf(const std::string& key) const {
    std::string path = key;
    Find(key, &path);
    return path;
  }

  void Error(const std::string& line) { errors_.push_back(fmt::format("{}: {}", filename_, line)); }

  bool ok() const { return errors_.empty(); }
  Status ToStatus() const {
    std::string message;
    for (const std::string& line : errors_) message += (message.empty() ? "" : "\n") + line;
    return InvalidArgumentError(message);
  }

 private:
  const json& root_;
  const json* text_ = nullptr;
  std::string filename_;
  std::vector<std::string> errors_;
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
  if (r.Has("draft_vocab_size")) return true;
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

// The family of a supported model_type (IsSupportedType), EAGLE-3 heads aside.
config::Model::Family FamilyOfType(const std::string& type) {
  if (type == "llama") return config::Model::LLAMA;
  if (type == "qwen3") return config::Model::QWEN3;
  if (type == "qwen3_moe") return config::Model::QWEN3_MOE;
  if (type == "deepseek_v3" || type == "kimi_k2") return config::Model::DEEPSEEK_V3;
  return config::Model::GPT_OSS;
}

// The MoE block of a qwen3_moe, deepseek_v3 / kimi_k2 or gpt_oss config (each names its fields
// its own way); refuses layer patterns specsim does not model (not every layer MoE).
void ReadMoe(const std::string& type, const std::string& why, Reader& r, config::Model* m) {
  const bool deepseek = type == "deepseek_v3" || type == "kimi_k2";
  const bool gpt_oss = type == "gpt_oss";
  config::MoeConfig* moe = m->mutable_moe();
  if (deepseek) {
    moe->set_num_experts(r.RequiredInt({"n_routed_experts"}, why));
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
  } else if (gpt_oss) {
    moe->set_num_experts(r.RequiredInt({"num_local_experts", "num_experts"}, why));
    moe->set_experts_per_token(r.RequiredInt({"experts_per_token", "num_experts_per_tok"}, why));
    moe->set_moe_intermediate_size(r.RequiredInt({"intermediate_size"}, why + " (the per-expert MLP size)"));
  } else {
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
    if (const json* only = r.Find("mlp_only_layers", &path); only != nullptr && !(only->is_array() && only->empty())) {
      r.Error(
          fmt::format("{} = {}: not supported: specsim models every layer as MoE "
                      "(mlp_only_layers [])",
                      path, only->dump()));
    }
  }
}

// MLA ranks (deepseek_v3 / kimi_k2) or the head dimension (given, or hidden / heads).
void ReadAttention(bool deepseek, const std::string& why, Reader& r, config::Model* m) {
  if (deepseek) {
    config::MlaConfig* mla = m->mutable_mla();
    mla->set_q_lora_rank(r.RequiredInt({"q_lora_rank"}, why));
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

// gpt_oss's sliding windows (window and layer pattern); refused for the other types.
void ReadSlidingWindows(const std::string& type, const std::string& why, Reader& r, config::Model* m) {
  if (type == "gpt_oss") {
    m->set_sliding_window(r.OptionalInt("sliding_window", 0));
    std::string path;
    if (const json* types = r.Find("layer_types", &path)) {
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
  } else if (r.OptionalBool("use_sliding_window", false)) {
    r.Error(
        fmt::format("{} = true: not supported for model_type \"{}\" (specsim models sliding "
                    "windows only for gpt_oss)",
                    r.PathOf("use_sliding_window"), type));
  }
}

}  // namespace

StatusOr<config::Model> ImportHfConfig(std::string_view json_text, std::string_view filename) {
  json root;
  try {
    root = json::parse(json_text.begin(), json_text.end());
  } catch (const json::exception& e) {
    // parse_error for malformed text; out_of_range for a number past a double (1e6666: found by
    // hf_config_fuzz, it escaped as an uncaught exception).
    return InvalidArgumentError(fmt::format("{}: not valid JSON: {}", filename, e.what()));
  }
  if (!root.is_object()) {
    return InvalidArgumentError(
        fmt::format("{}: not a Hugging Face config.json: the top level must be a JSON object", filename));
  }
  Reader r(root, filename);
  std::string type_path = "model_type";
  const std::optional<std::string> type = ModelType(root, &r, &type_path);
  if (!r.ok()) return r.ToStatus();
  if (!type.has_value()) {
    return InvalidArgumentError(fmt::format("{}: model_type: missing (supported: {})", filename, kSupportedTypes));
  }
  if (!IsSupportedType(*type)) {
    return InvalidArgumentError(
        fmt::format("{}: {} = \"{}\": not supported; supported model_type "
                    "values: {}",
                    filename, type_path, *type, kSupportedTypes));
  }

  config::Model m;
  const std::string why = fmt::format("for model_type \"{}\"", *type);
  const bool eagle3 = LooksLikeEagle3(root, r);
  const bool deepseek = *type == "deepseek_v3" || *type == "kimi_k2";
  const bool gpt_oss = *type == "gpt_oss";
  if (eagle3 && *type != "llama") {
    return InvalidArgumentError(
        fmt::format("{}: an EAGLE-3 head (draft_vocab_size or an *Eagle3* architecture) with {} = \"{}\": "
                    "only llama-style EAGLE-3 heads are supported",
                    filename, type_path, *type));
  }
  m.set_family(eagle3 ? config::Model::EAGLE3 : FamilyOfType(*type));

  if (std::optional<std::string> name = r.String("_name_or_path"); name && !name->empty()) {
    m.set_name(*name);
  } else {
    m.set_name(BaseName(filename));
  }
  m.set_source(fmt::format("Hugging Face config.json {}", filename));

  m.set_num_layers(r.RequiredInt({"num_hidden_layers"}, why));
  m.set_hidden_size(r.RequiredInt({"hidden_size"}, why));
  m.set_num_attention_heads(r.RequiredInt({"num_attention_heads"}, why));
  m.set_num_key_value_heads(r.OptionalInt("num_key_value_heads", m.num_attention_heads()));
  m.set_vocab_size(r.RequiredInt({"vocab_size"}, why));
  m.set_tie_word_embeddings(r.OptionalBool("tie_word_embeddings", false));
  m.set_num_nextn_predict_layers(r.OptionalInt("num_nextn_predict_layers", 0));
  // Model classes mapped to code shipped with the checkpoint: frameworks need --trust-remote-code.
  m.set_trust_remote_code(r.Has("auto_map"));

  // Dense MLP size.
  if (gpt_oss) {
    m.set_intermediate_size(0);  // its intermediate_size is the per-expert size (below)
  } else if (*type == "qwen3_moe") {
    m.set_intermediate_size(r.OptionalInt("intermediate_size", 0));
  } else {
    m.set_intermediate_size(r.RequiredInt({"intermediate_size"}, why));
  }

  if (*type == "qwen3_moe" || deepseek || gpt_oss) ReadMoe(*type, why, r, &m);
  ReadAttention(deepseek, why, r, &m);
  ReadSlidingWindows(*type, why, r, &m);

  if (eagle3) {
    config::Eagle3Config* e = m.mutable_eagle3();
    e->set_draft_vocab_size(r.RequiredInt({"draft_vocab_size"}, "for an EAGLE-3 head"));
    e->set_fused_hidden_states(3);
  }

  if (!r.ok()) return r.ToStatus();
  return m;
}

}  // namespace specsim::io
