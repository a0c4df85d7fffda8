#include "sim/advise/advisor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "sim/advise/launch_commands.h"
#include "sim/io/framework_loader.h"
#include "sim/io/scenario_loader.h"
#include "sim/scenario/scenario.h"

namespace specsim::advise {
namespace {

config::Scenario Base() {
  auto s = io::LoadScenarioFile("configs/scenarios/kimi-k2-eagle3-rtxpro6000-8x.textproto");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

// A small space: 4 chain settings x 5 allreduce choices x graphs on/off.
SearchSpace SmallSpace(const config::Scenario& base) {
  auto loaded = scenario::BuildScenario(base, "base", {}, "");
  SearchSpace full = DefaultSearchSpace(base, loaded->setup.target, BoxFactsOf(*loaded->topology, 8, {}));
  SearchSpace s;
  for (const SpecChoice& c : full.specs)
    if (c.topk == 1 && c.num_steps <= 3) s.specs.push_back(c);
  for (const AllreduceVariant& c : full.comms)
    if (c.channels == 0 && c.p2p_level.empty()) s.comms.push_back(c);
  s.pacing = {PacingVariants(VariantList::kAdvise)[0], PacingVariants(VariantList::kAdvise)[1]};
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

// Issue 41: gaps in the units that decide. At batch 64 a family's gap is named per token of one
// sequence (its latency) and per token of the batch (the first over 64), never as a bare ms/token.
TEST(Advisor, GapsAreNamedPerSequenceAndPerBatch) {
  config::Scenario base = Base();
  base.mutable_serving()->set_batch_size(64);
  AdviseOptions options;
  options.acceptance = {0.85, 0.75, 0.65};
  std::ostringstream progress;
  auto r = Advise(base, SmallSpace(base), options, progress);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->ranked.front().batch, 64);
  int named = 0;
  for (const FamilyVerdict& f : r->families) {
    if (f.bottleneck.empty() || f.bottleneck.find("what-if") != std::string::npos) continue;
    double per_sequence = 0, per_batch = 0;
    const size_t at = f.bottleneck.find(" ms per token per sequence");
    ASSERT_NE(at, std::string::npos) << f.bottleneck;
    per_sequence = std::stod(f.bottleneck.substr(0, at).substr(f.bottleneck.substr(0, at).find_last_of(' ') + 1));
    const size_t open = f.bottleneck.find(" (", at);
    ASSERT_NE(f.bottleneck.find(" ms per token of the batch of 64)", at), std::string::npos) << f.bottleneck;
    per_batch = std::stod(f.bottleneck.substr(open + 2));
    EXPECT_NEAR(per_batch, per_sequence / 64, 1e-4 + 1e-3 * std::abs(per_sequence / 64)) << f.bottleneck;
    EXPECT_EQ(f.bottleneck.find("ms/token"), std::string::npos) << f.bottleneck;
    ++named;
  }
  EXPECT_GT(named, 0);
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
    // Gaps per token and per step, with their units.
    const bool slower =
        f.bottleneck.find(" ms per token per sequence against the winner (per step: ") != std::string::npos &&
        f.bottleneck.find("; most of it") != std::string::npos;
    // (The winner's unit: ms per cycle of a speculative winner, ms per decode step without speculation.)
    const bool harder = f.bottleneck.find(" ms per token per sequence faster than the winner (") != std::string::npos &&
                        (f.bottleneck.find(" ms per cycle of ") != std::string::npos ||
                         f.bottleneck.find(" ms per decode step vs ") != std::string::npos) &&
                        f.bottleneck.find(", but it needs ") != std::string::npos;
    EXPECT_TRUE(slower || harder) << f.family << ": " << f.bottleneck;
  }
  EXPECT_EQ(winners, 3);
  // The CUDA-graphs-off family loses on launch cost.
  for (const FamilyVerdict& f : r->families)
    if (f.family == "CUDA graphs off") EXPECT_NE(f.bottleneck.find("launch/sync"), std::string::npos) << f.bottleneck;
  // Allreduce families name the collective that changed, per call, against the winner's.
  int named = 0;
  for (const FamilyVerdict& f : r->families)
    if (f.bottleneck.find("the collective that changed: allreduce of 14336 B: ") != std::string::npos) {
      ++named;
      EXPECT_NE(f.bottleneck.find(" us per call ("), std::string::npos) << f.bottleneck;
      EXPECT_NE(f.bottleneck.find(") vs the winner's "), std::string::npos) << f.bottleneck;
    }
  EXPECT_GT(named, 0);
}

// Every pacing choice is tried on the best configuration (stage 3); the host running ahead is a
// what-if (the framework may not allow it): listed, never the winner, and its verdict says so when
// it is faster. Verify piecewise changes the scenario through the framework override.
TEST(Advisor, PacingChoicesAreTriedAndTheWhatIfNeverWins) {
  config::Scenario base = Base();
  SearchSpace space = SmallSpace(base);
  space.pacing = PacingVariants(VariantList::kAdvise);
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
    if (f.family != PacingVariants(VariantList::kAdvise)[3].family) continue;
    EXPECT_FALSE(f.bottleneck.empty());
    if (f.tokens_per_s > r->ranked.front().tokens_per_s)
      EXPECT_NE(f.bottleneck.find("what-if only"), std::string::npos) << f.bottleneck;
  }
  Candidate piecewise{
      {config::Speculation::EAGLE3, 3, 1, 4}, space.comms.front(), PacingVariants(VariantList::kAdvise)[2], 1};
  const config::Scenario s = CandidateScenario(Base(), piecewise);
  EXPECT_EQ(s.framework_overrides().capture().verify(), config::PIECEWISE);
  EXPECT_EQ(s.framework_overrides().capture().decode(), config::CAPTURE_MODE_UNSPECIFIED);
  EXPECT_TRUE(s.serving().cuda_graphs());
}

// A candidate changes the speculation shape only: its acceptance comes from the base scenario by
// llm::AcceptanceForShape, as simulate's does. With top-1 probabilities, trees take theirs through
// the expected EAGLE-2 tree: approximate (marked), ranked with the rest, and simulate of the same
// configuration gives the same tokens/s.
TEST(Advisor, TreeAcceptanceIsConvertedRankedAndAgreesWithSimulate) {
  Candidate tree{{config::Speculation::EAGLE3, 3, 2, 8},
                 {"NCCL auto", "NCCL auto", "auto", "", "", 0},
                 PacingVariants(VariantList::kAdvise)[0],
                 1};
  config::Scenario base = Base();
  {  // the shape changes, the acceptance stays the base scenario's
    const config::Scenario s = CandidateScenario(base, tree);
    EXPECT_EQ(s.speculation().num_draft_tokens(), 8);
    EXPECT_EQ(s.speculation().acceptance_probabilities().size(), base.speculation().acceptance_probabilities().size());
    EXPECT_EQ(s.speculation().accept_length_histogram().size(), base.speculation().accept_length_histogram().size());
  }
  SearchSpace space = SmallSpace(base);
  space.specs.push_back(tree.spec);
  AdviseOptions options;
  options.acceptance = {0.85, 0.75, 0.65};
  std::ostringstream progress;
  auto r = Advise(base, space, options, progress);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->ranked.front().candidate.optimistic());
  int trees = 0;
  for (const Evaluated& e : r->ranked) {
    if (!e.candidate.tree()) continue;
    ++trees;
    EXPECT_TRUE(e.candidate.acceptance_approximate) << e.candidate.Label();
    EXPECT_FALSE(e.candidate.optimistic()) << e.candidate.Label();
    EXPECT_NE(e.candidate.Label().find("~acceptance"), std::string::npos) << e.candidate.Label();
    // simulate of the same configuration: the base turned into the candidate.
    auto loaded = scenario::BuildScenario(CandidateScenario(base, e.candidate), "simulate", {}, "");
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    auto ev = scenario::Evaluate(*loaded);
    ASSERT_TRUE(ev.ok() && ev->result);
    EXPECT_DOUBLE_EQ(ev->result->speculative_tokens_per_s, e.tokens_per_s) << e.candidate.Label();
    EXPECT_TRUE(loaded->setup.speculation.acceptance_approximate);
  }
  EXPECT_GT(trees, 0);
}

// Issue 41: a standalone draft (any model that is not an EAGLE-3 head) is searched as DRAFT_MODEL
// chains, and n-gram as NGRAM chains, each priced with its own passes; their launch lines come from
// the profiles' speculation_methods (SGLang STANDALONE / NGRAM, vLLM draft_model / ngram).
TEST(Advisor, StandaloneDraftAndNgramAreSearchedAndLaunched) {
  auto load = [](const std::string& path) {
    auto s = io::LoadScenarioFile(path);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return *s;
  };
  config::Scenario draft = load("configs/scenarios/llama-3.1-8b-eagle3-rtxpro6000-4x.textproto");
  config::Speculation* sp = draft.mutable_speculation();
  sp->set_method(config::Speculation::DRAFT_MODEL);
  sp->set_draft_model("models/llama-3.2-1b.textproto");
  sp->set_num_steps(3);
  sp->set_topk(1);
  sp->set_num_draft_tokens(4);
  sp->clear_accept_length_histogram();
  sp->add_acceptance_probabilities(0.7);
  auto loaded = scenario::BuildScenario(draft, "base", {}, "");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const BoxFacts box = BoxFactsOf(*loaded->topology, 4, {});
  SearchSpace space = DefaultSearchSpace(draft, loaded->setup.target, box);
  int draft_chains = 0;
  for (const SpecChoice& c : space.specs) {
    EXPECT_NE(c.method, config::Speculation::EAGLE3) << c.Label();
    draft_chains += c.method == config::Speculation::DRAFT_MODEL && c.topk == 1;
  }
  EXPECT_GE(draft_chains, 5);
  LaunchContext ctx;
  ctx.target = loaded->setup.target;
  ctx.draft = loaded->setup.draft;
  ctx.model_path = "models/llama-3.1-8b.textproto";
  ctx.draft_path = "models/llama-3.2-1b.textproto";
  ctx.tp = 4;
  ctx.batch = 1;
  ctx.sglang = *io::LoadFrameworkFile("configs/frameworks/sglang.textproto");
  ctx.vllm = *io::LoadFrameworkFile("configs/frameworks/vllm.textproto");
  ctx.box = box;
  Candidate c{{config::Speculation::DRAFT_MODEL, 4, 1, 5},
              AllreduceVariants(VariantList::kAdvise)[0],
              PacingVariants(VariantList::kAdvise)[0],
              1};
  const std::string sglang = SglangCommand(ctx, c);
  for (const char* part :
       {"--speculative-algorithm STANDALONE", "--speculative-draft-model-path meta-llama/Llama-3.2-1B-Instruct",
        "--speculative-num-steps 4", "--speculative-num-draft-tokens 5"})
    EXPECT_NE(sglang.find(part), std::string::npos) << part << " in " << sglang;
  const std::string vllm = VllmCommand(ctx, c);
  for (const char* part : {R"("method": "draft_model")", R"("model": "meta-llama/Llama-3.2-1B-Instruct")",
                           R"("num_speculative_tokens": 4)"})
    EXPECT_NE(vllm.find(part), std::string::npos) << part << " in " << vllm;
  c.spec.topk = 2;
  c.spec.num_draft_tokens = 8;
  EXPECT_NE(VllmCommand(ctx, c).find("drafts a chain"), std::string::npos);
  // n-gram: searched from the bundled scenario, advised, launched.
  config::Scenario ngram = load("configs/scenarios/llama-3.1-8b-ngram-rtxpro6000-4x.textproto");
  auto nl = scenario::BuildScenario(ngram, "base", {}, "");
  ASSERT_TRUE(nl.ok()) << nl.status().ToString();
  SearchSpace ns = DefaultSearchSpace(ngram, nl->setup.target, box);
  EXPECT_TRUE(std::any_of(ns.specs.begin(), ns.specs.end(),
                          [](const SpecChoice& x) { return x.method == config::Speculation::NGRAM; }));
  std::ostringstream progress;
  auto r = Advise(ngram, ns, AdviseOptions{}, progress);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->ranked.front().candidate.spec.method, config::Speculation::NGRAM);  // 1.4x at half the cycles matched
  EXPECT_EQ(r->ranked.front().result.breakdown.draft_compute_ms, 0);
  Candidate n{{config::Speculation::NGRAM, 4, 1, 5},
              AllreduceVariants(VariantList::kAdvise)[0],
              PacingVariants(VariantList::kAdvise)[0],
              1};
  EXPECT_NE(SglangCommand(ctx, n).find("--speculative-algorithm NGRAM --speculative-num-draft-tokens 5"),
            std::string::npos);
  EXPECT_NE(VllmCommand(ctx, n).find(R"("method": "ngram", "num_speculative_tokens": 4)"), std::string::npos);
}

TEST(Advisor, LaunchCommandsReproduceTheChoice) {
  auto loaded = scenario::BuildScenario(Base(), "base", {}, "");
  ASSERT_TRUE(loaded.ok());
  LaunchContext ctx;
  ctx.target = loaded->setup.target;
  ctx.draft = loaded->setup.draft;
  ctx.model_path = "models/kimi-k2.textproto";
  ctx.draft_path = "models/eagle3-kimi-k2.textproto";
  ctx.tp = 8;
  ctx.batch = 4;
  ctx.kv_dtype = compute::DType::kFp8;
  ctx.sglang = *io::LoadFrameworkFile("configs/frameworks/sglang.textproto");
  ctx.vllm = *io::LoadFrameworkFile("configs/frameworks/vllm.textproto");
  ctx.box = BoxFacts{8, true};  // NVLink everywhere: both frameworks run their custom allreduce
  Candidate c{{config::Speculation::EAGLE3, 3, 1, 4},
              {"NCCL ring LL, 2 channels", "x", "ring", "ll", "sys", 2},
              PacingVariants(VariantList::kAdvise)[1],
              8};
  const std::string sglang = SglangCommand(ctx, c);
  for (const char* part :
       {"--model-path moonshotai/Kimi-K2-Instruct", "--tp-size 8", "--trust-remote-code", "--kv-cache-dtype fp8_e4m3",
        "--speculative-algorithm EAGLE3", "--speculative-draft-model-path <models/eagle3-kimi-k2.textproto>",
        "--speculative-num-steps 3", "--speculative-eagle-topk 1", "--speculative-num-draft-tokens 4", "--ep-size 8",
        "--disable-cuda-graph", "NCCL_ALGO=Ring", "NCCL_PROTO=LL", "NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2",
        "NCCL_P2P_LEVEL=SYS", "--disable-custom-all-reduce"})
    EXPECT_NE(sglang.find(part), std::string::npos) << part << " in " << sglang;
  EXPECT_EQ(sglang.find("--cuda-graph-max-bs"), std::string::npos);  // graphs off
  const std::string vllm = VllmCommand(ctx, c);
  for (const char* part :
       {"vllm serve moonshotai/Kimi-K2-Instruct", "--tensor-parallel-size 8", "--trust-remote-code",
        "--kv-cache-dtype fp8", "--max-num-seqs 4", R"("method": "eagle3")", R"("num_speculative_tokens": 3)",
        "--enable-expert-parallel", "--enforce-eager", "--disable-custom-all-reduce", "NCCL_PROTO=LL"})
    EXPECT_NE(vllm.find(part), std::string::npos) << part << " in " << vllm;
  // A tree has no vLLM flag; a custom allreduce where it does not run is a code change.
  Candidate tree{{config::Speculation::EAGLE3, 3, 4, 8},
                 {"two-shot", "x", "twoshot", "", "", 0},
                 PacingVariants(VariantList::kAdvise)[0],
                 1};
  ctx.box = BoxFacts{8, false};
  EXPECT_NE(VllmCommand(ctx, tree).find("has no vLLM flag"), std::string::npos);
  EXPECT_NE(SglangCommand(ctx, tree).find("a code change"), std::string::npos);
  EXPECT_NE(SglangCommand(ctx, tree).find("--cuda-graph-max-bs-decode 4"), std::string::npos);
}

}  // namespace
}  // namespace specsim::advise
