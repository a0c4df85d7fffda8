// `specsim sweep SCENARIO --vary field=v1,v2 --vary ...`: the cross product of the varied fields,
// simulated on all cores, written as CSV (one row per point), optionally drawn as an SVG of
// tokens/s against one varied field.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace CLI {
class App;  // <CLI/CLI.hpp>, included where the flags are registered
}  // namespace CLI

namespace specsim::tools {

struct SweepFlags {
  std::string scenario;           // empty: the embedded default
  std::vector<std::string> vary;  // "field.path=v1,v2,..."
  std::vector<std::string> set;   // fixed overrides applied before the varied ones
  std::string calibration;
  std::string out;       // CSV path; empty: stdout
  std::string svg;       // SVG path; empty: none
  std::string x;         // field on the SVG's x axis; empty: the first --vary
  int threads = 0;       // 0: all cores
  bool progress = true;  // progress bar on stderr
  bool yes = false;      // run more than kSweepPointsWithoutYes points
};

// Points a sweep runs without --yes (each point simulates the scenario once: milliseconds to a
// second); more is refused with the count, so that a typo in a --vary list does not start hours.
inline constexpr int64_t kSweepPointsWithoutYes = 10000;

struct VaryAxis {
  std::string field;
  std::vector<std::string> values;
};

// "a.b=1,2,4" -> {field "a.b", values {"1","2","4"}}. InvalidArgument names the flag.
StatusOr<VaryAxis> ParseVary(const std::string& text);
// The cross product, first axis slowest: each point is one value per axis, in axis order.
std::vector<std::vector<std::string>> CrossProduct(const std::vector<VaryAxis>& axes);

int RunSweep(const SweepFlags& flags, std::ostream& out, std::ostream& err);
void AddSweepCommand(CLI::App& app, int* exit_code);

}  // namespace specsim::tools
