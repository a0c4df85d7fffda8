// A Python framework's host time per op (fitters.h; llm::HostOpCost), from the PyTorch probe's
// single-op items (KIND_HOST_OP, validate/torch_host_probe.py): nothing to solve, every op's
// distribution is read off its items, the 21 quantiles of the host time per call, each the median
// over the op's items of one shape (the ranks). An op is kept per shape, "<op>/q<tokens>": PyTorch
// takes other paths for other shapes (SDPA with a causal mask over 4 query tokens launches 5
// kernels and costs the host 109 us on the H200's host, against 2 kernels and 69 us for one token).
// Its loops (KIND_HOST_LOOP) are never fitted: they are what the single ops predict
// (host_op_predictors.h).
//
// The top quantile is the slowest call of some 640: linear between p95 and it, the distribution's
// top twentieth averages half the maximum, so one 1.4 ms outlier among 57 us calls (the H200 host's
// allreduce_o) added 25 us to the op's mean. The top value is instead set so that the
// distribution's mean is the item's measured mean (QuantilesWithMean; bounded by p95 and the
// slowest call).
//
// How alike a pass's calls are (host.call_correlation): the probe's call_correlation, the median
// over the items that carry one (one figure per run: the intraclass correlation of the calls'
// normal scores within batches of consecutive calls). On the H200 host 0.60 and 0.69 (runs n, o):
// the host's speed drifts 2x within minutes, so a call's time is mostly the moment's, shared by
// the calls around it; drawn independently, a loop of 147 calls comes out near the sum of the ops'
// means, measured it is near the sum of their medians in a fast moment and far above in a slow one.
//
// The host model's per-class costs, which simulate's rank timelines price a pass's ops with, are
// then the framework's: library_issue_us the median of the library ops (cuBLAS GEMMs),
// kernel_issue_us of the one-kernel PyTorch ops, collective_issue_us of the ProcessGroup calls,
// graph_launch_us of the graph replay, sync_wake_us of the read-back on an idle GPU. A trace with
// the probe's items thus sets the host costs to PyTorch's (over those the pacing suite's C++ loops
// fitted, fit_host_pacing.cc).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "sim/calib/fitters.h"
#include "sim/calib/host_op_predictors.h"
#include "sim/core/median.h"

namespace specsim::calib {
namespace {

// The median of the ops' medians whose class is `cls` (and, with `one_kernel`, that launch one
// kernel); none: nullopt.
std::optional<double> ClassMedian(const std::map<std::string, llm::HostOpCost>& ops, const std::string& cls,
                                  bool one_kernel) {
  std::vector<double> medians;
  for (const auto& [op, cost] : ops)
    if (cost.op_class == cls && (!one_kernel || cost.kernels == 1)) medians.push_back(cost.Median());
  if (medians.empty()) return std::nullopt;
  return MedianOf(std::move(medians));
}

}  // namespace

std::vector<double> QuantilesWithMean(const std::vector<double>& q, double mean_us) {
  std::vector<double> out = q;
  const size_t k = q.size() - 1;  // segments
  if (k < 1 || !(mean_us > 0)) return out;
  // The distribution's mean, linear between quantiles: (1/k) sum_i (q_i + q_{i+1}) / 2. Solve the
  // last segment's (q_{k-1} + v) / 2 = k mean - sum_{i<k-1} (q_i + q_{i+1}) / 2 for v.
  double body = 0;
  for (size_t i = 0; i + 1 < k; ++i) body += 0.5 * (q[i] + q[i + 1]);
  const double v = 2 * (static_cast<double>(k) * mean_us - body) - q[k - 1];
  out[k] = std::clamp(v, q[k - 1], q[k]);
  return out;
}

Status FitHostOps(FitContext& c) {
  // Per op: its items' quantiles, index by index, the top one set by the item's mean.
  std::map<std::string, std::vector<const trace::HostOpParams*>> by_op;
  std::map<const trace::HostOpParams*, std::vector<double>> quantiles;
  for (const trace::Item* it : c.ItemsOfKind(trace::KIND_HOST_OP))
    if (it->has_host_op() && it->host_op().host_quantiles_us_size() >= 2) {
      by_op[HostOpKey(it->host_op().op(), it->host_op().tokens())].push_back(&it->host_op());
      const auto& q = it->host_op().host_quantiles_us();
      quantiles[&it->host_op()] = QuantilesWithMean({q.begin(), q.end()}, it->stats().mean_us());
    }
  if (by_op.empty()) {
    c.result.not_fitted.push_back("host.ops (a framework's per-op host costs): no host-op items (torch_host_probe.py)");
    return OkStatus();
  }
  llm::HostCosts& host = c.result.params.host;
  std::vector<double> correlations;
  for (const auto& [op, items] : by_op)
    for (const trace::HostOpParams* p : items)
      if (p->call_correlation() > 0) correlations.push_back(p->call_correlation());
  if (!correlations.empty()) {
    const int n = static_cast<int>(correlations.size());
    host.call_correlation = MedianOf(std::move(correlations));
    c.result.fitted.push_back({"host.call_correlation", "", host.call_correlation, 0, n});
  } else {
    c.result.not_fitted.push_back(
        "host.call_correlation: no host-op item carries one (probes before 2026-12-03n): a pass's calls drawn "
        "independently");
  }
  for (const auto& [op, items] : by_op) {
    llm::HostOpCost cost;
    cost.op_class = items.front()->op_class();
    cost.kernels = items.front()->kernels();
    const int k = items.front()->host_quantiles_us_size();
    bool same_grid = true;
    for (const trace::HostOpParams* p : items) same_grid = same_grid && p->host_quantiles_us_size() == k;
    if (!same_grid)
      return InvalidArgumentError("host-op items of op \"" + op +
                                  "\" give their quantiles on different grids: one probe's items per op");
    for (int q = 0; q < k; ++q) {
      std::vector<double> at_q;
      for (const trace::HostOpParams* p : items) at_q.push_back(quantiles.at(p)[q]);
      cost.quantiles_us.push_back(MedianOf(std::move(at_q)));
    }
    // Medians of monotone sequences, index by index, stay monotone; the check keeps it so.
    RETURN_IF_ERROR(llm::ValidateHostOpCost(cost, "host op \"" + op + "\""));
    c.result.fitted.push_back({"host.ops." + op, "us", cost.Median(), 0, static_cast<int>(items.size())});
    host.ops[op] = std::move(cost);
  }
  auto set = [&](std::optional<double>& field, const char* name, std::optional<double> v) {
    if (!v) return;
    field = *v;
    c.result.fitted.push_back({std::string("host.") + name, "us", *v, 0, 0});
  };
  set(host.library_issue_us, "library_issue_us", ClassMedian(host.ops, "library", false));
  set(host.kernel_issue_us, "kernel_issue_us", ClassMedian(host.ops, "kernel", true));
  set(host.collective_issue_us, "collective_issue_us", ClassMedian(host.ops, "collective", false));
  set(host.graph_launch_us, "graph_launch_us", ClassMedian(host.ops, "graph_launch", false));
  set(host.sync_wake_us, "sync_wake_us", ClassMedian(host.ops, "sync", false));
  return OkStatus();
}

}  // namespace specsim::calib
