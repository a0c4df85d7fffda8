// `specsim calibrate TRACE.pb [TRACE.pb...] -o calib.textproto`: fits the simulator's parameters to
// measurement traces (sim/calib/fit.h) and writes them as a Calibration textproto, with the
// provenance of the box they came from (GPU name and count, hostname, NCCL and driver versions, the
// trace paths); prints every fitted value with its residual and the number of items behind it,
// then the parameters the items could not determine, which keep their defaults (listed with the
// kept values). Several traces must come from one box (same GPU count and names; calib::MergeTraces)
// and are fitted together, their item names prefixed with each file's stem; --exclude REGEX leaves
// out the items whose name matches. Exit 2 for unreadable traces, traces of different boxes, a
// regex that does not parse or leaves no item, or an unphysical fit.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;  // <CLI/CLI.hpp>, included where the flags are registered
}  // namespace CLI

namespace specsim::tools {

struct CalibrateFlags {
  std::vector<std::string> traces;
  std::string output;    // -o; empty: print the textproto on `out`
  std::string hardware;  // empty: built from the (first) trace
  bool json = false;
  // --exclude: items whose name (after the merge's file-stem prefix) matches this ECMAScript regex
  // (searched, not anchored) are left out of the fit, e.g. one implementation's items or a held-out
  // range. Empty: every item.
  std::string exclude;
};

int RunCalibrate(const CalibrateFlags& flags, std::ostream& out, std::ostream& err);
void AddCalibrateCommand(CLI::App& app, int* exit_code);

}  // namespace specsim::tools
