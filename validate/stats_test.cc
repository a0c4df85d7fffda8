#include "validate/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace specsim::validate {
namespace {

TEST(Stats, PercentilesInterpolate) {
  std::vector<double> v{5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(Percentile(v, 50), 3);
  EXPECT_DOUBLE_EQ(Percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(Percentile(v, 100), 5);
  EXPECT_DOUBLE_EQ(Percentile(v, 10), 1.4);  // pos 0.4 between 1 and 2
  EXPECT_DOUBLE_EQ(Percentile({}, 50), 0);
  EXPECT_DOUBLE_EQ(Percentile({1, 2}, 50), 1.5);
}

TEST(Stats, SummaryMatchesSlowReference) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> d(1, 100);
  std::vector<double> v(101);
  for (auto& x : v) x = d(rng);
  Summary s = Summarize(v);
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(s.iterations, 101);
  EXPECT_DOUBLE_EQ(s.median_us, sorted[50]);
  EXPECT_DOUBLE_EQ(s.p10_us, sorted[10]);
  EXPECT_DOUBLE_EQ(s.p90_us, sorted[90]);
  EXPECT_DOUBLE_EQ(s.min_us, sorted.front());
  EXPECT_DOUBLE_EQ(s.max_us, sorted.back());
  double mean = 0;
  for (double x : v) mean += x;
  mean /= v.size();
  EXPECT_NEAR(s.mean_us, mean, 1e-9);
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  EXPECT_NEAR(s.stddev_us, std::sqrt(var / 100), 1e-9);
}

TEST(Stats, NcclTestsBusBw) {
  // nccl-tests: allreduce busbw = algbw * 2(n-1)/n, allgather/reducescatter (n-1)/n.
  EXPECT_DOUBLE_EQ(BusBwFactor(trace::ALLREDUCE, 8), 1.75);
  EXPECT_DOUBLE_EQ(BusBwFactor(trace::ALLGATHER, 8), 0.875);
  EXPECT_DOUBLE_EQ(BusBwFactor(trace::REDUCESCATTER, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusBwFactor(trace::ALLREDUCE, 1), 0.0);
  EXPECT_DOUBLE_EQ(GBps(1e9, 1e6), 1.0);  // 1 GB in 1 s
  EXPECT_DOUBLE_EQ(TFlops(2e12, 1e6), 2.0);
  EXPECT_DOUBLE_EQ(GBps(1, 0), 0.0);
}

TEST(Stats, ToProto) {
  trace::Stats p;
  ToProto(Summarize({1, 2, 3}), 4, &p);
  EXPECT_EQ(p.iterations(), 3);
  EXPECT_EQ(p.warmup(), 4);
  EXPECT_DOUBLE_EQ(p.median_us(), 2);
}

}  // namespace
}  // namespace specsim::validate
