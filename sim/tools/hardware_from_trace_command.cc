#include "sim/io/file_io.h"
#include "sim/tools/hardware_from_trace_command.h"

#include <google/protobuf/util/json_util.h>

#include <nlohmann/json.hpp>
#include <cctype>
#include <fstream>

#include "sim/calib/hardware_from_trace.h"
#include "sim/calib/trace_io.h"
#include "sim/io/hardware_loader.h"

namespace specsim::tools {

int RunHardwareFromTrace(const HardwareFromTraceFlags& flags, std::ostream& out, std::ostream& err) {
  std::vector<std::string> warnings;
  auto trace = calib::LoadTrace(flags.trace, &warnings);
  if (!trace.ok()) {
    err << "specsim hardware-from-trace: " << trace.status().message() << "\n";
    return 2;
  }
  for (const std::string& w : warnings) err << w << "\n";
  std::string name = flags.name;
  if (name.empty() && trace->environment().gpus_size() > 0) {
    std::string gpu = trace->environment().gpus(0).name();
    if (gpu.rfind("NVIDIA ", 0) == 0) gpu = gpu.substr(7);
    for (char& c : gpu)
      c = std::isalnum(static_cast<unsigned char>(c)) ? std::tolower(static_cast<unsigned char>(c)) : '-';
    name = gpu + "-" + std::to_string(trace->environment().gpus_size()) + "x";
  }
  auto hw = calib::HardwareFromTrace(*trace, name);
  if (!hw.ok()) {
    err << "specsim hardware-from-trace: " << flags.trace << ": " << hw.status().message() << "\n";
    return 2;
  }
  const std::string text = calib::HardwareTextProto(*hw, *trace);
  auto check = io::ParseHardware(text, flags.output.empty() ? "<output>" : flags.output);
  if (!check.ok()) {
    // HardwareFromTrace checks the trace fields it reads: reaching this is a specsim defect.
    err << "specsim hardware-from-trace: " << flags.trace << ": the hardware config derived from this trace does not "
        << "load (a specsim defect: please report it with the trace): " << check.status().message() << "\n";
    return 2;
  }
  if (flags.output.empty() && !flags.json) {
    out << text;
    return 0;
  }
  if (!flags.output.empty()) {
    if (Status w = io::WriteFileAtomically(flags.output, text); !w.ok()) {
      err << "specsim hardware-from-trace: " << w.message() << "\n";
      return io::kWriteFailedExitCode;
    }
  }
  if (flags.json) {
    // The config in protobuf's JSON mapping; with -o, what was written where.
    std::string config;
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = true;
    if (!google::protobuf::util::MessageToJsonString(*hw, &config, options).ok()) {
      err << "specsim hardware-from-trace: cannot print the config as JSON\n";
      return 2;
    }
    nlohmann::json j{{"description", hw->description()}, {"config", nlohmann::json::parse(config)}};
    if (!flags.output.empty()) j["wrote"] = flags.output;
    out << j.dump(1) << "\n";
    return 0;
  }
  out << "wrote " << flags.output << ": " << hw->description() << "\n";
  return 0;
}

}  // namespace specsim::tools
