// Fitting the simulator's parameters to a measurement trace (`specsim calibrate`).
//
// Groups, each a weighted linear least-squares problem (least_squares.h; weights 1/measured, so
// relative residuals are minimised) in the laws of predictors.h:
//   host copies      per class (H2D/D2H x pinned/pageable): t = L + B * (1/BW)
//   copy engines     c = the engine count (1..the GPU's async engines) whose fit of the concurrent
//                    copies is best; with it, jointly over bidirectional and concurrent copies:
//                    O_ms (multi-stream overhead) and 1/duplex
//   zero copy        read: t = L + B * (1/BW) or L + (B / min(blocks, SMs)) * (1/per-SM rate), each
//                    item on the side that binds (re-classified until stable); write: t = L + B/BW
//   P2P              per path class: copy, kernel write, kernel read: t = L + B * (1/BW)
//   compute          one joint problem over GEMM, attention, RMSNorm and launch items with unknowns
//                    eager issue, kernel floor, graph launch, graph gap, memory ramp and the
//                    inverse efficiencies (memory, skinny GEMM, attention, GEMM compute). Each
//                    kernel item is a row of the roofline term that binds under the current
//                    parameters (memory: issue + ramp + B/bw * 1/e; compute: issue + F/(peak*ramp(m))
//                    * 1/e_c; floor: issue + floor); eager launches issue*k + floor (CPU-bound),
//                    graph launches G + k*(floor + gap). Re-classified until stable (<= 20 rounds).
//   NCCL, one rank   the eager per-call overhead beyond the copy kernel: mean residual of eager items
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
