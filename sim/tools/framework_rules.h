// What it takes to run an advised configuration on a serving framework: the framework's released
// code launched with advise's command (runs as is), a launch flag that changes one of its
// defaults, NCCL environment variables, or a code change. Decided from the framework's rules
// (configs/frameworks/*.textproto: when its custom allreduce runs) and the box (how many GPUs,
// NVLink between every pair or not). `advise` ranks what runs as is first and lists each harder
// option with what it would buy and what it takes.
#pragma once

#include <string>
#include <vector>

#include "sim/llm/framework_profile.h"
#include "sim/net/topology.h"

namespace specsim::tools {

struct Candidate;   // advisor.h
struct CommChoice;  // advisor.h

enum class Effort { kRunsAsIs = 0, kLaunchFlag = 1, kEnvironment = 2, kCodeChange = 3 };
// "runs as is", "needs a launch flag", "needs an environment variable", "needs a code change".
const char* EffortName(Effort effort);

struct WhatItTakes {
  Effort effort = Effort::kRunsAsIs;
  std::vector<std::string> steps;  // each requirement beyond the launch command, in words
  std::string Text() const;        // "runs as is" or "needs a code change: ...; NCCL_PROTO=LL"
};

// The facts of the box a framework's rules read.
struct BoxFacts {
  int world_size = 1;
  bool full_nvlink = false;  // NVLink between every pair of the group's GPUs
};
// `gpus`: the group's GPUs (empty: 0..world_size-1).
BoxFacts BoxFactsOf(const net::Topology& topology, int world_size, const std::vector<int>& gpus);

// Whether `framework` runs its custom allreduce by default on this box (its rule, stated or not).
bool CustomAllreduceByDefault(const llm::FrameworkProfile& framework, const BoxFacts& box);

// The NCCL variables that select `comm` ("NCCL_ALGO=Ring NCCL_PROTO=LL"; empty for NCCL's own pick
// or a custom allreduce).
std::string NcclEnvironmentOf(const CommChoice& comm);

WhatItTakes WhatCandidateTakes(const Candidate& c, const llm::FrameworkProfile& framework, const BoxFacts& box);

}  // namespace specsim::tools
