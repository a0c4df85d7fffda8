#include "sim/tools/advisor.h"

#include <gtest/gtest.h>

#include <set>

#include <sstream>

#include "sim/io/scenario_loader.h"
#include "sim/tools/advise_command.h"
#include "sim/scenario/scenario.h"

namespace specsim::tools {
namespace {

config::Scenario Base() {
  auto s = io::LoadScenarioFile("configs/scenarios/kimi-k2-eagle3-rtxpro6000-8x.textproto");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

// A small space: 4 chain settings x 5 allreduce choices x graphs on/off.
SearchSpace SmallSpace(const config::Scenario& base) {
  auto loaded = scenario::BuildScenario(base, "base", {}, "");
  SearchSpace full = DefaultSearchSpace(base, loaded->setup.target);
  SearchSpace s;
  for (const SpecChoice& c : full.specs)
    if (c.topk == 1 && c.num_steps <= 3) s.specs.push_back(c);
  for (const CommChoice& c : full.comms)
    if (c.channels == 0 && c.p2p_level.empty()) s.comms.push_back(c);
  s.pacing = {DefaultPacingChoices()[0], DefaultPacingChoices()[1]};
  s.expert_parallel = {1};
  return s;
}

TEST(Advisor, PrunedSearchFindsTheExhaustiveOptimum) {
  config::Scenario base = Base();
  SearchSpace space = SmallSpace(base);
  ASSERT_EQ(space.specs.size(), 4u);  // off + 1/1/2, 2/1/3, 3/1/4
  AdviseOptions options;
  options.acceptance = {0.85, 0.75, 0.65};
  std::ostringstream progress;
  auto pruned = Advise(base, space, options, progress);
  options.exhaustive = true;
  auto brute = Advise(base, space, options, progress);
  ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
  ASSERT_TRUE(brute.ok());
  EXPECT_EQ(brute->evaluated, static_cast<int>(space.size()));
  EXPECT_LT(pruned->evaluated, brute->evaluated);
  EXPECT_EQ(pruned->ranked.front().candidate.Label(), brute->ranked.front().candidate.Label());
  EXPECT_DOUBLE_EQ(pruned->ranked.front().tokens_per_s, brute->ranked.front().tokens_per_s);
}

TEST(Advisor, EveryFamilyNamesItsBottleneck) {
  config::Scenario base = Base();
  AdviseOptions options;
  options.acceptance = {0.85, 0.75, 0.65};
  std::ostringstream progress;
  auto r = Advise(base, SmallSpace(base), options, progress);
  ASSERT_TRUE(r.ok());
  int winners = 0;
  for (const FamilyVerdict& f : r->families) {
    if (f.bottleneck.empty()) {
      ++winners;  // the winner's own families: its speculation, allreduce and pacing families
      continue;
    }
    // Slower, with the cost component that sinks it; or faster but harder to run (framework_rules.h),
    // with what it takes.
    const bool slower = f.bottleneck.find("slower than the winner; most of it") != std::string::npos;
    const bool harder = f.bottleneck.find("faster than the winner, but it needs ") != std::string::npos;
    EXPECT_TRUE(slower || harder) << f.family << ": " << f.bottleneck;
  }
  EXPECT_EQ(winners, 3);
  // The CUDA-graphs-off family loses on launch cost.
  for (const FamilyVerdict& f : r->families)
    if (f.family == "CUDA graphs off") EXPECT_NE(f.bottleneck.find("launch/sync"), std::string::npos) << f.bottleneck;
}

// Every pacing choice is tried on the best configuration (stage 3); the host running ahead is a
// what-if (the framework may not allow it): listed, never the winner, and its verdict says so when
// it is faster. Verify piecewise changes the scenario through the framework override.
TEST(Advisor, PacingChoicesAreTriedAndTheWhatIfNeverWins) {
  config::Scenario base = Base();
  SearchSpace space = SmallSpace(base);
  space.pacing = DefaultPacingChoices();
  ASSERT_EQ(space.pacing.size(), 4u);
  AdviseOptions options;
  options.acceptance = {0.85, 0.75, 0.65};
  std::ostringstream progress;
  auto r = Advise(base, space, options, progress);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->ranked.front().candidate.pacing.what_if);
  std::set<std::string> tried;
  for (const Evaluated& e : r->ranked) tried.insert(e.candidate.pacing.name);
  EXPECT_EQ(tried.size(), 4u);
  for (const FamilyVerdict& f : r->families) {
    if (f.family != DefaultPacingChoices()[3].family) continue;
    EXPECT_FALSE(f.bottleneck.empty());
    if (f.tokens_per_s > r->ranked.front().tokens_per_s)
      EXPECT_NE(f.bottleneck.find("what-if only"), std::string::npos) << f.bottleneck;
  }
  Candidate piecewise{{config::Speculation::EAGLE3, 3, 1, 4}, space.comms.front(), DefaultPacingChoices()[2], 1};
  auto o = CandidateOverrides(piecewise, {0.5}, 8);
  EXPECT_NE(std::find(o.begin(), o.end(), "framework_overrides.capture.verify=PIECEWISE"), o.end());
}

TEST(Advisor, TreeAcceptanceIsAnUpperBoundAndNeverTheWinner) {
  Candidate tree{{config::Speculation::EAGLE3, 3, 2, 8}, {"NCCL auto", "NCCL auto", "auto", "", "", 0}, DefaultPacingChoices()[0], 1};
  EXPECT_TRUE(tree.optimistic());
  auto o = CandidateOverrides(tree, {0.5}, 8);
  // 1 - (1 - 0.5)^2 = 0.75 at every depth (num_draft_tokens - 1 = 7 >= num_steps).
  EXPECT_NE(std::find(o.begin(), o.end(), "speculation.acceptance_probabilities=0.750000,0.750000,0.750000"), o.end());
  Candidate short_tree{{config::Speculation::EAGLE3, 4, 4, 4}, tree.comm, DefaultPacingChoices()[0], 1};
  auto s = CandidateOverrides(short_tree, {0.5}, 8);
  // Only num_draft_tokens - 1 = 3 positions can be accepted: the 4th gets 0.
  EXPECT_NE(std::find(s.begin(), s.end(), "speculation.acceptance_probabilities=0.937500,0.937500,0.937500,0.000000"), s.end());
}

TEST(Advisor, SglangCommandReproducesTheChoice) {
  config::Scenario base = Base();
  Candidate c{{config::Speculation::EAGLE3, 3, 1, 4}, {"NCCL ring LL, 2 channels", "x", "ring", "ll", "sys", 2}, DefaultPacingChoices()[1], 8};
  std::string cmd = SglangCommand(base, c, /*custom_allreduce_by_default=*/true);
  for (const char* part : {"--tp 8", "--speculative-algorithm EAGLE3", "--speculative-num-steps 3", "--speculative-eagle-topk 1",
                           "--speculative-num-draft-tokens 4", "--ep-size 8", "--disable-cuda-graph", "NCCL_ALGO=Ring",
                           "NCCL_PROTO=LL", "NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2", "NCCL_P2P_LEVEL=SYS",
                           "--disable-custom-all-reduce"})
    EXPECT_NE(cmd.find(part), std::string::npos) << part << " in " << cmd;
}

TEST(AdviseCommand, NeedsAcceptanceWhenSpeculationIsPossible) {
  AdviseFlags f;
  f.hardware = "configs/hardware/rtxpro6000-8x-dual-socket.textproto";
  f.model = "models/kimi-k2.textproto";
  f.draft = "models/eagle3-kimi-k2.textproto";
  f.expert_weight_dtype = "INT4";
  f.progress = false;
  std::ostringstream out, err;
  EXPECT_EQ(RunAdvise(f, out, err), 2);
  EXPECT_NE(err.str().find("--acceptance"), std::string::npos);
}

// Issue 15, item 8: --batch 0, --context -5 and --tp 0 given on the command line were ignored
// (taken as "not given"); they are errors naming the flag.
TEST(AdviseCommand, GivenFlagsOutOfRangeAreErrors) {
  AdviseFlags f;
  f.hardware = "configs/hardware/h200-2x-nvlink.textproto";
  f.model = "models/llama-3.1-8b.textproto";
  f.progress = false;
  for (auto [field, text] : std::vector<std::pair<int, std::string>>{{0, "--batch 0: must be >= 1"},
                                                                     {1, "--context -5: must be >= 0"},
                                                                     {2, "--tp 0: must be >= 1"}}) {
    AdviseFlags g = f;
    if (field == 0) g.batch = 0, g.batch_given = true;
    if (field == 1) g.context = -5, g.context_given = true;
    if (field == 2) g.tp = 0, g.tp_given = true;
    std::ostringstream out, err;
    EXPECT_EQ(RunAdvise(g, out, err), 2) << text;
    EXPECT_NE(err.str().find(text), std::string::npos) << err.str();
  }
}

}  // namespace
}  // namespace specsim::tools
