#include "sim/llm/acceptance.h"

#include <gtest/gtest.h>

#include <cmath>

namespace specsim::llm {
namespace {

TEST(Acceptance, TauOfAChain) {
  // tau = 1 + p1 + p1 p2 + p1 p2 p3 = 1 + 0.8 + 0.48 + 0.24 = 2.52
  auto m = AcceptanceModel::FromPerPosition({0.8, 0.6, 0.5});
  ASSERT_TRUE(m.ok());
  EXPECT_NEAR(m->tau(), 2.52, 1e-12);
  EXPECT_NEAR(m->distribution()[0], 0.2, 1e-12);
  EXPECT_NEAR(m->distribution()[3], 0.24, 1e-12);
}

TEST(Acceptance, IidMatchesLeviathan) {
  // E[tokens] = (1 - a^(g+1)) / (1 - a) for i.i.d. acceptance a and g drafts.
  const double a = 0.7;
  const int g = 5;
  auto m = AcceptanceModel::FromPerPosition(std::vector<double>(g, a));
  EXPECT_NEAR(m->tau(), (1 - std::pow(a, g + 1)) / (1 - a), 1e-12);
}

TEST(Acceptance, SampledAcceptLengthsMatchTheConfiguredDistribution) {
  auto m = AcceptanceModel::FromHistogram({10, 30, 20, 25, 15});
  ASSERT_TRUE(m.ok());
  std::mt19937_64 rng(42);
  const int n = 200000;
  std::vector<int> counts(5, 0);
  for (int i = 0; i < n; ++i) ++counts[m->Sample(rng)];
  // Each frequency within 4 standard deviations sqrt(p(1-p)/n) of its probability (fails by
  // chance with probability < 1e-4 per bin for this fixed seed: deterministic anyway).
  for (int a = 0; a < 5; ++a) {
    double p = m->distribution()[a];
    EXPECT_NEAR(counts[a] / double(n), p, 4 * std::sqrt(p * (1 - p) / n)) << "a=" << a;
  }
}

TEST(Acceptance, SameSeedSameSequence) {
  auto m = AcceptanceModel::FromPerPosition({0.9, 0.5});
  std::mt19937_64 a(7), b(7);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(m->Sample(a), m->Sample(b));
}

TEST(Acceptance, TrailingZeroProbabilitiesLimitTheAcceptedCount) {
  auto m = AcceptanceModel::FromPerPosition({0.9, 0.8, 0.0, 0.0});
  EXPECT_EQ(m->max_accepted(), 2);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 1000; ++i) EXPECT_LE(m->Sample(rng), 2);
}

TEST(Acceptance, BadInputIsAnError) {
  EXPECT_FALSE(AcceptanceModel::FromPerPosition({}).ok());
  EXPECT_NE(AcceptanceModel::FromPerPosition({0.5, 1.5}).status().message().find("[1]"), std::string::npos);
  EXPECT_FALSE(AcceptanceModel::FromHistogram({0, 0}).ok());
  EXPECT_FALSE(AcceptanceModel::FromHistogram({1, -1}).ok());
}

}  // namespace
}  // namespace specsim::llm
