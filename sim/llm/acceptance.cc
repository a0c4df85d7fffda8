#include "sim/llm/acceptance.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/llm/draft_tree.h"
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
  const SpeculationShape target{num_steps, topk, num_draft_tokens};
  RETURN_IF_ERROR(CheckSpeculationShape(target));
  const std::string shape = fmt::format("{}/{}/{}", num_steps, topk, num_draft_tokens);
  const bool measured = !data.histogram.empty();
  const SpeculationShape hist_shape{data.histogram_num_steps, data.histogram_topk, data.histogram_num_draft_tokens};
  const std::string measured_shape =
      fmt::format("{}/{}/{}", hist_shape.num_steps, hist_shape.topk, hist_shape.num_draft_tokens);
  if (measured && hist_shape.num_steps == num_steps && hist_shape.topk == topk &&
      hist_shape.num_draft_tokens == num_draft_tokens) {
    ASSIGN_OR_RETURN(AcceptanceModel m, AcceptanceModel::FromHistogram(data.histogram));
    return ShapeAcceptance{std::move(m), "the histogram measured with this shape (" + shape + ")", false};
  }
  // The draft's per-depth top-1 acceptance, from what is known.
  std::vector<double> p;
  std::string basis;
  bool from_tree = false;  // derived from a tree's figures through the candidate law
  if (!data.chain_probabilities.empty()) {
    for (size_t d = 0; d < data.chain_probabilities.size(); ++d) {
      const double v = data.chain_probabilities[d];
      if (!(v >= 0 && v <= 1))
        return InvalidArgumentError(fmt::format("acceptance_probabilities[{}] = {}: must be in [0, 1]", d, v));
    }
    if (data.chain_probabilities_topk > 1) {
      // A tree's per-depth acceptance a_d, taken as one full expansion of k candidates:
      // a_d = 1 - (1 - p_d)^k, so p_d = 1 - (1 - a_d)^(1/k).
      const double k = data.chain_probabilities_topk;
      for (double a : data.chain_probabilities) p.push_back(1 - std::pow(1 - a, 1 / k));
      from_tree = true;
      basis = fmt::format("per-depth acceptance of a topk-{} tree, as the top-1 token's p = 1-(1-a)^(1/{})",
                          data.chain_probabilities_topk, data.chain_probabilities_topk);
    } else {
      p = data.chain_probabilities;
      basis = "per-position acceptance of the top-1 draft token";
    }
  } else if (measured) {
    ASSIGN_OR_RETURN(AcceptanceModel h, AcceptanceModel::FromHistogram(data.histogram));
    if (hist_shape.topk > 1) {
      auto fitted = Top1AcceptanceOfTreeTau(h.tau(), hist_shape);
      if (!fitted.ok())
        return InvalidArgumentError("accept_length_histogram measured with " + measured_shape + ": " +
                                    fitted.status().message());
      p = {*fitted};
      from_tree = true;
      basis = fmt::format(
          "the top-1 acceptance {:.3f} whose expected tree at {} gives the histogram's {:.3f} tokens "
          "per cycle",
          *fitted, measured_shape, h.tau());
    } else {
      p = PerPositionOfHistogram(data.histogram);
      basis = fmt::format("the per-depth acceptance of the histogram measured with {}", measured_shape);
    }
  } else {
    return InvalidArgumentError(
        "speculation: no acceptance known (give acceptance_probabilities or accept_length_histogram)");
  }
  if (p.empty()) return InvalidArgumentError("speculation: the histogram has no depth (give counts for 0..S accepted)");
  const int positions = MaxAcceptedPerCycle(num_steps, num_draft_tokens);
  if (p.size() > 1 && positions > static_cast<int>(p.size()))
    basis += fmt::format(" (known to depth {}, deeper ones take its last value)", p.size());
  // Converted: the acceptance reaches this shape through the tree's candidate law (a tree priced
  // from top-1 figures, or any shape priced from a tree's): approximate, said in the basis.
  const bool approximate = topk > 1 || from_tree;
  if (topk > 1)
    basis += fmt::format(", through the expected EAGLE-2 tree of {} nodes (draft_tree.h): approximate",
                         num_draft_tokens - 1);
  else if (from_tree)
    basis += ", for a chain: approximate";
  ASSIGN_OR_RETURN(AcceptanceModel m, DraftTreeAcceptance(p, target));
  return ShapeAcceptance{std::move(m), basis, approximate};
}

}  // namespace specsim::llm
