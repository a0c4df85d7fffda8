#include "sim/advise/published_acceptance.h"

#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>

#include "sim/io/model_loader.h"
#include "sim/llm/acceptance.h"

namespace specsim::advise {
namespace {

// The EAGLE-3 head for Llama-3.1-8B publishes a mean accept length with 7 steps, topk 10, 60 tokens:
// the top-1 acceptance a whose expected tree at 7/10/60 gives that mean; simulate of that shape
// gets the figure back.
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
  EXPECT_LE(sp.acceptance_probabilities_topk(), 1);  // the top-1 token's
  ASSERT_EQ(sp.acceptance_probabilities_size(), 1);
  auto head = io::LoadModelFile("models/eagle3-llama-3.1-8b.textproto");
  ASSERT_TRUE(head.ok());
  const double tau = head->published_acceptance.mean_accept_length;
  auto at_shape = llm::AcceptanceForShape({{sp.acceptance_probabilities(0)}, 1, {}, 0, 1, 0}, 7, 10, 60);
  ASSERT_TRUE(at_shape.ok()) << at_shape.status().message();
  EXPECT_NEAR(at_shape->model.tau(), tau, 1e-6);
  // A chain of the same head is priced below the tree (fewer candidates), above 1.
  auto chain = llm::AcceptanceForShape({{sp.acceptance_probabilities(0)}, 1, {}, 0, 1, 0}, 7, 1, 8);
  ASSERT_TRUE(chain.ok());
  EXPECT_LT(chain->model.tau(), tau);
  EXPECT_GT(chain->model.tau(), 1.5);
  EXPECT_NE(said->find(fmt::format("mean accept length {:g} with 7/10/60", tau)), std::string::npos) << *said;
  EXPECT_NE(said->find("gives the published mean back"), std::string::npos) << *said;
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
