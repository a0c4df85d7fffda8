// Shared by `specsim calibrate`, `compare` and `hardware-from-trace`: a trace, the topology to
// re-simulate it on (--hardware, else built from the trace) and the starting parameters (the
// topology's defaults, then --calibration).
#pragma once

#include <memory>
#include <string>

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
};

StatusOr<CalibInputs> LoadCalibInputs(const std::string& trace_path, const std::string& hardware_path,
                                      const std::string& calibration_path);

// Reads a Calibration textproto (bundled paths work as in io::ReadConfigFile).
StatusOr<config::Calibration> LoadCalibrationFile(const std::string& path);

// The calibration's NCCL per-step values as planner overrides (set fields only).
coll::ProtocolOverrides ProtocolOverridesFromCalibration(const config::NcclCalibration& nccl);

// Loads a calibration and applies its fabric part to `topology` (calib::ApplyFabricCalibration:
// copy engines, copy setup, outstanding read bytes, host-link rate). The NCCL per-step fields are
// not applied yet (the planner has no hook for them); errors name the file.
Status ApplyCalibrationFile(const std::string& path, net::Topology* topology);

}  // namespace specsim::tools
