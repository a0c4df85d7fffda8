// `specsim calibrate TRACE.pb -o calib.textproto`: fits the simulator's parameters to a
// measurement trace (sim/calib/fit.h) and writes them as a Calibration textproto; prints every
// fitted value with its residual and the number of items behind it, and what was not fitted.
// Refuses (exit 2, the parameter named) a trace whose items cannot determine a parameter.
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

namespace specsim::tools {

struct CalibrateFlags {
  std::string trace;
  std::string output;      // -o; empty: print the textproto on `out`
  std::string hardware;    // empty: built from the trace
  bool json = false;
};

int RunCalibrate(const CalibrateFlags& flags, std::ostream& out, std::ostream& err);
void AddCalibrateCommand(CLI::App& app, int* exit_code);

}  // namespace specsim::tools
