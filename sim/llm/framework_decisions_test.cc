#include "sim/llm/framework_decisions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace specsim::llm {
namespace {

using ::testing::HasSubstr;

// Two rules as SGLang's spec-v2 profile has them: FlashInfer for GQA caches (draft extend eager),
// Triton for MLA caches (draft extend captured).
FrameworkProfile TwoBackends() {
  FrameworkProfile f;
  f.name = "sglang";
  f.capture = {CaptureMode::kFull, CaptureMode::kFull, CaptureMode::kFull, CaptureMode::kFull};
  AttentionBackendRule gqa;
  gqa.gpu_archs = {"sm120"};
  gqa.backend = "flashinfer";
  gqa.decode_kernel = "flashinfer_decode";
  gqa.verify_kernel = "flashinfer_prefill";
  gqa.draft_extend = CaptureMode::kEager;
  gqa.source = "test";
  AttentionBackendRule mla = gqa;
  mla.mla = true;
  mla.backend = "triton";
  mla.decode_kernel = "triton_decode";
  mla.verify_kernel = "triton_extend";
  mla.draft_extend = CaptureMode::kFull;
  f.attention_backends = {gqa, mla};
  return f;
}

// TwoBackends with the GQA rule's decode and verify kernels both `kernel`, and the phases asked for
// run eagerly.
FrameworkProfile GqaKernelWithEager(const std::string& kernel, bool decode_eager, bool verify_eager) {
  FrameworkProfile f = TwoBackends();
  f.attention_backends[0].decode_kernel = f.attention_backends[0].verify_kernel = kernel;
  if (decode_eager) f.capture.decode = CaptureMode::kEager;
  if (verify_eager) f.capture.verify = CaptureMode::kEager;
  return f;
}

FrameworkScenario Sm120(bool mla) {
  FrameworkScenario s;
  s.gpu_arch = "sm120";
  s.gpu_memory_gib = 95.6;
  s.mla = mla;
  s.family = mla ? ModelFamily::kDeepseekV3 : ModelFamily::kLlama;
  s.tp = 8;
  s.batch = 1;
  s.speculative = true;
  s.num_steps = 3;
  s.topk = 1;
  s.num_draft_tokens = 4;
  return s;
}

TEST(FrameworkDecisions, TheBackendOfTheCacheKindNamesTheKernelsAndDecidesItsPhases) {
  FrameworkProfile gqa = TwoBackends();
  ApplyFrameworkDecisions(Sm120(false), {}, &gqa);
  EXPECT_EQ(gqa.attention_decode, "flashinfer_decode");
  EXPECT_EQ(gqa.attention_verify, "flashinfer_prefill");
  EXPECT_EQ(gqa.capture.draft_extend, CaptureMode::kEager);
  EXPECT_EQ(gqa.capture.verify, CaptureMode::kFull);  // the rule does not decide it

  FrameworkProfile mla = TwoBackends();
  mla.capture.draft_extend = CaptureMode::kEager;
  const std::vector<std::string> notes = ApplyFrameworkDecisions(Sm120(true), {}, &mla);
  EXPECT_EQ(mla.attention_mla_decode, "triton_decode");
  EXPECT_EQ(mla.attention_mla_verify, "triton_extend");
  EXPECT_TRUE(mla.attention_decode.empty());  // the GQA names are not the MLA cache's
  EXPECT_EQ(mla.capture.draft_extend, CaptureMode::kFull);
  ASSERT_GE(notes.size(), 2u);
  EXPECT_THAT(notes[0], HasSubstr("attention backend triton"));
  EXPECT_THAT(notes[1], HasSubstr("draft_extend capture full with triton (the profile's default: eager)"));

  // A rule naming the GQA kernels of its backend gives them to a GQA draft head of the MLA target;
  // a GQA target's own rule is untouched by them.
  FrameworkProfile draft = TwoBackends();
  draft.attention_backends[1].gqa_draft_decode_kernel = "triton_decode/16x32";
  draft.attention_backends[1].gqa_draft_verify_kernel = "triton_extend/64x128";
  const std::vector<std::string> draft_notes = ApplyFrameworkDecisions(Sm120(true), {}, &draft);
  EXPECT_EQ(draft.attention_mla_decode, "triton_decode");
  EXPECT_EQ(draft.attention_decode, "triton_decode/16x32");
  EXPECT_EQ(draft.attention_verify, "triton_extend/64x128");
  ASSERT_GE(draft_notes.size(), 2u);
  EXPECT_THAT(draft_notes[1], HasSubstr("a GQA draft head on the same backend: q = 1 triton_decode/16x32"));
  FrameworkProfile gqa_target = draft;
  gqa_target.attention_decode.clear();
  ApplyFrameworkDecisions(Sm120(false), {}, &gqa_target);
  EXPECT_EQ(gqa_target.attention_decode, "flashinfer_decode");
}

TEST(FrameworkDecisions, TheTreeWidthAndTheArchitecturePickTheRule) {
  FrameworkProfile f = TwoBackends();
  AttentionBackendRule fa3 = f.attention_backends[0];
  fa3.gpu_archs = {"sm90"};
  fa3.topk = AttentionBackendRule::Topk::kOne;
  fa3.backend = "fa3";
  f.attention_backends.insert(f.attention_backends.begin(), fa3);
  f.attention_backends[1].gpu_archs.push_back("sm90");  // flashinfer also on sm90 (topk > 1)
  EXPECT_EQ(f.BackendFor("sm90", false, 1)->backend, "fa3");
  EXPECT_EQ(f.BackendFor("sm90", false, 4)->backend, "flashinfer");
  EXPECT_EQ(f.BackendFor("sm120", false, 1)->backend, "flashinfer");
  EXPECT_EQ(f.BackendFor("sm89", false, 1), nullptr);

  FrameworkScenario s = Sm120(false);
  s.gpu_arch = "sm89";
  const std::vector<std::string> notes = ApplyFrameworkDecisions(s, {}, &f);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("no rule of the profile for sm89"));
  EXPECT_EQ(f.capture.draft_extend, CaptureMode::kFull);  // the profile's own stands
}

TEST(FrameworkDecisions, APhaseTheScenarioSetKeepsItsCapture) {
  FrameworkProfile f = TwoBackends();
  UserCapturePhases user;
  user.draft_extend = true;
  const std::vector<std::string> notes = ApplyFrameworkDecisions(Sm120(false), user, &f);
  EXPECT_EQ(f.capture.draft_extend, CaptureMode::kFull);
  EXPECT_THAT(notes.back(), HasSubstr("the scenario's full (the backend would give eager)"));
}

TEST(FrameworkDecisions, APassPastTheCapturedTokenCountRunsEagerly) {
  // vLLM's bound counts tokens: a verify batch of 256 sequences x 4 tokens = 1024 > 512.
  FrameworkProfile f = TwoBackends();
  f.attention_backends.clear();
  f.capture_bound.stated = true;
  f.capture_bound.tokens = true;
  f.capture_bound.default_max = f.capture_bound.default_max_from_tp4 = 512;
  f.capture_bound.min_gpu_memory_gb = 0;
  f.capture_bound.max_gpu_memory_gb = 1e5;
  f.capture_bound.flag = "--max-cudagraph-capture-size {n}";
  FrameworkScenario s = Sm120(false);
  s.batch = 256;
  const std::vector<std::string> notes = ApplyFrameworkDecisions(s, {}, &f);
  EXPECT_EQ(f.capture.decode, CaptureMode::kFull);   // 256 tokens
  EXPECT_EQ(f.capture.draft, CaptureMode::kFull);    // 256 x topk 1
  EXPECT_EQ(f.capture.verify, CaptureMode::kEager);  // 1024 tokens
  EXPECT_EQ(f.capture.draft_extend, CaptureMode::kEager);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_THAT(notes[0], HasSubstr("verify eager: its 1024 tokens exceed the largest captured (512; raise with "
                                  "--max-cudagraph-capture-size 1024)"));
  // The same batch counted in sequences (SGLang) stays captured.
  FrameworkProfile g = f;
  g.capture = TwoBackends().capture;
  g.capture_bound.tokens = false;
  ApplyFrameworkDecisions(s, {}, &g);
  EXPECT_EQ(g.capture.verify, CaptureMode::kFull);
}

TEST(FrameworkDecisions, TheDefaultShapeFollowsTheFamilyAndTheRequestCapIsNamed) {
  FrameworkProfile f = TwoBackends();
  f.attention_backends.clear();
  f.speculative_defaults.stated = true;
  f.speculative_defaults.shapes = {{{ModelFamily::kLlama}, 5, 4, 8}, {{}, 3, 1, 4}};
  f.speculative_defaults.max_running_requests = 48;
  f.speculative_defaults.max_running_requests_flag = "--max-running-requests {n}";
  f.speculative_defaults.source = "speculative_hook.py";
  EXPECT_EQ(f.speculative_defaults.For(ModelFamily::kLlama).num_steps, 5);
  EXPECT_EQ(f.speculative_defaults.For(ModelFamily::kDeepseekV3).num_draft_tokens, 4);
  FrameworkScenario s = Sm120(true);  // DeepSeek-V3 family at (3, 1, 4)
  s.batch = 64;
  const std::vector<std::string> notes = ApplyFrameworkDecisions(s, {}, &f);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_THAT(notes[0], HasSubstr("is (num_steps 3, topk 1, draft tokens 4); this scenario runs (3, 1, 4) ["));
  EXPECT_THAT(notes[1], HasSubstr("batch 64 needs --max-running-requests 64"));
  s.batch = 48;
  EXPECT_EQ(ApplyFrameworkDecisions(s, {}, &f).size(), 1u);
}

}  // namespace
TEST(FrameworkDecisions, AnEagerPassTakesFlashInfersPlanWithoutAGraph) {
  // FlashInfer plans a graph's replays for the ragged worst case and merges always; a pass that
  // runs eagerly is planned from its own rows: flashinfer_fa2_graph/ -> flashinfer_fa2/.
  FrameworkProfile f = GqaKernelWithEager("flashinfer_fa2_graph/sm120", /*decode_eager=*/true, /*verify_eager=*/false);
  UserCapturePhases user;
  user.decode = true;
  const std::vector<std::string> notes = ApplyFrameworkDecisions(Sm120(false), user, &f);
  EXPECT_EQ(f.attention_decode, "flashinfer_fa2/sm120");
  EXPECT_EQ(f.attention_verify, "flashinfer_fa2_graph/sm120");  // verify stays captured
  EXPECT_THAT(notes.back(), HasSubstr("decode attention flashinfer_fa2/sm120: the pass runs eagerly"));
  // Other kernels' names are left alone.
  FrameworkProfile triton = TwoBackends();
  triton.capture.decode = CaptureMode::kEager;
  ApplyFrameworkDecisions(Sm120(false), user, &triton);
  EXPECT_EQ(triton.attention_decode, "flashinfer_decode");
  // FlashAttention-3's graph names likewise (vLLM's split cap and SGLang's capture-width heuristic
  // hold only in a graph): vllm_fa3_graph/ -> vllm_fa3/ for the verify that runs eagerly.
  FrameworkProfile fa3 = GqaKernelWithEager("vllm_fa3_graph/sm90", /*decode_eager=*/false, /*verify_eager=*/true);
  UserCapturePhases verify_user;
  verify_user.verify = true;
  const std::vector<std::string> fa3_notes = ApplyFrameworkDecisions(Sm120(false), verify_user, &fa3);
  EXPECT_EQ(fa3.attention_decode, "vllm_fa3_graph/sm90");
  EXPECT_EQ(fa3.attention_verify, "vllm_fa3/sm90");
  EXPECT_THAT(fa3_notes.back(), HasSubstr("verify attention vllm_fa3/sm90: the pass runs eagerly"));
}

}  // namespace specsim::llm
