// What it takes to run an advised configuration on a serving framework: the framework's released
// code launched with advise's command (runs as is), a launch flag that changes one of its
// defaults, NCCL environment variables, a driver or BIOS setting (the driver's PCIe P2P mode), or
// a code change. Decided from the framework's rules as data (configs/frameworks/*.textproto: when
// its custom allreduce runs, which NCCL variables reach NCCL, its CUDA-graph flags, how EP is
// enabled and what it communicates) and the box (how many GPUs, NVLink between every pair or not,
// the driver's PCIe P2P mode). `advise` ranks what runs as is first and lists each harder option
// with what it would buy and what it takes.
#pragma once

#include <string>
#include <vector>

#include "sim/advise/variants.h"
#include "sim/llm/framework_profile.h"
#include "sim/net/topology.h"
#include "sim/scenario/scenario.h"

namespace specsim::advise {

struct Candidate;  // advisor.h

enum class Effort { kRunsAsIs = 0, kLaunchFlag = 1, kEnvironment = 2, kDriverSetting = 3, kCodeChange = 4 };
// "runs as is", "needs a launch flag", "needs an environment variable", "needs a driver or BIOS
// setting", "needs a code change".
const char* EffortName(Effort effort);

struct WhatItTakes {
  Effort effort = Effort::kRunsAsIs;
  std::vector<std::string> steps;  // each requirement beyond the launch command, in words
  std::string priced;              // how specsim priced it where that is not the obvious path
  // The parts of `steps` to paste: launch flags, NAME=VALUE environment settings, and the steps
  // that are code changes or driver settings (in words).
  std::vector<std::string> launch_flags, environment, other;
  std::string Text() const;  // "runs as is" or "needs a code change: ...; NCCL_PROTO=LL"
};

// The facts of the box a framework's rules read.
struct BoxFacts {
  int world_size = 1;
  bool full_nvlink = false;  // NVLink between every pair of the group's GPUs
  // Why a kernel's peer reads between the group's GPUs do not go GPU to GPU under the box's driver
  // P2P mode (coll::WhyPeerReadsAreNotDirect); "" when they all do.
  std::string peer_reads_not_direct;
  bool no_pcie_p2p = false;    // the driver gives the group's PCIe pairs no P2P at all
  bool bar1_possible = false;  // every GPU can use BAR1 P2P (net::Bar1P2pSupported)
};
// `gpus`: the group's GPUs (empty: 0..world_size-1).
BoxFacts BoxFactsOf(const net::Topology& topology, int world_size, const std::vector<int>& gpus);

// Whether `framework` runs its custom allreduce by default on this box (its rule, stated or not).
bool CustomAllreduceByDefault(const llm::FrameworkProfile& framework, const BoxFacts& box);

// The variables and driver setting that BAR1 P2P takes (net::Bar1ModuleParameter), for advice.
std::string Bar1Step();

// The NCCL variables that select `comm` ("NCCL_ALGO=Ring NCCL_PROTO=LL"; empty for NCCL's own pick
// or a custom allreduce).
std::string NcclEnvironmentOf(const AllreduceVariant& comm);

WhatItTakes WhatCandidateTakes(const Candidate& c, const llm::FrameworkProfile& framework, const BoxFacts& box);

// Why `framework` would not run the allreduce choice `comm` on this box without a code change (its
// custom allreduce outside the framework's rule, NCCL variables it does not pass on): "<framework>
// would need a code change: <the steps>", or "" when a launch flag, NCCL variables or a driver
// setting at most is needed. The tag simulate, sweep and --compare-algos print beside such a row.
std::string AllreduceRefusal(const AllreduceVariant& comm, const llm::FrameworkProfile& framework, const BoxFacts& box);

// The allreduce choice a scenario's communication block makes, as a variant (name: its algorithm).
AllreduceVariant AllreduceVariantOf(const config::Communication& communication);

// AllreduceRefusal of a loaded scenario's own allreduce choice under its framework on its box; ""
// without a framework profile.
std::string ScenarioAllreduceRefusal(const scenario::LoadedScenario& loaded);

}  // namespace specsim::advise
