// N-gram / prompt-lookup speculation (SGLang NGRAM, vLLM ngram): the host matches each sequence's
// recent tokens against its own earlier tokens (and SGLang's trie of recent requests) and proposes
// the continuation as drafts; no draft model runs. A cycle is: the host's matching, one verify
// pass, the read-back (docs/reference/serving-frameworks.md, "Speculation methods").
//
// What a cycle accepts: with probability m (the workload's match probability, per sequence per
// cycle) drafts are proposed and accepted as the proposed-draft acceptance A says; without a match
// nothing is accepted (the bonus token only):
//   P(accepted = 0) = (1 - m) + m A_0,   P(accepted = a) = m A_a (a >= 1),   tau = 1 + m E[A].
// The verify width:
//   SGLang pads: every sequence verifies num_draft_tokens every cycle (sgl-project/sglang
//   python/sglang/srt/speculative/ngram_worker.py @574f6d7 _prepare_draft_tokens asserts it;
//   cpp_ngram/result.cpp @0657507 fillResult zero-pads the tree);
//   vLLM does not: an unmatched sequence schedules one token (vllm-project/vllm
//   vllm/v1/spec_decode/ngram_proposer.py @adce4e9: no drafts without a match;
//   vllm/v1/core/sched/scheduler.py @00024d3: num_tokens_with_spec). A cycle of batch b is ragged:
//   each sequence matches on its own with probability m (SampleNgramRaggedCycle: the matched count
//   M ~ Binomial(b, m), each matched sequence's accepted count drawn from A), M sequences verify
//   num_draft_tokens and b - M one token, b - M + M num_draft_tokens tokens in all (forward_pass.h
//   PassShape::narrow_sequences: GEMMs, collectives and small ops over those tokens; attention
//   priced at the full width, an upper bound exact where a sequence's G q rows fit one row tile).
//   Such a batch is not vLLM's uniform decode batch (gpu_model_runner.py @000fc94
//   _is_uniform_decode: every request scheduled 1 + num_speculative_tokens), so it replays the
//   mixed-batch graphs: PIECEWISE under the default FULL_AND_PIECEWISE (cudagraph_dispatcher.py
//   @ae2e8e6 dispatch; framework.proto SpeculationMethods.ngram_ragged_verify_capture), the
//   one-token cycle with no match included; only a cycle in which every sequence matched is
//   uniform and takes the verify phase's capture.
#pragma once

#include <random>

#include "sim/core/status.h"
#include "sim/llm/acceptance.h"

namespace specsim::llm {

// The accepted-count distribution of a cycle: `proposed` mixed with 0 by the match probability.
// InvalidArgument unless 0 <= match <= 1.
StatusOr<AcceptanceModel> NgramCycleAcceptance(const AcceptanceModel& proposed, double match_probability);

// One ragged cycle of `batch` sequences (vLLM): the sequences that matched, each with probability
// m, and the tokens per sequence the cycle yields, 1 + (sum of the matched sequences' accepted
// counts, drawn from `proposed`) / batch; its mean over cycles is 1 + m E[A].
// REQUIRES: 0 <= m <= 1, batch >= 1.
struct NgramRaggedCycle {
  int matched = 0;
  double tokens_per_sequence = 1;
};
NgramRaggedCycle SampleNgramRaggedCycle(const AcceptanceModel& proposed, double match_probability, int batch,
                                        std::mt19937_64& rng);

}  // namespace specsim::llm
