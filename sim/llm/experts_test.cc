#include "sim/llm/experts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

namespace specsim::llm {
namespace {

// Monte Carlo reference: each of N tokens picks k distinct experts uniformly (a partial
// Fisher-Yates shuffle), independently; count the distinct experts touched and average.
double MonteCarloDistinct(int e, int k, int n, int trials, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> experts(e);
  std::vector<char> touched(e);
  double total = 0;
  for (int t = 0; t < trials; ++t) {
    std::fill(touched.begin(), touched.end(), 0);
    for (int tok = 0; tok < n; ++tok) {
      std::iota(experts.begin(), experts.end(), 0);
      for (int i = 0; i < k; ++i) {
        std::uniform_int_distribution<int> pick(i, e - 1);
        std::swap(experts[i], experts[pick(rng)]);
        touched[experts[i]] = 1;
      }
    }
    total += std::count(touched.begin(), touched.end(), 1);
  }
  return total / trials;
}

TEST(ExpertsTest, ClosedFormMatchesMonteCarlo) {
  struct Case {
    int e, k, n;
  };
  // Kimi-K2 (384, 8), DeepSeek-V3 (256, 8), Qwen3-235B (128, 8), gpt-oss (128, 4), Mixtral (8, 2);
  // N from one decode token to a batch of verify tokens.
  const Case cases[] = {{384, 8, 1},  {384, 8, 4},  {384, 8, 32}, {384, 8, 256}, {256, 8, 4},
                        {256, 8, 64}, {128, 8, 16}, {128, 4, 8},  {8, 2, 3},     {8, 2, 50}};
  for (const Case& c : cases) {
    const double exact = ExpectedDistinctExperts(c.e, c.k, c.n);
    const double mc = MonteCarloDistinct(c.e, c.k, c.n, 2000, 12345 + c.e * 7 + c.n);
    // Tolerance: the count's standard deviation is below sqrt(E)/2 for these cases (a sum of E
    // weakly dependent indicators), so the mean of 2000 trials has sd < sqrt(E)/(2*sqrt(2000)):
    // 0.22 for E = 384. Allow 1% of the value or 0.3 experts, whichever is larger (> 4 sd).
    const double tol = std::max(0.01 * exact, 0.3);
    EXPECT_NEAR(mc, exact, tol) << "E=" << c.e << " k=" << c.k << " N=" << c.n;
  }
}

TEST(ExpertsTest, EdgeCases) {
  EXPECT_EQ(ExpectedDistinctExperts(384, 8, 0), 0);
  EXPECT_NEAR(ExpectedDistinctExperts(384, 8, 1), 8, 1e-12);  // one token touches exactly k
  EXPECT_DOUBLE_EQ(ExpectedDistinctExperts(8, 8, 5), 8);
  EXPECT_NEAR(ExpectedDistinctExperts(384, 8, 100000), 384, 1e-9);
  // Monotonic in N, below min(E, N*k).
  double prev = 0;
  for (int n = 1; n <= 512; n *= 2) {
    double d = ExpectedDistinctExperts(384, 8, n);
    EXPECT_GT(d, prev);
    EXPECT_LE(d, std::min(384.0, 8.0 * n) + 1e-9);
    prev = d;
  }
}

}  // namespace
}  // namespace specsim::llm
