#include "sim/io/hf_quantization.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace specsim::io {

const char* const kSupportedQuantMethods = "fp8, mxfp4, awq, gptq, compressed-tensors";

namespace {

using nlohmann::json;
using Q = config::Quantization;

constexpr const char* kAt = "quantization_config.";

// Collects "quantization_config.FIELD = VALUE: RULE" lines.
class QReader {
 public:
  QReader(const json& qc, std::vector<std::string>* errors) : qc_(qc), errors_(errors) {}

  void Error(const std::string& field, const std::string& value, const std::string& rule) {
    errors_->push_back(field.empty() ? fmt::format("quantization_config = {}: {}", value, rule)
                                     : fmt::format("{}{} = {}: {}", kAt, field, value, rule));
  }

  // An integer member of `obj` (path `field` in messages); `fallback` when absent or null.
  std::optional<int> Int(const json& obj, const std::string& key, const std::string& field,
                         std::optional<int> fallback) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return fallback;
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() != std::floor(it->get<double>()) ||
        std::fabs(it->get<double>()) > 1e9) {
      Error(field, it->dump(), "must be an integer");
      return std::nullopt;
    }
    return static_cast<int>(it->get<double>());
  }

  bool Bool(const json& obj, const std::string& key, const std::string& field, bool fallback) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) {
      Error(field, it->dump(), "must be true or false");
      return fallback;
    }
    return it->get<bool>();
  }

  std::string String(const json& obj, const std::string& key, const std::string& field) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return "";
    if (!it->is_string()) {
      Error(field, it->dump(), "must be a string");
      return "";
    }
    return it->get<std::string>();
  }

  // A list of strings (patterns); empty when absent.
  std::vector<std::string> Strings(const json& obj, const std::string& key, const std::string& field) {
    std::vector<std::string> out;
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return out;
    if (!it->is_array()) {
      Error(field, it->dump(), "must be a list of module names or patterns");
      return out;
    }
    for (const json& v : *it) {
      if (!v.is_string()) {
        Error(field, it->dump(), "must be a list of strings");
        return {};
      }
      out.push_back(v.get<std::string>());
    }
    return out;
  }

  const json& qc() const { return qc_; }

 private:
  const json& qc_;
  std::vector<std::string>* errors_;
};

// Whether glob `pattern` ('*' = any run of characters, everything else literal) matches a prefix of
// `name` (what the regex ".*"-for-'*' anchored at the start matched). The classic two-pointer
// wildcard match, O(|pattern| x |name|) at worst: a regex of many ".*" backtracked exponentially (a
// pattern of 31 stars held the fuzzer 40 s; regressions/hf_config_fuzz/glob-many-stars.json).
bool GlobMatchesPrefix(const std::string& pattern, const std::string& name) {
  size_t p = 0, n = 0, star = std::string::npos, star_n = 0;
  while (p < pattern.size()) {
    if (pattern[p] == '*') {
      star = p++;
      star_n = n;
    } else if (n < name.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string::npos && star_n < name.size()) {
      p = star + 1;
      n = ++star_n;
    } else {
      return false;
    }
  }
  return true;  // the pattern is used up: what is left of the name is the free suffix
}

// Whether `pattern` (module-list semantics in hf_quantization.h) matches module `name`.
bool Matches(const std::string& pattern, const std::string& name, const std::string& field, QReader* r) {
  if (pattern.rfind("re:", 0) != 0) {
    if (pattern.find('*') != std::string::npos) return GlobMatchesPrefix(pattern, name);
    return name.find(pattern) != std::string::npos;
  }
  const std::string regex = pattern.substr(3);
  try {
    return std::regex_search(name, std::regex(regex), std::regex_constants::match_continuous);
  } catch (const std::regex_error& e) {
    r->Error(field, json(pattern).dump(), std::string("not a valid regular expression: ") + e.what());
    return false;
  }
}

bool AnyMatches(const std::vector<std::string>& patterns, const std::string& name, const std::string& field,
                QReader* r) {
  for (const std::string& p : patterns) {
    if (!name.empty() && Matches(p, name, field, r)) return true;
  }
  return false;
}

// Marks the classes whose module an entry of `not_converted` names.
void MarkUnconverted(const std::vector<std::string>& not_converted, const HfModuleNames& n, const std::string& field,
                     QReader* r, Q* q) {
  q->set_attention_unquantized(AnyMatches(not_converted, n.attention, field, r));
  q->set_dense_mlp_unquantized(AnyMatches(not_converted, n.dense_mlp, field, r));
  q->set_shared_experts_unquantized(AnyMatches(not_converted, n.shared_experts, field, r));
  q->set_routed_experts_unquantized(AnyMatches(not_converted, n.routed_experts, field, r));
}

// fp8: DeepSeek-V3 / Kimi-K2's block-wise FP8 (weight_scale_inv: one fp32 per block).
void ReadFp8(QReader& r, const HfModuleNames& n, Q* q) {
  q->set_format(Q::FP8);
  q->set_scale_bits(32);
  // [UNVERIFIED] transformers src/transformers/utils/quantization_config.py FineGrainedFP8Config:
  // weight_block_size defaults to (128, 128); DeepSeek-V3's config.json states [128, 128].
  q->set_block_rows(128);
  q->set_block_cols(128);
  auto it = r.qc().find("weight_block_size");
  if (it != r.qc().end() && !it->is_null()) {
    if (!it->is_array() || it->size() != 2 || !(*it)[0].is_number_integer() || !(*it)[1].is_number_integer() ||
        (*it)[0].get<int64_t>() < 1 || (*it)[1].get<int64_t>() < 1 || (*it)[0].get<int64_t>() > 1 << 20 ||
        (*it)[1].get<int64_t>() > 1 << 20) {
      r.Error("weight_block_size", it->dump(), "must be [rows, cols], two positive integers (e.g. [128, 128])");
    } else {
      q->set_block_rows(static_cast<int>((*it)[0].get<int64_t>()));
      q->set_block_cols(static_cast<int>((*it)[1].get<int64_t>()));
    }
  }
  const std::string fmt = r.String(r.qc(), "fmt", "fmt");
  if (!fmt.empty() && fmt != "e4m3") r.Error("fmt", json(fmt).dump(), "allowed values: \"e4m3\"");
  MarkUnconverted(r.Strings(r.qc(), "modules_to_not_convert", "modules_to_not_convert"), n, "modules_to_not_convert",
                  &r, q);
}

// mxfp4: OCP Microscaling Formats (MX) v1.0: blocks of 32 values sharing one E8M0 (8-bit) scale;
// gpt-oss model card (arXiv:2508.10925): MoE weights in MXFP4.
void ReadMxfp4(QReader& r, const HfModuleNames& n, Q* q) {
  q->set_format(Q::FP4);
  q->set_block_rows(1);
  q->set_block_cols(32);
  q->set_scale_bits(8);
  MarkUnconverted(r.Strings(r.qc(), "modules_to_not_convert", "modules_to_not_convert"), n, "modules_to_not_convert",
                  &r, q);
}

// awq / gptq: packed int4 with an fp16 scale and a packed 4-bit zero point per group.
// [UNVERIFIED] defaults bits 4, group_size 128, zero_point true: transformers AwqConfig /
// GPTQConfig (src/transformers/utils/quantization_config.py); qzeros stored for GPTQ even when
// sym: AutoGPTQ's packing (qzeros int32 [k / group, n / 8]).
void ReadInt4Group(QReader& r, const HfModuleNames& n, bool awq, Q* q) {
  q->set_format(Q::INT4);
  const std::optional<int> bits = r.Int(r.qc(), "bits", "bits", 4);
  if (bits && *bits != 4) {
    r.Error("bits", std::to_string(*bits), "not supported: specsim's integer weight dtype is INT4 (bits 4)");
  }
  const std::optional<int> group = r.Int(r.qc(), "group_size", "group_size", 128);
  q->set_block_rows(1);
  if (group && (*group == -1 || *group > 0)) {
    q->set_block_cols(*group == -1 ? 0 : *group);
  } else if (group) {
    r.Error("group_size", std::to_string(*group), "must be > 0, or -1 (one group per output channel)");
  }
  q->set_scale_bits(16);
  const bool zero = awq ? r.Bool(r.qc(), "zero_point", "zero_point", true) : true;
  q->set_zero_point_bits(zero ? 4 : 0);
  MarkUnconverted(r.Strings(r.qc(), "modules_to_not_convert", "modules_to_not_convert"), n, "modules_to_not_convert",
                  &r, q);
}

// The block shape of compressed-tensors' weight `strategy` (group / tensor_group: 1 x group_size;
// channel: one scale per row; tensor: one scale; block: block_structure).
void ReadCompressedTensorsStrategy(QReader& r, const json& w, const std::string& wat, Q* q) {
  const std::string strategy = r.String(w, "strategy", wat + "strategy");
  const std::optional<int> group = r.Int(w, "group_size", wat + "group_size", std::nullopt);
  if (strategy == "group" || strategy == "tensor_group") {
    if (!group || *group < 1) {
      r.Error(wat + "group_size", group ? std::to_string(*group) : "(absent)",
              "must be > 0 for strategy \"" + strategy + "\"");
    } else {
      q->set_block_rows(1);
      q->set_block_cols(*group);
    }
  } else if (strategy == "channel") {
    q->set_block_rows(1);
    q->set_block_cols(0);
  } else if (strategy == "tensor") {
    q->set_block_rows(0);
    q->set_block_cols(0);
  } else if (strategy == "block") {
    auto bs = w.find("block_structure");
    if (bs == w.end() || !bs->is_array() || bs->size() != 2 || !(*bs)[0].is_number_integer() ||
        !(*bs)[1].is_number_integer() || (*bs)[0].get<int64_t>() < 1 || (*bs)[1].get<int64_t>() < 1 ||
        (*bs)[0].get<int64_t>() > 1 << 20 || (*bs)[1].get<int64_t>() > 1 << 20) {
      r.Error(wat + "block_structure", bs == w.end() ? "(absent)" : bs->dump(),
              "must be [rows, cols] for strategy \"block\"");
    } else {
      q->set_block_rows(static_cast<int>((*bs)[0].get<int64_t>()));
      q->set_block_cols(static_cast<int>((*bs)[1].get<int64_t>()));
    }
  } else {
    r.Error(wat + "strategy", json(strategy).dump(),
            "allowed values: \"group\", \"tensor_group\", \"channel\", \"tensor\", \"block\"");
  }
}

// Which modules the group's `targets` quantize, less the `ignore` list.
void ReadCompressedTensorsTargets(QReader& r, const json& g, const std::string& at, const HfModuleNames& n, Q* q) {
  const std::vector<std::string> targets = r.Strings(g, "targets", at + "targets");
  const std::vector<std::string> ignore = r.Strings(r.qc(), "ignore", "ignore");
  const bool all_linear = std::find(targets.begin(), targets.end(), "Linear") != targets.end();
  auto quantized = [&](const std::string& module) {
    if (module.empty()) return false;
    const bool targeted = all_linear || AnyMatches(targets, module, at + "targets", &r);
    return targeted && !AnyMatches(ignore, module, "ignore", &r);
  };
  q->set_attention_unquantized(!quantized(n.attention));
  q->set_dense_mlp_unquantized(!quantized(n.dense_mlp));
  q->set_shared_experts_unquantized(!quantized(n.shared_experts));
  q->set_routed_experts_unquantized(!quantized(n.routed_experts));
  q->set_lm_head_quantized(quantized(n.lm_head));
}

// compressed-tensors (llm-compressor): one config group; see hf_quantization.h.
// [UNVERIFIED] scale dtypes (bf16 for int, fp32 for fp8, e4m3 for fp4 groups) from memory of
// compressed-tensors' quantization/lifecycle; Kimi-K2-Thinking's config.json (int, 4 bits,
// strategy group, group_size 32, symmetric) is the case the default Kimi scenario describes.
void ReadCompressedTensors(QReader& r, const HfModuleNames& n, Q* q) {
  auto groups = r.qc().find("config_groups");
  if (groups == r.qc().end() || !groups->is_object() || groups->empty()) {
    r.Error("config_groups", groups == r.qc().end() ? "(absent)" : groups->dump(),
            "must be an object with one quantization group");
    return;
  }
  if (groups->size() != 1) {
    r.Error("config_groups", fmt::format("({} groups)", groups->size()),
            "not supported: specsim models one weight format per checkpoint (one group)");
    return;
  }
  const std::string gname = groups->begin().key();
  const json& g = groups->begin().value();
  const std::string at = "config_groups." + gname + ".";
  if (!g.is_object() || !g.contains("weights") || !g["weights"].is_object()) {
    r.Error(at + "weights", g.is_object() && g.contains("weights") ? g["weights"].dump() : "(absent)",
            "must be an object (num_bits, type, strategy, ...)");
    return;
  }
  const json& w = g["weights"];
  const std::string wat = at + "weights.";
  const std::optional<int> bits = r.Int(w, "num_bits", wat + "num_bits", std::nullopt);
  const std::string type = r.String(w, "type", wat + "type");
  if (!bits) {
    r.Error(wat + "num_bits", "(absent)", "required");
    return;
  }
  int scale_bits = 16;
  if (type == "int" && *bits == 4) {
    q->set_format(Q::INT4);
  } else if (type == "float" && *bits == 8) {
    q->set_format(Q::FP8);
    scale_bits = 32;
  } else if (type == "float" && *bits == 4) {
    q->set_format(Q::FP4);
    scale_bits = 8;
  } else {
    r.Error(wat + "type", fmt::format("\"{}\" with num_bits {}", type, *bits),
            "not supported: allowed int 4 (INT4), float 8 (FP8), float 4 (FP4)");
    return;
  }
  q->set_scale_bits(scale_bits);
  ReadCompressedTensorsStrategy(r, w, wat, q);
  if (!r.Bool(w, "symmetric", wat + "symmetric", true)) q->set_zero_point_bits(*bits);
  ReadCompressedTensorsTargets(r, g, at, n, q);
}

}  // namespace

config::Quantization ReadHfQuantization(const json& qc, const HfModuleNames& names, std::vector<std::string>* errors) {
  Q q;
  QReader r(qc, errors);
  if (!qc.is_object()) {
    r.Error("", qc.dump(), "must be an object");
    return q;
  }
  const std::string method = r.String(qc, "quant_method", "quant_method");
  q.set_quant_method(method);
  if (method == "fp8") {
    ReadFp8(r, names, &q);
  } else if (method == "mxfp4") {
    ReadMxfp4(r, names, &q);
  } else if (method == "awq") {
    ReadInt4Group(r, names, /*awq=*/true, &q);
  } else if (method == "gptq") {
    ReadInt4Group(r, names, /*awq=*/false, &q);
  } else if (method == "compressed-tensors") {
    ReadCompressedTensors(r, names, &q);
  } else {
    r.Error("quant_method", method.empty() ? "(absent)" : json(method).dump(),
            fmt::format("not supported; supported quant_method values: {}", kSupportedQuantMethods));
  }
  return q;
}

}  // namespace specsim::io
