// The SGLang and vLLM launch lines that reproduce an advised configuration: the model's Hugging
// Face id (models/*.textproto hf_id, else the model file), tensor parallelism, quantization and
// KV-cache dtype, trust-remote-code, the CUDA-graph batch bound, speculation, expert parallelism
// and its all-to-all backend, graph and capture flags, the custom-allreduce switch, the NCCL
// environment and what the framework sets itself. The capture, EP and NCCL parts come from the
// frameworks' profiles (configs/frameworks/{sglang,vllm}.textproto: graph_flags, expert_parallel,
// nccl_environment); speculation, quantization and model flags are written here.
//
// The flags as the frameworks' current sources declare them (docs/reference/serving-frameworks.md
// has the table with commits): SGLang python/sglang/srt/arg_groups/fields/{model,parallel,spec,
// schedule,exec_}.py (@0116c60, @0481724, @015c872, @001b886, @01d795f: --model-path, --tp-size,
// --trust-remote-code, --quantization fp8, --kv-cache-dtype fp8_e4m3, --speculative-algorithm
// EAGLE3 / NEXTN (upper-cased; NEXTN becomes EAGLE, speculative_hook.py @004c82e),
// --speculative-draft-model-path, --speculative-num-steps, --speculative-eagle-topk,
// --speculative-num-draft-tokens); vLLM vllm/engine/arg_utils.py @99d7eb5 (vllm serve,
// --tensor-parallel-size, --trust-remote-code, --quantization fp8, --kv-cache-dtype fp8,
// --max-num-seqs, --speculative-config JSON with method eagle3 / deepseek_mtp (rewritten to mtp
// with a warning, vllm/config/speculative.py @002e77c), model, num_speculative_tokens).
#pragma once

#include <optional>
#include <string>

#include "sim/advise/advisor.h"
#include "sim/advise/framework_rules.h"
#include "sim/compute/kernel.h"
#include "sim/llm/model.h"
#include "sim/llm/framework_profile.h"

namespace specsim::advise {

struct LaunchContext {
  llm::ModelSpec target;
  std::optional<llm::ModelSpec> draft;
  std::string model_path, draft_path;  // for models without an hf_id
  int tp = 1;
  int batch = 1;
  compute::DType weight_dtype = compute::DType::kBf16;
  compute::DType kv_dtype = compute::DType::kBf16;
  BoxFacts box;                        // the group's GPUs (framework_rules.h)
  llm::FrameworkProfile sglang, vllm;  // the two frameworks' profiles (their rules as data)
};

std::string SglangCommand(const LaunchContext& ctx, const Candidate& c);
std::string VllmCommand(const LaunchContext& ctx, const Candidate& c);

}  // namespace specsim::advise
