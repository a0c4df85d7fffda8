#include "sim/calib/injected_host_cost.h"

#include <algorithm>
#include <cmath>

namespace specsim::calib {

InjectedHostCost::InjectedHostCost(const trace::HostCost& cost, int rank)
    : cost_(cost), rng_(cost.seed() * 1000003ULL + static_cast<uint64_t>(rank)) {}

double InjectedHostCost::NextUs() {
  switch (cost_.distribution()) {
    case trace::HostCost::FIXED: return std::max(0.0, cost_.mean_us());
    case trace::HostCost::EXPONENTIAL: {
      const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;  // [0, 1)
      return -std::max(0.0, cost_.mean_us()) * std::log1p(-u);
    }
    default: return 0.0;
  }
}

std::vector<bool> LoopIterationsAsRun(int timed_iterations, int warmup, int rounds) {
  rounds = std::max(1, rounds);
  const int per_round = (std::max(1, timed_iterations) + rounds - 1) / rounds;
  warmup = std::max(0, warmup);
  std::vector<bool> timed;
  for (int r = 0; r < rounds; ++r) {
    timed.insert(timed.end(), r == 0 ? warmup : std::min(2, warmup), false);
    timed.insert(timed.end(), per_round, true);
  }
  return timed;
}

}  // namespace specsim::calib
