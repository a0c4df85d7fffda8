#include "sim/tools/launch_commands.h"

#include <fmt/format.h>

#include "sim/tools/framework_rules.h"

namespace specsim::tools {
namespace {

std::string IdOf(const llm::ModelSpec& m, const std::string& path) {
  return m.hf_id.empty() ? "<" + path + ">" : m.hf_id;
}

std::string DraftIdOf(const LaunchContext& ctx) {
  return ctx.draft ? IdOf(*ctx.draft, ctx.draft_path) : "<" + ctx.draft_path + ">";
}

// Notes shared by both frameworks: weights whose dtype is the checkpoint's choice, behaviour
// overrides no flag is known for, the custom allreduce where it does not run as released.
std::string Notes(const LaunchContext& ctx, const Candidate& c, const char* framework) {
  std::string notes;
  if (ctx.weight_dtype == compute::DType::kInt4 || ctx.weight_dtype == compute::DType::kFp4)
    notes += fmt::format("\n# weights {}: serve a checkpoint quantized so ({} reads the method from its config)",
                         compute::DTypeName(ctx.weight_dtype), framework);
  for (const std::string& o : c.pacing.overrides)
    notes += fmt::format("\n# and the framework behaviour {} (no {} flag is known for it)", o, framework);
  if (c.comm.custom_allreduce())
    notes += ctx.custom_allreduce_by_default
                 ? fmt::format(
                       "\n# {}'s custom allreduce, on by default on this box (it picks one-shot or two-shot by size)",
                       framework)
                 : fmt::format(
                       "\n# {}'s custom allreduce does not run on this box as released (more than 2 GPUs without "
                       "NVLink between every pair): a code change (configs/frameworks/*.textproto custom_allreduce)",
                       framework);
  return notes;
}

std::string WithEnvironment(const Candidate& c, std::string cmd) {
  const std::string env = NcclEnvironmentOf(c.comm);
  return env.empty() ? cmd : env + " " + cmd;
}

}  // namespace

std::string SglangCommand(const LaunchContext& ctx, const Candidate& c) {
  std::string cmd =
      fmt::format("python -m sglang.launch_server --model-path {} --tp {}", IdOf(ctx.target, ctx.model_path), ctx.tp);
  if (ctx.target.trust_remote_code) cmd += " --trust-remote-code";
  if (ctx.weight_dtype == compute::DType::kFp8) cmd += " --quantization fp8";
  if (ctx.kv_dtype == compute::DType::kFp8) cmd += " --kv-cache-dtype fp8_e4m3";
  if (c.pacing.cuda_graphs) cmd += fmt::format(" --cuda-graph-max-bs {}", ctx.batch);
  if (c.spec.method == config::Speculation::EAGLE3)
    cmd += fmt::format(" --speculative-algorithm EAGLE3 --speculative-draft-model-path {}", DraftIdOf(ctx));
  if (c.spec.method == config::Speculation::MTP) cmd += " --speculative-algorithm NEXTN";
  if (c.spec.method != config::Speculation::NONE)
    cmd += fmt::format(" --speculative-num-steps {} --speculative-eagle-topk {} --speculative-num-draft-tokens {}",
                       c.spec.num_steps, c.spec.topk, c.spec.num_draft_tokens);
  if (c.expert_parallel > 1) cmd += fmt::format(" --ep-size {}", c.expert_parallel);
  if (!c.pacing.cuda_graphs) cmd += " --disable-cuda-graph";
  if (!c.comm.custom_allreduce() && ctx.custom_allreduce_by_default) cmd += " --disable-custom-all-reduce";
  return WithEnvironment(c, cmd) + Notes(ctx, c, "SGLang");
}

std::string VllmCommand(const LaunchContext& ctx, const Candidate& c) {
  std::string cmd = fmt::format("vllm serve {} --tensor-parallel-size {}", IdOf(ctx.target, ctx.model_path), ctx.tp);
  if (ctx.target.trust_remote_code) cmd += " --trust-remote-code";
  if (ctx.weight_dtype == compute::DType::kFp8) cmd += " --quantization fp8";
  if (ctx.kv_dtype == compute::DType::kFp8) cmd += " --kv-cache-dtype fp8";
  cmd += fmt::format(" --max-num-seqs {}", ctx.batch);
  std::string notes;
  if (c.spec.method == config::Speculation::EAGLE3) {
    cmd += fmt::format(R"( --speculative-config '{{"method": "eagle3", "model": "{}", "num_speculative_tokens": {}}}')",
                       DraftIdOf(ctx), c.spec.num_steps);
    if (c.spec.topk > 1)
      notes += fmt::format(
          "\n# vLLM's EAGLE proposer drafts a chain: this tree (topk {}, {} tokens verified) has no vLLM flag",
          c.spec.topk, c.spec.num_draft_tokens);
  }
  if (c.spec.method == config::Speculation::MTP)
    cmd += fmt::format(R"( --speculative-config '{{"method": "deepseek_mtp", "num_speculative_tokens": {}}}')",
                       c.spec.num_steps);
  if (c.expert_parallel > 1) cmd += " --enable-expert-parallel";
  if (!c.pacing.cuda_graphs) cmd += " --enforce-eager";
  if (!c.comm.custom_allreduce() && ctx.custom_allreduce_by_default) cmd += " --disable-custom-all-reduce";
  return WithEnvironment(c, cmd) + notes + Notes(ctx, c, "vLLM");
}

}  // namespace specsim::tools
