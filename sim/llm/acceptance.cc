#include "sim/llm/acceptance.h"

#include <algorithm>
#include <cmath>
#include <string>

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
      return InvalidArgumentError("accept_length_histogram[" + std::to_string(i) + "] = " +
                                  std::to_string(histogram[i]) + ": must be a finite count >= 0");
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

}  // namespace specsim::llm
