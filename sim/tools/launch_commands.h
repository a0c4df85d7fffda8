// The SGLang and vLLM launch lines that reproduce an advised configuration: the model's Hugging
// Face id (models/*.textproto hf_id, else the model file), tensor parallelism, quantization and
// KV-cache dtype, trust-remote-code, the CUDA-graph batch bound, speculation, expert parallelism,
// graphs off, the custom-allreduce switch and the NCCL environment.
//
// [UNVERIFIED] The flag names are the frameworks' documented server arguments as we know them
// (SGLang python/sglang/srt/server_args.py, vLLM vllm/engine/arg_utils.py); neither source could
// be read here (docs/reference/speculative-decoding.md): check them against your version. Every
// line advise prints says so.
#pragma once

#include <optional>
#include <string>

#include "sim/compute/kernel.h"
#include "sim/llm/model.h"
#include "sim/tools/advisor.h"

namespace specsim::tools {

struct LaunchContext {
  llm::ModelSpec target;
  std::optional<llm::ModelSpec> draft;
  std::string model_path, draft_path;  // for models without an hf_id
  int tp = 1;
  int batch = 1;
  compute::DType weight_dtype = compute::DType::kBf16;
  compute::DType kv_dtype = compute::DType::kBf16;
  bool custom_allreduce_by_default = false;  // the framework runs its own allreduce on this box
};

std::string SglangCommand(const LaunchContext& ctx, const Candidate& c);
std::string VllmCommand(const LaunchContext& ctx, const Candidate& c);

}  // namespace specsim::tools
