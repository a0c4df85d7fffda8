// The host costs specsim-validate injected into its pacing loops (trace.proto HostCost), draw for
// draw, and the order of a loop's iterations, so that a loop's prediction replays the very host
// costs its measurement waited.
//
// Draws (validate/pacing.h HostCostSampler, the specification both sides follow): rank r draws
// from std::mt19937_64 seeded seed * 1000003 + r; NONE is 0, FIXED is mean_us every time,
// EXPONENTIAL is -mean_us * ln(1 - u) with u = (x >> 11) * 2^-53 for the generator's next 64-bit
// output x. The C++ standard fixes mt19937_64's output sequence, so the same seed gives the same
// draws in both programs; the tests of both pin the same values.
//
// Iterations (validate/pacing.h PlanRounds): a layer loop's `stats.iterations` timed iterations
// were taken in `layer_loop.rounds` rounds (0 or 1: one) of iterations / rounds each; the first
// round after `stats.warmup` untimed ones, later rounds after min(2, warm-up). Every iteration,
// timed or not, drew its host costs from the same per-rank stream.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "specsim/trace.pb.h"

namespace specsim::calib {

class InjectedHostCost {
 public:
  InjectedHostCost(const trace::HostCost& cost, int rank);
  // The next injected cost of this rank, us (>= 0).
  double NextUs();

 private:
  trace::HostCost cost_;
  std::mt19937_64 rng_;
};

// Per iteration in the order run: true when timed, false for a warm-up.
std::vector<bool> LoopIterationsAsRun(int timed_iterations, int warmup, int rounds);

}  // namespace specsim::calib
