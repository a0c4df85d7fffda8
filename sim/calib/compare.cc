#include "sim/calib/compare.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "sim/calib/predictors.h"
#include "sim/calib/trace_io.h"
#include "sim/core/check.h"
#include "sim/core/median.h"
#include "sim/core/splitmix.h"

namespace specsim::calib {
namespace {

// The distinct names of `suites`: pcie, collectives, kernels, decode, pacing first (those present),
// then any other in order of appearance.
std::vector<std::string> SuiteOrder(const std::vector<std::string>& suites) {
  std::vector<std::string> order;
  for (const char* known : {"pcie", "collectives", "kernels", "decode", "pacing"})
    if (std::find(suites.begin(), suites.end(), known) != suites.end()) order.push_back(known);
  for (const std::string& s : suites)
    if (std::find(order.begin(), order.end(), s) == order.end()) order.push_back(s);
  return order;
}

// n, median, p90 and max of `errs` (absolute errors; REQUIRES not empty) under `name`.
SuiteStats StatsOf(const std::string& name, std::vector<double> errs) {
  SuiteStats s;
  s.suite = name;
  s.n = static_cast<int>(errs.size());
  s.median_abs_error = PercentileOf(errs, 0.5);
  s.p90_abs_error = PercentileOf(errs, 0.9);
  s.max_abs_error = *std::max_element(errs.begin(), errs.end());
  return s;
}

}  // namespace

namespace {

// Per suite, the items grouped by `group_of` (groups in the order of their first item), the groups
// shuffled by `seed` (Fisher-Yates on SplitMix64), the first round(fraction x groups) held out.
HoldoutSplit SplitGroups(const trace::Trace& trace, double fraction, uint64_t seed,
                         const std::function<std::string(int)>& group_of) {
  SPECSIM_CHECK(fraction >= 0 && fraction < 1) << fraction;
  std::map<int, std::vector<std::string>> groups;
  std::map<std::pair<int, std::string>, std::vector<int>> members;
  for (int i = 0; i < trace.items_size(); ++i) {
    const int suite = trace.items(i).suite();
    std::string group = group_of(i);
    auto& list = members[{suite, group}];
    if (list.empty()) groups[suite].push_back(std::move(group));
    list.push_back(i);
  }
  HoldoutSplit split;
  uint64_t state = seed;
  for (auto& [suite, names] : groups) {
    for (size_t i = names.size(); i > 1; --i) {
      const size_t j = SplitMix64(state) % i;
      std::swap(names[i - 1], names[j]);
    }
    const size_t held = static_cast<size_t>(std::llround(fraction * static_cast<double>(names.size())));
    for (size_t g = 0; g < names.size(); ++g) {
      std::vector<int>& side = g < held ? split.test : split.train;
      const std::vector<int>& idx = members[{suite, names[g]}];
      side.insert(side.end(), idx.begin(), idx.end());
    }
  }
  std::sort(split.train.begin(), split.train.end());
  std::sort(split.test.begin(), split.test.end());
  return split;
}

}  // namespace

HoldoutSplit SplitHoldout(const trace::Trace& trace, double fraction, uint64_t seed) {
  return SplitGroups(trace, fraction, seed, [](int i) { return std::to_string(i); });
}

std::string HoldoutFamilyOf(const std::string& item_name) {
  const size_t slash = item_name.rfind('/');
  return slash == std::string::npos ? item_name : item_name.substr(0, slash);
}

HoldoutSplit SplitHoldoutByFamily(const trace::Trace& trace, double fraction, uint64_t seed) {
  return SplitGroups(trace, fraction, seed, [&](int i) { return HoldoutFamilyOf(trace.items(i).name()); });
}

std::vector<SuiteStats> SuiteStatistics(const std::vector<ItemResult>& items) {
  std::vector<std::string> names;
  for (const ItemResult& r : items) names.push_back(r.suite);
  std::vector<SuiteStats> out;
  for (const std::string& suite : SuiteOrder(names)) {
    std::vector<double> errs;
    for (const ItemResult& r : items)
      if (r.simulated && r.suite == suite) errs.push_back(std::abs(r.error));
    if (!errs.empty()) out.push_back(StatsOf(suite, std::move(errs)));
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
    HoldoutSplit split = options.unit == HoldoutUnit::kFamily
                             ? SplitHoldoutByFamily(trace, options.holdout, options.seed)
                             : SplitHoldout(trace, options.holdout, options.seed);
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
  // After a fit, predict on the topology the fit ran on (its fabric part applied, fit.h).
  Predictor predictor(trace, result.fitted ? result.fit.topology : topology, result.fit.params);
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

StatusOr<HoldoutSummary> CompareHoldoutSeeds(const trace::Trace& trace, const net::Topology& topology,
                                             const CalibParams& params, double fraction, int seeds, HoldoutUnit unit) {
  if (!(fraction > 0 && fraction < 1))
    return InvalidArgumentError("hold-out fraction " + std::to_string(fraction) + ": must be in (0, 1)");
  if (seeds < 1) return InvalidArgumentError("seeds = " + std::to_string(seeds) + ": must be >= 1");
  HoldoutSummary summary;
  summary.fraction = fraction;
  summary.seeds = seeds;
  for (int seed = 1; seed <= seeds; ++seed) {
    CompareOptions o;
    o.holdout = fraction;
    o.seed = static_cast<uint64_t>(seed);
    o.unit = unit;
    auto r = Compare(trace, topology, params, o);
    if (!r.ok()) return r.status().WithPrefix("seed " + std::to_string(seed));
    summary.per_seed.push_back(std::move(*r));
  }
  std::vector<std::string> names;
  for (const ComparisonResult& r : summary.per_seed)
    for (const SuiteStats& s : r.suites) names.push_back(s.suite);
  for (const std::string& suite : SuiteOrder(names)) {
    SuiteSeedSummary ss;
    ss.suite = suite;
    ss.n_min = std::numeric_limits<int>::max();
    for (const ComparisonResult& r : summary.per_seed)
      for (const SuiteStats& s : r.suites) {
        if (s.suite != suite) continue;
        ss.median_abs_error_per_seed.push_back(s.median_abs_error);
        ss.p90_abs_error_per_seed.push_back(s.p90_abs_error);
        ss.n_min = std::min(ss.n_min, s.n);
        ss.n_max = std::max(ss.n_max, s.n);
      }
    ss.seeds = static_cast<int>(ss.median_abs_error_per_seed.size());
    const std::vector<double>& m = ss.median_abs_error_per_seed;
    ss.median_abs_error_median = PercentileOf(m, 0.5);
    ss.median_abs_error_min = *std::min_element(m.begin(), m.end());
    ss.median_abs_error_max = *std::max_element(m.begin(), m.end());
    ss.p90_abs_error_median = PercentileOf(ss.p90_abs_error_per_seed, 0.5);
    summary.suites.push_back(std::move(ss));
  }
  return summary;
}

}  // namespace specsim::calib

namespace specsim::calib {
namespace {

// Query tokens per sequence of an attention or decode item; 0 for other items.
int QueryTokensOf(const trace::Item& item) {
  if (item.has_attention()) return std::max(1, item.attention().query_tokens());
  if (item.has_decode()) {
    const trace::DecodeParams& d = item.decode();
    if (d.query_tokens() > 0) return d.query_tokens();
    return d.speculative() ? std::max(1, d.verify_tokens()) : 1;
  }
  return 0;
}

std::string QueryRegime(int q) { return q <= 1 ? "q=1" : q <= 16 ? "q=2..16" : "q>16"; }

// A pacing item's regime: "layers <capture> <balance>" or "skew <balance>", balance "balanced" or
// "slow rank"; eager layer loops with an injected host cost are "eager+host".
std::string PacingRegime(const trace::Item& item) {
  if (item.has_skew()) return std::string("pacing skew ") + (item.skew().slow_rank() >= 0 ? "slow rank" : "balanced");
  const trace::LayerLoopParams& l = item.layer_loop();
  const trace::HostCost::Distribution d = l.host_cost().distribution();
  const bool host_cost = d == trace::HostCost::FIXED || d == trace::HostCost::EXPONENTIAL;
  return "pacing layers " + l.capture() + (host_cost ? "+host" : "") +
         (l.slow_rank() >= 0 ? " slow rank" : " balanced");
}

}  // namespace

std::vector<ItemResult> PooledHeldOut(const HoldoutSummary& summary) {
  std::map<int, std::vector<double>> predicted;
  std::map<int, ItemResult> first;
  for (const ComparisonResult& c : summary.per_seed)
    for (const ItemResult& r : c.items) {
      if (!r.simulated) continue;
      predicted[r.index].push_back(r.predicted_us);
      first.emplace(r.index, r);
    }
  std::vector<ItemResult> out;
  for (auto& [index, r] : first) {
    r.predicted_us = PercentileOf(predicted[index], 0.5);
    r.error = r.measured_us > 0 ? (r.predicted_us - r.measured_us) / r.measured_us : 0;
    out.push_back(r);
  }
  return out;
}

std::vector<SuiteStats> RegimeStatistics(const trace::Trace& trace, const std::vector<ItemResult>& items,
                                         const compute::ComputeParams& compute, const net::Topology& topology) {
  std::map<std::string, std::vector<double>> errs;
  std::vector<std::string> order;
  auto add = [&](const std::string& name, double e) {
    if (!errs.count(name)) order.push_back(name);
    errs[name].push_back(std::abs(e));
  };
  for (const ItemResult& r : items) {
    if (!r.simulated || r.index < 0 || r.index >= trace.items_size()) continue;
    const trace::Item& item = trace.items(r.index);
    if (item.has_layer_loop() || item.has_skew()) {
      add(PacingRegime(item), r.error);
      continue;
    }
    const bool attention = item.kind() == trace::KIND_ATTENTION;
    const bool decode = item.kind() == trace::KIND_DECODE_STEP || item.kind() == trace::KIND_SPEC_CYCLE;
    if (!attention && !decode) continue;
    add(std::string(attention ? "attention " : "decode ") + QueryRegime(QueryTokensOf(item)), r.error);
    if (decode) add("decode " + DecodeCaptureOf(item.decode()), r.error);
    if (!attention || topology.num_gpus() < 1 || topology.gpu_spec(0).sm_count < 1) continue;
    const ItemKernel k = KernelOfItem(item);
    const compute::AttentionImplementation* impl =
        compute.FindAttentionImplementation(AttentionImplementationOf(item.attention()));
    if (!k.ok || !k.kernel.has_attention_call || !impl) continue;
    const compute::AttentionTerms t = compute::AttentionTime(*impl, k.kernel.attention, topology.gpu_spec(0).sm_count,
                                                             topology.gpu_spec(0).memory_bandwidth_gbps);
    add(t.memory_ns >= t.tiles_ns ? "attention bandwidth-bound" : "attention tile-bound", r.error);
  }
  std::sort(order.begin(), order.end());
  std::vector<SuiteStats> out;
  for (const std::string& name : order) out.push_back(StatsOf(name, errs[name]));
  return out;
}

std::vector<ShapeGroup> VerifyWidthShapes(const trace::Trace& trace, const std::vector<ItemResult>& items) {
  // Group key: everything but q. Attention: model, tp, implementation, batch, context; decode
  // (plain steps and verify-width points only): model, tp, capture, batch.
  std::map<std::string, std::map<int, const ItemResult*>> groups;
  for (const ItemResult& r : items) {
    if (!r.simulated || r.index < 0 || r.index >= trace.items_size()) continue;
    const trace::Item& item = trace.items(r.index);
    std::string key;
    if (item.has_attention()) {
      const trace::AttentionParams& a = item.attention();
      key = "kernels/attention/" + a.model() + "/tp" + std::to_string(a.tp()) + "/" + AttentionImplementationOf(a) +
            "/b" + std::to_string(a.batch()) + "/ctx" + std::to_string(a.context());
    } else if (item.has_decode() && !item.decode().speculative()) {
      const trace::DecodeParams& d = item.decode();
      key = "decode/" + d.model() + "/tp" + std::to_string(d.tp()) + "/" + DecodeCaptureOf(d) + "/b" +
            std::to_string(d.batch());
    } else {
      continue;
    }
    groups[key][QueryTokensOf(item)] = &r;
  }
  std::vector<ShapeGroup> out;
  for (const auto& [key, by_q] : groups) {
    if (by_q.size() < 2 || !by_q.count(1)) continue;
    const ItemResult& base = *by_q.at(1);
    if (base.measured_us <= 0 || base.predicted_us <= 0) continue;
    ShapeGroup g;
    g.name = key;
    for (const auto& [q, r] : by_q) {
      ShapePoint p;
      p.q = q;
      p.measured_ratio = r->measured_us / base.measured_us;
      p.predicted_ratio = r->predicted_us / base.predicted_us;
      p.error = p.predicted_ratio / p.measured_ratio - 1;
      g.points.push_back(p);
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace specsim::calib
