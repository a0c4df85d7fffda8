#include "validate/pacing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

namespace specsim::validate {

HostCostSampler::HostCostSampler(const trace::HostCost& cost, int rank)
    : cost_(cost), rng_(cost.seed() * 1000003ULL + static_cast<uint64_t>(rank)) {}

double HostCostSampler::NextUs() {
  switch (cost_.distribution()) {
    case trace::HostCost::FIXED: return std::max(0.0, cost_.mean_us());
    case trace::HostCost::EXPONENTIAL: {
      const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;  // [0, 1)
      return -std::max(0.0, cost_.mean_us()) * std::log1p(-u);
    }
    default: return 0.0;
  }
}

trace::HostCost MakeHostCost(trace::HostCost::Distribution d, double mean_us, uint64_t seed) {
  trace::HostCost c;
  c.set_distribution(d);
  c.set_mean_us(d == trace::HostCost::NONE ? 0.0 : mean_us);
  c.set_seed(seed);
  return c;
}

RoundPlan PlanRounds(int total_iterations, int warmup, int rounds) {
  RoundPlan p;
  p.rounds = std::max(1, rounds);
  p.iterations_per_round = (std::max(1, total_iterations) + p.rounds - 1) / p.rounds;
  p.first_warmup = std::max(0, warmup);
  p.later_warmup = std::min(2, p.first_warmup);
  return p;
}

std::vector<int> RoundOrder(int cases, int round) {
  std::vector<int> order(std::max(0, cases));
  for (int i = 0; i < cases; ++i) order[i] = round % 2 == 0 ? i : cases - 1 - i;
  return order;
}

std::string HostCostLabel(const trace::HostCost& cost) {
  char buf[32];
  switch (cost.distribution()) {
    case trace::HostCost::FIXED: std::snprintf(buf, sizeof(buf), "fixed%gus", cost.mean_us()); return buf;
    case trace::HostCost::EXPONENTIAL: std::snprintf(buf, sizeof(buf), "exp%gus", cost.mean_us()); return buf;
    default: return "none";
  }
}

void SpinForUs(double us) {
  if (!(us > 0)) return;
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double, std::micro>(us));
  while (std::chrono::steady_clock::now() < deadline) {
  }
}

SkewTimings ComputeSkew(const std::vector<std::vector<double>>& d) {
  SkewTimings out;
  const size_t ranks = d.size();
  const size_t iters = ranks ? d[0].size() : 0;
  out.wait_us.assign(ranks, std::vector<double>(iters, 0.0));
  out.max_duration_us.assign(iters, 0.0);
  for (size_t i = 0; i < iters; ++i) {
    double lo = d[0][i], hi = d[0][i];
    for (size_t r = 1; r < ranks; ++r) {
      lo = std::min(lo, d[r][i]);
      hi = std::max(hi, d[r][i]);
    }
    for (size_t r = 0; r < ranks; ++r) out.wait_us[r][i] = d[r][i] - lo;
    out.max_duration_us[i] = hi;
  }
  return out;
}

Status TimedBarrier::ArriveAndWait(double timeout_s) {
  if (broken_.load(std::memory_order_acquire)) return Internal("barrier broken: another rank failed");
  const uint64_t gen = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
    arrived_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);  // publishes the reset count too
    return Status::Ok();
  }
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t spins = 1;; ++spins) {
    if (generation_.load(std::memory_order_acquire) != gen) return Status::Ok();
    if (broken_.load(std::memory_order_acquire)) return Internal("barrier broken: another rank failed");
    if (spins % 1024 == 0) {
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (waited > timeout_s) {
        // The parties that still arrive would wait for this one forever: break the barrier.
        broken_.store(true, std::memory_order_release);
        return DeadlineExceeded("the other ranks did not reach the barrier within " + std::to_string(timeout_s) + " s");
      }
      if (waited > 1e-3) std::this_thread::yield();
    }
  }
}

}  // namespace specsim::validate
