// The ranks' host threads (fitters.h; llm::HostCosts, sim/llm/rank_timeline.h HostModel) from the
// host-paced loops of the pacing suite, through the loops' predictor (loop_predictors.h: the law is
// the rank timelines):
//   layer loops, eager   per layer each rank's host issues a library call (the GEMM) and a
//                        collective call: library_issue_us, collective_issue_us
//   layer loops, graph   one graph launch per iteration: graph_launch_us
//   skew loops           the longest rank's wait for the last one to arrive: the natural jitter
//                        (an exponential per op of mean jitter_mean_us) and the sync wake, fitted
//                        only when the trace has skew loops
// by FitBySimulation over those items (the loops are seeded identically for every prediction, so
// the fit sees smooth changes). The raw kernel launch stays the compute fit's eager launch (launch
// items).
#include <algorithm>

#include "sim/calib/fitters.h"

namespace specsim::calib {

Status FitHostPacing(FitContext& c) {
  std::vector<const trace::Item*> loops;
  bool skew = false;
  for (const trace::Item* it : c.items) {
    if (it->kind() == trace::KIND_LAYER_LOOP || it->kind() == trace::KIND_COLLECTIVE_SKEW) loops.push_back(it);
    skew = skew || it->kind() == trace::KIND_COLLECTIVE_SKEW;
  }
  if (loops.empty()) {
    c.result.not_fitted.push_back(
        "host.library_issue_us, host.collective_issue_us, host.graph_launch_us, host.jitter_mean_us, "
        "host.sync_wake_us: no host-paced loops (pacing suite) in the trace (defaults kept: the "
        "compute model's launch overheads, no jitter)");
    return OkStatus();
  }
  const llm::HostCosts& h = c.result.params.host;
  const double launch_us = c.result.params.compute.launch_overhead_eager_ns * 1e-3;
  std::vector<SimUnknown> u = {
      {"host.library_issue_us", "us", h.library_issue_us.value_or(2 * launch_us), 0.25, 0, 500},
      {"host.collective_issue_us", "us", h.collective_issue_us.value_or(2 * launch_us), 0.25, 0, 500},
      {"host.graph_launch_us", "us", h.graph_launch_us.value_or(c.result.params.compute.graph_launch_ns * 1e-3), 0.25,
       0, 500}};
  // The natural jitter and the sync wake show apart from the issue costs only in a skew loop (a
  // rank's wait for the last one): in a layer loop an Exp(m) jitter per op adds about m per op,
  // as an issue cost does, and a fit of both on layer loops alone trades one for the other (an
  // issue cost of 0 against a jitter of several us per op fits such loops as well as the truth).
  if (skew) {
    u.push_back({"host.jitter_mean_us", "us", std::max(h.jitter.mean_us, 0.5), 0.1, 0, 100});
    u.push_back({"host.sync_wake_us", "us", h.sync_wake_us.value_or(1.0), 0.25, 0, 500});
  } else {
    c.result.not_fitted.push_back(
        "host.jitter_mean_us, host.sync_wake_us: no skew loops (2+ GPUs) to tell them apart from the issue costs "
        "(defaults kept)");
  }
  return c.FitBySimulation("host pacing", loops, u, [skew](const std::vector<double>& t, CalibParams* p) {
    p->host.library_issue_us = t[0];
    p->host.collective_issue_us = t[1];
    p->host.graph_launch_us = t[2];
    if (skew) {
      p->host.jitter = llm::ExponentialJitter(t[3]);
      p->host.sync_wake_us = t[4];
    }
  });
}

}  // namespace specsim::calib
