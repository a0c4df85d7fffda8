// The configuration search behind `specsim advise`: which speculation settings, allreduce choice,
// CUDA-graph mode and expert parallelism make a model fastest on a box, and what sinks the rest.
//
// The space (DefaultSearchSpace): speculation off / EAGLE-3 (chains, num_steps 1..5, and trees
// topk 2, 4 with num_draft_tokens 4, 8, 16; and the base scenario's own shape) / MTP (num_steps
// 1..3) as the model and a draft allow;
// allreduce NCCL auto, ring LL, ring Simple, tree, ring LL with 1/2/4 channels, auto and ring LL
// with P2P level SYS, one-shot and two-shot custom allreduce; how the host paces the GPUs (the
// framework profile's capture modes, CUDA graphs off, verify piecewise, the host running ahead
// without per-step or per-cycle syncs); TP or TP+EP for MoE models. The allreduce and pacing
// choices are advise's lists of variants.h (the variants `simulate --compare-algos` also tries).
//
// Pruned search (the default): the allreduce choice changes only communication time, whose
// ranking between choices is the same for every speculation setting in practice, so
//   stage 1  every allreduce choice x {no speculation, one reference speculation setting};
//   stage 2  every speculation setting x the 3 best allreduce choices of stage 1 (NCCL auto kept);
//   stage 3  the best so far with every other pacing choice and with expert parallelism flipped.
// `exhaustive` evaluates the whole cross product instead (tests compare the two).
//
// Acceptance: each candidate's comes from what the base scenario knows (per-position top-1
// probabilities, from the scenario or --acceptance, and/or an accept-length histogram measured with
// one shape) by llm::AcceptanceForShape, the rules simulate uses: a histogram is exact for its own
// shape; other shapes take it through the expected EAGLE-2 tree (llm/draft_tree.h), approximate
// (marked "~acceptance" in the label) but ranked with the rest: a tree can win.
#pragma once

#include <string>
#include <vector>

#include "sim/advise/framework_rules.h"
#include "sim/advise/variants.h"
#include "sim/core/status.h"
#include "sim/llm/decode_simulator.h"
#include "specsim/scenario.pb.h"

namespace specsim::advise {

struct SpecChoice {
  config::Speculation::Method method = config::Speculation::NONE;
  int num_steps = 0, topk = 1, num_draft_tokens = 1;
  std::string Label() const;   // "off", "EAGLE-3 3/1/4", "MTP 2/1/3"
  std::string Family() const;  // "no speculation", "EAGLE-3 chain", "EAGLE-3 tree", "MTP"
};

struct SearchSpace {
  std::vector<SpecChoice> specs;
  std::vector<AllreduceVariant> comms;
  std::vector<PacingVariant> pacing;  // the first is the base's own
  std::vector<int> expert_parallel;   // 1 = off, tp = on
  size_t size() const { return specs.size() * comms.size() * pacing.size() * expert_parallel.size(); }
};

struct AdviseOptions {
  std::vector<double> acceptance;  // per position; extended with its last value to any num_steps
  bool exhaustive = false;
  int threads = 0;  // 0: all cores
  bool progress = false;
};

struct Candidate {
  SpecChoice spec;
  AllreduceVariant comm;
  PacingVariant pacing;
  int expert_parallel = 1;
  bool cuda_graphs() const { return pacing.cuda_graphs; }
  std::string Label() const;
  // Set when evaluated: its acceptance was converted from another shape through the tree model
  // (llm::AcceptanceForShape).
  bool acceptance_approximate = false;
  bool tree() const { return spec.method != config::Speculation::NONE && spec.topk > 1; }
  // Listed but never the winner: a what-if pacing.
  bool optimistic() const { return pacing.what_if; }
};

struct Evaluated {
  Candidate candidate;
  std::string status = "ok";  // ok, "does not fit (...)", "error: ..."
  llm::DecodeResult result;
  double tokens_per_s = 0;               // the whole batch's
  double ms_per_token_per_sequence = 0;  // one sequence's inter-token time (step or cycle / tau)
  int batch = 1;
  WhatItTakes takes;  // on the base scenario's framework and box (framework_rules.h)
};

struct FamilyVerdict {
  std::string family;
  std::string best;         // label of the family's best configuration
  double tokens_per_s = 0;  // 0: none evaluated fitted
  std::string bottleneck;   // why it loses against the winner (empty for the winner's family)
};

// The winner at both ends of the framework's unmeasured host costs (sim/scenario/host_cost_band.h):
// the contenders (the winner's group: exact, the winner's effort; its kBandContenders fastest) run
// again with every unmeasured cost at its low end, then at its high end.
inline constexpr int kBandContenders = 8;
struct HostCostBandVerdict {
  std::vector<std::string> costs;  // the unmeasured costs with ranges and citations; empty: no band
  double winner_low_cost_tokens_per_s = 0, winner_high_cost_tokens_per_s = 0;  // the point winner's
  std::string low_cost_winner, high_cost_winner;                               // labels
  double low_cost_winner_tokens_per_s = 0, high_cost_winner_tokens_per_s = 0;
  // The fastest contender at one end (or both) is not the point winner.
  bool winner_changes = false;
};

struct AdviseResult {
  // Fitting configurations: real ones before what-ifs; among them what
  // runs as is first, then by what it takes (framework_rules.h Effort); fastest first within.
  // The winner (ranked.front()) is the fastest exact configuration that takes the least.
  std::vector<Evaluated> ranked;
  // Per harder effort level, its fastest exact configuration when it beats the winner: what it
  // would buy and what it takes.
  std::vector<Evaluated> harder;
  std::string framework;                     // the base scenario's framework profile
  bool custom_allreduce_by_default = false;  // the framework runs its own allreduce on this box
  std::vector<FamilyVerdict> families;
  int evaluated = 0;
  int did_not_fit = 0;
  size_t space_size = 0;
  HostCostBandVerdict band;
};

// The space for the base scenario: MTP only when the model has MTP layers, EAGLE-3 only when the
// scenario names a draft model, EP only for MoE models; the custom allreduce (and, on a box whose
// driver gives no PCIe P2P, NCCL with P2P level SYS) also with BAR1 P2P forced when the box's
// driver mode keeps the kernel's peer reads off the GPU-to-GPU path and its GPUs can use BAR1.
SearchSpace DefaultSearchSpace(const config::Scenario& base, const llm::ModelSpec& target, const BoxFacts& box);

// The base scenario turned into `c`: its speculation shape, allreduce, pacing and EP set. Its
// acceptance is the base scenario's, for the candidate's shape (llm::AcceptanceForShape; Advise
// first ties a histogram to the shape it was measured with).
config::Scenario CandidateScenario(config::Scenario base, const Candidate& c);

// Searches `space` around `base` (hardware, model, draft, serving, tensor_parallel, calibration).
StatusOr<AdviseResult> Advise(const config::Scenario& base, const SearchSpace& space, const AdviseOptions& options,
                              std::ostream& progress);

}  // namespace specsim::advise
