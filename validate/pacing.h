// CPU-side pieces of the multi-rank pacing measurements (pacing suite, multi-GPU host copies):
// seeded per-rank host costs, a busy-wait, the per-iteration wait of every rank at a collective,
// and a barrier that gives up instead of hanging.
//
// Host cost (trace.proto HostCost): rank r draws from its own std::mt19937_64 seeded with
// seed * 1000003 + r. NONE is 0, FIXED is mean_us every time, EXPONENTIAL is -mean_us * ln(1 - u)
// with u = (x >> 11) * 2^-53 for the generator's next 64-bit output x, uniform in [0, 1) (computed
// by hand rather than with std::uniform_real_distribution so that the draws are the same with every
// standard library).
//
// Skew: in iteration i every rank r's collective lasts d[r][i] (first stamp to last stamp on its own
// GPU). Every rank leaves the collective at the same instant, so the rank that arrived last waited
// least: wait[r][i] = d[r][i] - min over ranks of d[.][i] (0 for the last to arrive), and what a
// profiler on the earliest rank shows is max over ranks of d[.][i].
#pragma once

#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "specsim/trace.pb.h"
#include "validate/status.h"

namespace specsim::validate {

class HostCostSampler {
 public:
  HostCostSampler(const trace::HostCost& cost, int rank);
  // The next host cost in microseconds (>= 0).
  double NextUs();

 private:
  trace::HostCost cost_;
  std::mt19937_64 rng_;
};

// A HostCost message; `label` is the item-name form: "none", "fixed20us", "exp10us".
trace::HostCost MakeHostCost(trace::HostCost::Distribution d, double mean_us, uint64_t seed);
std::string HostCostLabel(const trace::HostCost& cost);

// Spins on std::chrono::steady_clock for `us` microseconds (returns at once when us <= 0). A busy
// wait, not a sleep: the thread stays on its core as a framework's host work would.
void SpinForUs(double us);

struct SkewTimings {
  std::vector<std::vector<double>> wait_us;  // [rank][iteration]
  std::vector<double> max_duration_us;       // [iteration]: the longest rank's duration
};
// REQUIRES: duration_us non-empty, every rank with the same number of iterations.
SkewTimings ComputeSkew(const std::vector<std::vector<double>>& duration_us);

// Interleaved rounds (the pacing suite's layer loops, --pacing-rounds). Every case is timed in
// `rounds` blocks of iterations_per_round iterations, one block per round; round 0 warms each case
// up with first_warmup iterations, later rounds with later_warmup (the graphs and the libraries'
// choices are warm by then). RoundOrder takes the cases in order in even rounds and in reverse in
// odd ones: case i then stands at position i in one round and n-1-i in the next, so that over an
// even number of rounds every case's mean position is (n-1)/2 and a drift of the host's speed that
// is linear in time falls on every case alike. Each block runs on newly started rank threads, so a
// case's iterations also see `rounds` placements of its threads rather than one.
struct RoundPlan {
  int rounds = 1;
  int iterations_per_round = 1;  // ceil(total / rounds): at least the iterations asked for
  int first_warmup = 0;
  int later_warmup = 0;  // min(2, first_warmup)
  int TotalIterations() const { return rounds * iterations_per_round; }
};
// REQUIRES: total_iterations >= 1, warmup >= 0, rounds >= 1.
RoundPlan PlanRounds(int total_iterations, int warmup, int rounds);
std::vector<int> RoundOrder(int cases, int round);

// A reusable barrier for `parties` threads whose wait gives up: ArriveAndWait returns
// kDeadlineExceeded after timeout_s, and kInternal at once when another party called Break()
// (it failed and will not arrive). Break() is final: every later wait fails too. Waiters spin on an
// atomic (yielding after a millisecond), so that they all leave within about a microsecond of the
// last arrival: copies or launches that follow start together, which a condition variable's wake-ups
// (tens of microseconds apart) would not give.
class TimedBarrier {
 public:
  explicit TimedBarrier(int parties) : parties_(parties) {}
  Status ArriveAndWait(double timeout_s);
  void Break() { broken_.store(true, std::memory_order_release); }

 private:
  const int parties_;
  std::atomic<int> arrived_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> broken_{false};
};

}  // namespace specsim::validate
