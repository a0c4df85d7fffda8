// Fitting the simulator's parameters to a measurement trace (`specsim calibrate`).
//
// Groups, each fitted by the file named for what it fits (the law it fits in that file's header
// comment), in the laws of predictors.h: the linear ones by weighted least squares (least_squares.h;
// weights 1/measured, so relative residuals are minimised), the ones only the simulator evaluates by
// Gauss-Newton through the predictor (fit_context.h FitBySimulation):
//   fit_host_link.cc    host copies per class (H2D/D2H x pinned/pageable): t = L + B * (1/BW); copy
//                       engines, multi-stream overhead and duplex; zero copy (read: link- or
//                       per-SM-bound; write); small copies under a bulk copy; the shared host limit
//   fit_p2p.cc          P2P per path class: copy, kernel write, kernel read: t = L + B * (1/BW); our
//                       custom allreduce's flag trip and per-block read rate
//   fit_kernels.cc      compute: one joint problem over GEMM, RMSNorm and launch items (launch
//                       overheads, kernel floor, ramps, efficiencies), re-classified by the roofline
//                       side that binds until stable; GEMM overlap and per-library GEMM costs; the
//                       timed call's gap
//   fit_attention.cc    attention per implementation (Nelder-Mead on the kernel's geometry)
//   fit_nccl.cc         NCCL, one rank: local copy kernel and eager per-call overhead; 2+ ranks: per
//                       (transport, protocol, op) base latency, per-step latency, channel rate; the
//                       in-graph per-call extra
//   fit_host_pacing.cc  the ranks' host threads (issue costs, graph launch, jitter, sync wake)
// fit.cc runs them in order (fitters.h), on the shared state of fit_context.h.
// A group with no items keeps its defaults and is listed in not_fitted; a group whose items cannot
// separate its unknowns is an error (calibrate refuses), unless options.fix_undetermined (compare
// with a hold-out, where a random split may leave a group short), which keeps those defaults.
#pragma once

#include <string>
#include <vector>

#include "sim/calib/params.h"
#include "sim/core/status.h"
#include "sim/net/topology.h"
#include "specsim/calibration.pb.h"
#include "specsim/trace.pb.h"

namespace specsim::calib {

struct FittedParam {
  std::string name;  // e.g. "fabric.h2d_pinned.bandwidth_gbps"
  std::string unit;
  double value = 0;
  double residual = 0;  // rms relative residual of the items behind it
  int points = 0;
};

struct FitOptions {
  bool fix_undetermined = false;
};

struct FitResult {
  CalibParams params;
  std::vector<FittedParam> fitted;
  std::vector<std::string> not_fitted;  // "name: reason"
  // Items no group fits by design (MeasuredOnlyReason), one line per kind: "N KIND items ignored: reason".
  std::vector<std::string> notes;
  // The topology with the fitted fabric applied (ApplyFabricCalibration of the result's fabric
  // part: copy engines, copy setup, outstanding read bytes, host-link rate): the one the
  // simulation-backed fits (collectives) ran on, and the one to predict with.
  net::Topology topology;
};

// Fits on the items of `trace` whose indices are in `items` (all items when empty), starting from
// `start` (DefaultParams of the topology, usually). InvalidArgument when a parameter with items
// is undetermined (names it and the group) or when a fitted value is unphysical (an efficiency
// above 1: the hardware config's peak is too low).
StatusOr<FitResult> Fit(const trace::Trace& trace, const std::vector<int>& items, const net::Topology& topology,
                        const CalibParams& start, const FitOptions& options = {});

// The Calibration to write: ToCalibrationProto(result.params) with the derived GPU-model fields
// (copy_engine_setup_ns, kernel_read_outstanding_bytes_per_sm on `topology`'s host path) and the
// provenance list.
config::Calibration CalibrationFromFit(const FitResult& result, const net::Topology& topology,
                                       const std::string& source);

}  // namespace specsim::calib
