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

}  // namespace specsim::llm
