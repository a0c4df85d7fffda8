// EAGLE-2's dynamic draft tree (arXiv 2406.16858) as SGLang builds it, on expected acceptance: how
// many draft tokens a cycle accepts for a speculation shape (num_steps S, topk k, num_draft_tokens N)
// from the draft's per-depth top-1 acceptance p_1..p_S.
//
// The tree, as SGLang's EAGLE worker grows it (select_top_k_tokens / _select_top_k_tokens_later in
// sgl-project/sglang python/sglang/srt/speculative/spec_utils.py @00731f0: expand_scores = scores x
// topk_p over (topk, topk), fast_topk of topk; organize_draft_results in eagle_utils.py @003ddbce):
//   step 1:  the root's k best candidates (all kept as the frontier);
//   step s:  each of the k frontier nodes proposes its k best children (k^2 candidates, every one
//            added to the pool); the k of highest value become the next frontier;
//   finally: the N - 1 candidates of highest value over the whole pool (k + (S-1) k^2 of them) are
//            verified with the root.
// A node's value is the product of its draft probabilities along its path. EAGLE-2's premise is
// that the draft is calibrated (its confidence approximates the acceptance rate), so a node's value
// is the probability that the target accepts it: with greedy verification the accepted path is
// unique, at most one node per depth is accepted, and
//   P(L >= d) = sum of the values of the kept nodes at depth d,   tau = 1 + sum_d P(L >= d).
//
// Candidate law (simplified, stated): the candidate of rank r (0 = the draft's best) at depth d is
// the target's token with probability p_d (1 - p_d)^r: each next candidate is accepted with p_d
// once the better ones failed. A full expansion of k candidates then covers 1 - (1 - p_d)^k
// (one full expansion's coverage). Lower-ranked candidates of real drafts are weaker
// than this (their tree gains are smaller); a figure measured on a tree and fitted through this
// model keeps its own shape exactly, and other shapes follow the model.
// Also simplified: the expected tree is built once from the expected probabilities; EAGLE-2 builds
// a new tree per context, which accepts at least as much on average (the expected tree is one of
// the trees it could build).
//
// Reductions (tests): topk = 1 is the chain, P(L >= d) = prod_{i<=d} p_i for d <= min(S, N - 1);
// S = 1 with N - 1 = k is one full expansion, P(L >= 1) = 1 - (1 - p_1)^k.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/status.h"
#include "sim/llm/acceptance.h"

namespace specsim::llm {

struct SpeculationShape {
  int num_steps = 1;
  int topk = 1;
  int num_draft_tokens = 2;
};

// InvalidArgument unless num_steps and topk >= 1 and num_draft_tokens >= 2, naming the shape.
Status CheckSpeculationShape(const SpeculationShape& shape);

// The most draft tokens (the root included) a tree of `num_steps` steps of `topk` can verify: the
// root, topk children of the first step and topk^2 candidates per later step, from which SGLang's
// tree building chooses (1 + topk + (num_steps - 1) * topk^2). Computed in 128 bits and saturated
// at INT64_MAX, so any 32-bit fields give a bound. REQUIRES: num_steps, topk >= 1.
int64_t MaxTreeDraftTokens(int64_t num_steps, int64_t topk);

struct ExpectedDraftTree {
  // P(L >= d) for d = 1..num_steps (index d - 1): non-increasing, in [0, 1].
  std::vector<double> at_least;
  // Kept (verified) draft nodes per depth; they sum to min(N - 1, the pool's size).
  std::vector<int> nodes_per_depth;
  // Expected tokens per cycle, bonus included: 1 + sum_d P(L >= d).
  double tau() const;
};

// InvalidArgument for a shape with num_steps or topk < 1 or num_draft_tokens < 2, or a probability
// outside [0, 1]. top1_by_depth shorter than num_steps: deeper depths take its last value.
StatusOr<ExpectedDraftTree> BuildExpectedDraftTree(const std::vector<double>& top1_by_depth,
                                                   const SpeculationShape& shape);

// The accepted-count distribution of the tree: P(L = a) = P(L >= a) - P(L >= a + 1).
StatusOr<AcceptanceModel> DraftTreeAcceptance(const std::vector<double>& top1_by_depth, const SpeculationShape& shape);

// The one per-depth top-1 acceptance p (the same at every depth) whose expected tree at `shape`
// yields `tau` tokens per cycle, by bisection to 1e-12 (tau grows with p: checked on the result).
// For a published mean accept length measured with that shape: the fitted p recovers it exactly.
// InvalidArgument unless 1 <= tau <= 1 + min(num_steps, num_draft_tokens - 1).
StatusOr<double> Top1AcceptanceOfTreeTau(double tau, const SpeculationShape& shape);

}  // namespace specsim::llm
