#include "sim/llm/acceptance.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/llm/speculative_cycle.h"

namespace specsim::llm {

AcceptanceModel::AcceptanceModel(std::vector<double> distribution) : distribution_(std::move(distribution)) {
  double sum = 0;
  for (double p : distribution_) {
    sum += p;
    cumulative_.push_back(sum);
  }
  cumulative_.back() = 1.0;  // guard against rounding
}

StatusOr<AcceptanceModel> AcceptanceModel::FromPerPosition(const std::vector<double>& probabilities) {
  if (probabilities.empty()) return InvalidArgumentError("acceptance_probabilities: empty (give one per draft step)");
  std::vector<double> dist;
  double reach = 1.0;  // P(tokens 1..a all accepted)
  for (size_t i = 0; i < probabilities.size(); ++i) {
    double p = probabilities[i];
    if (!(p >= 0 && p <= 1))
      return InvalidArgumentError("acceptance_probabilities[" + std::to_string(i) + "] = " + std::to_string(p) +
                                  ": must be in [0, 1]");
    dist.push_back(reach * (1 - p));
    reach *= p;
  }
  dist.push_back(reach);
  return AcceptanceModel(std::move(dist));
}

StatusOr<AcceptanceModel> AcceptanceModel::FromHistogram(const std::vector<double>& histogram) {
  if (histogram.empty()) return InvalidArgumentError("accept_length_histogram: empty");
  double sum = 0;
  for (size_t i = 0; i < histogram.size(); ++i) {
    if (!(histogram[i] >= 0) || !std::isfinite(histogram[i]))
      return InvalidArgumentError("accept_length_histogram[" + std::to_string(i) +
                                  "] = " + std::to_string(histogram[i]) + ": must be a finite count >= 0");
    sum += histogram[i];
  }
  if (sum <= 0) return InvalidArgumentError("accept_length_histogram: all counts are 0");
  std::vector<double> dist;
  for (double h : histogram) dist.push_back(h / sum);
  return AcceptanceModel(std::move(dist));
}

int AcceptanceModel::max_accepted() const {
  int a = static_cast<int>(distribution_.size()) - 1;
  while (a > 0 && distribution_[a] <= 0) --a;
  return a;
}

double AcceptanceModel::tau() const {
  double mean = 0;
  for (size_t a = 0; a < distribution_.size(); ++a) mean += static_cast<double>(a) * distribution_[a];
  return 1 + mean;
}

int AcceptanceModel::Sample(std::mt19937_64& rng) const {
  // 53 random bits -> [0, 1): the same on every platform, unlike std::uniform_real_distribution.
  double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  // upper_bound never lands on a zero-probability entry: those repeat the previous cumulative.
  auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
  return static_cast<int>(std::min<ptrdiff_t>(it - cumulative_.begin(), max_accepted()));
}

std::vector<double> PerPositionOfHistogram(const std::vector<double>& histogram) {
  double total = 0;
  for (double h : histogram) total += h;
  std::vector<double> p;
  // at_least[k] = P(L >= k) x total.
  double at_least = total;
  for (size_t k = 1; k < histogram.size(); ++k) {
    const double next = at_least - histogram[k - 1];
    p.push_back(at_least > 0 ? std::clamp(next / at_least, 0.0, 1.0) : 0.0);
    at_least = next;
  }
  return p;
}

StatusOr<ShapeAcceptance> AcceptanceForShape(const AcceptanceData& data, int num_steps, int topk,
                                             int num_draft_tokens) {
  if (num_steps < 1 || topk < 1 || num_draft_tokens < 2)
    return InvalidArgumentError(
        fmt::format("speculation shape {}/{}/{}: num_steps and topk must be >= 1, "
                    "num_draft_tokens >= 2",
                    num_steps, topk, num_draft_tokens));
  const std::string shape = fmt::format("{}/{}/{}", num_steps, topk, num_draft_tokens);
  const bool measured = !data.histogram.empty();
  const std::string measured_shape =
      fmt::format("{}/{}/{}", data.histogram_num_steps, data.histogram_topk, data.histogram_num_draft_tokens);
  if (measured && data.histogram_num_steps == num_steps && data.histogram_topk == topk &&
      data.histogram_num_draft_tokens == num_draft_tokens) {
    ASSIGN_OR_RETURN(AcceptanceModel m, AcceptanceModel::FromHistogram(data.histogram));
    return ShapeAcceptance{std::move(m), "the histogram measured with this shape (" + shape + ")", false};
  }
  std::vector<double> p = data.chain_probabilities;
  bool from_tree = false;
  int source_topk = 1;  // the topk the per-depth acceptance was measured with
  std::string basis;
  if (!p.empty()) {
    from_tree = data.chain_probabilities_topk > 1;
    source_topk = data.chain_probabilities_topk;
    basis = from_tree ? fmt::format("per-depth acceptance of a topk-{} tree", data.chain_probabilities_topk)
                      : "per-position acceptance of the top-1 draft token";
  } else if (measured) {
    RETURN_IF_ERROR(AcceptanceModel::FromHistogram(data.histogram).status());
    p = PerPositionOfHistogram(data.histogram);
    from_tree = data.histogram_topk > 1;
    source_topk = data.histogram_topk;
    basis = fmt::format("the per-depth acceptance of the histogram measured with {}", measured_shape);
  } else {
    return InvalidArgumentError(
        "speculation: no acceptance known (give acceptance_probabilities or accept_length_histogram)");
  }
  if (p.empty()) return InvalidArgumentError("speculation: the histogram has no depth (give counts for 0..S accepted)");
  const int positions = MaxAcceptedPerCycle(num_steps, num_draft_tokens);
  if (num_steps > static_cast<int>(p.size()) && positions > static_cast<int>(p.size()))
    basis += fmt::format(" (known to depth {}, deeper ones take its last value)", p.size());
  std::vector<double> q;
  bool upper_bound = false;
  for (int d = 0; d < num_steps; ++d) {
    double v = d >= positions ? 0.0 : p[std::min<size_t>(d, p.size() - 1)];
    if (!(v >= 0 && v <= 1))
      return InvalidArgumentError(fmt::format("acceptance_probabilities[{}] = {}: must be in [0, 1]", d, v));
    if (topk > 1 && !from_tree) v = TreeCreditedAcceptance(v, topk);
    q.push_back(v);
  }
  if (topk > 1 && !from_tree) {
    upper_bound = true;
    basis += fmt::format(", credited 1-(1-p)^{} per depth for a tree: an upper bound", topk);
  } else if (topk == 1 && from_tree) {
    upper_bound = true;
    basis += ", a tree's, for a chain: an upper bound";
  } else if (from_tree && topk < source_topk) {
    // Fewer candidates per depth accept at most what more did.
    upper_bound = true;
    basis += fmt::format(", a topk-{} tree's, for a narrower tree: an upper bound", source_topk);
  } else if (from_tree) {
    basis += ", used for this tree shape: approximate";
  }
  ASSIGN_OR_RETURN(AcceptanceModel m, AcceptanceModel::FromPerPosition(q));
  return ShapeAcceptance{std::move(m), basis, upper_bound};
}

StatusOr<double> PerPositionOfMeanAcceptLength(double mean_accept_length, int drafts) {
  if (drafts < 1 || !(mean_accept_length >= 1 && mean_accept_length <= 1 + drafts))
    return InvalidArgumentError(
        fmt::format("mean accept length {} with {} draft tokens: must be in [1, {}] (tokens per cycle, bonus included)",
                    mean_accept_length, drafts, 1 + drafts));
  auto tau = [drafts](double a) {
    double sum = 0, term = 1;
    for (int j = 0; j <= drafts; ++j, term *= a) sum += term;
    return sum;
  };
  double lo = 0, hi = 1;  // tau is increasing in a: tau(0) = 1, tau(1) = 1 + drafts
  while (hi - lo > 1e-12) {
    const double mid = 0.5 * (lo + hi);
    (tau(mid) < mean_accept_length ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace specsim::llm
