// `specsim compare TRACE.pb [--calibration calib.textproto]`: re-simulates every measured item on
// the trace's hardware and prints predicted, measured and signed error per item, then per suite
// the median, p90 and max absolute error (sim/calib/compare.h).
//
// `--holdout F` fits on the other items and reports held-out errors. By default it repeats the
// split for seeds 1..N (`--seeds N`, default 10; calib::CompareHoldoutSeeds) and reports per suite
// the median over the seeds of the held-out median |error|, its min and max over the seeds, and
// the median over the seeds of the held-out p90; item rows are seed 1's. `--seed S` (given
// explicitly) reports the one split of seed S instead, as a plain comparison.
// `--svg FILE` plots predicted against measured (seed 1's held-out items with several seeds);
// `--max-error X` exits 1 when a suite's median absolute error (with several seeds: the median
// over the seeds) exceeds X. `--calibration C` warns on stderr when C was fitted on another GPU or
// GPU count than the trace's, or records no provenance (the exit code does not change).
// `--json` prints, for one comparison,
// {"suites":[{"suite","n","median_abs_error","p90_abs_error","max_abs_error"}],
//  "items":[{"suite","name","predicted","measured"}], "not_simulated":[{"suite","name","reason"}]}
// and with several seeds
// {"holdout","seeds","suites":[{"suite","n","n_max","seeds","median_abs_error_median",
//  "median_abs_error_min","median_abs_error_max","p90_abs_error_median","median_abs_error_per_seed",
//  "p90_abs_error_per_seed"}], "items_seed":1, "items":[...], "not_simulated":[...]}
// (errors as fractions, times in us; n = simulated held-out items per seed, n_max its largest
// value when not every seed has the same).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace CLI {
class App;  // <CLI/CLI.hpp>, included where the flags are registered
}  // namespace CLI

namespace specsim::tools {

struct CompareFlags {
  std::string trace;
  std::string calibration;
  std::string hardware;
  double holdout = 0;
  std::string holdout_by = "item";  // "item" or "family" (calib::HoldoutUnit)
  uint64_t seed = 1;
  bool seed_given = false;  // --seed S given: one split (seed S), not seeds 1..`seeds`
  int seeds = 10;           // --seeds N: the hold-out summary uses seeds 1..N
  std::string svg;
  // --max-error E: exit 1 when a suite's median |error| exceeds E (0: any error at all); unset: no check.
  std::optional<double> max_error;
  bool json = false;
};

// The most hold-out splits one compare runs (each refits: a billion never ended).
inline constexpr int kMaxCompareSeeds = 1000;

int RunCompare(const CompareFlags& flags, std::ostream& out, std::ostream& err);
void AddCompareCommand(CLI::App& app, int* exit_code);

}  // namespace specsim::tools
