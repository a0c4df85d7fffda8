// What a serving framework decides for one scenario, from the rules its profile read in its source
// (framework.proto: attention_backends, capture_bound, speculative_defaults): which attention
// backend it picks for the GPU architecture, the target's cache kind and the tree width; the
// capture of each phase that backend decides; which passes are too large for the captured graphs
// and run eagerly; the speculative shape and request cap it takes when the user gives none.
//
// Order: the backend's capture first, then the capture bound (a pass past it runs eagerly whatever
// its mode); a phase the scenario set itself (framework_overrides.capture, or serving.cuda_graphs
// false) is left as the scenario set it. The profile's own capture and kernels stand where no
// backend rule matches, and the notes say so.
#pragma once

#include <string>
#include <vector>

#include "sim/llm/framework_profile.h"
#include "sim/llm/model.h"

namespace specsim::llm {

// The scenario facts the framework's decisions depend on.
struct FrameworkScenario {
  std::string gpu_arch;  // "sm90", "sm120" (GpuSpec::arch of the first GPU)
  double gpu_memory_gib = 0;
  bool mla = false;  // the target's cache is MLA's latent cache
  ModelFamily family = ModelFamily::kLlama;
  int tp = 1;
  int batch = 1;
  bool speculative = false;
  int num_steps = 0, topk = 1, num_draft_tokens = 1;  // the speculative shape (speculative only)
};

// Phases whose capture the scenario set itself (left as they are).
struct UserCapturePhases {
  bool decode = false, draft = false, verify = false, draft_extend = false;
  static UserCapturePhases All() { return {true, true, true, true}; }
};

// The tokens one pass of `pass` holds per batch: decode and draft steps 1 per sequence (a draft
// step of a tree of width topk: topk), verify num_draft_tokens, draft extend num_draft_tokens (the
// padded batch of verified tokens).
int PassTokensPerSequence(LoopPass pass, const FrameworkScenario& s);

// Applies the profile's decisions for `s` to `profile` in place (capture modes, attention kernel
// names) and returns one line per decision, for reports: the backend and where it was read, each
// phase it changed, each pass past the capture bound, the default shape and the request cap.
std::vector<std::string> ApplyFrameworkDecisions(const FrameworkScenario& s, const UserCapturePhases& user,
                                                 FrameworkProfile* profile);

}  // namespace specsim::llm
