#include "sim/llm/speculative_cycle.h"

#include <algorithm>
#include <cmath>

#include "sim/core/check.h"

namespace specsim::llm {

int MaxAcceptedPerCycle(int num_steps, int num_draft_tokens) {
  SPECSIM_CHECK_GE(num_steps, 0);
  SPECSIM_CHECK_GE(num_draft_tokens, 1);
  return std::min(num_steps, num_draft_tokens - 1);
}

double SpeculativeTokensPerSecond(int batch, double tokens_per_cycle, double cycle_ms) {
  SPECSIM_CHECK_GT(cycle_ms, 0);
  return batch * tokens_per_cycle / (cycle_ms * 1e-3);
}

}  // namespace specsim::llm
