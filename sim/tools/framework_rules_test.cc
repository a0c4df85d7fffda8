#include "sim/tools/framework_rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "sim/io/framework_loader.h"
#include "sim/io/hardware_loader.h"
#include "sim/io/scenario_loader.h"
#include "sim/scenario/scenario.h"
#include "sim/tools/advisor.h"

namespace specsim::tools {
namespace {

llm::FrameworkProfile Sglang() {
  auto f = io::LoadFrameworkFile("configs/frameworks/sglang.textproto");
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return *f;
}

BoxFacts BoxOf(const std::string& hardware, int world_size) {
  auto t = io::LoadHardwareFile(hardware);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return BoxFactsOf(*t, world_size, {});
}

Candidate With(std::string algorithm, std::string protocol = "", int channels = 0, std::string level = "") {
  Candidate c;
  c.spec = {config::Speculation::EAGLE3, 3, 1, 4};
  c.comm = {"x", "x", std::move(algorithm), std::move(protocol), std::move(level), channels};
  c.pacing = DefaultPacingChoices()[0];
  return c;
}

// The bundled SGLang and vLLM profiles carry vLLM's gate (docs/reference/allreduce-algorithms.md):
// world sizes 2, 4, 6, 8, at most 2 GPUs without NVLink between every pair.
TEST(FrameworkRules, CustomAllreduceGateOfTheBundledProfiles) {
  for (const char* path : {"configs/frameworks/sglang.textproto", "configs/frameworks/vllm.textproto"}) {
    auto f = io::LoadFrameworkFile(path);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    const auto& rule = f->custom_allreduce;
    ASSERT_TRUE(rule.stated) << path;
    EXPECT_TRUE(rule.RunsOn(2, false)) << path;
    EXPECT_FALSE(rule.RunsOn(4, false)) << path;
    EXPECT_FALSE(rule.RunsOn(8, false)) << path;
    EXPECT_TRUE(rule.RunsOn(8, true)) << path;
    EXPECT_FALSE(rule.RunsOn(3, true)) << path;  // not a supported world size
    EXPECT_FALSE(rule.RunsOn(16, true)) << path;
    EXPECT_EQ(rule.max_bytes, 8 << 20) << path;
  }
  auto cpp = io::LoadFrameworkFile("configs/frameworks/cpp-graph.textproto");
  ASSERT_TRUE(cpp.ok());
  EXPECT_FALSE(cpp->custom_allreduce.stated);
  EXPECT_FALSE(cpp->custom_allreduce.RunsOn(2, true));
}

TEST(FrameworkRules, BoxFactsReadNvLinkBetweenEveryPair) {
  EXPECT_TRUE(BoxOf("configs/hardware/h200-2x-nvlink.textproto", 2).full_nvlink);
  EXPECT_TRUE(BoxOf("configs/hardware/h200-8x-nvlink.textproto", 8).full_nvlink);
  EXPECT_FALSE(BoxOf("configs/hardware/rtxpro6000-8x-dual-socket.textproto", 8).full_nvlink);
  EXPECT_FALSE(BoxOf("configs/hardware/rtxpro6000-8x-pcie-switch.textproto", 8).full_nvlink);
  EXPECT_EQ(BoxOf("configs/hardware/rtxpro6000-4x-pcie-switch.textproto", 4).world_size, 4);
}

TEST(FrameworkRules, WhatEachChoiceTakes) {
  const llm::FrameworkProfile fw = Sglang();
  const BoxFacts pcie8{8, false}, pcie2{2, false}, nvlink8{8, true};
  // Custom allreduce: on 8 PCIe GPUs a code change that names the rule; on 2 GPUs or with NVLink
  // everywhere it runs as is, and NCCL then needs the flag that turns it off.
  for (const char* algo : {"oneshot", "twoshot"}) {
    const WhatItTakes w = WhatCandidateTakes(With(algo), fw, pcie8);
    EXPECT_EQ(w.effort, Effort::kCodeChange) << algo;
    EXPECT_NE(w.Text().find("at most 2"), std::string::npos) << w.Text();
    // On 2 GPUs the kernel runs one-shot only.
    EXPECT_EQ(WhatCandidateTakes(With(algo), fw, pcie2).effort,
              std::string(algo) == "oneshot" ? Effort::kRunsAsIs : Effort::kCodeChange)
        << algo;
    EXPECT_EQ(WhatCandidateTakes(With(algo), fw, nvlink8).effort, Effort::kRunsAsIs) << algo;
  }
  EXPECT_EQ(WhatCandidateTakes(With("auto"), fw, pcie8).effort, Effort::kRunsAsIs);
  const WhatItTakes nccl2 = WhatCandidateTakes(With("auto"), fw, pcie2);
  EXPECT_EQ(nccl2.effort, Effort::kLaunchFlag);
  EXPECT_NE(nccl2.Text().find("--disable-custom-all-reduce"), std::string::npos);
  // NCCL variables.
  const WhatItTakes ll = WhatCandidateTakes(With("ring", "ll", 4, "sys"), fw, pcie8);
  EXPECT_EQ(ll.effort, Effort::kEnvironment);
  EXPECT_NE(ll.Text().find("NCCL_ALGO=Ring NCCL_PROTO=LL NCCL_MIN_NCHANNELS=4 NCCL_MAX_NCHANNELS=4 NCCL_P2P_LEVEL=SYS"),
            std::string::npos)
      << ll.Text();
  // Pacing and EP.
  Candidate eager = With("auto");
  eager.pacing = DefaultPacingChoices()[1];
  EXPECT_EQ(WhatCandidateTakes(eager, fw, pcie8).effort, Effort::kLaunchFlag);
  Candidate piecewise = With("auto");
  piecewise.pacing = DefaultPacingChoices()[2];
  EXPECT_EQ(WhatCandidateTakes(piecewise, fw, pcie8).effort, Effort::kCodeChange);
  Candidate ep = With("auto");
  ep.expert_parallel = 8;
  EXPECT_EQ(WhatCandidateTakes(ep, fw, pcie8).effort, Effort::kLaunchFlag);
  // The effort is the hardest step's.
  Candidate both = With("ring", "ll");
  both.pacing = DefaultPacingChoices()[2];
  const WhatItTakes w = WhatCandidateTakes(both, fw, pcie8);
  EXPECT_EQ(w.effort, Effort::kCodeChange);
  EXPECT_EQ(w.steps.size(), 2u);
  // A framework that states no rule: a custom allreduce is a code change.
  llm::FrameworkProfile none;
  none.name = "cpp-graph";
  EXPECT_EQ(WhatCandidateTakes(With("twoshot"), none, pcie2).effort, Effort::kCodeChange);
}

// Issue 12's done-when: on every bundled scenario, advise's winner runs as is, and every listed
// configuration is walked through the framework's rules independently of WhatCandidateTakes: one
// that claims to run as is uses NCCL's own pick (custom allreduce off by the rule) or the custom
// allreduce where the rule lets it run, CUDA graphs as the profile says, no behaviour override, no
// EP; a custom allreduce on more than 2 GPUs without NVLink everywhere is tagged a code change.
TEST(FrameworkRules, AdviseOnEveryBundledScenarioRespectsTheRules) {
  int scenarios = 0;
  for (const char* path : {"configs/scenarios/kimi-k2-eagle3-rtxpro6000-8x.textproto",
                           "configs/scenarios/kimi-k2-mtp-rtxpro6000-8x.textproto",
                           "configs/scenarios/llama-3.1-8b-eagle3-rtxpro6000-4x.textproto",
                           "configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto"}) {
    SCOPED_TRACE(path);
    auto base = io::LoadScenarioFile(path);
    ASSERT_TRUE(base.ok()) << base.status().ToString();
    auto loaded = scenario::BuildScenario(*base, path, {}, "");
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    const llm::FrameworkProfile fw = loaded->setup.framework.value_or(llm::FrameworkProfile{});
    const int tp = loaded->setup.parallel.tp;
    const BoxFacts box = BoxFactsOf(*loaded->topology, tp, loaded->setup.gpus);
    AdviseOptions options;
    options.acceptance = {0.8, 0.7, 0.6};
    options.threads = 2;
    std::ostringstream progress;
    auto r = Advise(*base, DefaultSearchSpace(*base, loaded->setup.target), options, progress);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->ranked.front().takes.effort, Effort::kRunsAsIs) << r->ranked.front().candidate.Label();
    const bool custom_runs =
        fw.custom_allreduce.stated &&
        std::count(fw.custom_allreduce.world_sizes.begin(), fw.custom_allreduce.world_sizes.end(), tp) > 0 &&
        (box.full_nvlink || tp <= fw.custom_allreduce.max_world_size_without_full_nvlink);
    for (const Evaluated& e : r->ranked) {
      const Candidate& c = e.candidate;
      const bool custom = c.comm.algorithm == "oneshot" || c.comm.algorithm == "twoshot";
      if (custom && tp > 2 && !box.full_nvlink) EXPECT_EQ(e.takes.effort, Effort::kCodeChange) << c.Label();
      if (e.takes.effort != Effort::kRunsAsIs) continue;
      const bool nccl_default = c.comm.algorithm == "auto" && c.comm.protocol.empty() && c.comm.channels == 0 &&
                                c.comm.p2p_level.empty() && !custom_runs;
      EXPECT_TRUE(nccl_default || (custom && custom_runs)) << c.Label();
      EXPECT_TRUE(c.pacing.cuda_graphs && c.pacing.overrides.empty()) << c.Label();
      EXPECT_EQ(c.expert_parallel, 1) << c.Label();
    }
    ++scenarios;
  }
  EXPECT_EQ(scenarios, 4);
}

}  // namespace
}  // namespace specsim::tools
