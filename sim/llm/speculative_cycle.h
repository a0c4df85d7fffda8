// The arithmetic of one speculative cycle, in one place (docs/reference/speculative-decoding.md; SGLang's EAGLE
// loop): the draft proposes num_steps tokens per sequence (topk candidates per step), the target
// verifies num_draft_tokens tokens per sequence in one pass, the first of which is the root (the
// last accepted token), so at most num_draft_tokens - 1 drafted tokens can be checked, and at
// most num_steps were drafted along one path. Every accepted run ends with one token the target
// produces itself (the bonus token).
//
// Used by the decode loop (decode_simulator.cc), the advisor's candidates (sim/advise/advisor.cc)
// and simulate's cycle trace; the acceptance model (acceptance.h) draws the accepted count.
#pragma once

#include <cstdint>

namespace specsim::llm {

// The most draft tokens one cycle can accept: min(num_steps, num_draft_tokens - 1).
int MaxAcceptedPerCycle(int num_steps, int num_draft_tokens);

// The entries of an accept-length histogram measured with `num_steps` draft steps: index i counts
// the cycles that accepted i draft tokens, i = 0..num_steps. 64-bit, so any 32-bit count is safe.
inline int64_t AcceptLengthHistogramSize(int64_t num_steps) { return num_steps + 1; }

// Tokens a cycle yields per sequence: the accepted draft tokens plus the bonus token.
inline int TokensPerCycle(int accepted) { return accepted + 1; }

// Generated tokens per second of `batch` sequences at `tokens_per_cycle` (tau) tokens per sequence
// every `cycle_ms`: batch x tau / cycle time.
double SpeculativeTokensPerSecond(int batch, double tokens_per_cycle, double cycle_ms);

}  // namespace specsim::llm
