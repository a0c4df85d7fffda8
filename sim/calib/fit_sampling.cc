// Sampling kernels (fitters.h): the row limit of compute/kernel_cost.h, a sampling kernel's time
// t >= ramp + V / r for rows of V logits (argmax, samplers reduce a row in few blocks). Every item
// bounds r from below, r >= V / (t - ramp) (its kernel is at least as slow as the limit), and an
// item the limit binds meets it: r = the largest V / (t - ramp) over the sampling items, with t the
// kernels' device time (a profiler's duration, or validate's call less the timed call's gap). It
// is kept when it lowers the sum of squared log errors of the sampling items against no limit
// (the bandwidth law alone); else the limit stays unset and is listed as not binding.
#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/calib/fitters.h"
#include "sim/calib/predictors.h"
#include "sim/compute/kernel_cost.h"

namespace specsim::calib {
namespace {

// Squared log errors of the sampling kernels' device times under `cp`.
double SquaredLogErrors(const std::vector<std::pair<compute::Kernel, double>>& rows, const net::GpuSpec& gpu,
                        const compute::ComputeParams& cp) {
  const compute::KernelCostModel cost(gpu, cp);
  double sum = 0;
  for (const auto& [k, ns] : rows) sum += std::pow(std::log(NanosFromPicos(cost.KernelTime(k)) / std::max(ns, 1.0)), 2);
  return sum;
}

}  // namespace

Status FitSampling(FitContext& c) {
  const net::GpuSpec& gpu = c.topology.gpu_spec(0);
  compute::ComputeParams& cp = c.result.params.compute;
  std::vector<std::pair<compute::Kernel, double>> rows;  // kernel, device ns
  for (const FitContext::MeasuredKernel& m : c.KernelsOfKind(trace::KIND_SAMPLING))
    rows.push_back({m.kernel, m.device_ns});
  if (rows.empty()) return OkStatus();
  const double ramp = cp.RampNs(compute::KernelClass::kSampling);
  double rate = 0;
  for (const auto& [k, ns] : rows)
    if (ns > ramp && k.n > 0) rate = std::max(rate, k.n / (ns - ramp));
  compute::ComputeParams limited = cp;
  limited.sampling_row_rate_glogits = rate;
  compute::ComputeParams unlimited = cp;
  unlimited.sampling_row_rate_glogits = 0;
  const double with = SquaredLogErrors(rows, gpu, limited), without = SquaredLogErrors(rows, gpu, unlimited);
  if (rate > 0 && with < without) {
    cp.sampling_row_rate_glogits = rate;
    c.result.fitted.push_back({"compute.sampling_row_rate_glogits", "Glogit/s", rate,
                               std::sqrt(with / static_cast<double>(rows.size())), static_cast<int>(rows.size())});
  } else {
    c.result.not_fitted.push_back(
        "compute.sampling_row_rate_glogits: no sampling item is slower than the bandwidth "
        "law (no row limit)");
  }
  return OkStatus();
}

}  // namespace specsim::calib
