#include "sim/advise/variants.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "sim/scenario/scenario.h"

namespace specsim::advise {
namespace {

template <typename Variant>
std::vector<std::string> Names(const std::vector<Variant>& variants) {
  std::vector<std::string> names;
  for (const Variant& v : variants) names.push_back(v.name);
  return names;
}

// Each command's list, in the order it prints it (simulate --compare-algos' tables and advise's
// candidates; the golden outputs and the case study pin what they print).
TEST(Variants, EachCommandsListInItsOrder) {
  EXPECT_EQ(
      Names(AllreduceVariants(VariantList::kCompareAlgos)),
      (std::vector<std::string>{"NCCL auto", "NCCL ring LL", "NCCL ring Simple", "NCCL tree", "NCCL ring, 1 channel",
                                "NCCL ring, 2 channels", "NCCL ring, 4 channels", "NCCL auto, P2P level SYS",
                                "NCCL auto, P2P disabled", "one-shot custom allreduce", "two-shot custom allreduce"}));
  EXPECT_EQ(Names(AllreduceVariants(VariantList::kAdvise)),
            (std::vector<std::string>{"NCCL auto", "NCCL ring LL", "NCCL ring Simple", "NCCL tree",
                                      "NCCL ring LL, 1 channel", "NCCL ring LL, 2 channels", "NCCL ring LL, 4 channels",
                                      "NCCL auto, P2P level SYS", "NCCL ring LL, P2P level SYS",
                                      "one-shot custom allreduce", "two-shot custom allreduce"}));
  EXPECT_EQ(Names(PacingVariants(VariantList::kCompareAlgos)),
            (std::vector<std::string>{"as the profile says", "every phase full graph", "verify piecewise",
                                      "verify eager", "every phase piecewise", "every phase eager",
                                      "no host sync (host runs ahead)", "host sync every step and cycle"}));
  EXPECT_EQ(Names(PacingVariants(VariantList::kAdvise)),
            (std::vector<std::string>{"graphs on", "graphs off", "graphs on, verify piecewise",
                                      "graphs on, host runs ahead (no syncs)"}));
}

// A variant both commands try is one configuration, whatever each calls it.
TEST(Variants, SharedVariantsAreOneConfiguration) {
  const auto compare = AllreduceVariants(VariantList::kCompareAlgos);
  const auto advise = AllreduceVariants(VariantList::kAdvise);
  int shared = 0;
  for (const AllreduceVariant& a : compare)
    for (const AllreduceVariant& b : advise)
      if (a.name == b.name) {
        ++shared;
        EXPECT_EQ(a.Communication().SerializeAsString(), b.Communication().SerializeAsString()) << a.name;
        EXPECT_EQ(a.family, b.family) << a.name;
      }
  EXPECT_EQ(shared, 7);
  const auto pacing_compare = PacingVariants(VariantList::kCompareAlgos);
  const auto pacing_advise = PacingVariants(VariantList::kAdvise);
  EXPECT_EQ(pacing_compare[2].family, pacing_advise[2].family);  // verify piecewise
  auto fields = [](const PacingVariant& v) {
    config::Scenario s;
    v.ApplyTo(&s);
    return s.SerializeAsString();
  };
  EXPECT_EQ(fields(pacing_compare[2]), fields(pacing_advise[2]));
  config::Scenario verify_piecewise;
  pacing_advise[2].ApplyTo(&verify_piecewise);
  EXPECT_EQ(verify_piecewise.framework_overrides().capture().verify(), config::PIECEWISE);
  EXPECT_EQ(verify_piecewise.framework_overrides().capture().decode(), config::CAPTURE_MODE_UNSPECIFIED);
  EXPECT_FALSE(verify_piecewise.framework_overrides().has_sync_each_step());
  EXPECT_EQ(fields(pacing_compare[6]), fields(pacing_advise[3]));  // host runs ahead
  EXPECT_TRUE(pacing_advise[3].what_if);
  EXPECT_FALSE(pacing_advise[1].cuda_graphs);
}

TEST(Variants, Bar1TwinNamesTheDriverSetting) {
  const AllreduceVariant oneshot = AllreduceVariants(VariantList::kAdvise)[9];
  ASSERT_TRUE(oneshot.custom_allreduce());
  const AllreduceVariant bar1 = WithBar1P2p(oneshot);
  EXPECT_EQ(bar1.name, "one-shot custom allreduce, BAR1 P2P");
  EXPECT_EQ(bar1.family, "custom allreduce with BAR1 P2P");
  EXPECT_EQ(bar1.driver_p2p_mode, "bar1");
  EXPECT_EQ(bar1.Communication().driver_p2p_mode(), "bar1");
  EXPECT_EQ(WithBar1P2p(AllreduceVariants(VariantList::kAdvise)[7]).family, "NCCL P2P with BAR1 P2P");
}

// The two ways a pacing variant reaches a setup agree: ApplyTo on a built setup (compare-algos)
// gives the capture modes, host syncs and CUDA-graph switch that building the scenario with the
// variant's fields gives (advise).
TEST(Variants, ApplyToAgreesWithTheScenarioOverrides) {
  const std::string path = "configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto";
  auto base = scenario::LoadScenario(path, {}, "");
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  std::set<std::string> seen;
  for (VariantList list : {VariantList::kCompareAlgos, VariantList::kAdvise}) {
    for (const PacingVariant& v : PacingVariants(list)) {
      SCOPED_TRACE(v.name);
      config::Scenario fields = base->scenario;
      v.ApplyTo(&fields);
      auto built = scenario::BuildScenario(fields, path, {}, "");
      ASSERT_TRUE(built.ok()) << built.status().ToString();
      llm::DecodeSetup applied = base->setup;
      v.ApplyTo(&applied);
      ASSERT_TRUE(built->setup.framework && applied.framework);
      const llm::FrameworkProfile& a = *applied.framework;
      const llm::FrameworkProfile& b = *built->setup.framework;
      EXPECT_EQ(a.capture.decode, b.capture.decode);
      EXPECT_EQ(a.capture.draft, b.capture.draft);
      EXPECT_EQ(a.capture.verify, b.capture.verify);
      EXPECT_EQ(a.capture.draft_extend, b.capture.draft_extend);
      EXPECT_EQ(a.sync_each_step, b.sync_each_step);
      EXPECT_EQ(a.sync_each_cycle, b.sync_each_cycle);
      EXPECT_EQ(applied.cuda_graphs, built->setup.cuda_graphs);
      seen.insert(v.name);
    }
  }
  EXPECT_EQ(seen.size(), 12u);
}

}  // namespace
}  // namespace specsim::advise
