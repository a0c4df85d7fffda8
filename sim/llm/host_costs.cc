#include "sim/llm/host_costs.h"

namespace specsim::llm {

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
  return h;
}

}  // namespace specsim::llm
