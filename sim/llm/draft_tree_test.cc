#include "sim/llm/draft_tree.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace specsim::llm {
namespace {

TEST(DraftTree, TopkOneIsTheChainClosedForm) {
  // tau = 1 + sum_{d<=S} prod_{i<=d} p_i (acceptance.h), the chain: N - 1 = S.
  const std::vector<double> p = {0.9, 0.7, 0.5, 0.3};
  auto tree = BuildExpectedDraftTree(p, {4, 1, 5});
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  double reach = 1, tau = 1;
  for (int d = 0; d < 4; ++d) {
    reach *= p[d];
    EXPECT_NEAR(tree->at_least[d], reach, 1e-15) << "depth " << d + 1;
    EXPECT_EQ(tree->nodes_per_depth[d], 1);
    tau += reach;
  }
  EXPECT_NEAR(tree->tau(), tau, 1e-14);
  // The same as the per-position chain model.
  auto chain = AcceptanceModel::FromPerPosition(p);
  auto model = DraftTreeAcceptance(p, {4, 1, 5});
  ASSERT_TRUE(chain.ok() && model.ok());
  for (size_t a = 0; a < chain->distribution().size(); ++a)
    EXPECT_NEAR(model->distribution()[a], chain->distribution()[a], 1e-14) << a;
}

TEST(DraftTree, IidChainIsLeviathansForm) {
  // (1 - a^(g+1)) / (1 - a) for i.i.d. a and g drafts.
  const double a = 0.6;
  auto tree = BuildExpectedDraftTree({a}, {5, 1, 6});
  ASSERT_TRUE(tree.ok());
  EXPECT_NEAR(tree->tau(), (1 - std::pow(a, 6)) / (1 - a), 1e-14);
}

TEST(DraftTree, FewerTokensThanStepsCutTheChain) {
  // topk 1 with N - 1 = 2 < S = 4: only depths 1..2 verified (MaxAcceptedPerCycle).
  auto tree = BuildExpectedDraftTree({0.8}, {4, 1, 3});
  ASSERT_TRUE(tree.ok());
  EXPECT_NEAR(tree->tau(), 1 + 0.8 + 0.64, 1e-15);
  EXPECT_EQ(tree->at_least[2], 0);
  EXPECT_EQ(tree->nodes_per_depth[2], 0);
}

TEST(DraftTree, OneStepFullExpansionIsTheCreditedForm) {
  // S = 1, N - 1 = k: every candidate verified, P(L >= 1) = 1 - (1 - p)^k.
  for (int k : {1, 2, 4, 8}) {
    auto tree = BuildExpectedDraftTree({0.55}, {1, k, k + 1});
    ASSERT_TRUE(tree.ok());
    EXPECT_NEAR(tree->at_least[0], 1 - std::pow(0.45, k), 1e-14) << k;
  }
}

TEST(DraftTree, SmallTreeKeepsTheBestNodesAcrossDepths) {
  // S = 2, k = 2, N - 1 = 3, p = 0.6: depth-1 candidates 0.6, 0.24; depth-2 children of the
  // 0.6 node 0.36, 0.144, of the 0.24 node 0.144, 0.0576. Kept: 0.6, 0.36, 0.24 ->
  // P(L >= 1) = 0.84, P(L >= 2) = 0.36, tau = 2.2.
  auto tree = BuildExpectedDraftTree({0.6}, {2, 2, 4});
  ASSERT_TRUE(tree.ok());
  EXPECT_NEAR(tree->at_least[0], 0.84, 1e-14);
  EXPECT_NEAR(tree->at_least[1], 0.36, 1e-14);
  EXPECT_EQ(tree->nodes_per_depth[0], 2);
  EXPECT_EQ(tree->nodes_per_depth[1], 1);
  EXPECT_NEAR(tree->tau(), 2.2, 1e-14);
}

TEST(DraftTree, TauGrowsWithTheTreeAndWithItsWidth) {
  // The trade advise searches: more draft tokens accept more (and cost more to verify).
  double last = 0;
  for (int n : {2, 4, 8, 16, 32, 64}) {
    auto tree = BuildExpectedDraftTree({0.7}, {6, 4, n});
    ASSERT_TRUE(tree.ok());
    EXPECT_GE(tree->tau(), last) << n;
    last = tree->tau();
  }
  // More draft tokens than the chain's buffer: the tree's siblings accept what the chain cannot.
  auto chain = BuildExpectedDraftTree({0.7}, {6, 1, 7});
  auto wide = BuildExpectedDraftTree({0.7}, {6, 4, 16});
  ASSERT_TRUE(chain.ok() && wide.ok());
  EXPECT_GT(wide->tau(), chain->tau());
}

TEST(DraftTree, PublishedFigureRecoveredAtItsShape) {
  for (SpeculationShape shape : {SpeculationShape{7, 10, 60}, SpeculationShape{5, 4, 8}, SpeculationShape{3, 1, 4}}) {
    const double tau = 1 + 0.6 * std::min(shape.num_steps, shape.num_draft_tokens - 1);
    auto p = Top1AcceptanceOfTreeTau(tau, shape);
    ASSERT_TRUE(p.ok()) << p.status().message();
    auto tree = BuildExpectedDraftTree({*p}, shape);
    ASSERT_TRUE(tree.ok());
    EXPECT_NEAR(tree->tau(), tau, 1e-9) << shape.num_steps << "/" << shape.topk << "/" << shape.num_draft_tokens;
  }
}

TEST(DraftTree, TauIsMonotoneInTheAcceptance) {
  // Top1AcceptanceOfTreeTau bisects: tau must not fall as p grows, on the shapes advise searches.
  for (SpeculationShape shape : {SpeculationShape{7, 10, 60}, SpeculationShape{5, 4, 8}, SpeculationShape{6, 8, 32},
                                 SpeculationShape{3, 2, 6}, SpeculationShape{8, 16, 64}}) {
    double last = 0;
    for (int i = 0; i <= 1000; ++i) {
      auto tree = BuildExpectedDraftTree({i / 1000.0}, shape);
      ASSERT_TRUE(tree.ok());
      EXPECT_GE(tree->tau(), last - 1e-12) << "p = " << i / 1000.0;
      last = tree->tau();
    }
  }
}

TEST(DraftTree, BadInputNamed) {
  EXPECT_FALSE(BuildExpectedDraftTree({0.5}, {0, 1, 2}).ok());
  EXPECT_FALSE(BuildExpectedDraftTree({0.5}, {2, 1, 1}).ok());
  EXPECT_FALSE(BuildExpectedDraftTree({}, {2, 1, 3}).ok());
  auto bad = BuildExpectedDraftTree({0.5, 1.5}, {2, 1, 3});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("depth 2"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(Top1AcceptanceOfTreeTau(5.0, {3, 1, 4}).ok());  // above 1 + 3
  EXPECT_FALSE(Top1AcceptanceOfTreeTau(0.5, {3, 1, 4}).ok());
}

// The tree bound: 1 + topk + (num_steps - 1) * topk^2 (SGLang's (5, 4, 8) default allows 1 + 4 + 64
// = 69; a chain 1 + 1 + (s - 1) = s + 1, the chain rule), saturated where 32-bit fields overflow.
TEST(DraftTree, MaxTreeDraftTokensIsTheCandidatePoolAndSaturates) {
  EXPECT_EQ(MaxTreeDraftTokens(5, 4), 69);
  EXPECT_EQ(MaxTreeDraftTokens(3, 1), 4);
  EXPECT_EQ(MaxTreeDraftTokens(1, 8), 9);
  EXPECT_EQ(MaxTreeDraftTokens(2147483647, 2147483647), std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace specsim::llm
