#include "sim/llm/model.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace specsim::llm {

const char* ModelFamilyName(ModelFamily f) {
  switch (f) {
    case ModelFamily::kLlama: return "llama";
    case ModelFamily::kQwen3: return "qwen3";
    case ModelFamily::kQwen3Moe: return "qwen3_moe";
    case ModelFamily::kDeepseekV3: return "deepseek_v3";
    case ModelFamily::kGptOss: return "gpt_oss";
    case ModelFamily::kEagle3: return "eagle3";
    case ModelFamily::kMistral: return "mistral";
    case ModelFamily::kMixtral: return "mixtral";
    case ModelFamily::kQwen2: return "qwen2";
    case ModelFamily::kQwen2Moe: return "qwen2_moe";
    case ModelFamily::kDeepseekV2: return "deepseek_v2";
    case ModelFamily::kGlm4Moe: return "glm4_moe";
  }
  return "unknown";
}

std::string DescribeWeightFormats(const ModelSpec& m, const WeightFormats& f) {
  std::vector<std::pair<const char*, const WeightFormat*>> classes = {{"attention", &f.attention}};
  if (!m.is_moe() || m.moe.first_dense_layers > 0) classes.emplace_back("dense MLP", &f.dense_mlp);
  if (m.is_moe() && m.moe.num_shared_experts > 0) classes.emplace_back("shared experts", &f.shared_experts);
  if (m.is_moe()) classes.emplace_back("routed experts", &f.routed_experts);
  classes.emplace_back("LM head", &f.lm_head);
  std::vector<std::pair<std::string, const WeightFormat*>> groups;  // names, format
  for (const auto& [name, format_of_class] : classes) {
    const WeightFormat* format = format_of_class;  // a structured binding cannot be captured (C++17)
    auto same = [format](const auto& g) { return *g.second == *format; };
    auto it = std::find_if(groups.begin(), groups.end(), same);
    if (it == groups.end()) {
      groups.emplace_back(name, format);
    } else {
      it->first += std::string(", ") + name;
    }
  }
  std::string out;
  for (const auto& [names, format] : groups) out += (out.empty() ? "" : "; ") + names + " " + WeightFormatName(*format);
  return out;
}

}  // namespace specsim::llm
