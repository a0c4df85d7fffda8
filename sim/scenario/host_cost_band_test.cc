// The host-cost band: its ends are ordered (less host time is never slower), it varies only the
// UNMEASURED costs, and a scenario whose framework has none (cpp-graph, or every cost overridden)
// has no band.
#include "sim/scenario/host_cost_band.h"

#include <gtest/gtest.h>

#include "sim/scenario/scenario.h"

namespace specsim::scenario {
namespace {

constexpr const char* kLlama = "configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto";

llm::FrameworkProfile Profile() {
  llm::FrameworkProfile f;
  f.eager_op_host_us = 60;
  f.SourceOf(llm::HostCost::kEagerOp) = {llm::HostCostSource::Kind::kFitted, "t.json", "cpu", "", "", true, 50, 70};
  f.decode_step_host_us = 300;
  f.SourceOf(llm::HostCost::kDecodeStep) = {llm::HostCostSource::Kind::kUnmeasured, "", "", "cite", "", true, 150, 600};
  f.spec_cycle_host_us = 700;
  f.SourceOf(llm::HostCost::kSpecCycle) = {llm::HostCostSource::Kind::kUnmeasured, "", "", "c2", "", true, 300, 1700};
  return f;
}

TEST(HostCostBand, EndsMoveOnlyTheUnmeasuredCosts) {
  const llm::FrameworkProfile f = Profile();
  EXPECT_EQ(UnmeasuredHostCosts(f),
            (std::vector<llm::HostCost>{llm::HostCost::kDecodeStep, llm::HostCost::kSpecCycle}));
  const llm::FrameworkProfile low = AtBandEnd(f, BandEnd::kLow), high = AtBandEnd(f, BandEnd::kHigh);
  EXPECT_EQ(low.decode_step_host_us, 150);
  EXPECT_EQ(high.decode_step_host_us, 600);
  EXPECT_EQ(low.spec_cycle_host_us, 300);
  EXPECT_EQ(high.spec_cycle_host_us, 1700);
  EXPECT_EQ(low.eager_op_host_us, 60);  // fitted: its spread is shown, not varied
  EXPECT_EQ(high.eager_op_host_us, 60);
  const std::vector<std::string> d = DescribeUnmeasured(f);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], "decode_step_host_us = 300 us in [150, 600] (cite)");
}

// The bundled SGLang profile's band on the Llama H200 scenario: low-cost end faster than the point,
// the point faster than the high-cost end, for the baseline and for speculation.
TEST(HostCostBand, OrderedOnABundledScenario) {
  auto loaded = LoadScenario(kLlama, {"framework=configs/frameworks/sglang.textproto"}, "");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto point = EvaluateSetup(loaded->setup);
  ASSERT_TRUE(point.ok()) << point.status().ToString();
  auto band = EvaluateHostCostBand(loaded->setup);
  ASSERT_TRUE(band.ok()) << band.status().ToString();
  ASSERT_TRUE(band->has_value());
  const HostCostBand& b = **band;
  EXPECT_FALSE(b.costs.empty());
  EXPECT_GE(b.low_cost.baseline_tokens_per_s, point->baseline_tokens_per_s);
  EXPECT_GE(point->baseline_tokens_per_s, b.high_cost.baseline_tokens_per_s);
  // SGLang's plain decode runs ahead of the GPU (sync_each_step false): its host costs may hide.
  ASSERT_TRUE(point->speculative);
  EXPECT_GE(b.low_cost.speculative_tokens_per_s, point->speculative_tokens_per_s);
  EXPECT_GE(point->speculative_tokens_per_s, b.high_cost.speculative_tokens_per_s);
  EXPECT_GT(b.low_cost.speculative_tokens_per_s, b.high_cost.speculative_tokens_per_s);
  EXPECT_LT(b.low_cost.cycle_ms, b.high_cost.cycle_ms);
}

TEST(HostCostBand, NoneWithoutUnmeasuredCosts) {
  auto cpp = LoadScenario(kLlama, {"framework=configs/frameworks/cpp-graph.textproto"}, "");
  ASSERT_TRUE(cpp.ok()) << cpp.status().ToString();
  auto band = EvaluateHostCostBand(cpp->setup);
  ASSERT_TRUE(band.ok()) << band.status().ToString();
  EXPECT_FALSE(band->has_value());
  // Every unmeasured cost overridden by the scenario: the user's values, no band.
  auto overridden =
      LoadScenario(kLlama,
                   {"framework=configs/frameworks/sglang.textproto", "framework_overrides.graph_replay_host_us=20",
                    "framework_overrides.decode_step_host_us=100", "framework_overrides.spec_cycle_host_us=200"},
                   "");
  ASSERT_TRUE(overridden.ok()) << overridden.status().ToString();
  ASSERT_TRUE(overridden->setup.framework);
  EXPECT_EQ(overridden->setup.framework->SourceOf(llm::HostCost::kDecodeStep).kind,
            llm::HostCostSource::Kind::kScenarioOverride);
  EXPECT_EQ(overridden->setup.framework->SourceOf(llm::HostCost::kEagerOp).kind, llm::HostCostSource::Kind::kFitted);
  band = EvaluateHostCostBand(overridden->setup);
  ASSERT_TRUE(band.ok()) << band.status().ToString();
  EXPECT_FALSE(band->has_value());
}

}  // namespace
}  // namespace specsim::scenario
