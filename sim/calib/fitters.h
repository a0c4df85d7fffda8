// Internal to the fit (fit.h): the fit groups, each in the file named for what it fits, with the
// law it fits in that file's header comment. fit.cc runs them on one FitContext, in this order:
// host link, P2P, (fabric applied), kernels, host link under load and host memory, NCCL, custom
// allreduce, host pacing, a framework's per-op host costs, and the timed call's gap last (which redoes everything from the kernels
// on). A group may use what the groups before it fitted.
#pragma once

#include <functional>

#include "sim/calib/fit_context.h"
#include "sim/core/status.h"

namespace specsim::calib {

// fit_host_link.cc: host copies per class, copy engines (multi-stream overhead, duplex), zero
// copy, small copies under a bulk copy, the shared host memory limit.
Status FitHostCopies(FitContext& c);
// `max_engines`: the most asynchronous copy engines a GPU of the trace has.
Status FitCopyEnginesAndDuplex(FitContext& c, int max_engines);
Status FitZeroCopy(FitContext& c);
Status FitUnderLoad(FitContext& c);
Status FitHostMemory(FitContext& c);

// fit_p2p.cc: GPU-to-GPU copies and kernel reads / writes per path class; our one-shot / two-shot
// allreduce kernels' flag trip and per-block read rate (peer and host-mapped).
Status FitP2p(FitContext& c);
Status FitCustomAllreduce(FitContext& c);

// fit_kernels.cc: the compute model (launch overheads, kernel floor, roofline efficiencies and
// ramps, per GEMM library, with the GEMM overlap), and the timed call's gap.
Status FitComputeByGemmLibrary(FitContext& c);
// Redoes the kernel fits from `before_kernels` for each gap tried, then `kernels_onwards` on the
// best gap; `c` takes that result.
Status FitTimedCallGap(const FitContext& before_kernels, const std::function<Status(FitContext&)>& kernels_onwards,
                       FitContext& c);

// fit_attention.cc: attention kernels' costs per implementation.
Status FitAttention(FitContext& c);

// fit_sampling.cc: the sampling kernels' row limit (compute.sampling_row_rate_glogits).
Status FitSampling(FitContext& c);

// fit_elementwise.cc: the elementwise and copy kernels' ramp and efficiency
// (compute.elementwise_memory_ramp_ns, elementwise_memory_efficiency).
Status FitElementwise(FitContext& c);

// fit_nccl.cc: one-rank NCCL calls (local copy, per-call overhead); NCCL's per-step costs per
// transport, protocol and op, and its eager / in-graph per-call extra.
Status FitNcclLocal(FitContext& c);
Status FitNcclSteps(FitContext& c);

// fit_host_pacing.cc: the ranks' host threads (issue costs, graph launch, jitter, sync wake).
Status FitHostPacing(FitContext& c);

// fit_host_ops.cc: a Python framework's host time per op (the PyTorch probe's single ops), and the
// host model's per-class costs from them.
Status FitHostOps(FitContext& c);
// The quantiles q_0..q_k (equally spaced, linear between them) with the top one replaced so that
// the distribution's mean is `mean_us`, within [q_{k-1}, q_k]; unchanged when mean_us <= 0.
std::vector<double> QuantilesWithMean(const std::vector<double>& q, double mean_us);

}  // namespace specsim::calib
