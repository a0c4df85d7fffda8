#include "sim/llm/acceptance.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/llm/draft_tree.h"

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

namespace specsim::llm {
namespace {

// p_k = P(L >= k) / P(L >= k - 1): histogram [10, 20, 30, 40] (L = 0..3, 100 cycles) gives
// 90/100, 70/90, 40/70.
TEST(AcceptanceForShape, PerPositionOfAHistogram) {
  const std::vector<double> p = PerPositionOfHistogram({10, 20, 30, 40});
  ASSERT_EQ(p.size(), 3u);
  EXPECT_DOUBLE_EQ(p[0], 0.9);
  EXPECT_DOUBLE_EQ(p[1], 70.0 / 90.0);
  EXPECT_DOUBLE_EQ(p[2], 40.0 / 70.0);
  // A chain model of those probabilities gives the histogram back.
  auto m = AcceptanceModel::FromPerPosition(p);
  ASSERT_TRUE(m.ok());
  EXPECT_NEAR(m->distribution()[0], 0.1, 1e-12);
  EXPECT_NEAR(m->distribution()[3], 0.4, 1e-12);
}

TEST(AcceptanceForShape, RulesInOrder) {
  AcceptanceData d;
  d.histogram = {10, 20, 30, 40};
  d.histogram_num_steps = 3;
  d.histogram_topk = 4;
  d.histogram_num_draft_tokens = 8;
  // 1. The measured shape: the histogram itself, exact.
  auto exact = AcceptanceForShape(d, 3, 4, 8);
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  EXPECT_FALSE(exact->approximate);
  const double measured_tau = 1 + (20 + 60 + 120) / 100.0;
  EXPECT_NEAR(exact->model.tau(), measured_tau, 1e-12);
  // 2. Another shape from a tree's histogram: the top-1 acceptance whose expected tree at 3/4/8
  // gives the histogram's tau, then this shape's expected tree. Approximate; the chain of the same
  // depth accepts less than the tree it was measured with, a bigger tree more.
  auto p = Top1AcceptanceOfTreeTau(measured_tau, {3, 4, 8});
  ASSERT_TRUE(p.ok());
  auto chain = AcceptanceForShape(d, 3, 1, 4);
  ASSERT_TRUE(chain.ok());
  EXPECT_TRUE(chain->approximate);
  EXPECT_NEAR(chain->model.tau(), 1 + *p + *p * *p + *p * *p * *p, 1e-9);
  EXPECT_LT(chain->model.tau(), measured_tau);
  auto bigger = AcceptanceForShape(d, 4, 4, 16);
  ASSERT_TRUE(bigger.ok());
  EXPECT_TRUE(bigger->approximate);
  EXPECT_GT(bigger->model.tau(), measured_tau);
  EXPECT_NE(bigger->basis.find("expected EAGLE-2 tree of 15 nodes"), std::string::npos) << bigger->basis;
  // A chain's histogram: its per-depth conditional acceptance, exact for any chain of that depth;
  // deeper than measured takes the last value.
  AcceptanceData c3 = d;
  c3.histogram_topk = 1;
  c3.histogram_num_draft_tokens = 4;
  auto deeper = AcceptanceForShape(c3, 4, 1, 5);
  ASSERT_TRUE(deeper.ok());
  EXPECT_FALSE(deeper->approximate);
  EXPECT_NE(deeper->basis.find("known to depth 3"), std::string::npos) << deeper->basis;
  EXPECT_NEAR(deeper->model.distribution()[4], 0.4 * 4.0 / 7.0, 1e-12);
  // 3. Top-1 probabilities: a chain as given (exact); a tree through its expected tree: S = 2,
  // k = 2, 7 nodes with p = 0.5 keep every candidate but the weakest grandchild (0.0625):
  // P(L >= 1) = 0.5 + 0.25, P(L >= 2) = 0.25 + 0.125 + 0.125 = 0.5 (of 0.5625).
  AcceptanceData top1;
  top1.chain_probabilities = {0.5};
  auto c = AcceptanceForShape(top1, 2, 1, 3);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->approximate);
  EXPECT_NEAR(c->model.tau(), 1 + 0.5 + 0.25, 1e-12);
  auto t = AcceptanceForShape(top1, 2, 2, 8);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->approximate);
  EXPECT_NEAR(t->model.tau(), 1 + 0.75 + 0.5625, 1e-12);  // all 6 candidates fit in 7 nodes
  auto t5 = AcceptanceForShape(top1, 2, 2, 6);
  ASSERT_TRUE(t5.ok());
  EXPECT_NEAR(t5->model.tau(), 1 + 0.75 + 0.5, 1e-12);
  // Depths a cycle cannot accept (num_draft_tokens - 1 < num_steps) take 0.
  auto capped = AcceptanceForShape(top1, 3, 1, 3);
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->model.max_accepted(), 2);
  // Given top-1 probabilities win over a histogram of another shape.
  AcceptanceData both = d;
  both.chain_probabilities = {0.5};
  EXPECT_NEAR(AcceptanceForShape(both, 2, 1, 3)->model.tau(), 1.75, 1e-12);
  // Nothing known, or a bad value: errors.
  EXPECT_FALSE(AcceptanceForShape(AcceptanceData{}, 3, 1, 4).ok());
  AcceptanceData bad;
  bad.chain_probabilities = {1.5};
  EXPECT_FALSE(AcceptanceForShape(bad, 1, 1, 2).ok());
  EXPECT_FALSE(AcceptanceForShape(top1, 0, 1, 2).ok());
}

// A tree's per-depth acceptance a (chain_probabilities_topk k > 1) is one full expansion:
// p = 1 - (1 - a)^(1/k) for the top-1 token; a full one-step tree of k candidates gets a back.
TEST(AcceptanceForShape, ATreesPerDepthAcceptanceInvertsAFullExpansion) {
  AcceptanceData tree;
  tree.chain_probabilities = {0.9};
  tree.chain_probabilities_topk = 4;
  auto one_step = AcceptanceForShape(tree, 1, 4, 5);
  ASSERT_TRUE(one_step.ok());
  EXPECT_NEAR(one_step->model.tau(), 1.9, 1e-12);
  auto chain = AcceptanceForShape(tree, 3, 1, 4);
  ASSERT_TRUE(chain.ok());
  EXPECT_TRUE(chain->approximate);
  const double p = 1 - std::pow(0.1, 0.25);
  EXPECT_NEAR(chain->model.tau(), 1 + p + p * p + p * p * p, 1e-12);
  EXPECT_NE(chain->basis.find("topk-4 tree"), std::string::npos) << chain->basis;
}

}  // namespace
}  // namespace specsim::llm
