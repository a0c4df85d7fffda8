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
//   vllm/v1/core/sched/scheduler.py @00024d3: num_tokens_with_spec). Simplified for batch b: a cycle in
//   which no sequence matched (probability (1 - m)^b) is a one-token verify; otherwise every
//   sequence is priced at num_draft_tokens (an upper bound on the ragged batch; exact at b = 1), with
//   the match probability conditioned on some match, m / (1 - (1 - m)^b), so tau stays 1 + m E[A].
#pragma once

#include "sim/core/status.h"
#include "sim/llm/acceptance.h"

namespace specsim::llm {

// The accepted-count distribution of a cycle: `proposed` mixed with 0 by the match probability.
// InvalidArgument unless 0 <= match <= 1.
StatusOr<AcceptanceModel> NgramCycleAcceptance(const AcceptanceModel& proposed, double match_probability);

// 1 - (1 - m)^batch: some sequence of the batch matched (REQUIRES: 0 <= m <= 1, batch >= 1).
double NgramAnyMatchProbability(double match_probability, int batch);

}  // namespace specsim::llm
