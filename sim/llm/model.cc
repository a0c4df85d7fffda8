#include "sim/llm/model.h"

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

}  // namespace specsim::llm
