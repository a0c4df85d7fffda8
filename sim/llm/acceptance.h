// How many draft tokens the target accepts per speculative cycle.
//
// Two ways to describe it (SGLang's EAGLE loop, docs/reference/speculative-decoding.md):
//   * per-position acceptance p_1..p_S of a chain (or of the best path of a tree, per depth):
//     draft token i is accepted if tokens 1..i-1 were and it passes with probability p_i, so
//       P(accept exactly a) = (prod_{i<=a} p_i) * (1 - p_{a+1})    (p_{S+1} = 0)
//       tau = E[tokens per cycle] = 1 + sum_{k=1..S} prod_{i<=k} p_i   (the 1 is the bonus token)
//     For i.i.d. p this is Leviathan et al.'s (1 - p^(S+1)) / (1 - p).
//   * a measured histogram h_0..h_S of accepted draft tokens per cycle (normalised here).
// Sampling is seeded (std::mt19937_64), so a run is reproducible.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace specsim::llm {

class AcceptanceModel {
 public:
  // InvalidArgument for probabilities outside [0, 1] or an empty list.
  static StatusOr<AcceptanceModel> FromPerPosition(const std::vector<double>& probabilities);
  // InvalidArgument for negative entries, a zero sum or an empty histogram.
  static StatusOr<AcceptanceModel> FromHistogram(const std::vector<double>& histogram);

  // The largest accepted count with a non-zero probability.
  int max_accepted() const;
  // P(exactly a draft tokens accepted), a = 0..max_accepted().
  const std::vector<double>& distribution() const { return distribution_; }
  // Expected tokens per cycle, bonus token included: 1 + E[accepted].
  double tau() const;
  // Draws the number of accepted draft tokens.
  int Sample(std::mt19937_64& rng) const;

 private:
  explicit AcceptanceModel(std::vector<double> distribution);
  std::vector<double> distribution_;
  std::vector<double> cumulative_;
};

// What is known of a draft's acceptance (scenario.proto Speculation), and the model a speculation
// shape (num_steps / topk / num_draft_tokens) gets from it. One owner: simulate, sweep and advise
// all take their acceptance from AcceptanceForShape.
struct AcceptanceData {
  std::vector<double> chain_probabilities;  // per-position acceptance of the draft's top-1 token
  int chain_probabilities_topk = 1;         // > 1: they are a tree's per-depth acceptance (that topk)
  std::vector<double> histogram;            // accepted draft tokens per cycle, h_0..h_S, measured
  int histogram_num_steps = 0, histogram_topk = 1, histogram_num_draft_tokens = 0;  // ... with this shape
};

struct ShapeAcceptance {
  AcceptanceModel model;
  std::string basis;         // where it comes from, for reports
  bool approximate = false;  // converted from another shape through the tree model (draft_tree.h)
};

// The rules, in order:
//   1. a histogram measured with exactly this shape: that histogram (exact);
//   2. the draft's per-depth top-1 acceptance p_d: given ones (chain_probabilities); a tree's
//      per-depth acceptance a_d (chain_probabilities_topk k > 1) as p_d = 1 - (1 - a_d)^(1/k), one
//      full expansion inverted; a chain's histogram's per-depth conditional acceptance
//      p_k = P(L >= k) / P(L >= k-1) (PerPositionOfHistogram); a tree's histogram's tau fitted by
//      one p through its expected tree (Top1AcceptanceOfTreeTau). Depths past the known ones take
//      the last value;
//   3. the expected EAGLE-2 tree of this shape on p (DraftTreeAcceptance): a chain (topk = 1) is the
//      closed form, exact when p came from a chain; anything through the tree's candidate law is
//      approximate (said in the basis), never a bound that sinks the shape.
// InvalidArgument when nothing is known or a value is out of range.
StatusOr<ShapeAcceptance> AcceptanceForShape(const AcceptanceData& data, int num_steps, int topk, int num_draft_tokens);

// p_k = P(L >= k) / P(L >= k - 1), k = 1..S, of a histogram h_0..h_S of accepted counts L (0 where
// P(L >= k - 1) = 0). REQUIRES: a valid histogram (AcceptanceModel::FromHistogram accepts it).
std::vector<double> PerPositionOfHistogram(const std::vector<double>& histogram);

}  // namespace specsim::llm
