#include "sim/calib/calib_inputs.h"

#include <fmt/format.h>

#include <string>
#include <utility>

#include "sim/calib/hardware_from_trace.h"
#include "sim/calib/trace_io.h"
#include "sim/core/strings.h"
#include "sim/io/file_io.h"
#include "sim/io/hardware_loader.h"

namespace specsim::calib {
namespace {

// `warnings`: the trace's implausible values, before the hardware file's and the calibration's.
// "" when the trace's GPUs are the hardware file's model (one name containing the other, case
// ignored: "NVIDIA H200" and "H200"); else what differs, e.g. "the box has 8x RTX PRO 6000, the
// trace was measured on 2x NVIDIA H200".
std::string GpuMismatch(const trace::Trace& trace, const net::Topology& topology) {
  if (trace.environment().gpus_size() == 0 || topology.num_gpus() == 0) return "";
  const std::string box = topology.gpu_spec(0).name, measured = trace.environment().gpus(0).name();
  const std::string a = AsciiLower(box), b = AsciiLower(measured);
  if (a.empty() || b.empty() || a.find(b) != std::string::npos || b.find(a) != std::string::npos) return "";
  return fmt::format("the box has {}x {}, the trace was measured on {}x {}", topology.num_gpus(), box,
                     trace.environment().gpus_size(), measured);
}

StatusOr<CalibInputs> CalibInputsFor(trace::Trace trace, std::vector<std::string> warnings,
                                     const std::string& trace_display, const std::string& hardware_path,
                                     const std::string& calibration_path) {
  CalibInputs in;
  in.trace = std::move(trace);
  in.warnings = std::move(warnings);
  if (!hardware_path.empty()) {
    ASSIGN_OR_RETURN(net::Topology t, io::LoadHardwareFile(hardware_path, &in.warnings));
    in.topology = std::make_unique<net::Topology>(std::move(t));
    in.hardware_source = hardware_path + " (" + io::ConfigSourceOf(hardware_path) + ")";
    const std::string mismatch = GpuMismatch(in.trace, *in.topology);
    if (!mismatch.empty())
      in.warnings.push_back("warning: --hardware " + hardware_path + ": " + mismatch +
                            ": the fit describes neither box (give the box the trace was measured on, or no "
                            "--hardware: the box built from the trace)");
  } else if (in.trace.tool() == "specsim import-profile" && in.trace.environment().peers_size() == 0) {
    return InvalidArgumentError(trace_display +
                                ": a trace imported from a profiler does not describe the box's links (no GPU "
                                "pairs): give the box with --hardware (configs/hardware/... or your own)");
  } else if (in.trace.tool() == "nccl-tests") {
    return InvalidArgumentError(trace_display +
                                ": an nccl-tests log names its GPUs but not the box's links: give the box with "
                                "--hardware (configs/hardware/..., or `specsim hardware-from-topo` of the box)");
  } else {
    auto hw = HardwareFromTrace(in.trace, "from-trace");
    if (!hw.ok()) return hw.status().WithPrefix(trace_display + ": no --hardware given and the trace's box is unknown");
    ASSIGN_OR_RETURN(net::Topology t, io::TopologyFromHardware(*hw, trace_display + " (hardware from trace)"));
    in.topology = std::make_unique<net::Topology>(std::move(t));
    in.hardware_source = "built from the trace";
  }
  if (!calibration_path.empty()) {
    ASSIGN_OR_RETURN(LoadedCalibration c, LoadCalibration(calibration_path));
    in.warnings.insert(in.warnings.end(), c.warnings.begin(), c.warnings.end());
    ApplyFabricCalibration(c.fabric(), in.topology.get());
    in.params = CalibParamsOf(c, DefaultParams(*in.topology, 0));
    in.calibration = std::move(c);
  } else {
    in.params = DefaultParams(*in.topology, 0);
  }
  return in;
}

}  // namespace

StatusOr<CalibInputs> LoadCalibInputs(const std::string& trace_path, const std::string& hardware_path,
                                      const std::string& calibration_path) {
  std::vector<std::string> warnings;
  ASSIGN_OR_RETURN(trace::Trace t, LoadTrace(trace_path, &warnings));
  return CalibInputsFor(std::move(t), std::move(warnings), trace_path, hardware_path, calibration_path);
}

StatusOr<CalibInputs> LoadCalibInputs(const std::vector<std::string>& trace_paths, const std::string& hardware_path,
                                      const std::string& calibration_path) {
  if (trace_paths.size() == 1) return LoadCalibInputs(trace_paths[0], hardware_path, calibration_path);
  std::vector<std::pair<std::string, trace::Trace>> traces;
  std::string display;
  std::vector<std::string> warnings;
  for (const std::string& path : trace_paths) {
    ASSIGN_OR_RETURN(trace::Trace t, LoadTrace(path, &warnings));
    traces.emplace_back(path, std::move(t));
    display += (display.empty() ? "" : ", ") + path;
  }
  ASSIGN_OR_RETURN(trace::Trace merged, MergeTraces(traces));
  return CalibInputsFor(std::move(merged), std::move(warnings), display, hardware_path, calibration_path);
}

}  // namespace specsim::calib
