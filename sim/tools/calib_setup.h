// Shared by `specsim calibrate`, `compare` and `hardware-from-trace`: a trace (or several traces of
// one box merged, calib::MergeTraces), the topology to re-simulate it on (--hardware, else built
// from the trace) and the starting parameters (the topology's defaults, then --calibration).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/calib/fit.h"
#include "sim/calib/params.h"
#include "sim/coll/protocol.h"
#include "sim/core/status.h"
#include "sim/net/topology.h"
#include "specsim/trace.pb.h"

namespace specsim::tools {

struct CalibInputs {
  trace::Trace trace;
  std::unique_ptr<net::Topology> topology;
  std::string hardware_source;  // the --hardware path, or "from the trace"
  calib::CalibParams params;
  std::optional<config::Calibration> calibration;  // as read from calibration_path, when given
};

StatusOr<CalibInputs> LoadCalibInputs(const std::string& trace_path, const std::string& hardware_path,
                                      const std::string& calibration_path);
// Several traces of one box, loaded and merged (calib::MergeTraces; errors name the files); one
// path behaves as above.
StatusOr<CalibInputs> LoadCalibInputs(const std::vector<std::string>& trace_paths, const std::string& hardware_path,
                                      const std::string& calibration_path);

// A parameter group the fit left at its default: `names` as FitResult::not_fitted gives them
// (before the ':'), the reason after it, and the kept value of every name that is a numeric field
// of the Calibration proto (e.g. "fabric.d2h_pinned.latency_ns"), as "name = value". A value of 0
// says so: the Calibration proto stores 0 as "unset", which readers replace by the built-in
// default. Entries the fit reports twice are listed once.
struct KeptDefault {
  std::string names;
  std::string reason;
  std::vector<std::string> values;  // "fabric.d2h_pinned.latency_ns = 3500"; empty when none resolves
};
std::vector<KeptDefault> KeptDefaults(const calib::FitResult& fit);

// Reads a Calibration textproto (bundled paths work as in io::ReadConfigFile).
StatusOr<config::Calibration> LoadCalibrationFile(const std::string& path);

// Loads a calibration and applies its fabric part to `topology` (calib::ApplyFabricCalibration:
// copy engines, copy setup, outstanding read bytes, host-link rate). The NCCL per-step fields are
// not applied yet (the planner has no hook for them); errors name the file.
Status ApplyCalibrationFile(const std::string& path, net::Topology* topology);

}  // namespace specsim::tools
