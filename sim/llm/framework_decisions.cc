#include "sim/llm/framework_decisions.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string_view>

namespace specsim::llm {

namespace {

CaptureMode& PhaseOf(PhaseCapture& c, LoopPass pass) {
  switch (pass) {
    case LoopPass::kDecode: return c.decode;
    case LoopPass::kVerify: return c.verify;
    case LoopPass::kDraftExtend: return c.draft_extend;
    case LoopPass::kDraft: break;
  }
  return c.draft;
}

bool UserSet(const UserCapturePhases& u, LoopPass pass) {
  switch (pass) {
    case LoopPass::kDecode: return u.decode;
    case LoopPass::kVerify: return u.verify;
    case LoopPass::kDraftExtend: return u.draft_extend;
    case LoopPass::kDraft: break;
  }
  return u.draft;
}

const std::optional<CaptureMode>& RuleCapture(const AttentionBackendRule& r, LoopPass pass) {
  switch (pass) {
    case LoopPass::kDecode: return r.decode;
    case LoopPass::kVerify: return r.verify;
    case LoopPass::kDraftExtend: return r.draft_extend;
    case LoopPass::kDraft: break;
  }
  return r.draft;
}

constexpr LoopPass kPasses[] = {LoopPass::kDecode, LoopPass::kDraft, LoopPass::kVerify, LoopPass::kDraftExtend};

// The passes the scenario runs: decode always (the baseline), the others under speculation.
bool Runs(LoopPass pass, const FrameworkScenario& s) { return pass == LoopPass::kDecode || s.speculative; }

// FlashInfer plans differently without a graph (flashinfer_fa2_graph/ -> flashinfer_fa2/: the Q
// tile from the call's rows, no merge for one chunk), and FlashAttention-3's splits follow the call
// without one (vllm_fa3_graph/ -> vllm_fa3/, sglang_fa3_graph/ -> sglang_fa3/): the target's passes
// that run eagerly take the eager plan (decode for q = 1, verify for q >= 2).
void TakeEagerPlans(const FrameworkScenario& s, FrameworkProfile* profile, std::vector<std::string>* notes) {
  FrameworkProfile& f = *profile;
  for (LoopPass pass : {LoopPass::kDecode, LoopPass::kVerify}) {
    if (!Runs(pass, s) || PhaseOf(f.capture, pass) != CaptureMode::kEager) continue;
    std::string& name = pass == LoopPass::kDecode ? (s.mla ? f.attention_mla_decode : f.attention_decode)
                                                  : (s.mla ? f.attention_mla_verify : f.attention_verify);
    static constexpr std::string_view kGraph = "_graph/";
    const size_t at = name.find(kGraph);
    if (at == std::string::npos) continue;
    const std::string eager = name.substr(0, at) + "/" + name.substr(at + kGraph.size());
    notes->push_back(fmt::format("  {} attention {}: the pass runs eagerly, its kernel is planned without a graph",
                                 LoopPassName(pass), eager));
    name = eager;
  }
}

}  // namespace

int PassTokensPerSequence(LoopPass pass, const FrameworkScenario& s) {
  switch (pass) {
    case LoopPass::kDecode: return 1;
    case LoopPass::kDraft: return std::max(1, s.topk);
    case LoopPass::kVerify:
    case LoopPass::kDraftExtend: return std::max(1, s.num_draft_tokens);
  }
  return 1;
}

std::vector<std::string> ApplyFrameworkDecisions(const FrameworkScenario& s, const UserCapturePhases& user,
                                                 FrameworkProfile* profile) {
  std::vector<std::string> notes;
  FrameworkProfile& f = *profile;
  const int topk = s.speculative ? std::max(1, s.topk) : 1;
  const char* cache = s.mla ? "MLA" : "GQA";
  if (!f.attention_backends.empty()) {
    const AttentionBackendRule* rule = f.BackendFor(s.gpu_arch, s.mla, topk);
    if (rule == nullptr) {
      notes.push_back(
          fmt::format("attention backend: no rule of the profile for {} with a {} cache at topk {}: its "
                      "own kernels and capture stand",
                      s.gpu_arch, cache, topk));
    } else {
      std::string& decode = s.mla ? f.attention_mla_decode : f.attention_decode;
      std::string& verify = s.mla ? f.attention_mla_verify : f.attention_verify;
      decode = rule->decode_kernel;
      verify = rule->verify_kernel;
      notes.push_back(fmt::format("attention backend {} ({}, {} cache, topk {}): q = 1 {}, q >= 2 {} [{}]",
                                  rule->backend, s.gpu_arch, cache, topk, rule->decode_kernel, rule->verify_kernel,
                                  rule->source));
      if (s.mla && !rule->gqa_draft_decode_kernel.empty()) {
        f.attention_decode = rule->gqa_draft_decode_kernel;
        f.attention_verify = rule->gqa_draft_verify_kernel;
        notes.push_back(fmt::format("  a GQA draft head on the same backend: q = 1 {}, q >= 2 {}",
                                    rule->gqa_draft_decode_kernel, rule->gqa_draft_verify_kernel));
      }
      for (LoopPass pass : kPasses) {
        const std::optional<CaptureMode>& mode = RuleCapture(*rule, pass);
        if (!mode || !Runs(pass, s)) continue;
        if (UserSet(user, pass)) {
          notes.push_back(fmt::format("  {} capture: the scenario's {} (the backend would give {})", LoopPassName(pass),
                                      CaptureModeName(PhaseOf(f.capture, pass)), CaptureModeName(*mode)));
          continue;
        }
        if (PhaseOf(f.capture, pass) != *mode)
          notes.push_back(fmt::format("  {} capture {} with {} (the profile's default: {})", LoopPassName(pass),
                                      CaptureModeName(*mode), rule->backend,
                                      CaptureModeName(PhaseOf(f.capture, pass))));
        PhaseOf(f.capture, pass) = *mode;
      }
    }
  }
  if (f.capture_bound.stated) {
    const auto& b = f.capture_bound;
    const int bound = b.MaxFor(s.tp);
    const bool memory_known = s.gpu_memory_gib >= b.min_gpu_memory_gb && s.gpu_memory_gib < b.max_gpu_memory_gb;
    for (LoopPass pass : kPasses) {
      if (!Runs(pass, s) || UserSet(user, pass) || PhaseOf(f.capture, pass) == CaptureMode::kEager) continue;
      const int size = b.tokens ? s.batch * PassTokensPerSequence(pass, s) : s.batch;
      if (size <= bound) continue;
      notes.push_back(fmt::format(
          "  {} eager: its {} {} exceed the largest captured ({}{}; raise with {}) [{}]", LoopPassName(pass), size,
          b.tokens ? "tokens" : "sequences", bound,
          memory_known ? ""
                       : fmt::format(", the default for {:.0f}-{:.0f} GiB GPUs, assumed for this one's {:.0f}",
                                     b.min_gpu_memory_gb, b.max_gpu_memory_gb, s.gpu_memory_gib),
          b.flag.empty() ? "no flag known" : WithNumber(b.flag, size), b.source));
      PhaseOf(f.capture, pass) = CaptureMode::kEager;
    }
  }
  TakeEagerPlans(s, &f, &notes);
  if (s.speculative && f.speculative_defaults.stated) {
    const auto& d = f.speculative_defaults;
    const FrameworkProfile::SpeculativeDefaults::Shape& shape = d.For(s.family);
    const bool same =
        shape.num_steps == s.num_steps && shape.topk == s.topk && shape.num_draft_tokens == s.num_draft_tokens;
    notes.push_back(
        fmt::format("speculative shape: {} default for {} is (num_steps {}, topk {}, draft tokens {}); "
                    "this scenario runs ({}, {}, {}){} [{}]",
                    f.name, ModelFamilyName(s.family), shape.num_steps, shape.topk, shape.num_draft_tokens, s.num_steps,
                    s.topk, s.num_draft_tokens, same ? "" : ": the launch line must give it", d.source));
    if (d.max_running_requests > 0 && s.batch > d.max_running_requests)
      notes.push_back(fmt::format(
          "request cap: {} runs at most {} requests under speculation unless told: batch {} "
          "needs {} [{}]",
          f.name, d.max_running_requests, s.batch, WithNumber(d.max_running_requests_flag, s.batch), d.source));
  }
  return notes;
}

}  // namespace specsim::llm
