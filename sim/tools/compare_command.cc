#include "sim/tools/compare_command.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/calib/compare.h"
#include "sim/calib/svg.h"
#include "sim/tools/calib_setup.h"

namespace specsim::tools {

int RunCompare(const CompareFlags& flags, std::ostream& out, std::ostream& err) {
  if (!(flags.holdout >= 0 && flags.holdout < 1)) {
    err << "specsim compare: --holdout " << flags.holdout << ": must be in [0, 1)\n";
    return 2;
  }
  if (flags.max_error < 0) {
    err << "specsim compare: --max-error must be >= 0\n";
    return 2;
  }
  auto in = LoadCalibInputs(flags.trace, flags.hardware, flags.calibration);
  if (!in.ok()) {
    err << "specsim compare: " << in.status().message() << "\n";
    return 2;
  }
  calib::CompareOptions options;
  options.holdout = flags.holdout;
  options.seed = flags.seed;
  auto result = calib::Compare(in->trace, *in->topology, in->params, options);
  if (!result.ok()) {
    err << "specsim compare: " << flags.trace << ": " << result.status().message() << "\n";
    return 2;
  }
  if (!flags.svg.empty()) {
    std::ofstream f(flags.svg);
    std::string title = "specsim compare: " + flags.trace;
    if (flags.holdout > 0) title += fmt::format(" (held-out {:.0f}%, seed {})", 100 * flags.holdout, flags.seed);
    f << calib::ScatterSvg(result->items, title);
    if (!f) {
      err << "specsim compare: cannot write " << flags.svg << "\n";
      return 2;
    }
  }
  int exit_code = 0;
  std::vector<std::string> over;
  if (flags.max_error > 0)
    for (const calib::SuiteStats& s : result->suites)
      if (s.median_abs_error > flags.max_error) over.push_back(s.suite);
  if (!over.empty()) exit_code = 1;

  if (flags.json) {
    nlohmann::json j;
    j["suites"] = nlohmann::json::array();
    for (const calib::SuiteStats& s : result->suites)
      j["suites"].push_back({{"suite", s.suite}, {"n", s.n}, {"median_abs_error", s.median_abs_error},
                             {"p90_abs_error", s.p90_abs_error}, {"max_abs_error", s.max_abs_error}});
    j["items"] = nlohmann::json::array();
    j["not_simulated"] = nlohmann::json::array();
    for (const calib::ItemResult& r : result->items) {
      if (r.simulated)
        j["items"].push_back({{"suite", r.suite}, {"name", r.name}, {"predicted", r.predicted_us}, {"measured", r.measured_us}});
      else
        j["not_simulated"].push_back({{"suite", r.suite}, {"name", r.name}, {"reason", r.reason}});
    }
    out << j.dump(1) << "\n";
  } else {
    out << fmt::format("specsim compare {}: hardware {}, {}\n", flags.trace, in->hardware_source,
                       flags.holdout > 0 ? fmt::format("fitted on {:.0f}% of the items, errors on the held-out {:.0f}% (seed {})",
                                                       100 * (1 - flags.holdout), 100 * flags.holdout, flags.seed)
                       : flags.calibration.empty() ? std::string("default parameters")
                                                   : "calibration " + flags.calibration);
    out << fmt::format("\n{:<64} {:>12} {:>12} {:>8}\n", "item", "predicted_us", "measured_us", "error");
    for (const calib::ItemResult& r : result->items)
      if (r.simulated)
        out << fmt::format("{:<64} {:>12.4g} {:>12.4g} {:>+7.1f}%\n", r.name, r.predicted_us, r.measured_us, 100 * r.error);
    int missing = 0;
    for (const calib::ItemResult& r : result->items) missing += !r.simulated;
    if (missing > 0) {
      out << fmt::format("\nnot simulated ({} items):\n", missing);
      for (const calib::ItemResult& r : result->items)
        if (!r.simulated) out << "  " << r.name << ": " << r.reason << "\n";
    }
    out << fmt::format("\n{:<12} {:>5} {:>10} {:>10} {:>10}\n", "suite", "n", "median", "p90", "max");
    for (const calib::SuiteStats& s : result->suites)
      out << fmt::format("{:<12} {:>5} {:>9.1f}% {:>9.1f}% {:>9.1f}%\n", s.suite, s.n, 100 * s.median_abs_error,
                         100 * s.p90_abs_error, 100 * s.max_abs_error);
    out << "(absolute relative error of the median time per item)\n";
  }
  if (!over.empty()) {
    std::string names;
    for (const std::string& s : over) names += (names.empty() ? "" : ", ") + s;
    err << fmt::format("specsim compare: median error above --max-error {:.1f}% in: {}\n", 100 * flags.max_error, names);
  }
  return exit_code;
}

void AddCompareCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<CompareFlags>();
  CLI::App* cmd = app.add_subcommand("compare", "re-simulate every item of a trace: predicted against measured");
  cmd->add_option("trace", flags->trace, "trace written by specsim-validate (.pb)")->required();
  cmd->add_option("--calibration", flags->calibration, "calibration textproto (specsim calibrate)");
  cmd->add_option("--hardware", flags->hardware, "hardware textproto; default: built from the trace");
  cmd->add_option("--holdout", flags->holdout, "fit on the rest, report errors on this fraction of the items");
  cmd->add_option("--seed", flags->seed, "hold-out split seed")->capture_default_str();
  cmd->add_option("--svg", flags->svg, "write predicted against measured (log-log) to this SVG file");
  cmd->add_option("--max-error", flags->max_error, "exit 1 when a suite's median absolute error exceeds this fraction");
  cmd->add_flag("--json", flags->json, "print JSON");
  cmd->callback([flags, exit_code] { *exit_code = RunCompare(*flags, std::cout, std::cerr); });
}

}  // namespace specsim::tools
