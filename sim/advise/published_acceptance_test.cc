#include "sim/advise/published_acceptance.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/io/model_loader.h"

namespace specsim::advise {
namespace {

// The EAGLE-3 head for Llama-3.1-8B publishes a mean accept length of 6.0 with 7 steps, topk 10:
// the i.i.d. per-position acceptance a with sum_{k=1..7} a^k = 6 - 1 = 5, tied to topk 10.
TEST(PublishedAcceptance, TheHeadsMeanBecomesAPerPositionAcceptanceOfItsShape) {
  auto target = io::LoadModelFile("models/llama-3.1-8b.textproto");
  ASSERT_TRUE(target.ok());
  config::Scenario base;
  base.set_model("models/llama-3.1-8b.textproto");
  base.mutable_speculation()->set_draft_model("models/eagle3-llama-3.1-8b.textproto");
  auto said = ApplyPublishedAcceptance(*target, &base);
  ASSERT_TRUE(said.ok()) << said.status().message();
  const config::Speculation& sp = base.speculation();
  EXPECT_EQ(sp.method(), config::Speculation::EAGLE3);  // a base made from flags takes the shape
  EXPECT_EQ(sp.num_steps(), 7);
  EXPECT_EQ(sp.topk(), 10);
  EXPECT_EQ(sp.num_draft_tokens(), 60);
  EXPECT_EQ(sp.acceptance_probabilities_topk(), 10);
  ASSERT_EQ(sp.acceptance_probabilities_size(), 1);
  const double a = sp.acceptance_probabilities(0);
  double accepted = 0;
  for (int k = 1; k <= 7; ++k) accepted += std::pow(a, k);
  EXPECT_NEAR(accepted, 5.0, 1e-6);
  EXPECT_NE(said->find("mean accept length 6 with 7/10/60"), std::string::npos) << *said;
  EXPECT_NE(said->find("upper bounds"), std::string::npos) << *said;  // a tree's acceptance
}

TEST(PublishedAcceptance, AModelWithoutOneIsNotFoundNamingIt) {
  auto target = io::LoadModelFile("models/llama-3.1-8b.textproto");
  ASSERT_TRUE(target.ok());
  config::Scenario base;
  base.set_model("models/llama-3.1-8b.textproto");
  base.mutable_speculation()->set_method(config::Speculation::MTP);  // Llama has no MTP layers
  auto said = ApplyPublishedAcceptance(*target, &base);
  ASSERT_FALSE(said.ok());
  EXPECT_EQ(said.status().code(), StatusCode::kNotFound);
  EXPECT_NE(said.status().message().find("models/llama-3.1-8b.textproto"), std::string::npos);
}

}  // namespace
}  // namespace specsim::advise
