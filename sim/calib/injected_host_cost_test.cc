#include "sim/calib/injected_host_cost.h"

#include <gtest/gtest.h>

#include <random>

namespace specsim::calib {
namespace {

trace::HostCost Cost(trace::HostCost::Distribution d, double mean_us, uint64_t seed) {
  trace::HostCost c;
  c.set_distribution(d);
  c.set_mean_us(mean_us);
  c.set_seed(seed);
  return c;
}

TEST(InjectedHostCost, TheGeneratorIsTheStandardsMt19937_64) {
  // [rand.predef]: the 10000th output of a default-constructed mt19937_64 is 9981545732273789042.
  std::mt19937_64 g;
  g.discard(9999);
  EXPECT_EQ(g(), 9981545732273789042ULL);
}

TEST(InjectedHostCost, ExponentialDrawsAreValidatesDrawForDraw) {
  // The same values pin validate's HostCostSampler (validate/pacing_test.cc): seed 1234, mean 10 us.
  InjectedHostCost r0(Cost(trace::HostCost::EXPONENTIAL, 10, 1234), 0);
  EXPECT_DOUBLE_EQ(r0.NextUs(), 0.70784960005854114);
  EXPECT_DOUBLE_EQ(r0.NextUs(), 5.6043241962142663);
  EXPECT_DOUBLE_EQ(r0.NextUs(), 9.3159397991205992);
  InjectedHostCost r1(Cost(trace::HostCost::EXPONENTIAL, 10, 1234), 1);
  EXPECT_DOUBLE_EQ(r1.NextUs(), 7.5761637940496325);
  EXPECT_DOUBLE_EQ(r1.NextUs(), 2.3042751529945873);
}

TEST(InjectedHostCost, NoneIsZeroAndFixedIsItsMean) {
  InjectedHostCost none(Cost(trace::HostCost::NONE, 10, 1), 0);
  InjectedHostCost fixed(Cost(trace::HostCost::FIXED, 20, 1), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(none.NextUs(), 0.0);
    EXPECT_EQ(fixed.NextUs(), 20.0);
  }
}

TEST(LoopIterationsAsRun, OneRoundIsWarmUpThenTimed) {
  const std::vector<bool> v = LoopIterationsAsRun(/*timed_iterations=*/3, /*warmup=*/2, /*rounds=*/0);
  EXPECT_EQ(v, (std::vector<bool>{false, false, true, true, true}));
  EXPECT_EQ(LoopIterationsAsRun(3, 2, 1), v);
}

TEST(LoopIterationsAsRun, LaterRoundsWarmUpAtMostTwice) {
  // validate's PlanRounds(60, 5, 4): 15 per round; 5 warm-up first, then 2 before each later round.
  const std::vector<bool> v = LoopIterationsAsRun(60, 5, 4);
  ASSERT_EQ(v.size(), 5u + 15 + 3 * (2 + 15));
  int timed = 0;
  for (bool t : v) timed += t;
  EXPECT_EQ(timed, 60);
  EXPECT_FALSE(v[4]);
  EXPECT_TRUE(v[5]);
  EXPECT_TRUE(v[19]);
  EXPECT_FALSE(v[20]);
  EXPECT_FALSE(v[21]);
  EXPECT_TRUE(v[22]);
  EXPECT_EQ(LoopIterationsAsRun(10, 1, 2),
            (std::vector<bool>{false, true, true, true, true, true, false, true, true, true, true, true}));
}

}  // namespace
}  // namespace specsim::calib
