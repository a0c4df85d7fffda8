#include "sim/advise/framework_rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "sim/advise/advisor.h"
#include "sim/io/framework_loader.h"
#include "sim/io/hardware_loader.h"
#include "sim/io/scenario_loader.h"
#include "sim/scenario/scenario.h"

namespace specsim::advise {
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
  c.pacing = PacingVariants(VariantList::kAdvise)[0];
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
  eager.pacing = PacingVariants(VariantList::kAdvise)[1];
  EXPECT_EQ(WhatCandidateTakes(eager, fw, pcie8).effort, Effort::kLaunchFlag);
  Candidate piecewise = With("auto");
  piecewise.pacing = PacingVariants(VariantList::kAdvise)[2];
  EXPECT_EQ(WhatCandidateTakes(piecewise, fw, pcie8).effort, Effort::kCodeChange);
  Candidate ep = With("auto");
  ep.expert_parallel = 8;
  // EP: SGLang's --ep-size runs allreduce; its all-to-all backend (what specsim prices) needs NVLink.
  const WhatItTakes ep_pcie = WhatCandidateTakes(ep, fw, pcie8);
  EXPECT_EQ(ep_pcie.effort, Effort::kCodeChange);
  EXPECT_NE(ep_pcie.Text().find("--ep-size 8"), std::string::npos) << ep_pcie.Text();
  EXPECT_NE(ep_pcie.Text().find("all-to-all backends (deepep) need NVLink between every pair"), std::string::npos)
      << ep_pcie.Text();
  const WhatItTakes ep_nvlink = WhatCandidateTakes(ep, fw, nvlink8);
  EXPECT_EQ(ep_nvlink.effort, Effort::kLaunchFlag) << ep_nvlink.Text();
  // (With NVLink everywhere SGLang runs its custom allreduce, so NCCL auto also needs it off.)
  EXPECT_EQ(ep_nvlink.launch_flags,
            (std::vector<std::string>{"--disable-custom-all-reduce", "--ep-size 8", "--moe-a2a-backend deepep"}));
  // The effort is the hardest step's.
  Candidate both = With("ring", "ll");
  both.pacing = PacingVariants(VariantList::kAdvise)[2];
  const WhatItTakes w = WhatCandidateTakes(both, fw, pcie8);
  EXPECT_EQ(w.effort, Effort::kCodeChange);
  EXPECT_EQ(w.steps.size(), 2u);
  // A framework that states no rule: a custom allreduce is a code change.
  llm::FrameworkProfile none;
  none.name = "cpp-graph";
  EXPECT_EQ(WhatCandidateTakes(With("twoshot"), none, pcie2).effort, Effort::kCodeChange);
}

// Issue 12 item 1: the NCCL environment, capture flags and EP rules are data: what a framework
// sets itself or does not pass through, which flag changes a phase's capture, and which EP backend
// selects all-to-all, are read from its profile.
// The tag simulate, sweep and --compare-algos print: only code changes are refusals (a flag, NCCL
// variables or a driver setting are what advise lists as effort, not refusals).
TEST(FrameworkRules, AllreduceRefusalNamesOnlyWhatTakesACodeChange) {
  const llm::FrameworkProfile fw = Sglang();
  const BoxFacts pcie4{4, false}, pcie2{2, false}, nvlink8{8, true};
  const std::string one_shot4 = AllreduceRefusal(With("oneshot").comm, fw, pcie4);
  EXPECT_NE(one_shot4.find("sglang would need a code change"), std::string::npos) << one_shot4;
  EXPECT_NE(one_shot4.find("at most 2"), std::string::npos) << one_shot4;
  EXPECT_EQ(AllreduceRefusal(With("oneshot").comm, fw, pcie2), "");
  EXPECT_EQ(AllreduceRefusal(With("oneshot").comm, fw, nvlink8), "");
  EXPECT_NE(AllreduceRefusal(With("twoshot").comm, fw, pcie2), "");     // one-shot only on 2 GPUs
  EXPECT_EQ(AllreduceRefusal(With("").comm, fw, pcie4), "");            // NCCL: a flag at most
  EXPECT_EQ(AllreduceRefusal(With("ring", "ll").comm, fw, pcie4), "");  // NCCL variables reach NCCL
  // A scenario's communication block read as the variant it names.
  config::Communication c;
  c.set_allreduce_algorithm("ONESHOT");
  c.set_protocol("auto");
  const AllreduceVariant v = AllreduceVariantOf(c);
  EXPECT_EQ(v.algorithm, "oneshot");
  EXPECT_EQ(v.protocol, "");
  EXPECT_TRUE(v.custom_allreduce());
  c.set_allreduce_algorithm("auto");
  EXPECT_EQ(AllreduceVariantOf(c).name, "NCCL auto");
}

TEST(FrameworkRules, NcclCaptureAndEpRulesComeFromTheProfile) {
  auto vllm = io::LoadFrameworkFile("configs/frameworks/vllm.textproto");
  ASSERT_TRUE(vllm.ok()) << vllm.status().ToString();
  const BoxFacts pcie8{8, false}, nvlink8{8, true};
  Candidate eager = With("auto");
  eager.pacing = PacingVariants(VariantList::kAdvise)[1];
  EXPECT_EQ(WhatCandidateTakes(eager, *vllm, pcie8).launch_flags, std::vector<std::string>{"--enforce-eager"});
  Candidate piecewise = With("auto");
  piecewise.pacing = PacingVariants(VariantList::kAdvise)[2];
  const WhatItTakes pw = WhatCandidateTakes(piecewise, *vllm, pcie8);
  EXPECT_EQ(pw.effort, Effort::kLaunchFlag) << pw.Text();
  EXPECT_NE(pw.Text().find("cudagraph_mode"), std::string::npos) << pw.Text();
  Candidate ep = With("auto");
  ep.expert_parallel = 8;
  const WhatItTakes ep_nvlink = WhatCandidateTakes(ep, *vllm, nvlink8);
  // Current vLLM selects its all-to-all backend by a flag (--all2all-backend, arg_utils.py @99d7eb5).
  EXPECT_EQ(ep_nvlink.effort, Effort::kLaunchFlag) << ep_nvlink.Text();
  EXPECT_EQ(ep_nvlink.launch_flags, (std::vector<std::string>{"--disable-custom-all-reduce", "--enable-expert-parallel",
                                                              "--all2all-backend deepep_low_latency"}));
  EXPECT_EQ(WhatCandidateTakes(ep, *vllm, pcie8).effort, Effort::kCodeChange);
  // NCCL variables: one the framework sets itself, or an environment it does not pass on, is a
  // code change; otherwise an environment variable.
  llm::FrameworkProfile fw = Sglang();
  EXPECT_EQ(WhatCandidateTakes(With("ring", "ll"), fw, pcie8).environment,
            (std::vector<std::string>{"NCCL_ALGO=Ring", "NCCL_PROTO=LL"}));
  fw.nccl_environment.sets.emplace_back("NCCL_PROTO", "Simple");
  const WhatItTakes blocked = WhatCandidateTakes(With("ring", "ll"), fw, pcie8);
  EXPECT_EQ(blocked.effort, Effort::kCodeChange);
  EXPECT_NE(blocked.Text().find("NCCL_PROTO (it sets NCCL_PROTO=Simple)"), std::string::npos) << blocked.Text();
  fw = Sglang();
  fw.nccl_environment.passes_user_environment = false;
  EXPECT_EQ(WhatCandidateTakes(With("ring", "ll"), fw, pcie8).effort, Effort::kCodeChange);
  EXPECT_EQ(WhatCandidateTakes(With("auto"), fw, pcie8).effort, Effort::kRunsAsIs);  // nothing to pass
  // A profile without capture flags: graphs off is a code change.
  llm::FrameworkProfile cpp = *io::LoadFrameworkFile("configs/frameworks/cpp-graph.textproto");
  EXPECT_EQ(WhatCandidateTakes(eager, cpp, pcie8).effort, Effort::kCodeChange);
}

// Issue 12 items 2 and 3: the driver's PCIe P2P mode. On the dual-socket box (driver default,
// every pair meets at a CPU) the custom allreduce's peer reads are staged through host memory,
// which the tag says; forcing BAR1 P2P is a driver setting; where the driver gives no PCIe P2P the
// framework does not run its custom allreduce even on 2 GPUs, and forcing it is a code change.
TEST(FrameworkRules, DriverP2pModeTagsAndPricing) {
  const BoxFacts dual = BoxOf("configs/hardware/rtxpro6000-8x-dual-socket.textproto", 8);
  EXPECT_NE(dual.peer_reads_not_direct.find("56 GPU pairs meet only at a CPU"), std::string::npos)
      << dual.peer_reads_not_direct;
  EXPECT_TRUE(dual.bar1_possible);
  EXPECT_FALSE(dual.no_pcie_p2p);
  EXPECT_EQ(BoxOf("configs/hardware/rtxpro6000-4x-pcie-switch.textproto", 4).peer_reads_not_direct, "");
  EXPECT_EQ(BoxOf("configs/hardware/h200-8x-nvlink.textproto", 8).peer_reads_not_direct, "");
  const llm::FrameworkProfile fw = Sglang();
  const WhatItTakes staged = WhatCandidateTakes(With("oneshot"), fw, dual);
  EXPECT_EQ(staged.effort, Effort::kCodeChange);
  EXPECT_NE(staged.Text().find("(priced through system memory: 56 GPU pairs"), std::string::npos) << staged.Text();
  Candidate bar1 = With("oneshot");
  bar1.comm.driver_p2p_mode = "bar1";
  const WhatItTakes forced = WhatCandidateTakes(bar1, fw, dual);
  EXPECT_EQ(forced.effort, Effort::kCodeChange);  // still more than 2 PCIe GPUs
  EXPECT_NE(forced.Text().find("RMPcieP2PType=1"), std::string::npos) << forced.Text();
  EXPECT_EQ(forced.priced, "");
  // Two GPUs on CPU root ports: the framework runs it as is; BAR1 is a driver setting alone.
  BoxFacts two = dual;
  two.world_size = 2;
  EXPECT_EQ(WhatCandidateTakes(With("oneshot"), fw, two).effort, Effort::kRunsAsIs);
  EXPECT_EQ(WhatCandidateTakes(bar1, fw, two).effort, Effort::kDriverSetting);
  EXPECT_STREQ(EffortName(Effort::kDriverSetting), "needs a driver or BIOS setting");
  // No PCIe P2P: not by default even on 2 GPUs; forced, its buffers must move to host memory.
  BoxFacts none{2, false};
  none.no_pcie_p2p = true;
  none.peer_reads_not_direct = "2 GPU pairs have no peer mapping (no PCIe P2P)";
  EXPECT_FALSE(CustomAllreduceByDefault(fw, none));
  const WhatItTakes host = WhatCandidateTakes(With("oneshot"), fw, none);
  EXPECT_EQ(host.effort, Effort::kCodeChange);
  EXPECT_NE(host.Text().find("mapped host memory"), std::string::npos) << host.Text();
  EXPECT_EQ(WhatCandidateTakes(With("auto"), fw, none).effort, Effort::kRunsAsIs);  // no --disable flag needed
}

// Issue 12's done-when: on every bundled scenario, advise's winner runs as is, and every listed
// configuration is walked through the framework's rules independently of WhatCandidateTakes: one
// that claims to run as is uses NCCL's own pick (custom allreduce off by the rule) or the custom
// allreduce where the rule lets it run, CUDA graphs as the profile says, no behaviour override, no
// EP; a custom allreduce on more than 2 GPUs without NVLink everywhere is tagged a code change.
TEST(FrameworkRules, AdviseOnEveryBundledScenarioRespectsTheRules) {
  int scenarios = 0, bar1_checked = 0;
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
    auto r = Advise(*base, DefaultSearchSpace(*base, loaded->setup.target, box), options, progress);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->ranked.front().takes.effort, Effort::kRunsAsIs) << r->ranked.front().candidate.Label();
    const bool custom_runs =
        fw.custom_allreduce.stated &&
        std::count(fw.custom_allreduce.world_sizes.begin(), fw.custom_allreduce.world_sizes.end(), tp) > 0 &&
        (box.full_nvlink || tp <= fw.custom_allreduce.max_world_size_without_full_nvlink);
    for (const Evaluated& e : r->ranked) {
      const Candidate& c = e.candidate;
      const bool custom = c.comm.algorithm == "oneshot" || c.comm.algorithm == "twoshot";
      if (custom && tp > 2 && !box.full_nvlink) {
        EXPECT_EQ(e.takes.effort, Effort::kCodeChange) << c.Label();
        EXPECT_NE(e.takes.Text().find("without NVLink between every pair, on at most 2"), std::string::npos);
      }
      // Peer reads the box's driver keeps off the GPU-to-GPU path: priced through host memory and
      // said so; BAR1 forced: the driver setting is named.
      if (custom && !box.peer_reads_not_direct.empty() && c.comm.driver_p2p_mode.empty())
        EXPECT_NE(e.takes.priced.find("through"), std::string::npos) << c.Label();
      if (c.comm.driver_p2p_mode == "bar1") {
        EXPECT_GE(e.takes.effort, Effort::kDriverSetting) << c.Label();
        EXPECT_NE(e.takes.Text().find("RMPcieP2PType=1"), std::string::npos) << c.Label();
        // simulate of the same overrides (communication.driver_p2p_mode=bar1) gives advise's figure.
        // (Advise's base: the scenario with options.acceptance; BAR1 options are listed only on the
        // dual-socket Kimi scenarios, which carry no histogram.)
        config::Scenario with = *base;
        *with.mutable_speculation()->mutable_acceptance_probabilities() = {options.acceptance.begin(),
                                                                           options.acceptance.end()};
        auto sim = scenario::BuildScenario(CandidateScenario(with, c), path, {}, "");
        ASSERT_TRUE(sim.ok()) << sim.status().ToString();
        auto ev = scenario::Evaluate(*sim);
        ASSERT_TRUE(ev.ok() && ev->result);
        EXPECT_DOUBLE_EQ(
            ev->result->speculative ? ev->result->speculative_tokens_per_s : ev->result->baseline_tokens_per_s,
            e.tokens_per_s)
            << c.Label();
        ++bar1_checked;
      }
      // EP as priced (all-to-all) runs only with a backend whose transport the box has.
      const bool a2a_backend =
          std::any_of(fw.expert_parallel.all_to_all_backends.begin(), fw.expert_parallel.all_to_all_backends.end(),
                      [&](const auto& b) { return !b.needs_full_nvlink || box.full_nvlink; });
      if (c.expert_parallel > 1 && !a2a_backend &&
          fw.expert_parallel.default_communication != llm::FrameworkProfile::EpCommunication::kAllToAll)
        EXPECT_EQ(e.takes.effort, Effort::kCodeChange) << c.Label();
      if (e.takes.effort != Effort::kRunsAsIs) continue;
      EXPECT_TRUE(c.comm.driver_p2p_mode.empty()) << c.Label();
      EXPECT_TRUE(e.takes.steps.empty()) << c.Label();
      const bool nccl_default = c.comm.algorithm == "auto" && c.comm.protocol.empty() && c.comm.channels == 0 &&
                                c.comm.p2p_level.empty() && !custom_runs;
      EXPECT_TRUE(nccl_default || (custom && custom_runs)) << c.Label();
      EXPECT_TRUE(c.pacing.cuda_graphs && c.pacing.CaptureChanges().empty() && !c.pacing.host_sync) << c.Label();
      EXPECT_EQ(c.expert_parallel, 1) << c.Label();
    }
    ++scenarios;
  }
  EXPECT_EQ(scenarios, 4);
  EXPECT_GT(bar1_checked, 0);  // the dual-socket scenarios list BAR1 options
}

}  // namespace
}  // namespace specsim::advise
