#include "sim/llm/pass_quantiles.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace specsim::llm {
namespace {

// Correlation 0 draws exactly what a plain uniform draw from the same stream gives: a model
// without the copula keeps its draws (and its goldens) bit for bit.
TEST(PassQuantiles, ZeroCorrelationIsThePlainUniformDraw) {
  PassQuantiles pass(0);
  std::mt19937_64 a(5), b(5);
  for (int i = 0; i < 100; ++i) {
    if (i % 10 == 0) pass.NewPass(a);
    EXPECT_EQ(pass.Next(a), std::uniform_real_distribution<double>(0.0, 1.0)(b));
  }
}

// Every call's quantile is uniform whatever the correlation (each op keeps its distribution), and
// two calls of one pass have normal scores correlated rho: over P passes of K calls, the
// intraclass correlation of the scores (one-way ANOVA: (MSB - MSW) / (MSB + (K - 1) MSW)) is rho.
TEST(PassQuantiles, CallsAreUniformAndCorrelatedWithinAPass) {
  for (double rho : {0.3, 0.65}) {
    PassQuantiles pass(rho);
    std::mt19937_64 g(17);
    constexpr int kPasses = 2000, kCalls = 8;
    int below_tenth = 0;
    std::vector<double> means;
    double within = 0;
    for (int p = 0; p < kPasses; ++p) {
      pass.NewPass(g);
      std::vector<double> scores;
      for (int c = 0; c < kCalls; ++c) {
        const double u = pass.Next(g);
        ASSERT_GE(u, 0);
        ASSERT_LT(u, 1);
        below_tenth += u < 0.1;
        // The score back through the inverse CDF (bisection on erfc).
        double lo = -10, hi = 10;
        for (int it = 0; it < 80; ++it) {
          const double mid = 0.5 * (lo + hi);
          (0.5 * std::erfc(-mid / std::sqrt(2.0)) < u ? lo : hi) = mid;
        }
        scores.push_back(lo);
      }
      double m = 0;
      for (double s : scores) m += s / kCalls;
      for (double s : scores) within += (s - m) * (s - m);
      means.push_back(m);
    }
    double grand = 0;
    for (double m : means) grand += m / kPasses;
    double between = 0;
    for (double m : means) between += (m - grand) * (m - grand);
    const double msb = kCalls * between / (kPasses - 1), msw = within / (kPasses * (kCalls - 1));
    const double icc = (msb - msw) / (msb + (kCalls - 1) * msw);
    EXPECT_NEAR(icc, rho, 0.04) << rho;
    EXPECT_NEAR(below_tenth / double(kPasses * kCalls), 0.1, 0.015) << rho;
  }
}

}  // namespace
}  // namespace specsim::llm
