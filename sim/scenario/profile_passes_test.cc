#include "sim/scenario/profile_passes.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace specsim::scenario {
namespace {

// Llama-3.1-8B (32 dense layers, hidden 4096) with an EAGLE-3 head on 2 H200s, batch 1.
LoadedScenario Llama() {
  auto loaded = LoadScenario("configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto", {}, "");
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  return std::move(*loaded);
}

profile::PassGroup Group(std::string phase, bool graph, int allreduces, int64_t elements) {
  profile::PassGroup g;
  g.phase = std::move(phase);
  // The name map's kind, as the pytorch words give it.
  if (g.phase != profile::kGraphReplayPhase) g.kind = g.phase == "prefill" ? "other" : g.phase;
  g.graph = graph;
  g.passes = 10;
  g.allreduces = allreduces;
  g.allreduce_elements = elements;
  g.busy_total_us = 1000;
  g.busy_us = {{"gemm", 700}, {"nccl", 300}};
  return g;
}

// A named phase: its kind from the name, tokens from the first allreduce (elements / hidden /
// batch), the target's layers from the allreduces (two per dense layer).
TEST(ProfilePasses, NamedPhaseTakesTokensAndLayersFromItsAllreduces) {
  const LoadedScenario loaded = Llama();
  const PassPrediction p = PredictPassGroup(Group("verify", false, 20, 4096 * 6), loaded, {});
  ASSERT_TRUE(p.ok) << p.why;
  EXPECT_EQ(p.kind, "verify");
  EXPECT_EQ(p.tokens, 6);
  EXPECT_EQ(p.layers, 10);
  EXPECT_TRUE(p.target);
  EXPECT_GT(p.busy_us, 0);
  EXPECT_GT(p.launch_us, 0);
  EXPECT_FALSE(p.class_us.empty());
}

// A pass whose range's name states its width (the name map's tokens_group) is predicted at that
// width, not the scenario's 8 draft tokens; its allreduce, when recorded, still decides.
TEST(ProfilePasses, TheNameGivesTheWidthWhereNoAllreduceDoes) {
  const LoadedScenario loaded = Llama();
  profile::PassGroup wide = Group("verify", true, 0, -1);
  wide.name_tokens = 32;
  const PassPrediction p = PredictPassGroup(wide, loaded, {});
  ASSERT_TRUE(p.ok) << p.why;
  EXPECT_EQ(p.tokens, 32);
  const PassPrediction unnamed = PredictPassGroup(Group("verify", true, 0, -1), loaded, {});
  ASSERT_TRUE(unnamed.ok) << unnamed.why;
  EXPECT_EQ(unnamed.tokens, 8);
  EXPECT_GT(p.busy_us, unnamed.busy_us);  // 32 tokens per layer cost more than 8
  profile::PassGroup both = Group("verify", false, 20, 4096 * 6);
  both.name_tokens = 32;
  EXPECT_EQ(PredictPassGroup(both, loaded, {}).tokens, 6);
}

// A graph replay with no phase name: a target forward from its allreduce pairs, one token per
// sequence a decode step; unknown allreduce size or a phase the simulator lacks: not predicted.
TEST(ProfilePasses, GraphReplaysAndUnknownPhases) {
  const LoadedScenario loaded = Llama();
  const PassPrediction decode = PredictPassGroup(Group(profile::kGraphReplayPhase, true, 64, 4096), loaded, {});
  ASSERT_TRUE(decode.ok) << decode.why;
  EXPECT_EQ(decode.kind, "decode");
  EXPECT_EQ(decode.tokens, 1);
  EXPECT_EQ(decode.layers, 32);
  const PassPrediction unknown = PredictPassGroup(Group(profile::kGraphReplayPhase, true, 64, -1), loaded, {});
  EXPECT_FALSE(unknown.ok);
  EXPECT_NE(unknown.why.find("allreduce size is unknown"), std::string::npos) << unknown.why;
  const PassPrediction prefill = PredictPassGroup(Group("prefill", false, 64, 4096 * 100), loaded, {});
  EXPECT_FALSE(prefill.ok);
  EXPECT_NE(prefill.why.find("the name map gives 'prefill' the kind 'other'"), std::string::npos) << prefill.why;
}

// Every group sorted into predicted and not; the graph target forwards become decode items that
// carry the pass's tokens, layers and measured busy time, with the scenario's model in the trace.
TEST(ProfilePasses, GraphTargetForwardsBecomeDecodeItems) {
  const LoadedScenario loaded = Llama();
  profile::ProfileImport imported;
  imported.ranks = 2;
  imported.passes = {Group(profile::kGraphReplayPhase, true, 64, 4096), Group("verify", false, 64, 4096 * 8),
                     Group("prefill", false, 64, 4096)};
  const ProfilePasses passes = PredictProfilePasses(imported, loaded);
  ASSERT_EQ(passes.predicted.size(), 2u);
  ASSERT_EQ(passes.unpredicted.size(), 1u);
  EXPECT_EQ(passes.unpredicted[0].first, &imported.passes[2]);
  ASSERT_TRUE(AddPassItems(passes, loaded, &imported).ok());
  ASSERT_EQ(imported.trace.items_size(), 1);  // the eager verify is left out
  ASSERT_EQ(imported.trace.models_size(), 1);
  const trace::Item& it = imported.trace.items(0);
  EXPECT_EQ(it.suite(), trace::SUITE_DECODE);
  EXPECT_EQ(it.decode().query_tokens(), 1);
  EXPECT_EQ(it.decode().layers_run(), 32);
  EXPECT_EQ(it.decode().tp(), 2);
  EXPECT_TRUE(it.decode().gpu_busy_only());
  EXPECT_DOUBLE_EQ(it.stats().median_us(), 1000);
  EXPECT_EQ(imported.trace.models(0).name(), loaded.setup.target.name);
}

}  // namespace
}  // namespace specsim::scenario
