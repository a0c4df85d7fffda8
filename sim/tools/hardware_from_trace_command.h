// `specsim hardware-from-trace TRACE.pb -o box.textproto`: a hardware config for the box the trace
// was measured on (sim/calib/hardware_from_trace.h), checked by the hardware loader before it is
// written.
#pragma once

#include <ostream>
#include <string>

namespace CLI {
class App;  // <CLI/CLI.hpp>, included where the flags are registered
}  // namespace CLI

namespace specsim::tools {

struct HardwareFromTraceFlags {
  std::string trace;
  std::string output;  // empty: print on `out`
  std::string name;    // empty: "<gpu>-<n>x" from the trace
  bool json = false;   // the config as JSON
};

int RunHardwareFromTrace(const HardwareFromTraceFlags& flags, std::ostream& out, std::ostream& err);
void AddHardwareFromTraceCommand(CLI::App& app, int* exit_code);

}  // namespace specsim::tools
