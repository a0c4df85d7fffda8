#include "sim/advise/framework_rules.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/advise/advisor.h"
#include "sim/coll/collective_planner.h"
#include "sim/core/strings.h"
#include "sim/net/peer_access.h"
#include "sim/net/routing.h"

namespace specsim::advise {

const char* EffortName(Effort effort) {
  switch (effort) {
    case Effort::kRunsAsIs: return "runs as is";
    case Effort::kLaunchFlag: return "needs a launch flag";
    case Effort::kEnvironment: return "needs an environment variable";
    case Effort::kDriverSetting: return "needs a driver or BIOS setting";
    case Effort::kCodeChange: return "needs a code change";
  }
  return "?";
}

std::string WhatItTakes::Text() const {
  std::string out = EffortName(effort);
  for (size_t i = 0; i < steps.size(); ++i) out += (i == 0 ? ": " : "; ") + steps[i];
  if (!priced.empty()) out += " (priced " + priced + ")";
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
  box.peer_reads_not_direct = coll::WhyPeerReadsAreNotDirect(topology, gpus);
  box.no_pcie_p2p = topology.driver_p2p_mode == net::DriverP2pMode::kNoPcieP2p && !box.full_nvlink;
  box.bar1_possible = !gpus.empty();
  for (int g : gpus) box.bar1_possible = box.bar1_possible && net::Bar1P2pSupported(topology.gpu_spec(g).arch);
  return box;
}

bool CustomAllreduceByDefault(const llm::FrameworkProfile& framework, const BoxFacts& box) {
  // Both frameworks also test P2P between the GPUs before enabling it (custom_all_reduce.py
  // [UNVERIFIED], peer-access.md): none where the driver gives no PCIe P2P.
  return framework.custom_allreduce.RunsOn(box.world_size, box.full_nvlink) && !box.no_pcie_p2p;
}

namespace {

// A requirement in words; `paste` (a flag, or NAME=VALUE settings separated by spaces) is what to
// add to the command, "" for code changes and driver settings.
void Need(Effort effort, std::string step, WhatItTakes* w, const std::string& paste = "") {
  w->effort = std::max(w->effort, effort);
  if (effort == Effort::kLaunchFlag) {
    w->launch_flags.push_back(paste.empty() ? step : paste);
  } else if (effort == Effort::kEnvironment) {
    const std::string env = paste.empty() ? step : paste;
    for (size_t start = 0; start < env.size();) {
      const size_t end = std::min(env.find(' ', start), env.size());
      w->environment.push_back(env.substr(start, end - start));
      start = end + 1;
    }
  } else if (effort != Effort::kRunsAsIs) {
    w->other.push_back(step);
  }
  w->steps.push_back(std::move(step));
}

}  // namespace

std::string Bar1Step() {
  return "BAR1 PCIe P2P: nvidia module parameter " + net::Bar1ModuleParameter() +
         " (the driver defaults to mailbox P2P: open-gpu-kernel-modules 595.45.04 nvrm_registry.h; "
         "docs/reference/peer-access.md)";
}

std::string NcclEnvironmentOf(const AllreduceVariant& comm) {
  if (comm.custom_allreduce()) return "";
  std::string env;
  if (comm.algorithm == "ring") env += " NCCL_ALGO=Ring";
  // NCCL >= 2.24 enforces NCCL_ALGO strictly (docs/reference/case.md): name the collective so
  // all-gathers keep their ring.
  if (comm.algorithm == "tree") env += " NCCL_ALGO=allreduce:tree";
  if (comm.protocol == "ll") env += " NCCL_PROTO=LL";
  if (comm.protocol == "simple") env += " NCCL_PROTO=Simple";
  if (comm.channels > 0) env += fmt::format(" NCCL_MIN_NCHANNELS={0} NCCL_MAX_NCHANNELS={0}", comm.channels);
  if (!comm.p2p_level.empty()) env += " NCCL_P2P_LEVEL=" + AsciiUpper(comm.p2p_level);
  if (comm.p2p_disable) env += " NCCL_P2P_DISABLE=1";
  return env.empty() ? env : env.substr(1);
}

namespace {

// The variable names of "A=1 B=2".
std::vector<std::string> VariableNames(const std::string& env) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start < env.size()) {
    size_t end = env.find(' ', start);
    if (end == std::string::npos) end = env.size();
    const std::string item = env.substr(start, end - start);
    names.push_back(item.substr(0, item.find('=')));
    start = end + 1;
  }
  return names;
}

// The custom allreduce: the framework's gate, the driver's P2P mode.
void CustomAllreduceTakes(const Candidate& c, const llm::FrameworkProfile& framework, const BoxFacts& box,
                          const std::string& fw, WhatItTakes* w) {
  const auto& rule = framework.custom_allreduce;
  const bool bar1 = c.comm.driver_p2p_mode == "bar1";
  if (!rule.stated) {
    Need(Effort::kCodeChange, fmt::format("{}'s profile states no custom-allreduce rule", fw), w);
  } else if (!CustomAllreduceByDefault(framework, box)) {
    std::string sizes;
    for (int s : rule.world_sizes) sizes += fmt::format("{}{}", sizes.empty() ? "" : ", ", s);
    Need(Effort::kCodeChange,
         fmt::format("{} runs its custom allreduce on {} GPUs and, without NVLink between every pair, on at "
                     "most {} ({}); this group is {} GPUs {}",
                     fw, sizes, rule.max_world_size_without_full_nvlink, rule.source, box.world_size,
                     box.full_nvlink ? "with NVLink between every pair" : "without NVLink between every pair"),
         w);
  } else if (c.comm.algorithm == "twoshot" && std::count(rule.one_shot_only_world_sizes.begin(),
                                                         rule.one_shot_only_world_sizes.end(), box.world_size) > 0) {
    Need(Effort::kCodeChange, fmt::format("{} runs one-shot only on {} GPUs ({})", fw, box.world_size, rule.source), w);
  }
  if (bar1) {
    Need(Effort::kDriverSetting, Bar1Step(), w);
  } else if (box.no_pcie_p2p) {
    // Without peer mappings the IPC buffers cannot be read by peers (peer-access.md).
    Need(Effort::kCodeChange,
         "the driver gives these GPUs no PCIe P2P: the kernel's exchange buffers and flags must move to mapped host "
         "memory",
         w);
    w->priced = "through mapped host memory";
  } else if (!box.peer_reads_not_direct.empty()) {
    w->priced = "through system memory: " + box.peer_reads_not_direct;
  }
}

// NCCL variables: whether they reach NCCL under the framework (framework.proto NcclEnvironment).
void NcclTakes(const Candidate& c, const llm::FrameworkProfile& framework, const BoxFacts& box, const std::string& fw,
               WhatItTakes* w) {
  if (CustomAllreduceByDefault(framework, box))
    Need(Effort::kLaunchFlag, "--disable-custom-all-reduce (" + fw + " runs its own otherwise)", w,
         "--disable-custom-all-reduce");
  const std::string env = NcclEnvironmentOf(c.comm);
  if (!env.empty()) {
    const auto& nccl = framework.nccl_environment;
    std::string blocked;
    for (const std::string& name : VariableNames(env))
      if (const std::string* value = nccl.SetsItself(name))
        blocked += fmt::format("{}{} (it sets {}={})", blocked.empty() ? "" : ", ", name, name, *value);
    if (nccl.stated && !nccl.passes_user_environment)
      Need(Effort::kCodeChange,
           fmt::format("{} does not pass the shell's NCCL variables to NCCL ({}): {}", fw, nccl.source, env), w);
    else if (!blocked.empty())
      Need(Effort::kCodeChange, fmt::format("{} overrides {} itself ({})", fw, blocked, nccl.source), w);
    else
      Need(Effort::kEnvironment, env, w);
  }
  if (c.comm.driver_p2p_mode == "bar1") Need(Effort::kDriverSetting, Bar1Step(), w);
}

// Capture changes: the framework's flags (framework.proto GraphCaptureFlags) or a code change.
void PacingTakes(const Candidate& c, const llm::FrameworkProfile& framework, const std::string& fw, WhatItTakes* w) {
  if (!c.pacing.cuda_graphs) {
    if (!framework.graph_flags.disable_all.empty())
      Need(Effort::kLaunchFlag, framework.graph_flags.disable_all, w);
    else
      Need(Effort::kCodeChange, fmt::format("no {} flag is known to turn CUDA graphs off", fw), w);
  }
  for (const auto& [phase, mode] : c.pacing.CaptureChanges()) {
    const std::string flag = framework.graph_flags.FlagFor(phase, mode);
    if (!flag.empty())
      Need(Effort::kLaunchFlag, flag, w);
    else
      Need(Effort::kCodeChange,
           fmt::format("no {} flag is known for framework_overrides.capture.{}={}", fw, phase,
                       AsciiUpper(llm::CaptureModeName(mode))),
           w);
  }
  if (c.pacing.host_sync)
    for (const char* field : {"sync_each_step", "sync_each_cycle"})
      Need(Effort::kCodeChange,
           fmt::format("no {} flag is known for framework_overrides.{}={}", fw, field, *c.pacing.host_sync), w);
}

// EP: the framework's switch, and an all-to-all backend that runs on this box (specsim prices EP
// as all-to-all dispatch and combine).
void ExpertParallelTakes(const Candidate& c, const llm::FrameworkProfile& framework, const BoxFacts& box,
                         const std::string& fw, WhatItTakes* w) {
  const auto& ep = framework.expert_parallel;
  if (!ep.stated) {
    Need(Effort::kCodeChange, fmt::format("{}'s profile states no expert-parallel rule", fw), w);
    return;
  }
  Need(Effort::kLaunchFlag, llm::WithNumber(ep.enable_flag, c.expert_parallel), w);
  if (ep.default_communication == llm::FrameworkProfile::EpCommunication::kAllToAll) return;
  std::string names;
  for (const auto& b : ep.all_to_all_backends) {
    if (b.needs_full_nvlink && !box.full_nvlink) {
      names += fmt::format("{}{}", names.empty() ? "" : ", ", b.name);
      continue;
    }
    if (!b.flag.empty())
      Need(Effort::kLaunchFlag, b.flag, w);
    else
      Need(Effort::kEnvironment, b.env, w);
    return;
  }
  Need(Effort::kCodeChange,
       fmt::format("{}'s EP runs {} by default, and specsim prices EP as all-to-all; {} ({})", fw,
                   llm::EpCommunicationName(ep.default_communication),
                   names.empty() ? "it states no all-to-all backend"
                                 : "its all-to-all backends (" + names + ") need NVLink between every pair",
                   ep.source),
       w);
}

}  // namespace

WhatItTakes WhatCandidateTakes(const Candidate& c, const llm::FrameworkProfile& framework, const BoxFacts& box) {
  WhatItTakes w;
  const std::string fw = framework.name.empty() ? std::string("the framework") : framework.name;
  if (c.comm.custom_allreduce())
    CustomAllreduceTakes(c, framework, box, fw, &w);
  else
    NcclTakes(c, framework, box, fw, &w);
  PacingTakes(c, framework, fw, &w);
  if (c.expert_parallel > 1) ExpertParallelTakes(c, framework, box, fw, &w);
  return w;
}

std::string AllreduceRefusal(const AllreduceVariant& comm, const llm::FrameworkProfile& framework,
                             const BoxFacts& box) {
  WhatItTakes w;
  const std::string fw = framework.name.empty() ? std::string("the framework") : framework.name;
  Candidate c;
  c.comm = comm;
  if (comm.custom_allreduce())
    CustomAllreduceTakes(c, framework, box, fw, &w);
  else
    NcclTakes(c, framework, box, fw, &w);
  if (w.effort != Effort::kCodeChange) return "";
  std::string steps;
  for (const std::string& s : w.other) steps += (steps.empty() ? "" : "; ") + s;
  return fw + " would need a code change: " + steps;
}

AllreduceVariant AllreduceVariantOf(const config::Communication& communication) {
  AllreduceVariant v;
  v.algorithm = AsciiLower(communication.allreduce_algorithm());
  if (v.algorithm == "auto") v.algorithm.clear();
  v.protocol = AsciiLower(communication.protocol());
  if (v.protocol == "auto") v.protocol.clear();
  v.p2p_level = communication.p2p_level();
  v.channels = communication.channels();
  v.driver_p2p_mode = communication.driver_p2p_mode();
  v.p2p_disable = communication.p2p_disable();
  v.name = v.algorithm.empty() ? "NCCL auto" : v.algorithm;
  return v;
}

std::string ScenarioAllreduceRefusal(const scenario::LoadedScenario& loaded) {
  if (!loaded.setup.framework || loaded.topology == nullptr) return "";
  const BoxFacts box = BoxFactsOf(*loaded.topology, loaded.setup.parallel.tp, loaded.setup.gpus);
  return AllreduceRefusal(AllreduceVariantOf(loaded.scenario.communication()), *loaded.setup.framework, box);
}

}  // namespace specsim::advise
