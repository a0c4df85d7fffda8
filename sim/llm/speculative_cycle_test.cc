#include "sim/llm/speculative_cycle.h"

#include <gtest/gtest.h>

namespace specsim::llm {
namespace {

// SGLang's Llama default 5/4/8: 8 verified tokens including the root check at most 7 drafted ones,
// but one path holds only 5 drafted tokens: 5. A 3/1/4 chain: min(3, 3) = 3. A 5-step chain
// verifying only 3 tokens: 2.
TEST(SpeculativeCycle, AcceptedTokensAreLimitedByStepsAndVerifiedTokens) {
  EXPECT_EQ(MaxAcceptedPerCycle(5, 8), 5);
  EXPECT_EQ(MaxAcceptedPerCycle(3, 4), 3);
  EXPECT_EQ(MaxAcceptedPerCycle(5, 3), 2);
  EXPECT_EQ(TokensPerCycle(0), 1);  // a fully rejected draft still yields the bonus token
  EXPECT_EQ(TokensPerCycle(3), 4);
}

// 8 sequences x 3 tokens every 20 ms = 1200 tokens/s.
TEST(SpeculativeCycle, TokensPerSecondIsBatchTimesTauOverCycle) {
  EXPECT_DOUBLE_EQ(SpeculativeTokensPerSecond(8, 3.0, 20.0), 1200.0);
}

}  // namespace
}  // namespace specsim::llm
