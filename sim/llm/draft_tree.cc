#include "sim/llm/draft_tree.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "sim/core/check.h"
#include "sim/llm/speculative_cycle.h"

namespace specsim::llm {
namespace {

struct Candidate {
  double value = 0;  // probability the target accepts it (the product along its path)
  int depth = 1;     // 1-based
};

// Sorts by value, highest first; equal values keep their insertion order (a parent is inserted
// before its children and is worth at least as much, so every prefix of the order is a tree).
void SortByValue(std::vector<size_t>* order, const std::vector<Candidate>& pool) {
  std::stable_sort(order->begin(), order->end(), [&](size_t a, size_t b) { return pool[a].value > pool[b].value; });
}

}  // namespace

Status CheckSpeculationShape(const SpeculationShape& shape) {
  if (shape.num_steps < 1 || shape.topk < 1 || shape.num_draft_tokens < 2)
    return InvalidArgumentError(
        fmt::format("speculation shape {}/{}/{}: num_steps and topk must be >= 1, num_draft_tokens >= 2",
                    shape.num_steps, shape.topk, shape.num_draft_tokens));
  return OkStatus();
}

int64_t MaxTreeDraftTokens(int64_t num_steps, int64_t topk) {
  SPECSIM_CHECK(num_steps >= 1 && topk >= 1) << num_steps << " steps, topk " << topk;
  const __int128 k = topk;
  const __int128 most = 1 + k + (__int128{num_steps} - 1) * k * k;
  return most > std::numeric_limits<int64_t>::max() ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(most);
}

double ExpectedDraftTree::tau() const { return 1 + std::accumulate(at_least.begin(), at_least.end(), 0.0); }

StatusOr<ExpectedDraftTree> BuildExpectedDraftTree(const std::vector<double>& top1_by_depth,
                                                   const SpeculationShape& shape) {
  RETURN_IF_ERROR(CheckSpeculationShape(shape));
  if (top1_by_depth.empty()) return InvalidArgumentError("draft tree: no per-depth acceptance given");
  for (size_t d = 0; d < top1_by_depth.size(); ++d)
    if (!(top1_by_depth[d] >= 0 && top1_by_depth[d] <= 1))
      return InvalidArgumentError(
          fmt::format("acceptance at depth {} = {}: must be in [0, 1]", d + 1, top1_by_depth[d]));
  const int k = shape.topk;
  auto rank_value = [&](int depth, int rank) {  // p_d (1 - p_d)^rank
    const double p = top1_by_depth[std::min<size_t>(depth - 1, top1_by_depth.size() - 1)];
    return p * std::pow(1 - p, rank);
  };
  std::vector<Candidate> pool;
  std::vector<size_t> frontier;
  for (int r = 0; r < k; ++r) {  // step 1: the root's k best, all of them the frontier
    frontier.push_back(pool.size());
    pool.push_back({rank_value(1, r), 1});
  }
  for (int depth = 2; depth <= shape.num_steps; ++depth) {
    std::vector<size_t> children;
    for (size_t parent : frontier)
      for (int r = 0; r < k; ++r) {
        children.push_back(pool.size());
        pool.push_back({pool[parent].value * rank_value(depth, r), depth});
      }
    SortByValue(&children, pool);
    children.resize(k);
    frontier = std::move(children);
  }
  std::vector<size_t> order(pool.size());
  std::iota(order.begin(), order.end(), size_t{0});
  SortByValue(&order, pool);
  order.resize(std::min<size_t>(order.size(), shape.num_draft_tokens - 1));
  ExpectedDraftTree tree;
  tree.at_least.assign(shape.num_steps, 0.0);
  tree.nodes_per_depth.assign(shape.num_steps, 0);
  for (size_t i : order) {
    tree.at_least[pool[i].depth - 1] += pool[i].value;
    ++tree.nodes_per_depth[pool[i].depth - 1];
  }
  // Children of a kept node are worth at most the node (their ranks' probabilities sum to at most 1).
  for (int d = 1; d < shape.num_steps; ++d)
    SPECSIM_CHECK_LE(tree.at_least[d], tree.at_least[d - 1] * (1 + 1e-12) + 1e-300) << "depth " << d + 1;
  return tree;
}

StatusOr<AcceptanceModel> DraftTreeAcceptance(const std::vector<double>& top1_by_depth, const SpeculationShape& shape) {
  ASSIGN_OR_RETURN(ExpectedDraftTree tree, BuildExpectedDraftTree(top1_by_depth, shape));
  std::vector<double> distribution;
  double at_least = 1.0;  // P(L >= 0)
  for (double next : tree.at_least) {
    distribution.push_back(std::max(0.0, at_least - next));
    at_least = next;
  }
  distribution.push_back(at_least);
  return AcceptanceModel::FromHistogram(distribution);
}

StatusOr<double> Top1AcceptanceOfTreeTau(double tau, const SpeculationShape& shape) {
  RETURN_IF_ERROR(CheckSpeculationShape(shape));
  const int deepest = MaxAcceptedPerCycle(shape.num_steps, shape.num_draft_tokens);
  if (!(tau >= 1 && tau <= 1 + deepest))
    return InvalidArgumentError(
        fmt::format("mean accept length {} with shape {}/{}/{}: must be in [1, {}] (tokens per cycle, bonus included)",
                    tau, shape.num_steps, shape.topk, shape.num_draft_tokens, 1 + deepest));
  auto tau_of = [&](double p) {
    auto tree = BuildExpectedDraftTree({p}, shape);
    SPECSIM_CHECK(tree.ok()) << tree.status().message();
    return tree->tau();
  };
  double lo = 0, hi = 1;  // tau(0) = 1, tau(1) = 1 + deepest
  while (hi - lo > 1e-12) {
    const double mid = 0.5 * (lo + hi);
    (tau_of(mid) < tau ? lo : hi) = mid;
  }
  const double p = 0.5 * (lo + hi);
  const double reached = tau_of(p);
  if (std::abs(reached - tau) > 1e-6)
    return InvalidArgumentError(
        fmt::format("mean accept length {} with shape {}/{}/{}: no single per-depth acceptance "
                    "reproduces it (closest {:.6f} at p = {:.6f})",
                    tau, shape.num_steps, shape.topk, shape.num_draft_tokens, reached, p));
  return p;
}

}  // namespace specsim::llm
