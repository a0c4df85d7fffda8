#include "sim/calib/compare.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/calib/predictors.h"
#include "sim/calib/trace_io.h"
#include "sim/core/check.h"

namespace specsim::calib {
namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

HoldoutSplit SplitHoldout(const trace::Trace& trace, double fraction, uint64_t seed) {
  SPECSIM_CHECK(fraction >= 0 && fraction < 1) << fraction;
  std::map<int, std::vector<int>> by_suite;
  for (int i = 0; i < trace.items_size(); ++i) by_suite[trace.items(i).suite()].push_back(i);
  HoldoutSplit split;
  uint64_t state = seed;
  for (auto& [suite, idx] : by_suite) {
    for (size_t i = idx.size(); i > 1; --i) {
      const size_t j = SplitMix64(state) % i;
      std::swap(idx[i - 1], idx[j]);
    }
    const size_t held = static_cast<size_t>(std::llround(fraction * static_cast<double>(idx.size())));
    split.test.insert(split.test.end(), idx.begin(), idx.begin() + static_cast<long>(held));
    split.train.insert(split.train.end(), idx.begin() + static_cast<long>(held), idx.end());
  }
  std::sort(split.train.begin(), split.train.end());
  std::sort(split.test.begin(), split.test.end());
  return split;
}

double Percentile(std::vector<double> v, double q) {
  SPECSIM_CHECK(!v.empty());
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

std::vector<SuiteStats> SuiteStatistics(const std::vector<ItemResult>& items) {
  std::vector<SuiteStats> out;
  for (const char* suite : {"pcie", "collectives", "kernels", "decode"}) {
    std::vector<double> errs;
    for (const ItemResult& r : items)
      if (r.simulated && r.suite == suite) errs.push_back(std::abs(r.error));
    if (errs.empty()) continue;
    SuiteStats s;
    s.suite = suite;
    s.n = static_cast<int>(errs.size());
    s.median_abs_error = Percentile(errs, 0.5);
    s.p90_abs_error = Percentile(errs, 0.9);
    s.max_abs_error = *std::max_element(errs.begin(), errs.end());
    out.push_back(s);
  }
  return out;
}

StatusOr<ComparisonResult> Compare(const trace::Trace& trace, const net::Topology& topology, const CalibParams& params,
                                   const CompareOptions& options) {
  ComparisonResult result;
  result.holdout = options.holdout;
  result.fit.params = params;
  std::vector<int> evaluate;
  if (options.holdout > 0) {
    if (!(options.holdout < 1)) return InvalidArgumentError("--holdout must be in [0, 1)");
    HoldoutSplit split = SplitHoldout(trace, options.holdout, options.seed);
    FitOptions fo;
    fo.fix_undetermined = true;
    auto fit = Fit(trace, split.train, topology, params, fo);
    if (!fit.ok()) return fit.status().WithPrefix("fit on the training items");
    result.fit = std::move(*fit);
    result.fitted = true;
    evaluate = split.test;
  } else {
    for (int i = 0; i < trace.items_size(); ++i) evaluate.push_back(i);
  }
  Predictor predictor(trace, topology, result.fit.params);
  for (int i : evaluate) {
    const trace::Item& item = trace.items(i);
    ItemResult r;
    r.index = i;
    r.suite = SuiteName(item.suite());
    r.name = item.name();
    r.measured_us = item.stats().median_us();
    const Prediction p = predictor.Predict(item);
    r.simulated = p.simulated;
    r.reason = p.reason;
    if (p.simulated && !(r.measured_us > 0)) {
      r.simulated = false;
      r.reason = "no measured time (median 0)";
    }
    if (r.simulated) {
      r.predicted_us = p.predicted_us;
      r.error = (r.predicted_us - r.measured_us) / r.measured_us;
    }
    result.items.push_back(std::move(r));
  }
  result.suites = SuiteStatistics(result.items);
  return result;
}

}  // namespace specsim::calib
