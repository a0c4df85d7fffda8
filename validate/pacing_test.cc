#include "validate/pacing.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

namespace specsim::validate {
namespace {

TEST(HostCostSampler, NoneAndFixed) {
  HostCostSampler none(MakeHostCost(trace::HostCost::NONE, 25, 7), 0);
  HostCostSampler fixed(MakeHostCost(trace::HostCost::FIXED, 20, 7), 3);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(none.NextUs(), 0.0);
    EXPECT_EQ(fixed.NextUs(), 20.0);
  }
}

TEST(HostCostSampler, SeededPerRankAndDeterministic) {
  const trace::HostCost c = MakeHostCost(trace::HostCost::EXPONENTIAL, 10, 1234);
  HostCostSampler a(c, 0), b(c, 0), other_rank(c, 1),
      other_seed(MakeHostCost(trace::HostCost::EXPONENTIAL, 10, 1235), 0);
  bool rank_differs = false, seed_differs = false;
  for (int i = 0; i < 50; ++i) {
    const double x = a.NextUs();
    EXPECT_EQ(x, b.NextUs());
    rank_differs |= x != other_rank.NextUs();
    seed_differs |= x != other_seed.NextUs();
  }
  EXPECT_TRUE(rank_differs);
  EXPECT_TRUE(seed_differs);
  // The documented draw: generator seeded seed * 1000003 + rank, u = (x >> 11) * 2^-53, -mean ln(1 - u).
  std::mt19937_64 g(1234ULL * 1000003ULL + 1);
  const double u = static_cast<double>(g() >> 11) * 0x1.0p-53;
  HostCostSampler r1(c, 1);
  EXPECT_DOUBLE_EQ(r1.NextUs(), -10.0 * std::log(1.0 - u));
}

TEST(HostCostSampler, DrawsAreTheOnesTheSimulatorReplays) {
  // The same values pin the simulator's replay (sim/calib/injected_host_cost_test.cc): seed 1234,
  // mean 10 us; a loop's prediction waits exactly the costs its measurement waited.
  const trace::HostCost c = MakeHostCost(trace::HostCost::EXPONENTIAL, 10, 1234);
  HostCostSampler r0(c, 0), r1(c, 1);
  EXPECT_DOUBLE_EQ(r0.NextUs(), 0.70784960005854114);
  EXPECT_DOUBLE_EQ(r0.NextUs(), 5.6043241962142663);
  EXPECT_DOUBLE_EQ(r0.NextUs(), 9.3159397991205992);
  EXPECT_DOUBLE_EQ(r1.NextUs(), 7.5761637940496325);
  EXPECT_DOUBLE_EQ(r1.NextUs(), 2.3042751529945873);
}

TEST(HostCostSampler, ExponentialMeanAndSpread) {
  // Exp(mean m): mean m, standard deviation m, P(X > m) = e^-1. Over 200000 draws the sample mean's
  // standard error is m / sqrt(200000) ~ 0.22% of m: 1% is a > 4-sigma tolerance.
  HostCostSampler s(MakeHostCost(trace::HostCost::EXPONENTIAL, 50, 99), 2);
  const int n = 200000;
  double sum = 0, sum2 = 0;
  int above_mean = 0;
  for (int i = 0; i < n; ++i) {
    const double x = s.NextUs();
    ASSERT_GE(x, 0.0);
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sum2 += x * x;
    above_mean += x > 50.0;
  }
  const double mean = sum / n;
  const double sd = std::sqrt(sum2 / n - mean * mean);
  EXPECT_NEAR(mean, 50.0, 0.5);
  EXPECT_NEAR(sd, 50.0, 1.0);
  EXPECT_NEAR(static_cast<double>(above_mean) / n, std::exp(-1.0), 0.005);
}

TEST(HostCost, Labels) {
  EXPECT_EQ(HostCostLabel(MakeHostCost(trace::HostCost::NONE, 10, 1)), "none");
  EXPECT_EQ(HostCostLabel(MakeHostCost(trace::HostCost::FIXED, 20, 1)), "fixed20us");
  EXPECT_EQ(HostCostLabel(MakeHostCost(trace::HostCost::EXPONENTIAL, 10, 1)), "exp10us");
  EXPECT_EQ(HostCostLabel(MakeHostCost(trace::HostCost::EXPONENTIAL, 2.5, 1)), "exp2.5us");
  EXPECT_EQ(MakeHostCost(trace::HostCost::NONE, 10, 1).mean_us(), 0.0);
  EXPECT_EQ(MakeHostCost(trace::HostCost::FIXED, 10, 77).seed(), 77u);
}

TEST(PlanRounds, SplitsTheIterationsRoundingUpAndWarmsLaterRoundsBriefly) {
  const RoundPlan p = PlanRounds(/*total_iterations=*/30, /*warmup=*/5, /*rounds=*/4);
  EXPECT_EQ(p.rounds, 4);
  EXPECT_EQ(p.iterations_per_round, 8);  // ceil(30 / 4)
  EXPECT_EQ(p.TotalIterations(), 32);    // never fewer than asked for
  EXPECT_EQ(p.first_warmup, 5);
  EXPECT_EQ(p.later_warmup, 2);
  const RoundPlan one = PlanRounds(30, 5, 1);  // one round: the loop as before rounds existed
  EXPECT_EQ(one.iterations_per_round, 30);
  EXPECT_EQ(one.TotalIterations(), 30);
  const RoundPlan many = PlanRounds(3, 1, 8);  // more rounds than iterations: one per round
  EXPECT_EQ(many.iterations_per_round, 1);
  EXPECT_EQ(many.TotalIterations(), 8);
  EXPECT_EQ(many.later_warmup, 1);
  EXPECT_EQ(PlanRounds(10, 0, 2).later_warmup, 0);
}

TEST(RoundOrder, ForwardThenReverseGivesEveryCaseTheSameMeanPosition) {
  EXPECT_EQ(RoundOrder(4, 0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(RoundOrder(4, 1), (std::vector<int>{3, 2, 1, 0}));
  EXPECT_EQ(RoundOrder(4, 2), RoundOrder(4, 0));
  EXPECT_TRUE(RoundOrder(0, 1).empty());
  // A linear drift: the time of a case's block is its position. Over an even number of rounds
  // every case's summed position is rounds * (n - 1) / 2.
  const int n = 48, rounds = 4;
  std::vector<int> position_sum(n, 0);
  for (int r = 0; r < rounds; ++r) {
    const std::vector<int> order = RoundOrder(n, r);
    for (int pos = 0; pos < n; ++pos) position_sum[order[pos]] += pos;
  }
  for (int c = 0; c < n; ++c) EXPECT_EQ(position_sum[c], rounds * (n - 1) / 2) << "case " << c;
}

TEST(SpinForUs, WaitsAtLeastTheTime) {
  auto a = std::chrono::steady_clock::now();
  SpinForUs(200);
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count();
  EXPECT_GE(us, 200.0);
  a = std::chrono::steady_clock::now();
  SpinForUs(0);
  SpinForUs(-5);
  const double idle_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count();
  EXPECT_LT(idle_us, 1000.0);
}

TEST(ComputeSkew, WaitIsDurationMinusTheShortest) {
  // Iteration 0: rank 1 arrived last (shortest collective, waited 0); rank 0 waited 7 us for it.
  // Iteration 1: rank 0 last. Iteration 2: both together.
  const SkewTimings s = ComputeSkew({{17, 10, 12}, {10, 25, 12}});
  ASSERT_EQ(s.wait_us.size(), 2u);
  EXPECT_EQ(s.wait_us[0], (std::vector<double>{7, 0, 0}));
  EXPECT_EQ(s.wait_us[1], (std::vector<double>{0, 15, 0}));
  EXPECT_EQ(s.max_duration_us, (std::vector<double>{17, 25, 12}));
  const SkewTimings one = ComputeSkew({{5, 6}});
  EXPECT_EQ(one.wait_us[0], (std::vector<double>{0, 0}));
  EXPECT_EQ(one.max_duration_us, (std::vector<double>{5, 6}));
}

TEST(ComputeSkew, ExponentialArrivalsWaitMeanTimesHarmonicMinusOne) {
  // N ranks arriving after independent Exp(m) delays, transfer t: rank r's duration is
  // max_j(a_j) - a_r + t, its wait max_j(a_j) - a_r (the shortest duration is t). The mean wait over
  // ranks is E[max] - m = m (H_N - 1): 0.5 m at N = 2, 13/12 m at N = 4.
  for (int nranks : {2, 4}) {
    const int iters = 20000;
    std::vector<std::vector<double>> d(nranks, std::vector<double>(iters));
    std::vector<HostCostSampler> arr;
    for (int r = 0; r < nranks; ++r) arr.emplace_back(MakeHostCost(trace::HostCost::EXPONENTIAL, 10, 5), r);
    for (int i = 0; i < iters; ++i) {
      std::vector<double> a(nranks);
      double mx = 0;
      for (int r = 0; r < nranks; ++r) mx = std::max(mx, a[r] = arr[r].NextUs());
      for (int r = 0; r < nranks; ++r) d[r][i] = mx - a[r] + 8.0;
    }
    const SkewTimings s = ComputeSkew(d);
    double wait = 0;
    for (const auto& w : s.wait_us)
      for (double x : w) wait += x;
    wait /= static_cast<double>(nranks) * iters;
    double h = 0;
    for (int k = 1; k <= nranks; ++k) h += 1.0 / k;
    EXPECT_NEAR(wait, 10.0 * (h - 1), 0.3) << nranks << " ranks";
  }
}

TEST(TimedBarrier, EveryRoundWaitsForEveryParty) {
  const int parties = 4, rounds = 500;
  TimedBarrier b(parties);
  std::atomic<int> arrived{0};
  std::atomic<bool> bad{false};
  std::vector<std::thread> ts;
  for (int p = 0; p < parties; ++p) {
    ts.emplace_back([&] {
      for (int r = 0; r < rounds; ++r) {
        arrived.fetch_add(1);
        if (!b.ArriveAndWait(10).ok()) bad = true;
        // Past round r's barrier every party has arrived r + 1 times.
        if (arrived.load() < (r + 1) * parties) bad = true;
      }
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_FALSE(bad.load());
  EXPECT_EQ(arrived.load(), parties * rounds);
}

TEST(TimedBarrier, TimesOutInsteadOfHanging) {
  TimedBarrier b(2);
  const auto a = std::chrono::steady_clock::now();
  Status st = b.ArriveAndWait(0.05);
  EXPECT_EQ(st.code(), StatusCode::kDeadlineExceeded);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count(), 5.0);
  // The barrier is now broken: the late party does not wait either.
  EXPECT_EQ(b.ArriveAndWait(10).code(), StatusCode::kInternal);
}

TEST(TimedBarrier, BreakReleasesTheWaiters) {
  TimedBarrier b(3);
  Status st1, st2;
  std::thread t1([&] { st1 = b.ArriveAndWait(30); });
  std::thread t2([&] { st2 = b.ArriveAndWait(30); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto a = std::chrono::steady_clock::now();
  b.Break();  // the third party failed
  t1.join();
  t2.join();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count(), 5.0);
  EXPECT_EQ(st1.code(), StatusCode::kInternal);
  EXPECT_EQ(st2.code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace specsim::validate
