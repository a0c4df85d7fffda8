#include "sim/tools/calib_setup.h"

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <set>

#include "sim/calib/hardware_from_trace.h"
#include "sim/calib/params.h"
#include "sim/calib/trace_io.h"
#include "sim/io/file_io.h"
#include "sim/io/hardware_loader.h"
#include "sim/io/textproto.h"

namespace specsim::tools {

StatusOr<config::Calibration> LoadCalibrationFile(const std::string& path) {
  ASSIGN_OR_RETURN(io::ConfigText text, io::ReadConfigFile(path));
  ASSIGN_OR_RETURN(config::Calibration c, io::ParseTextProto<config::Calibration>(text.text, text.display_name));
  RETURN_IF_ERROR(io::CheckFiniteNumbers(c, text.display_name));
  RETURN_IF_ERROR(calib::ValidateHostPacing(c.host()).WithPrefix(text.display_name));
  return c;
}

Status ApplyCalibrationFile(const std::string& path, net::Topology* topology) {
  ASSIGN_OR_RETURN(config::Calibration c, LoadCalibrationFile(path));
  return calib::ApplyFabricCalibration(c.fabric(), topology).WithPrefix(path);
}

namespace {

StatusOr<CalibInputs> CalibInputsFor(trace::Trace trace, const std::string& trace_display,
                                     const std::string& hardware_path, const std::string& calibration_path) {
  CalibInputs in;
  in.trace = std::move(trace);
  if (!hardware_path.empty()) {
    ASSIGN_OR_RETURN(net::Topology t, io::LoadHardwareFile(hardware_path));
    in.topology = std::make_unique<net::Topology>(std::move(t));
    in.hardware_source = hardware_path;
  } else if (in.trace.tool() == "specsim import-profile" && in.trace.environment().peers_size() == 0) {
    return InvalidArgumentError(trace_display +
                                ": a trace imported from a profiler does not describe the box's links (no GPU "
                                "pairs): give the box with --hardware (configs/hardware/... or your own)");
  } else {
    auto hw = calib::HardwareFromTrace(in.trace, "from-trace");
    if (!hw.ok()) return hw.status().WithPrefix(trace_display + ": no --hardware given and the trace's box is unknown");
    ASSIGN_OR_RETURN(net::Topology t, io::TopologyFromHardware(*hw, trace_display + " (hardware from trace)"));
    in.topology = std::make_unique<net::Topology>(std::move(t));
    in.hardware_source = "built from the trace";
  }
  if (!calibration_path.empty()) {
    ASSIGN_OR_RETURN(config::Calibration c, LoadCalibrationFile(calibration_path));
    RETURN_IF_ERROR(calib::ApplyFabricCalibration(c.fabric(), in.topology.get()).WithPrefix(calibration_path));
    in.params = calib::ApplyCalibrationProto(calib::DefaultParams(*in.topology, 0), c);
    in.calibration = std::move(c);
  } else {
    in.params = calib::DefaultParams(*in.topology, 0);
  }
  return in;
}

// The numeric field at `path` ("fabric.d2h_pinned.latency_ns") of `message`, when there is one.
std::optional<double> NumericField(const google::protobuf::Message& message, const std::string& path) {
  const google::protobuf::Message* m = &message;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const google::protobuf::FieldDescriptor* f = m->GetDescriptor()->FindFieldByName(part);
    if (f == nullptr || f->is_repeated()) return std::nullopt;
    const google::protobuf::Reflection* r = m->GetReflection();
    if (dot != std::string::npos) {
      if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) return std::nullopt;
      m = &r->GetMessage(*m, f);
      start = dot + 1;
      continue;
    }
    switch (f->cpp_type()) {
      case google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE: return r->GetDouble(*m, f);
      case google::protobuf::FieldDescriptor::CPPTYPE_FLOAT: return r->GetFloat(*m, f);
      case google::protobuf::FieldDescriptor::CPPTYPE_INT32: return r->GetInt32(*m, f);
      case google::protobuf::FieldDescriptor::CPPTYPE_INT64: return static_cast<double>(r->GetInt64(*m, f));
      default: return std::nullopt;
    }
  }
}

}  // namespace

StatusOr<CalibInputs> LoadCalibInputs(const std::string& trace_path, const std::string& hardware_path,
                                      const std::string& calibration_path) {
  ASSIGN_OR_RETURN(trace::Trace t, calib::LoadTrace(trace_path));
  return CalibInputsFor(std::move(t), trace_path, hardware_path, calibration_path);
}

StatusOr<CalibInputs> LoadCalibInputs(const std::vector<std::string>& trace_paths, const std::string& hardware_path,
                                      const std::string& calibration_path) {
  if (trace_paths.size() == 1) return LoadCalibInputs(trace_paths[0], hardware_path, calibration_path);
  std::vector<std::pair<std::string, trace::Trace>> traces;
  std::string display;
  for (const std::string& path : trace_paths) {
    ASSIGN_OR_RETURN(trace::Trace t, calib::LoadTrace(path));
    traces.emplace_back(path, std::move(t));
    display += (display.empty() ? "" : ", ") + path;
  }
  ASSIGN_OR_RETURN(trace::Trace merged, calib::MergeTraces(traces));
  return CalibInputsFor(std::move(merged), display, hardware_path, calibration_path);
}

std::vector<KeptDefault> KeptDefaults(const calib::FitResult& fit) {
  const config::Calibration values = calib::ToCalibrationProto(fit.params);
  std::vector<KeptDefault> out;
  std::set<std::string> seen;
  for (const std::string& entry : fit.not_fitted) {
    if (!seen.insert(entry).second) continue;  // the fit may report one group twice
    KeptDefault k;
    const size_t colon = entry.find(": ");
    k.names = entry.substr(0, colon);
    if (colon != std::string::npos) k.reason = entry.substr(colon + 2);
    size_t start = 0;
    while (start < k.names.size()) {
      size_t comma = k.names.find(", ", start);
      if (comma == std::string::npos) comma = k.names.size();
      const std::string name = k.names.substr(start, comma - start);
      if (std::optional<double> v = NumericField(values, name))
        k.values.push_back(*v != 0 ? fmt::format("{} = {:.6g}", name, *v)
                                   : name + " = 0 (written as unset: readers use the built-in default)");
      start = comma + 2;
    }
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace specsim::tools
