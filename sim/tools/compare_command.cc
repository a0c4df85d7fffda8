#include "sim/tools/compare_command.h"

#include <cmath>
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/calib/compare.h"
#include "sim/calib/svg.h"
#include "sim/calib/trace_io.h"
#include "sim/io/file_io.h"
#include "sim/calib/calib_inputs.h"
#include "sim/tools/kept_defaults.h"
#include "sim/tools/profile_report.h"

namespace specsim::tools {
namespace {

nlohmann::json ItemsJson(const std::vector<calib::ItemResult>& items, nlohmann::json j) {
  j["items"] = nlohmann::json::array();
  j["not_simulated"] = nlohmann::json::array();
  for (const calib::ItemResult& r : items) {
    if (r.simulated)
      j["items"].push_back(
          {{"suite", r.suite}, {"name", r.name}, {"predicted", r.predicted_us}, {"measured", r.measured_us}});
    else
      j["not_simulated"].push_back({{"suite", r.suite}, {"name", r.name}, {"reason", r.reason}});
  }
  return j;
}

// Per-regime errors and verify-width shapes (compare.h RegimeStatistics, VerifyWidthShapes).
void PrintRegimesAndShapes(const std::vector<calib::SuiteStats>& regimes, const std::vector<calib::ShapeGroup>& shapes,
                           const std::string& what, std::ostream& out) {
  if (!regimes.empty()) {
    out << fmt::format("\nby regime ({}):\n{:<36} {:>5} {:>9} {:>9} {:>9}\n", what, "regime", "n", "median", "p90",
                       "max");
    for (const calib::SuiteStats& s : regimes)
      out << fmt::format("{:<36} {:>5} {:>8.1f}% {:>8.1f}% {:>8.1f}%\n", s.suite, s.n, 100 * s.median_abs_error,
                         100 * s.p90_abs_error, 100 * s.max_abs_error);
  }
  if (!shapes.empty()) {
    out << fmt::format("\nverify-width shape ({}): time(q) / time(1), measured -> predicted (error)\n", what);
    for (const calib::ShapeGroup& g : shapes) {
      std::string line;
      for (const calib::ShapePoint& p : g.points) {
        if (p.q == 1) continue;
        line += fmt::format("  q{} {:.2f}->{:.2f} ({:+.0f}%)", p.q, p.measured_ratio, p.predicted_ratio, 100 * p.error);
      }
      out << g.name << ":" << line << "\n";
    }
  }
}

nlohmann::json RegimesJson(const std::vector<calib::SuiteStats>& regimes,
                           const std::vector<calib::ShapeGroup>& shapes) {
  nlohmann::json j;
  j["regimes"] = nlohmann::json::array();
  for (const calib::SuiteStats& s : regimes)
    j["regimes"].push_back({{"regime", s.suite},
                            {"n", s.n},
                            {"median_abs_error", s.median_abs_error},
                            {"p90_abs_error", s.p90_abs_error},
                            {"max_abs_error", s.max_abs_error}});
  j["shapes"] = nlohmann::json::array();
  for (const calib::ShapeGroup& g : shapes) {
    nlohmann::json pts = nlohmann::json::array();
    for (const calib::ShapePoint& p : g.points)
      pts.push_back({{"q", p.q},
                     {"measured_ratio", p.measured_ratio},
                     {"predicted_ratio", p.predicted_ratio},
                     {"error", p.error}});
    j["shapes"].push_back({{"group", g.name}, {"points", pts}});
  }
  return j;
}

void PrintItems(const std::vector<calib::ItemResult>& items, const std::string& heading, std::ostream& out) {
  out << heading;
  out << fmt::format("{:<64} {:>12} {:>12} {:>8}\n", "item", "predicted_us", "measured_us", "error");
  for (const calib::ItemResult& r : items)
    if (r.simulated)
      out << fmt::format("{:<64} {:>12.4g} {:>12.4g} {:>+7.1f}%\n", r.name, r.predicted_us, r.measured_us,
                         100 * r.error);
  int missing = 0;
  for (const calib::ItemResult& r : items) missing += !r.simulated;
  if (missing > 0) {
    out << fmt::format("\nnot simulated ({} items):\n", missing);
    for (const calib::ItemResult& r : items)
      if (!r.simulated) out << "  " << r.name << ": " << r.reason << "\n";
  }
}

Status WriteSvg(const std::string& path, const std::vector<calib::ItemResult>& items, const std::string& title) {
  return io::WriteFileAtomically(path, calib::ScatterSvg(items, title));
}

// "seed 1" or "seeds 1..N": the seeds a hold-out summary is over.
std::string SeedsLabel(int seeds) { return seeds == 1 ? "seed 1" : fmt::format("seeds 1..{}", seeds); }

void PrintHoldoutSeedsJson(const CompareFlags& flags, const calib::HoldoutSummary& summary,
                           const std::vector<calib::SuiteStats>& regimes, const std::vector<calib::ShapeGroup>& shapes,
                           std::ostream& out) {
  const calib::ComparisonResult& first = summary.per_seed[0];
  nlohmann::json j;
  j["holdout"] = flags.holdout;
  j["holdout_by"] = flags.holdout_by;
  j["seeds"] = flags.seeds;
  j["suites"] = nlohmann::json::array();
  for (const calib::SuiteSeedSummary& s : summary.suites)
    j["suites"].push_back({{"suite", s.suite},
                           {"n", s.n_min},
                           {"n_max", s.n_max},
                           {"seeds", s.seeds},
                           {"median_abs_error_median", s.median_abs_error_median},
                           {"median_abs_error_min", s.median_abs_error_min},
                           {"median_abs_error_max", s.median_abs_error_max},
                           {"p90_abs_error_median", s.p90_abs_error_median},
                           {"median_abs_error_per_seed", s.median_abs_error_per_seed},
                           {"p90_abs_error_per_seed", s.p90_abs_error_per_seed}});
  j["items_seed"] = 1;
  const nlohmann::json r = RegimesJson(regimes, shapes);
  j["regimes_held_out"] = r["regimes"];
  j["shapes_held_out"] = r["shapes"];
  out << ItemsJson(first.items, j).dump(1) << "\n";
}

void PrintHoldoutSeedsText(const CompareFlags& flags, const calib::CalibInputs& in,
                           const calib::HoldoutSummary& summary, const std::vector<calib::SuiteStats>& regimes,
                           const std::vector<calib::ShapeGroup>& shapes, const std::string& data,
                           const std::string& start, std::ostream& out) {
  const calib::ComparisonResult& first = summary.per_seed[0];
  const std::string seeds = SeedsLabel(flags.seeds);
  out << fmt::format("specsim compare {}: hardware {}, {}{}\n", flags.trace, in.hardware_source, data, start);
  const std::string heading =
      flags.seeds == 1 ? std::string("\nheld-out items (seed 1):\n")
                       : fmt::format("\nheld-out items of seed 1 only (the summary below is over {}):\n", seeds);
  PrintItems(first.items, heading, out);
  out << fmt::format("\n{:<12} {:>9} {:>18} {:>17} {:>15}\n", "suite", "n", "median-of-medians", "[min..max]",
                     "median-of-p90s");
  for (const calib::SuiteSeedSummary& s : summary.suites) {
    const std::string n = s.n_min == s.n_max ? std::to_string(s.n_min) : fmt::format("{}-{}", s.n_min, s.n_max);
    const std::string range =
        fmt::format("[{:.1f}%..{:.1f}%]", 100 * s.median_abs_error_min, 100 * s.median_abs_error_max);
    out << fmt::format("{:<12} {:>9} {:>17.1f}% {:>17} {:>14.1f}%{}\n", s.suite, n, 100 * s.median_abs_error_median,
                       range, 100 * s.p90_abs_error_median,
                       s.seeds == flags.seeds ? std::string() : fmt::format("  (over {} seeds)", s.seeds));
  }
  out << fmt::format(
      "(n: items held out per seed; absolute relative error of the median time per item: per seed "
      "the median and p90 over the held-out items, then the median, min and max over the seeds)\n");
  out << data << "\n";
  PrintRegimesAndShapes(regimes, shapes, "each item's held-out predictions, median over the seeds that held it out",
                        out);
}

calib::HoldoutUnit UnitOf(const CompareFlags& flags) {
  return flags.holdout_by == "family" ? calib::HoldoutUnit::kFamily : calib::HoldoutUnit::kItem;
}

// --holdout without --seed: the hold-out comparison for seeds 1..--seeds, summarised over the seeds.
int CompareOverSeeds(const CompareFlags& flags, const calib::CalibInputs& in, const std::string& start,
                     std::vector<std::string>* over, std::ostream& out, std::ostream& err) {
  auto summary =
      calib::CompareHoldoutSeeds(in.trace, *in.topology, in.params, flags.holdout, flags.seeds, UnitOf(flags));
  if (!summary.ok()) {
    err << "specsim compare: " << flags.trace << ": " << summary.status().message() << "\n";
    return 2;
  }
  const std::string seeds = SeedsLabel(flags.seeds);
  const std::string data =
      fmt::format("fitted on {:.0f}% of {}'s {}, errors on the held-out {:.0f}%, {}", 100 * (1 - flags.holdout),
                  flags.trace, flags.holdout_by == "family" ? "item families" : "items", 100 * flags.holdout, seeds);
  const calib::ComparisonResult& first = summary->per_seed[0];
  if (!flags.svg.empty()) {
    Status s = WriteSvg(
        flags.svg, first.items,
        fmt::format("specsim compare: {} (held-out {:.0f}%, seed 1 of {})", flags.trace, 100 * flags.holdout, seeds));
    if (!s.ok()) {
      err << "specsim compare: --svg " << s.message() << "\n";
      return io::kWriteFailedExitCode;
    }
  }
  if (flags.max_error)
    for (const calib::SuiteSeedSummary& s : summary->suites)
      if (s.median_abs_error_median > *flags.max_error) over->push_back(s.suite);
  // Regimes and shapes over each item's held-out predictions (median over the seeds that held it out).
  const std::vector<calib::ItemResult> pooled = calib::PooledHeldOut(*summary);
  const std::vector<calib::SuiteStats> regimes =
      calib::RegimeStatistics(in.trace, pooled, first.fit.params.compute, *in.topology);
  const std::vector<calib::ShapeGroup> shapes = calib::VerifyWidthShapes(in.trace, pooled);
  if (flags.json) {
    PrintHoldoutSeedsJson(flags, *summary, regimes, shapes, out);
  } else {
    PrintHoldoutSeedsText(flags, in, *summary, regimes, shapes, data, start, out);
  }
  return 0;
}

void PrintComparisonJson(const calib::ComparisonResult& result, const std::vector<calib::SuiteStats>& regimes,
                         const std::vector<calib::ShapeGroup>& shapes, const calib::ProfileReport& report,
                         std::ostream& out) {
  nlohmann::json j;
  j["suites"] = nlohmann::json::array();
  for (const calib::SuiteStats& s : result.suites)
    j["suites"].push_back({{"suite", s.suite},
                           {"n", s.n},
                           {"median_abs_error", s.median_abs_error},
                           {"p90_abs_error", s.p90_abs_error},
                           {"max_abs_error", s.max_abs_error}});
  const nlohmann::json r = RegimesJson(regimes, shapes);
  j["regimes"] = r["regimes"];
  j["shapes"] = r["shapes"];
  if (!report.empty()) j["profile"] = ProfileReportJson(report);
  out << ItemsJson(result.items, j).dump(1) << "\n";
}

void PrintComparisonText(const CompareFlags& flags, const calib::CalibInputs& in, const calib::ComparisonResult& result,
                         const std::vector<calib::SuiteStats>& regimes, const std::vector<calib::ShapeGroup>& shapes,
                         const std::string& start, std::ostream& out) {
  out << fmt::format(
      "specsim compare {}: hardware {}, {}\n", flags.trace, in.hardware_source,
      flags.holdout > 0 ? fmt::format("fitted on {:.0f}% of the items, errors on the held-out {:.0f}% (seed {}){}",
                                      100 * (1 - flags.holdout), 100 * flags.holdout, flags.seed, start)
      : flags.calibration.empty()
          ? std::string("default parameters")
          : fmt::format("calibration {} ({})", flags.calibration, io::ConfigSourceOf(flags.calibration)));
  PrintItems(result.items, "\n", out);
  out << fmt::format("\n{:<12} {:>5} {:>10} {:>10} {:>10}\n", "suite", "n", "median", "p90", "max");
  for (const calib::SuiteStats& s : result.suites)
    out << fmt::format("{:<12} {:>5} {:>9.1f}% {:>9.1f}% {:>9.1f}%\n", s.suite, s.n, 100 * s.median_abs_error,
                       100 * s.p90_abs_error, 100 * s.max_abs_error);
  out << "(absolute relative error of the median time per item)\n";
  PrintRegimesAndShapes(regimes, shapes, "the items above", out);
}

// One comparison: every item (--holdout 0: with the given parameters) or the held-out items of
// --seed.
int CompareOnce(const CompareFlags& flags, const calib::CalibInputs& in, const std::string& start,
                std::vector<std::string>* over, std::ostream& out, std::ostream& err) {
  calib::CompareOptions options;
  options.holdout = flags.holdout;
  options.seed = flags.seed;
  options.unit = UnitOf(flags);
  auto result = calib::Compare(in.trace, *in.topology, in.params, options);
  if (!result.ok()) {
    err << "specsim compare: " << flags.trace << ": " << result.status().message() << "\n";
    return 2;
  }
  if (!flags.svg.empty()) {
    std::string title = "specsim compare: " + flags.trace;
    if (flags.holdout > 0) title += fmt::format(" (held-out {:.0f}%, seed {})", 100 * flags.holdout, flags.seed);
    Status s = WriteSvg(flags.svg, result->items, title);
    if (!s.ok()) {
      err << "specsim compare: --svg " << s.message() << "\n";
      return io::kWriteFailedExitCode;
    }
  }
  if (flags.max_error)
    for (const calib::SuiteStats& s : result->suites)
      if (s.median_abs_error > *flags.max_error) over->push_back(s.suite);
  const std::vector<calib::SuiteStats> regimes =
      calib::RegimeStatistics(in.trace, result->items, result->fit.params.compute, *in.topology);
  const std::vector<calib::ShapeGroup> shapes = calib::VerifyWidthShapes(in.trace, result->items);

  // A profiler's trace: passes by kernel class, NCCL waits, the largest disagreements.
  const calib::ProfileReport report =
      calib::BuildProfileReport(in.trace, *in.topology, result->fit.params, result->items);
  if (flags.json) {
    PrintComparisonJson(*result, regimes, shapes, report, out);
  } else {
    PrintComparisonText(flags, in, *result, regimes, shapes, start, out);
    PrintProfileReport(report, out);
  }
  return 0;
}

}  // namespace

int RunCompare(const CompareFlags& flags, std::ostream& out, std::ostream& err) {
  if (flags.holdout_by != "item" && flags.holdout_by != "family") {
    err << "specsim compare: --holdout-by " << flags.holdout_by << ": must be item or family\n";
    return 2;
  }
  if (!(flags.holdout >= 0 && flags.holdout < 1)) {
    err << "specsim compare: --holdout " << flags.holdout << ": must be in [0, 1)\n";
    return 2;
  }
  // NaN and infinity too: a bound no error can exceed is no bound (0 is one: any error fails it).
  if (flags.max_error && !(*flags.max_error >= 0 && std::isfinite(*flags.max_error))) {
    err << "specsim compare: --max-error " << *flags.max_error
        << ": must be a finite number >= 0 (a fraction: 0.1 fails a suite above 10%)\n";
    return 2;
  }
  if (flags.seeds < 1 || flags.seeds > kMaxCompareSeeds) {
    err << "specsim compare: --seeds " << flags.seeds << ": must be in [1, " << kMaxCompareSeeds
        << "] (each seed refits the calibration: seconds to minutes apiece)\n";
    return 2;
  }
  auto in = calib::LoadCalibInputs(flags.trace, flags.hardware, flags.calibration);
  if (!in.ok()) {
    err << "specsim compare: " << in.status().message() << "\n";
    return 2;
  }
  for (const std::string& w : in->warnings) err << w << "\n";
  if (in->calibration.has_value()) {
    const std::string warning = calib::CalibrationWarning(in->calibration->proto, flags.calibration, in->trace);
    if (!warning.empty()) err << warning << "\n";
  }
  const bool several_seeds = flags.holdout > 0 && !flags.seed_given;
  const std::string start = flags.calibration.empty() ? "" : ", starting from calibration " + flags.calibration;
  std::vector<std::string> over;  // suites above --max-error

  const int rc = several_seeds ? CompareOverSeeds(flags, *in, start, &over, out, err)
                               : CompareOnce(flags, *in, start, &over, out, err);
  if (rc != 0) return rc;
  if (!over.empty()) {
    std::string names;
    for (const std::string& s : over) names += (names.empty() ? "" : ", ") + s;
    err << fmt::format("specsim compare: median error{} above --max-error {:.1f}% in: {}\n",
                       several_seeds ? " (median over the seeds)" : "", 100 * *flags.max_error, names);
    return 1;
  }
  return 0;
}

}  // namespace specsim::tools
