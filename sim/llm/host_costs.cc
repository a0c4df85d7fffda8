#include "sim/llm/host_costs.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sim/core/median.h"

namespace specsim::llm {

double HostOpCost::At(double u) const {
  const size_t k = quantiles_us.size() - 1;
  const double x = std::clamp(u, 0.0, 1.0) * static_cast<double>(k);
  const size_t i = std::min(static_cast<size_t>(x), k - 1);
  const double f = x - static_cast<double>(i);
  return quantiles_us[i] + f * (quantiles_us[i + 1] - quantiles_us[i]);
}

Status ValidateHostOpCost(const HostOpCost& cost, const std::string& where) {
  if (cost.quantiles_us.size() < 2)
    return InvalidArgumentError(where + ": " + std::to_string(cost.quantiles_us.size()) +
                                " quantiles: a distribution needs at least 2 (its fastest and slowest call)");
  for (size_t i = 0; i < cost.quantiles_us.size(); ++i) {
    const double q = cost.quantiles_us[i];
    if (!std::isfinite(q) || q < 0)
      return InvalidArgumentError(where + ": quantile " + std::to_string(i) + " = " + std::to_string(q) +
                                  ": must be a finite time >= 0");
    if (i > 0 && q < cost.quantiles_us[i - 1])
      return InvalidArgumentError(where + ": quantile " + std::to_string(i) + " = " + std::to_string(q) +
                                  " is below the one before it: quantiles must not decrease");
  }
  return OkStatus();
}

Jitter ExponentialJitter(double mean_us) {
  Jitter j;
  if (mean_us > 0) {
    j.kind = Jitter::Kind::kExponential;
    j.mean_us = mean_us;
  }
  return j;
}

HostModel HostModelOf(const HostCosts& host, const compute::KernelCostModel& cost) {
  auto or_default = [](const std::optional<double>& us, SimTime fallback) {
    return us ? PicosFromMicros(*us) : fallback;
  };
  HostModel h;
  const SimTime launch = cost.LaunchOverhead(false);
  h.kernel_issue_ps = or_default(host.kernel_issue_us, launch);
  h.library_issue_ps = or_default(host.library_issue_us, launch);
  h.collective_issue_ps = or_default(host.collective_issue_us, launch);
  h.graph_launch_ps = or_default(host.graph_launch_us, cost.GraphLaunchOverhead());
  h.sync_wake_ps = or_default(host.sync_wake_us, 0);
  h.eager_gap_ps = cost.EagerDeviceGap();
  h.graph_gap_ps = cost.LaunchOverhead(true);
  h.jitter = host.jitter;
  h.call_correlation = host.call_correlation;
  h.call_quantiles_us[static_cast<size_t>(HostOpClass::kKernel)] = CallQuantiles(host.ops, "kernel", true);
  h.call_quantiles_us[static_cast<size_t>(HostOpClass::kLibrary)] = CallQuantiles(host.ops, "library", false);
  h.call_quantiles_us[static_cast<size_t>(HostOpClass::kCollective)] = CallQuantiles(host.ops, "collective", false);
  return h;
}

std::vector<double> CallQuantiles(const std::map<std::string, HostOpCost>& ops, const std::string& op_class,
                                  bool one_kernel) {
  std::vector<const HostOpCost*> of_class;
  for (const auto& [key, cost] : ops)
    if (cost.op_class == op_class && (!one_kernel || cost.kernels == 1) && !cost.quantiles_us.empty())
      of_class.push_back(&cost);
  if (of_class.empty()) return {};
  const size_t k = of_class.front()->quantiles_us.size();
  for (const HostOpCost* c : of_class)
    if (c->quantiles_us.size() != k) return {};  // different grids: no common shape (the fixed cost)
  std::vector<double> out;
  for (size_t i = 0; i < k; ++i) {
    std::vector<double> at;
    for (const HostOpCost* c : of_class) at.push_back(c->quantiles_us[i]);
    out.push_back(MedianOf(std::move(at)));
  }
  return out;  // medians of non-decreasing sequences, index by index: non-decreasing
}

}  // namespace specsim::llm
