#include "sim/tools/calib_setup.h"

#include "sim/calib/hardware_from_trace.h"
#include "sim/calib/trace_io.h"
#include "sim/io/file_io.h"
#include "sim/io/hardware_loader.h"
#include "sim/io/textproto.h"

namespace specsim::tools {

StatusOr<config::Calibration> LoadCalibrationFile(const std::string& path) {
  ASSIGN_OR_RETURN(io::ConfigText text, io::ReadConfigFile(path));
  return io::ParseTextProto<config::Calibration>(text.text, text.display_name);
}

coll::ProtocolOverrides ProtocolOverridesFromCalibration(const config::NcclCalibration& n) {
  coll::ProtocolOverrides o;
  auto set = [](std::optional<double>& field, double value) {
    if (value != 0) field = value;
  };
  set(o.base_latency_ll_us, n.base_latency_ll_us());
  set(o.base_latency_simple_us, n.base_latency_simple_us());
  set(o.hop_latency_ll_us, n.hop_latency_ll_us());
  set(o.hop_latency_simple_us, n.hop_latency_simple_us());
  set(o.ll_wire_efficiency, n.ll_wire_efficiency());
  return o;
}

Status ApplyCalibrationFile(const std::string& path, net::Topology* topology) {
  ASSIGN_OR_RETURN(config::Calibration c, LoadCalibrationFile(path));
  return calib::ApplyFabricCalibration(c.fabric(), topology).WithPrefix(path);
}

StatusOr<CalibInputs> LoadCalibInputs(const std::string& trace_path, const std::string& hardware_path,
                                      const std::string& calibration_path) {
  CalibInputs in;
  ASSIGN_OR_RETURN(in.trace, calib::LoadTrace(trace_path));
  if (!hardware_path.empty()) {
    ASSIGN_OR_RETURN(net::Topology t, io::LoadHardwareFile(hardware_path));
    in.topology = std::make_unique<net::Topology>(std::move(t));
    in.hardware_source = hardware_path;
  } else {
    auto hw = calib::HardwareFromTrace(in.trace, "from-trace");
    if (!hw.ok()) return hw.status().WithPrefix(trace_path + ": no --hardware given and the trace's box is unknown");
    ASSIGN_OR_RETURN(net::Topology t, io::TopologyFromHardware(*hw, trace_path + " (hardware from trace)"));
    in.topology = std::make_unique<net::Topology>(std::move(t));
    in.hardware_source = "built from the trace";
  }
  if (!calibration_path.empty()) {
    ASSIGN_OR_RETURN(config::Calibration c, LoadCalibrationFile(calibration_path));
    RETURN_IF_ERROR(calib::ApplyFabricCalibration(c.fabric(), in.topology.get()).WithPrefix(calibration_path));
    in.params = calib::ApplyCalibrationProto(calib::DefaultParams(*in.topology, 0), c);
  } else {
    in.params = calib::DefaultParams(*in.topology, 0);
  }
  return in;
}

}  // namespace specsim::tools
