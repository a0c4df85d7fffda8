#include "sim/llm/ngram.h"

#include <gtest/gtest.h>

#include <cmath>

namespace specsim::llm {
namespace {

// tau = 1 + m E[A]: A = chain 0.8, 0.6 (E[A] = 0.8 + 0.48 = 1.28), m = 0.25 -> 1.32; the
// no-match mass lands on 0 accepted.
TEST(Ngram, CycleAcceptanceMixesProposedDraftsWithNoMatch) {
  auto proposed = AcceptanceModel::FromPerPosition({0.8, 0.6});
  ASSERT_TRUE(proposed.ok());
  auto cycle = NgramCycleAcceptance(*proposed, 0.25);
  ASSERT_TRUE(cycle.ok());
  EXPECT_NEAR(cycle->tau(), 1 + 0.25 * 1.28, 1e-12);
  EXPECT_NEAR(cycle->distribution()[0], 0.75 + 0.25 * 0.2, 1e-12);
  EXPECT_NEAR(cycle->distribution()[2], 0.25 * 0.48, 1e-12);
  auto never = NgramCycleAcceptance(*proposed, 0);
  ASSERT_TRUE(never.ok());
  EXPECT_EQ(never->max_accepted(), 0);
  auto always = NgramCycleAcceptance(*proposed, 1);
  EXPECT_NEAR(always->tau(), proposed->tau(), 1e-12);
  EXPECT_FALSE(NgramCycleAcceptance(*proposed, 1.5).ok());
  EXPECT_FALSE(NgramCycleAcceptance(*proposed, -0.1).ok());
}

TEST(Ngram, AnyMatchOfTheBatch) {
  EXPECT_DOUBLE_EQ(NgramAnyMatchProbability(0.3, 1), 0.3);
  EXPECT_NEAR(NgramAnyMatchProbability(0.3, 4), 1 - std::pow(0.7, 4), 1e-15);
  EXPECT_DOUBLE_EQ(NgramAnyMatchProbability(0, 64), 0);
}

}  // namespace
}  // namespace specsim::llm
