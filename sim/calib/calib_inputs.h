// What `specsim calibrate`, `compare` and `hardware-from-trace` (and the trace fuzzer) run on: a
// trace (or several traces of one box merged, MergeTraces), the topology to re-simulate it on (a
// hardware file, else the box the trace describes) and the starting parameters (the topology's
// defaults, then a calibration file's values, calibration_loader.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/calib/calibration_loader.h"
#include "sim/calib/params.h"
#include "sim/core/status.h"
#include "sim/net/topology.h"
#include "specsim/trace.pb.h"

namespace specsim::calib {

struct CalibInputs {
  trace::Trace trace;
  std::unique_ptr<net::Topology> topology;
  std::string hardware_source;  // the --hardware path, or "from the trace"
  CalibParams params;
  std::optional<LoadedCalibration> calibration;  // as read from calibration_path, when given
  // Implausible values ("warning: FILE: FIELD = ..."): the traces', the hardware file's, the calibration's.
  std::vector<std::string> warnings;
};

StatusOr<CalibInputs> LoadCalibInputs(const std::string& trace_path, const std::string& hardware_path,
                                      const std::string& calibration_path);
// Several traces of one box, loaded and merged (MergeTraces; errors name the files); one
// path behaves as above.
StatusOr<CalibInputs> LoadCalibInputs(const std::vector<std::string>& trace_paths, const std::string& hardware_path,
                                      const std::string& calibration_path);

}  // namespace specsim::calib
