#include "sim/advise/launch_commands.h"

#include <fmt/format.h>

#include "sim/advise/framework_rules.h"

namespace specsim::advise {
namespace {

std::string IdOf(const llm::ModelSpec& m, const std::string& path) {
  return m.hf_id.empty() ? "<" + path + ">" : m.hf_id;
}

std::string DraftIdOf(const LaunchContext& ctx) {
  return ctx.draft ? IdOf(*ctx.draft, ctx.draft_path) : "<" + ctx.draft_path + ">";
}

// Notes shared by both frameworks: weights whose dtype is the checkpoint's choice, behaviour
// overrides no flag is known for, the custom allreduce where it does not run as released, a driver
// setting, what the framework sets itself.
std::string Notes(const LaunchContext& ctx, const Candidate& c, const llm::FrameworkProfile& fw, const char* name) {
  std::string notes;
  if (ctx.weight_dtype == compute::DType::kInt4 || ctx.weight_dtype == compute::DType::kFp4)
    notes += fmt::format("\n# weights {}: serve a checkpoint quantized so ({} reads the method from its config)",
                         compute::DTypeName(ctx.weight_dtype), name);
  if (c.comm.custom_allreduce())
    notes +=
        CustomAllreduceByDefault(fw, ctx.box)
            ? fmt::format(
                  "\n# {}'s custom allreduce, on by default on this box (it picks one-shot or two-shot by size)", name)
            : fmt::format(
                  "\n# {}'s custom allreduce does not run on this box as released: a code change "
                  "(configs/frameworks/*.textproto custom_allreduce)",
                  name);
  if (c.comm.driver_p2p_mode == "bar1") notes += "\n# and " + Bar1Step();
  for (const auto& [var, value] : fw.nccl_environment.sets)
    notes += fmt::format("\n# {} sets {}={} itself ({})", name, var, value, fw.nccl_environment.source);
  for (const auto& [var, value] : fw.nccl_environment.sets_if_unset)
    notes += fmt::format("\n# {} sets {}={} where the shell has not set it ({})", name, var, value,
                         fw.nccl_environment.source);
  return notes;
}

// The profile's flags for graphs, capture overrides and EP, and the environment they need
// (framework_rules.h WhatCandidateTakes on this framework's profile); code changes as notes.
struct RuleFlags {
  std::string flags, env, notes;
};

RuleFlags RuleFlagsOf(const LaunchContext& ctx, const Candidate& c, const llm::FrameworkProfile& fw, const char* name) {
  RuleFlags r;
  const WhatItTakes takes = WhatCandidateTakes(c, fw, ctx.box);
  if (c.pacing.cuda_graphs && !fw.graph_flags.max_batch_size.empty())
    r.flags += " " + llm::WithNumber(fw.graph_flags.max_batch_size, ctx.batch);
  for (const std::string& f : takes.launch_flags) r.flags += " " + f;
  for (const std::string& e : takes.environment) r.env += e + " ";
  for (const std::string& o : takes.other)
    if (o.find("custom allreduce") == std::string::npos && o.find("BAR1") == std::string::npos)
      r.notes += fmt::format("\n# and {}: {}", name, o);
  return r;
}

std::string WithEnvironment(const std::string& extra_env, std::string cmd) {
  std::string env = extra_env;
  while (!env.empty() && env.back() == ' ') env.pop_back();
  return env.empty() ? cmd : env + " " + cmd;
}

// The profile's launch text of a method (framework.proto SpeculationMethods), its placeholders
// filled; "" when the profile has none.
std::string MethodLaunch(const std::string& text, const LaunchContext& ctx, const Candidate& c) {
  std::string out = text;
  auto fill = [&out](const std::string& key, const std::string& value) {
    for (size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + value.size()))
      out.replace(at, key.size(), value);
  };
  fill("{draft}", DraftIdOf(ctx));
  fill("{steps}", std::to_string(c.spec.num_steps));
  fill("{topk}", std::to_string(c.spec.topk));
  fill("{tokens}", std::to_string(c.spec.num_draft_tokens));
  return out;
}

// The launch text of DRAFT_MODEL / NGRAM under `fw`, or a note that it has none.
std::string OtherMethodLaunch(const LaunchContext& ctx, const Candidate& c, const llm::FrameworkProfile& fw,
                              const std::string& name, std::string* notes) {
  const auto& m = fw.speculation_methods;
  const std::string& text = c.spec.method == config::Speculation::DRAFT_MODEL ? m.draft_model_launch : m.ngram_launch;
  if (text.empty()) {
    *notes +=
        fmt::format("\n# {} has no {} method in its profile", name, config::Speculation::Method_Name(c.spec.method));
    return "";
  }
  if (c.spec.method == config::Speculation::DRAFT_MODEL && m.draft_model_chain_only && c.spec.topk > 1)
    *notes += fmt::format("\n# {}'s draft-model proposer drafts a chain: this tree (topk {}) has no {} flag", name,
                          c.spec.topk, name);
  return " " + MethodLaunch(text, ctx, c);
}

}  // namespace

std::string SglangCommand(const LaunchContext& ctx, const Candidate& c) {
  std::string cmd = fmt::format("python -m sglang.launch_server --model-path {} --tp-size {}",
                                IdOf(ctx.target, ctx.model_path), ctx.tp);
  if (ctx.target.trust_remote_code) cmd += " --trust-remote-code";
  if (ctx.weight_dtype == compute::DType::kFp8) cmd += " --quantization fp8";
  if (ctx.kv_dtype == compute::DType::kFp8) cmd += " --kv-cache-dtype fp8_e4m3";
  if (c.spec.method == config::Speculation::EAGLE3)
    cmd += fmt::format(" --speculative-algorithm EAGLE3 --speculative-draft-model-path {}", DraftIdOf(ctx));
  if (c.spec.method == config::Speculation::MTP) cmd += " --speculative-algorithm NEXTN";
  std::string method_notes;
  if (c.spec.method == config::Speculation::EAGLE3 || c.spec.method == config::Speculation::MTP)
    cmd += fmt::format(" --speculative-num-steps {} --speculative-eagle-topk {} --speculative-num-draft-tokens {}",
                       c.spec.num_steps, c.spec.topk, c.spec.num_draft_tokens);
  if (c.spec.method == config::Speculation::DRAFT_MODEL || c.spec.method == config::Speculation::NGRAM)
    cmd += OtherMethodLaunch(ctx, c, ctx.sglang, "SGLang", &method_notes);
  // Under speculation SGLang runs at most its default cap of requests unless told (the profile's
  // speculative_defaults).
  const auto& defaults = ctx.sglang.speculative_defaults;
  if (c.spec.method != config::Speculation::NONE && defaults.stated && defaults.max_running_requests > 0 &&
      ctx.batch > defaults.max_running_requests)
    cmd += " " + llm::WithNumber(defaults.max_running_requests_flag, ctx.batch);
  const RuleFlags rules = RuleFlagsOf(ctx, c, ctx.sglang, "SGLang");
  return WithEnvironment(rules.env, cmd + rules.flags) + method_notes + rules.notes +
         Notes(ctx, c, ctx.sglang, "SGLang");
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
  if (c.spec.method == config::Speculation::DRAFT_MODEL || c.spec.method == config::Speculation::NGRAM)
    cmd += OtherMethodLaunch(ctx, c, ctx.vllm, "vLLM", &notes);
  const RuleFlags rules = RuleFlagsOf(ctx, c, ctx.vllm, "vLLM");
  return WithEnvironment(rules.env, cmd + rules.flags) + notes + rules.notes + Notes(ctx, c, ctx.vllm, "vLLM");
}

}  // namespace specsim::advise
