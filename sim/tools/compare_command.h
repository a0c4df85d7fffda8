// `specsim compare TRACE.pb [--calibration calib.textproto]`: re-simulates every measured item on
// the trace's hardware and prints predicted, measured and signed error per item, then per suite
// the median, p90 and max absolute error (sim/calib/compare.h). `--holdout F --seed S` fits on the
// other items and reports the held-out ones only; `--svg FILE` plots predicted against measured;
// `--max-error X` exits 1 when a suite's median absolute error exceeds X; `--json` prints
// {"suites":[{"suite","n","median_abs_error","p90_abs_error","max_abs_error"}],
//  "items":[{"suite","name","predicted","measured"}], "not_simulated":[{"suite","name","reason"}]}
// (errors as fractions, times in us).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <ostream>
#include <string>

namespace specsim::tools {

struct CompareFlags {
  std::string trace;
  std::string calibration;
  std::string hardware;
  double holdout = 0;
  uint64_t seed = 1;
  std::string svg;
  double max_error = 0;   // 0: no check
  bool json = false;
};

int RunCompare(const CompareFlags& flags, std::ostream& out, std::ostream& err);
void AddCompareCommand(CLI::App& app, int* exit_code);

}  // namespace specsim::tools
