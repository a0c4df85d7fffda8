// Elementwise and copy kernels (fitters.h): kernel_cost.h's memory law for the elementwise class,
//     t = ramp_e + B / (bw * e_e),
// fitted by weighted linear least squares (weights 1 / t: relative residuals) on the elementwise
// items' kernel device times (a profile's durations, KIND_ELEMENTWISE) with unknowns ramp_e
// (compute.elementwise_memory_ramp_ns) and 1 / (bw * e_e) (compute.elementwise_memory_efficiency).
// Items below the kernel floor are rows of the floor, not of this law, and are left out. The
// efficiency keeps the compute fit's memory efficiency, and the ramp alone is fitted, when the items
// cannot show a streaming rate: all of one size, or all fill-bound (the largest item's bytes at the
// memory efficiency take less than the fitted ramp: below one wave of blocks PyTorch's kernels grow
// with size far faster than any bandwidth, traces/README.md torch-kernel-probe, and a slope fitted
// there extrapolates to no larger kernel). No elementwise items: both stay unset (the
// norms' ramp and the memory efficiency price these kernels).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/calib/fitters.h"
#include "sim/calib/least_squares.h"
#include "sim/calib/predictors.h"
#include "sim/compute/kernel_cost.h"

namespace specsim::calib {

Status FitElementwise(FitContext& c) {
  const net::GpuSpec& gpu = c.topology.gpu_spec(0);
  compute::ComputeParams& cp = c.result.params.compute;
  const compute::KernelCostModel gap_cost(gpu, cp);
  std::vector<std::pair<double, double>> rows;  // bytes, device ns
  for (const trace::Item* it : c.ItemsOfKind(trace::KIND_ELEMENTWISE)) {
    const ItemKernel ik = KernelOfItem(*it);
    if (!ik.ok) continue;
    const double ns =
        KernelTimeOnly(*it) ? MeasuredNs(*it) : MeasuredNs(*it) - TimedCallGapNs(gap_cost, c.result.params.bench);
    if (ns > cp.kernel_floor_ns) rows.push_back({ik.kernel.bytes, ns});
  }
  if (rows.empty()) {
    c.result.not_fitted.push_back(
        "compute.elementwise_memory_ramp_ns: no elementwise items above the kernel floor (the norms' ramp prices "
        "them)");
    return OkStatus();
  }
  LinearProblem p;
  p.names = {"compute.elementwise_memory_ramp_ns", "compute.inverse_elementwise_rate"};
  const double default_inverse = 1.0 / (gpu.memory_bandwidth_gbps * cp.memory_efficiency);  // ns per byte
  p.defaults = {cp.RampNs(compute::KernelClass::kElementwise), default_inverse};
  for (const auto& [bytes, ns] : rows) p.AddRow({1.0, bytes}, ns, 1.0 / ns);
  ASSIGN_OR_RETURN(LinearSolution s, SolveLeastSquares(p, /*fix_undetermined=*/true, "elementwise fit"));
  // The efficiency is a streaming rate: only items that stream long enough to show it measure it.
  // When even the largest item's bytes take less than the ramp at the memory efficiency (all of
  // them fill-bound: one wave of blocks or less), their growth with size is the waves filling, not
  // the bandwidth, and extrapolates to no larger kernel: the ramp alone is fitted.
  double largest = 0;
  for (const auto& [bytes, ns] : rows) largest = std::max(largest, bytes);
  const bool streams = largest * default_inverse >= s.x[0];
  if (!s.determined[1] || !streams) {
    // The bytes at the memory efficiency, the ramp alone on what is left.
    LinearProblem ramp_only;
    ramp_only.names = {p.names[0]};
    ramp_only.defaults = {p.defaults[0]};
    for (const auto& [bytes, ns] : rows) ramp_only.AddRow({1.0}, ns - bytes * default_inverse, 1.0 / ns);
    ASSIGN_OR_RETURN(LinearSolution r, SolveLeastSquares(ramp_only, /*fix_undetermined=*/true, "elementwise fit"));
    s.x = {r.x[0], default_inverse};
    s.determined = {r.determined[0], false};
    s.residual_rms = {r.residual_rms[0], r.residual_rms[0]};
  }
  const double ramp = s.x[0], inverse = s.x[1];
  const double efficiency = inverse > 0 ? 1.0 / (inverse * gpu.memory_bandwidth_gbps) : 0;
  if (!(ramp >= 0) || !(efficiency > 0 && efficiency <= 1))
    return InvalidArgumentError("the elementwise items (" + std::to_string(rows.size()) + ") fit to a ramp of " +
                                std::to_string(ramp) + " ns and an efficiency of " + std::to_string(efficiency) +
                                ": their times are not those of kernels streaming the bytes they name");
  cp.elementwise_memory_ramp_ns = ramp;
  const int n = static_cast<int>(rows.size());
  c.result.fitted.push_back({"compute.elementwise_memory_ramp_ns", "ns", ramp, s.residual_rms[0], n});
  if (s.determined[1]) {
    cp.elementwise_memory_efficiency = efficiency;
    c.result.fitted.push_back({"compute.elementwise_memory_efficiency", "", efficiency, s.residual_rms[1], n});
  } else {
    c.result.not_fitted.push_back(
        streams
            ? "compute.elementwise_memory_efficiency: the elementwise items do not separate it from the ramp (one "
              "size): the memory efficiency is kept"
            : "compute.elementwise_memory_efficiency: no elementwise item streams longer than the ramp (the largest, " +
                  std::to_string(static_cast<int64_t>(largest)) + " B, is fill-bound): the memory efficiency is kept");
  }
  return OkStatus();
}

}  // namespace specsim::calib
