// The configuration search behind `specsim advise`: which speculation settings, allreduce choice,
// CUDA-graph mode and expert parallelism make a model fastest on a box, and what sinks the rest.
//
// The space (DefaultSearchSpace): speculation off / EAGLE-3 (chains, num_steps 1..5, and trees
// topk 2, 4 with num_draft_tokens 4, 8, 16) / MTP (num_steps 1..3) as the model and a draft allow;
// allreduce NCCL auto, ring LL, ring Simple, tree, ring with 1/2/4 channels, auto with P2P level
// SYS, one-shot and two-shot custom allreduce; CUDA graphs on/off; TP or TP+EP for MoE models.
//
// Pruned search (the default): the allreduce choice changes only communication time, whose
// ranking between choices is the same for every speculation setting in practice, so
//   stage 1  every allreduce choice x {no speculation, one reference speculation setting};
//   stage 2  every speculation setting x the 3 best allreduce choices of stage 1 (NCCL auto kept);
//   stage 3  the best so far with CUDA graphs flipped and with expert parallelism flipped.
// `exhaustive` evaluates the whole cross product instead (tests compare the two).
//
// Tree acceptance: per-position acceptance p_d is given for the draft's top-1 token; a tree with
// topk k is credited 1 - (1 - p_d)^k at depth d, as if the k candidates were independent. That is
// an upper bound (candidates are correlated): tree results are listed as upper bounds and never
// chosen as the winner; the verdict for the tree family says what it would take.
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/llm/decode_simulator.h"
#include "specsim/scenario.pb.h"

namespace specsim::tools {

struct SpecChoice {
  config::Speculation::Method method = config::Speculation::NONE;
  int num_steps = 0, topk = 1, num_draft_tokens = 1;
  std::string Label() const;   // "off", "EAGLE-3 3/1/4", "MTP 2/1/3"
  std::string Family() const;  // "no speculation", "EAGLE-3 chain", "EAGLE-3 tree", "MTP"
};

struct CommChoice {
  std::string name;            // "NCCL ring LL", ...
  std::string family;          // what a rejected family is called
  std::string algorithm, protocol, p2p_level;
  int channels = 0;
};

struct SearchSpace {
  std::vector<SpecChoice> specs;
  std::vector<CommChoice> comms;
  std::vector<bool> cuda_graphs;
  std::vector<int> expert_parallel;  // 1 = off, tp = on
  size_t size() const { return specs.size() * comms.size() * cuda_graphs.size() * expert_parallel.size(); }
};

struct AdviseOptions {
  std::vector<double> acceptance;  // per position; extended with its last value to any num_steps
  bool exhaustive = false;
  int threads = 0;                 // 0: all cores
  bool progress = false;
};

struct Candidate {
  SpecChoice spec;
  CommChoice comm;
  bool cuda_graphs = true;
  int expert_parallel = 1;
  std::string Label() const;
  // Trees: acceptance is the optimistic 1-(1-p)^topk credit, so the result is an upper bound.
  bool optimistic() const { return spec.method != config::Speculation::NONE && spec.topk > 1; }
};

struct Evaluated {
  Candidate candidate;
  std::string status = "ok";   // ok, "does not fit (...)", "error: ..."
  llm::DecodeResult result;
  double tokens_per_s = 0;
  double ms_per_token = 0;
};

struct FamilyVerdict {
  std::string family;
  std::string best;            // label of the family's best configuration
  double tokens_per_s = 0;     // 0: none evaluated fitted
  std::string bottleneck;      // why it loses against the winner (empty for the winner's family)
};

struct AdviseResult {
  // Fitting configurations: exact ones fastest first, then the upper bounds (trees) fastest first.
  std::vector<Evaluated> ranked;
  std::vector<FamilyVerdict> families;
  int evaluated = 0;
  int did_not_fit = 0;
  size_t space_size = 0;
};

// The space for the base scenario: MTP only when the model has MTP layers, EAGLE-3 only when the
// scenario names a draft model, EP only for MoE models.
SearchSpace DefaultSearchSpace(const config::Scenario& base, const llm::ModelSpec& target);

// Overrides (scenario field=value) that turn the base scenario into `c`.
std::vector<std::string> CandidateOverrides(const Candidate& c, const std::vector<double>& acceptance, int tp);

// Searches `space` around `base` (hardware, model, draft, serving, tensor_parallel, calibration).
StatusOr<AdviseResult> Advise(const config::Scenario& base, const SearchSpace& space, const AdviseOptions& options,
                              std::ostream& progress);

// SGLang launch flags and NCCL environment that reproduce a candidate.
std::string SglangCommand(const config::Scenario& base, const Candidate& c);

}  // namespace specsim::tools
