// The ranks' host costs as a calibration states them (calibration.proto HostPacingCalibration,
// fitted from specsim-validate's pacing suite): what a rank's host thread spends to issue one eager
// op of each class (a raw kernel, a library call, a collective call), to launch a CUDA graph and to
// wake after a sync, and how those costs vary per rank and op (the natural jitter). A cost left
// unset is the compute model's launch overhead (raw kernel, library and collective issue:
// launch_overhead_eager_ns; graph launch: graph_launch_ns), a wake no time.
//
// This is the one form these values take between a calibration file (sim/calib/calibration_loader.h)
// and the rank timelines (rank_timeline.h HostModel): the scenario's decode loop and compare's loop
// predictors both convert it with HostModelOf.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/compute/kernel_cost.h"
#include "sim/core/status.h"
#include "sim/llm/rank_timeline.h"

namespace specsim::llm {

// One op of a Python framework (a PyTorch call: Python, the dispatcher, its kernel launches) as its
// host thread pays it: the host time per call as a distribution, given by equally spaced quantiles
// q_0..q_k (q_0 the fastest call, q_k the slowest; linear between them).
struct HostOpCost {
  std::string op_class;  // library, kernel, collective, graph_launch, sync, metadata
  int kernels = 0;       // GPU kernels one call launches
  std::vector<double> quantiles_us;
  // The cost at quantile u in [0, 1] (the inverse of the distribution). REQUIRES: >= 2 quantiles.
  double At(double u) const;
  double Median() const { return At(0.5); }
};

// The distribution's own checks: at least 2 quantiles, each finite and >= 0, non-decreasing.
Status ValidateHostOpCost(const HostOpCost& cost, const std::string& where);

struct HostCosts {
  std::optional<double> kernel_issue_us;      // cudaLaunchKernel of one raw kernel
  std::optional<double> library_issue_us;     // one eager library call (a cuBLAS GEMM)
  std::optional<double> collective_issue_us;  // one eager collective call (ncclAllReduce)
  std::optional<double> graph_launch_us;      // one cudaGraphLaunch
  std::optional<double> sync_wake_us;         // from the GPU finishing to the host thread running on
  Jitter jitter;                              // per rank and op (kNone: none)
  // A Python framework's ops by name (validate/torch_host_probe.py): loops of them are priced op by
  // op from these (sim/calib/loop_predictors.h, KIND_HOST_LOOP).
  std::map<std::string, HostOpCost> ops;
  // The correlation of a pass's calls' draws from `ops` (HostModel::call_correlation); 0: independent.
  double call_correlation = 0;
};

// An exponential jitter of mean `mean_us`; none when the mean is 0 (or less).
Jitter ExponentialJitter(double mean_us);

// The rank timelines' host model on a GPU of `cost`: each calibrated cost, else the compute model's
// launch overhead for it; the GPU gaps of `cost` (eager: EagerDeviceGap, graph: LaunchOverhead in a
// graph); the natural jitter. No framework cost: the decode simulator adds its framework's.
// With per-op costs (HostCosts::ops), each class's per-call distribution (HostModel::call_quantiles_us):
// kernel from the one-kernel ops, library and collective from theirs.
HostModel HostModelOf(const HostCosts& host, const compute::KernelCostModel& cost);

// The per-call distribution of the ops of `op_class` (with `one_kernel`, those launching one
// kernel): quantile by quantile, the median over those ops; empty when none (or their grids differ).
std::vector<double> CallQuantiles(const std::map<std::string, HostOpCost>& ops, const std::string& op_class,
                                  bool one_kernel);

}  // namespace specsim::llm
