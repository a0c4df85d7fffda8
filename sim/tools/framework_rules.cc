#include "sim/tools/framework_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "sim/net/routing.h"
#include "sim/tools/advisor.h"

namespace specsim::tools {

const char* EffortName(Effort effort) {
  switch (effort) {
    case Effort::kRunsAsIs: return "runs as is";
    case Effort::kLaunchFlag: return "needs a launch flag";
    case Effort::kEnvironment: return "needs an environment variable";
    case Effort::kCodeChange: return "needs a code change";
  }
  return "?";
}

std::string WhatItTakes::Text() const {
  std::string out = EffortName(effort);
  for (size_t i = 0; i < steps.size(); ++i) out += (i == 0 ? ": " : "; ") + steps[i];
  return out;
}

BoxFacts BoxFactsOf(const net::Topology& topology, int world_size, const std::vector<int>& gpus_in) {
  BoxFacts box;
  box.world_size = world_size;
  std::vector<int> gpus = gpus_in;
  if (gpus.empty())
    for (int g = 0; g < world_size && g < topology.num_gpus(); ++g) gpus.push_back(g);
  net::Router router(topology);
  box.full_nvlink = gpus.size() >= 2;
  for (size_t i = 0; i < gpus.size() && box.full_nvlink; ++i)
    for (size_t j = i + 1; j < gpus.size() && box.full_nvlink; ++j)
      box.full_nvlink = router.GpuPathClass(gpus[i], gpus[j]) == net::PathClass::kNvLink;
  return box;
}

bool CustomAllreduceByDefault(const llm::FrameworkProfile& framework, const BoxFacts& box) {
  return framework.custom_allreduce.RunsOn(box.world_size, box.full_nvlink);
}

namespace {

void Need(Effort effort, std::string step, WhatItTakes* w) {
  w->effort = std::max(w->effort, effort);
  w->steps.push_back(std::move(step));
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string NcclEnvironmentOf(const CommChoice& comm) {
  if (comm.custom_allreduce()) return "";
  std::string env;
  if (comm.algorithm == "ring") env += " NCCL_ALGO=Ring";
  // NCCL >= 2.24 enforces NCCL_ALGO strictly (docs/reference/case.md): name the collective so
  // all-gathers keep their ring.
  if (comm.algorithm == "tree") env += " NCCL_ALGO=allreduce:tree";
  if (comm.protocol == "ll") env += " NCCL_PROTO=LL";
  if (comm.protocol == "simple") env += " NCCL_PROTO=Simple";
  if (comm.channels > 0) env += fmt::format(" NCCL_MIN_NCHANNELS={0} NCCL_MAX_NCHANNELS={0}", comm.channels);
  if (!comm.p2p_level.empty()) env += " NCCL_P2P_LEVEL=" + Upper(comm.p2p_level);
  return env.empty() ? env : env.substr(1);
}

WhatItTakes WhatCandidateTakes(const Candidate& c, const llm::FrameworkProfile& framework, const BoxFacts& box) {
  WhatItTakes w;
  const std::string& fw = framework.name.empty() ? std::string("the framework") : framework.name;
  const auto& rule = framework.custom_allreduce;
  const bool custom_default = CustomAllreduceByDefault(framework, box);
  if (c.comm.custom_allreduce()) {
    if (!rule.stated) {
      Need(Effort::kCodeChange, fmt::format("{}'s profile states no custom-allreduce rule", fw), &w);
    } else if (!custom_default) {
      std::string sizes;
      for (int s : rule.world_sizes) sizes += fmt::format("{}{}", sizes.empty() ? "" : ", ", s);
      Need(Effort::kCodeChange,
           fmt::format("{} runs its custom allreduce on {} GPUs and, without NVLink between every pair, on at "
                       "most {} ({}); this group is {} GPUs {}",
                       fw, sizes, rule.max_world_size_without_full_nvlink, rule.source, box.world_size,
                       box.full_nvlink ? "with NVLink between every pair" : "without NVLink between every pair"),
           &w);
    } else if (c.comm.algorithm == "twoshot" && std::count(rule.one_shot_only_world_sizes.begin(),
                                                           rule.one_shot_only_world_sizes.end(), box.world_size) > 0) {
      Need(Effort::kCodeChange, fmt::format("{} runs one-shot only on {} GPUs ({})", fw, box.world_size, rule.source),
           &w);
    }
  } else {
    if (custom_default)
      Need(Effort::kLaunchFlag, "--disable-custom-all-reduce (" + fw + " runs its own otherwise)", &w);
    if (const std::string env = NcclEnvironmentOf(c.comm); !env.empty()) Need(Effort::kEnvironment, env, &w);
  }
  if (!c.pacing.cuda_graphs) Need(Effort::kLaunchFlag, "--disable-cuda-graph", &w);
  for (const std::string& o : c.pacing.overrides)
    Need(Effort::kCodeChange, fmt::format("no {} flag is known for {}", fw, o), &w);
  if (c.expert_parallel > 1) Need(Effort::kLaunchFlag, fmt::format("--ep-size {}", c.expert_parallel), &w);
  return w;
}

}  // namespace specsim::tools
