#include "sim/llm/ngram.h"

#include <gtest/gtest.h>

#include <random>

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

// A ragged batch of 16 sequences at m = 0.25: the matched count is Binomial(16, 0.25) (mean 4,
// variance 16 x 0.25 x 0.75 = 3) and the tokens per sequence average 1 + m E[A] = 1.32; m = 0 and
// m = 1 match none and all.
TEST(Ngram, ARaggedCycleMatchesEachSequenceOnItsOwn) {
  auto proposed = AcceptanceModel::FromPerPosition({0.8, 0.6});
  ASSERT_TRUE(proposed.ok());
  std::mt19937_64 rng(7);
  constexpr int kCycles = 40000;
  double matched = 0, matched_sq = 0, tokens = 0;
  for (int c = 0; c < kCycles; ++c) {
    const NgramRaggedCycle r = SampleNgramRaggedCycle(*proposed, 0.25, 16, rng);
    ASSERT_GE(r.matched, 0);
    ASSERT_LE(r.matched, 16);
    ASSERT_GE(r.tokens_per_sequence, 1);
    ASSERT_LE(r.tokens_per_sequence, 1 + 2.0 * r.matched / 16);  // at most 2 accepted per match
    matched += r.matched;
    matched_sq += double(r.matched) * r.matched;
    tokens += r.tokens_per_sequence;
  }
  const double mean = matched / kCycles;
  EXPECT_NEAR(mean, 4, 0.05);
  EXPECT_NEAR(matched_sq / kCycles - mean * mean, 3, 0.1);
  EXPECT_NEAR(tokens / kCycles, 1 + 0.25 * 1.28, 0.005);
  const NgramRaggedCycle none = SampleNgramRaggedCycle(*proposed, 0, 16, rng);
  EXPECT_EQ(none.matched, 0);
  EXPECT_DOUBLE_EQ(none.tokens_per_sequence, 1);
  EXPECT_EQ(SampleNgramRaggedCycle(*proposed, 1, 16, rng).matched, 16);
}

}  // namespace
}  // namespace specsim::llm
