// Elementwise and copy kernels (fitters.h): kernel_cost.h's memory law for the elementwise class,
//     t = ramp_e + B / (bw * e_e)        (ramp_s instead of ramp_e for a strided kernel),
// fitted by weighted linear least squares (weights 1 / t: relative residuals) on the elementwise
// items' kernel device times (a profile's durations, KIND_ELEMENTWISE) with unknowns ramp_e
// (compute.elementwise_memory_ramp_ns: vectorized kernels), ramp_s
// (compute.strided_elementwise_memory_ramp_ns: ElementwiseParams.strided, only when such items
// exist; without vectorized items ramp_e takes the strided one's value) and 1 / (bw * e_e)
// (compute.elementwise_memory_efficiency), one rate for both kinds.
// Items below the kernel floor are rows of the floor, not of this law, and are left out. The
// efficiency keeps the compute fit's memory efficiency, and the ramp alone is fitted, when the items
// cannot show a streaming rate: all of one size, or all fill-bound (the largest item's bytes at the
// memory efficiency take less than the fitted ramp: below one wave of blocks PyTorch's kernels grow
// with size far faster than any bandwidth, traces/README.md torch-kernel-probe, and a slope fitted
// there extrapolates to no larger kernel). No elementwise items: both stay unset (the
// norms' ramp and the memory efficiency price these kernels).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "sim/calib/fitters.h"
#include "sim/calib/least_squares.h"
#include "sim/calib/predictors.h"
#include "sim/compute/kernel_cost.h"

namespace specsim::calib {

namespace {

struct ElementwiseRow {
  double bytes, ns;
  bool strided;
};

// Weighted least squares of the rows for the ramps (one column per kind present) and, unless
// `inverse` is given (>= 0), the inverse rate. Returns the solution with the columns
// [vectorized ramp or -1, strided ramp or -1, inverse].
StatusOr<LinearSolution> SolveElementwise(const std::vector<ElementwiseRow>& rows, double default_ramp,
                                          double default_inverse, double inverse) {
  const bool any_vec = std::any_of(rows.begin(), rows.end(), [](const ElementwiseRow& r) { return !r.strided; });
  const bool any_str = std::any_of(rows.begin(), rows.end(), [](const ElementwiseRow& r) { return r.strided; });
  LinearProblem p;
  std::vector<int> col(3, -1);  // the problem's column of each unknown
  auto add = [&](int which, const std::string& name, double def) {
    col[which] = static_cast<int>(p.names.size());
    p.names.push_back(name);
    p.defaults.push_back(def);
  };
  if (any_vec) add(0, "compute.elementwise_memory_ramp_ns", default_ramp);
  if (any_str) add(1, "compute.strided_elementwise_memory_ramp_ns", default_ramp);
  if (inverse < 0) add(2, "compute.inverse_elementwise_rate", default_inverse);
  for (const ElementwiseRow& r : rows) {
    std::vector<double> a(p.names.size(), 0.0);
    a[col[r.strided ? 1 : 0]] = 1.0;
    if (col[2] >= 0) a[col[2]] = r.bytes;
    p.AddRow(a, r.ns - (col[2] >= 0 ? 0.0 : r.bytes * inverse), 1.0 / r.ns);
  }
  ASSIGN_OR_RETURN(LinearSolution s, SolveLeastSquares(p, /*fix_undetermined=*/true, "elementwise fit"));
  LinearSolution out;
  for (int j = 0; j < 3; ++j) {
    const bool have = col[j] >= 0;
    out.x.push_back(have ? s.x[col[j]] : (j == 2 ? inverse : -1.0));
    out.determined.push_back(have && s.determined[col[j]]);
    out.residual_rms.push_back(have ? s.residual_rms[col[j]] : 0.0);
  }
  return out;
}

}  // namespace

Status FitElementwise(FitContext& c) {
  const net::GpuSpec& gpu = c.topology.gpu_spec(0);
  compute::ComputeParams& cp = c.result.params.compute;
  std::vector<ElementwiseRow> rows;
  for (const FitContext::MeasuredKernel& m : c.KernelsOfKind(trace::KIND_ELEMENTWISE))
    if (m.device_ns > cp.kernel_floor_ns) rows.push_back({m.kernel.bytes, m.device_ns, m.kernel.strided});
  if (rows.empty()) {
    c.result.not_fitted.push_back(
        "compute.elementwise_memory_ramp_ns: no elementwise items above the kernel floor (the norms' ramp prices "
        "them)");
    return OkStatus();
  }
  const double default_inverse = 1.0 / (gpu.memory_bandwidth_gbps * cp.memory_efficiency);  // ns per byte
  const double default_ramp = cp.RampNs(compute::KernelClass::kElementwise);
  ASSIGN_OR_RETURN(LinearSolution s, SolveElementwise(rows, default_ramp, default_inverse, -1));
  // The efficiency is a streaming rate: only items that stream long enough to show it measure it.
  // When even the largest item's bytes take less than the smallest ramp at the memory efficiency
  // (all of them fill-bound: one wave of blocks or less), their growth with size is the waves
  // filling, not the bandwidth, and extrapolates to no larger kernel: the ramps alone are fitted.
  double largest = 0;
  for (const ElementwiseRow& r : rows) largest = std::max(largest, r.bytes);
  double smallest_ramp = std::numeric_limits<double>::infinity();
  for (int j : {0, 1})
    if (s.x[j] >= 0) smallest_ramp = std::min(smallest_ramp, s.x[j]);
  const bool streams = largest * default_inverse >= smallest_ramp;
  if (!s.determined[2] || !streams) {
    ASSIGN_OR_RETURN(s, SolveElementwise(rows, default_ramp, default_inverse, default_inverse));
    s.determined[2] = false;
  }
  const double inverse = s.x[2];
  const double efficiency = inverse > 0 ? 1.0 / (inverse * gpu.memory_bandwidth_gbps) : 0;
  const double ramp = s.x[0] >= 0 ? s.x[0] : s.x[1];
  if (!(ramp >= 0) || (s.x[1] != -1.0 && !(s.x[1] >= 0)) || !(efficiency > 0 && efficiency <= 1))
    return InvalidArgumentError("the elementwise items (" + std::to_string(rows.size()) + ") fit to a ramp of " +
                                std::to_string(ramp) + " ns (strided " + std::to_string(s.x[1]) +
                                " ns) and an efficiency of " + std::to_string(efficiency) +
                                ": their times are not those of kernels streaming the bytes they name");
  const int n = static_cast<int>(rows.size());
  cp.elementwise_memory_ramp_ns = ramp;
  c.result.fitted.push_back({"compute.elementwise_memory_ramp_ns", "ns", ramp, s.residual_rms[s.x[0] >= 0 ? 0 : 1], n});
  if (s.x[1] >= 0) {
    cp.strided_elementwise_memory_ramp_ns = s.x[1];
    c.result.fitted.push_back({"compute.strided_elementwise_memory_ramp_ns", "ns", s.x[1], s.residual_rms[1], n});
  }
  if (s.determined[2]) {
    cp.elementwise_memory_efficiency = efficiency;
    c.result.fitted.push_back({"compute.elementwise_memory_efficiency", "", efficiency, s.residual_rms[2], n});
  } else {
    c.result.not_fitted.push_back(
        streams
            ? "compute.elementwise_memory_efficiency: the elementwise items do not separate it from the ramp (one "
              "size): the memory efficiency is kept"
            : "compute.elementwise_memory_efficiency: no elementwise item streams longer than the ramp (the "
              "largest, " +
                  std::to_string(static_cast<int64_t>(largest)) + " B, is fill-bound): the memory efficiency is kept");
  }
  return OkStatus();
}

}  // namespace specsim::calib
