#include "sim/io/file_io.h"
#include "sim/tools/sweep_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "sim/advise/framework_rules.h"
#include "sim/calib/calibration_loader.h"
#include "sim/scenario/scenario.h"
#include "sim/tools/svg_plot.h"

namespace specsim::tools {

StatusOr<VaryAxis> ParseVary(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return InvalidArgumentError("--vary '" + text +
                                "': expected field.path=v1,v2,... (e.g. serving.batch_size=1,4,16)");
  VaryAxis axis;
  axis.field = text.substr(0, eq);
  std::stringstream ss(text.substr(eq + 1));
  std::string v;
  while (std::getline(ss, v, ',')) {
    if (v.empty()) return InvalidArgumentError("--vary '" + text + "': empty value in the list");
    axis.values.push_back(v);
  }
  return axis;
}

std::vector<std::vector<std::string>> CrossProduct(const std::vector<VaryAxis>& axes) {
  // Dimensions in order of first appearance: an ungrouped axis, or a group's members together.
  std::vector<std::vector<size_t>> dims;
  std::map<int, size_t> dim_of_group;
  for (size_t a = 0; a < axes.size(); ++a) {
    if (axes[a].group >= 0 && dim_of_group.count(axes[a].group)) {
      dims[dim_of_group[axes[a].group]].push_back(a);
      continue;
    }
    if (axes[a].group >= 0) dim_of_group[axes[a].group] = dims.size();
    dims.push_back({a});
  }
  std::vector<std::vector<std::string>> points = {std::vector<std::string>(axes.size())};
  for (const std::vector<size_t>& dim : dims) {
    size_t n = axes[dim.front()].values.size();
    for (size_t a : dim) n = std::min(n, axes[a].values.size());
    std::vector<std::vector<std::string>> next;
    for (const auto& p : points) {
      for (size_t i = 0; i < n; ++i) {
        auto q = p;
        for (size_t a : dim) q[a] = axes[a].values[i];
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  return points;
}

namespace {

struct PointResult {
  std::string status = "ok";  // ok, does-not-fit, error: ...
  llm::DecodeResult result;
  // The framework's rule against the point's allreduce on its box (advise::AllreduceRefusal); "": none.
  std::string framework_refusal;
};

PointResult SimulatePoint(const SweepFlags& flags, const std::vector<VaryAxis>& axes,
                          const std::vector<std::string>& point) {
  PointResult pr;
  std::vector<std::string> overrides = flags.set;
  for (size_t i = 0; i < axes.size(); ++i) overrides.push_back(axes[i].field + "=" + point[i]);
  auto loaded = scenario::LoadScenario(flags.scenario, overrides, flags.calibration);
  if (!loaded.ok()) {
    pr.status = "error: " + loaded.status().message();
    return pr;
  }
  auto e = scenario::Evaluate(*loaded);
  if (!e.ok()) {
    pr.status = "error: " + e.status().message();
    return pr;
  }
  if (!e->result) {
    pr.status = fmt::format("does-not-fit ({:.1f} of {:.1f} GiB)", e->memory.total_bytes / (1 << 30),
                            e->memory.capacity_bytes / (1 << 30));
    return pr;
  }
  pr.result = *e->result;
  pr.framework_refusal = advise::ScenarioAllreduceRefusal(*loaded);
  return pr;
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// `axis` added to `axes` unless its field is there already.
Status AddAxis(VaryAxis axis, std::vector<VaryAxis>* axes) {
  for (const VaryAxis& a : *axes)
    if (a.field == axis.field)
      return InvalidArgumentError("--vary " + axis.field +
                                  " is given twice: list all its values in one --vary (or one --vary-together)");
  axes->push_back(std::move(axis));
  return OkStatus();
}

// One --vary-together group: two or more fields with lists of one length.
Status AddGroup(const std::vector<std::string>& group, int id, std::vector<VaryAxis>* axes) {
  if (group.size() < 2)
    return InvalidArgumentError("--vary-together needs two or more field.path=v1,v2,... lists (one field: --vary)");
  size_t n = 0;
  for (const std::string& text : group) {
    auto axis = ParseVary(text);
    if (!axis.ok()) return axis.status().WithPrefix("--vary-together");
    if (n != 0 && axis->values.size() != n)
      return InvalidArgumentError(fmt::format(
          "--vary-together: {} has {} values where the group's first field has {}: the lists go in lockstep",
          axis->field, axis->values.size(), n));
    n = axis->values.size();
    axis->group = id;
    RETURN_IF_ERROR(AddAxis(std::move(*axis), axes));
  }
  return OkStatus();
}

// The overrides of point i of the dimension of `axes[a]` (its group's i-th values together).
std::vector<std::string> DimensionOverrides(const std::vector<VaryAxis>& axes, size_t a, size_t i) {
  std::vector<std::string> o;
  for (const VaryAxis& b : axes)
    if (&b == &axes[a] || (axes[a].group >= 0 && b.group == axes[a].group)) o.push_back(b.field + "=" + b.values[i]);
  return o;
}

// The --vary / --vary-together axes, checked: each field once, the point count (past the threshold:
// --yes), and every value settable (a field path or value the scenario cannot take stops the sweep
// before it starts; a combination the scenario's checks refuse becomes a row with its reason).
StatusOr<std::vector<VaryAxis>> SweepAxes(const SweepFlags& flags) {
  if (flags.vary.empty() && flags.vary_together.empty())
    return InvalidArgumentError("give at least one --vary field.path=v1,v2,... (or --vary-together)");
  std::vector<VaryAxis> axes;
  for (const std::string& v : flags.vary) {
    auto axis = ParseVary(v);
    if (!axis.ok()) return axis.status();
    RETURN_IF_ERROR(AddAxis(std::move(*axis), &axes));
  }
  for (size_t g = 0; g < flags.vary_together.size(); ++g)
    RETURN_IF_ERROR(AddGroup(flags.vary_together[g], static_cast<int>(g), &axes));
  // The number of points, before anything is built: a cross product past the threshold needs --yes.
  {
    int64_t n = 1;
    std::set<int> groups_counted;
    for (const VaryAxis& a : axes) {
      if (a.group >= 0 && !groups_counted.insert(a.group).second) continue;  // a group is one dimension
      n *= static_cast<int64_t>(a.values.size());
      if (n > int64_t{1} << 40) break;  // no overflow; far past the threshold anyway
    }
    // Each point's row and result are held until the table is written (a few hundred bytes to a few
    // kB a point): past kSweepPointsMax the sweep would hold gigabytes (10^8 points held 5.4 GB
    // after 30 s), --yes or not.
    if (n > kSweepPointsMax)
      return InvalidArgumentError(
          fmt::format("{} points (the product of the --vary lists) is more than {}, the most one sweep runs: split the "
                      "sweep (a --set per part) or shorten the lists",
                      n, kSweepPointsMax));
    if (n > kSweepPointsWithoutYes && !flags.yes)
      return InvalidArgumentError(fmt::format(
          "{} points (the product of the --vary lists) is more than {} without --yes: each point simulates the "
          "scenario once (milliseconds to a second each); pass --yes to run them all",
          n, kSweepPointsWithoutYes));
  }
  // A calibration given by flag is every point's: a bad one is the sweep's error, not each row's.
  if (!flags.calibration.empty()) RETURN_IF_ERROR(calib::LoadCalibration(flags.calibration).status());
  // Every varied value must be settable before hours are spent: set each dimension's values once.
  // Only a failure to set the field (an unknown path, a value of the wrong type: the --set errors)
  // stops the sweep; the scenario checks' verdict on a value depends on the other axes.
  for (size_t a = 0; a < axes.size(); ++a) {
    for (size_t i = 0; i < axes[a].values.size(); ++i) {
      std::vector<std::string> overrides = flags.set;
      for (std::string& o : DimensionOverrides(axes, a, i)) overrides.push_back(std::move(o));
      auto loaded = scenario::LoadScenario(flags.scenario, overrides, flags.calibration);
      if (!loaded.ok() && loaded.status().message().rfind("--set ", 0) == 0) return loaded.status();
    }
  }
  return axes;
}

// Simulates every point on --threads threads (progress on err, at most ten updates a second).
std::vector<PointResult> SimulatePoints(const SweepFlags& flags, const std::vector<VaryAxis>& axes,
                                        const std::vector<std::vector<std::string>>& points, std::ostream& err) {
  std::vector<PointResult> results(points.size());
  const int threads = std::max(
      1, std::min<int>(flags.threads > 0 ? flags.threads : static_cast<int>(std::thread::hardware_concurrency()),
                       static_cast<int>(points.size())));
  std::atomic<size_t> next{0}, done{0};
  const auto start = std::chrono::steady_clock::now();
  std::mutex progress_mu;
  double last_report = -1;
  // At most ten updates a second, and the final one.
  auto report = [&](bool final) {
    if (!flags.progress) return;
    std::lock_guard<std::mutex> lock(progress_mu);
    const size_t d = done.load();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!final && secs - last_report < 0.1) return;
    last_report = secs;
    const int width = 30;
    const int filled = static_cast<int>(width * d / points.size());
    err << fmt::format("\r[{}{}] {}/{} points, {:.1f} s", std::string(filled, '#'), std::string(width - filled, '.'), d,
                       points.size(), secs)
        << (final ? "\n" : "") << std::flush;
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < points.size(); i = next++) {
        results[i] = SimulatePoint(flags, axes, points[i]);
        ++done;
        report(false);
      }
    });
  }
  for (auto& th : pool) th.join();
  report(true);

  return results;
}

// The CSV: one column per axis, then the results (empty with the status of a failed point).
std::string SweepCsv(const std::vector<VaryAxis>& axes, const std::vector<std::vector<std::string>>& points,
                     const std::vector<PointResult>& results) {
  std::ostringstream csv_text;
  std::ostream* csv = &csv_text;
  for (const VaryAxis& a : axes) *csv << CsvField(a.field) << ",";
  *csv << "baseline_tokens_per_s,baseline_step_ms,speculative_tokens_per_s,tau,cycle_ms,speedup,draft_compute_ms,"
          "draft_comm_ms,verify_compute_ms,verify_comm_ms,launch_sync_ms,framework_refusal,status\n";
  for (size_t i = 0; i < points.size(); ++i) {
    for (const std::string& v : points[i]) *csv << CsvField(v) << ",";
    const PointResult& p = results[i];
    if (p.status != "ok") {
      *csv << ",,,,,,,,,,,," << CsvField(p.status) << "\n";
      continue;
    }
    const llm::DecodeResult& r = p.result;
    const auto& b = r.breakdown;
    *csv << fmt::format("{:.4f},{:.6f},{:.4f},{:.4f},{:.6f},{:.4f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{},ok\n",
                        r.baseline_tokens_per_s, r.baseline_step_ms, r.speculative ? r.speculative_tokens_per_s : 0.0,
                        r.speculative ? r.tau : 1.0, r.speculative ? r.cycle_ms : r.baseline_step_ms,
                        r.speculative ? r.speedup : 1.0, b.draft_compute_ms, b.draft_comm_ms, b.verify_compute_ms,
                        b.verify_comm_ms, b.launch_sync_ms, CsvField(p.framework_refusal));
  }
  return csv_text.str();
}

// The same rows as JSON: {"rows": [{field: value, ..., "status": ..., results when ok}]}.
std::string SweepJson(const std::vector<VaryAxis>& axes, const std::vector<std::vector<std::string>>& points,
                      const std::vector<PointResult>& results) {
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < points.size(); ++i) {
    nlohmann::json row;
    for (size_t a = 0; a < axes.size(); ++a) row[axes[a].field] = points[i][a];
    const PointResult& p = results[i];
    row["status"] = p.status;
    if (p.status == "ok") {
      const llm::DecodeResult& r = p.result;
      const auto& b = r.breakdown;
      row["baseline_tokens_per_s"] = r.baseline_tokens_per_s;
      row["baseline_step_ms"] = r.baseline_step_ms;
      row["speculative_tokens_per_s"] = r.speculative ? r.speculative_tokens_per_s : 0.0;
      row["tau"] = r.speculative ? r.tau : 1.0;
      row["cycle_ms"] = r.speculative ? r.cycle_ms : r.baseline_step_ms;
      row["speedup"] = r.speculative ? r.speedup : 1.0;
      row["draft_compute_ms"] = b.draft_compute_ms;
      row["draft_comm_ms"] = b.draft_comm_ms;
      row["verify_compute_ms"] = b.verify_compute_ms;
      row["verify_comm_ms"] = b.verify_comm_ms;
      row["launch_sync_ms"] = b.launch_sync_ms;
      row["framework_refusal"] = p.framework_refusal.empty() ? nlohmann::json() : nlohmann::json(p.framework_refusal);
    }
    rows.push_back(std::move(row));
  }
  return nlohmann::json{{"rows", rows}}.dump(1) + "\n";
}

// One series per combination of the other axes, for baseline and speculative tokens/s, over the
// --x axis.
SvgPlot SweepPlot(const std::vector<VaryAxis>& axes, int x_axis, const std::vector<std::vector<std::string>>& points,
                  const std::vector<PointResult>& results) {
  std::map<std::string, SvgSeries> series;
  std::vector<std::string> order;
  std::vector<std::string> x_labels = axes[x_axis].values;
  for (size_t i = 0; i < points.size(); ++i) {
    if (results[i].status != "ok") continue;
    std::string others;
    for (size_t a = 0; a < axes.size(); ++a)
      if (static_cast<int>(a) != x_axis) {
        // The last component of the field path keeps legends short: "allreduce_algorithm=auto".
        const std::string& f = axes[a].field;
        others += (others.empty() ? "" : ", ") + f.substr(f.rfind('.') + 1) + "=" + points[i][a];
      }
    const double x =
        static_cast<double>(std::find(x_labels.begin(), x_labels.end(), points[i][x_axis]) - x_labels.begin());
    const llm::DecodeResult& r = results[i].result;
    for (int spec = 0; spec < (r.speculative ? 2 : 1); ++spec) {
      std::string name = std::string(spec ? "speculative" : "baseline") + (others.empty() ? "" : " (" + others + ")");
      if (!series.count(name)) order.push_back(name);
      SvgSeries& s = series[name];
      s.name = name;
      s.points.push_back({x, spec ? r.speculative_tokens_per_s : r.baseline_tokens_per_s});
    }
  }
  SvgPlot plot;
  plot.title = "tokens/s against " + axes[x_axis].field;
  plot.x_label = axes[x_axis].field;
  plot.y_label = "tokens/s";
  plot.x_categories = x_labels;
  for (const std::string& name : order) plot.series.push_back(series[name]);
  return plot;
}

}  // namespace

int RunSweep(const SweepFlags& flags, std::ostream& out, std::ostream& err) {
  auto fail = [&err](const Status& s) {
    err << "specsim sweep: " << s.message() << "\n";
    return 2;
  };
  auto axes_or = SweepAxes(flags);
  if (!axes_or.ok()) return fail(axes_or.status());
  const std::vector<VaryAxis>& axes = *axes_or;
  // A --set of a varied field would be overridden at every point (the varied value wins): refused.
  for (const std::string& set : flags.set) {
    const std::string field = set.substr(0, set.find('='));
    for (const VaryAxis& a : axes)
      if (a.field == field)
        return fail(InvalidArgumentError("--set " + set + ": " + field +
                                         " is also varied (--vary / --vary-together), which would override it at "
                                         "every point: give it one way"));
  }
  // One file for both outputs would keep only the one written last.
  if (!flags.out.empty() && !flags.svg.empty()) {
    std::error_code ec_out, ec_svg;
    const auto out_path = std::filesystem::weakly_canonical(flags.out, ec_out);
    const auto svg_path = std::filesystem::weakly_canonical(flags.svg, ec_svg);
    if (!ec_out && !ec_svg && out_path == svg_path)
      return fail(InvalidArgumentError("--out " + flags.out + " and --svg " + flags.svg +
                                       " name the same file: the SVG would replace the table"));
  }
  int x_axis = 0;
  if (!flags.x.empty()) {
    auto it = std::find_if(axes.begin(), axes.end(), [&](const VaryAxis& a) { return a.field == flags.x; });
    if (it == axes.end()) return fail(InvalidArgumentError("--x '" + flags.x + "': not one of the --vary fields"));
    x_axis = static_cast<int>(it - axes.begin());
  }

  const auto points = CrossProduct(axes);
  const std::vector<PointResult> results = SimulatePoints(flags, axes, points, err);

  // The CSV (or JSON) whole, then to --out (written whole or not at all) or stdout.
  const std::string csv_text = flags.json ? SweepJson(axes, points, results) : SweepCsv(axes, points, results);
  if (flags.out.empty()) {
    out << csv_text;
  } else if (Status w = io::WriteFileAtomically(flags.out, csv_text); !w.ok()) {
    err << "specsim sweep: --out " << w.message() << "\n";
    return io::kWriteFailedExitCode;
  }
  if (!flags.svg.empty()) {
    if (Status w = io::WriteFileAtomically(flags.svg, RenderSvgLinePlot(SweepPlot(axes, x_axis, points, results)));
        !w.ok()) {
      err << "specsim sweep: --svg " << w.message() << "\n";
      return io::kWriteFailedExitCode;
    }
  }
  return 0;
}

}  // namespace specsim::tools
