#include "sim/io/file_io.h"
#include "sim/tools/sweep_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

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
  std::vector<std::vector<std::string>> points = {{}};
  for (const VaryAxis& axis : axes) {
    std::vector<std::vector<std::string>> next;
    for (const auto& p : points) {
      for (const std::string& v : axis.values) {
        auto q = p;
        q.push_back(v);
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
  return pr;
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// The --vary axes, checked: each field once, the point count (past the threshold: --yes), and
// every value loadable, before anything is simulated.
StatusOr<std::vector<VaryAxis>> SweepAxes(const SweepFlags& flags) {
  if (flags.vary.empty()) return InvalidArgumentError("give at least one --vary field.path=v1,v2,...");
  std::vector<VaryAxis> axes;
  for (const std::string& v : flags.vary) {
    auto axis = ParseVary(v);
    if (!axis.ok()) return axis.status();
    for (const VaryAxis& a : axes)
      if (a.field == axis->field)
        return InvalidArgumentError("--vary " + axis->field + " is given twice: list all its values in one --vary");
    axes.push_back(*axis);
  }
  // The number of points, before anything is built: a cross product past the threshold needs --yes.
  {
    int64_t n = 1;
    for (const VaryAxis& a : axes) {
      n *= static_cast<int64_t>(a.values.size());
      if (n > int64_t{1} << 40) break;  // no overflow; far past the threshold anyway
    }
    if (n > kSweepPointsWithoutYes && !flags.yes)
      return InvalidArgumentError(fmt::format(
          "{} points (the product of the --vary lists) is more than {} without --yes: each point simulates the "
          "scenario once (milliseconds to a second each); pass --yes to run them all",
          n, kSweepPointsWithoutYes));
  }
  // Every varied value must be acceptable before hours are spent: load each axis' values once.
  for (const VaryAxis& axis : axes) {
    for (const std::string& v : axis.values) {
      std::vector<std::string> overrides = flags.set;
      overrides.push_back(axis.field + "=" + v);
      auto loaded = scenario::LoadScenario(flags.scenario, overrides, flags.calibration);
      if (!loaded.ok()) return loaded.status();
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
          "draft_comm_ms,verify_compute_ms,verify_comm_ms,launch_sync_ms,status\n";
  for (size_t i = 0; i < points.size(); ++i) {
    for (const std::string& v : points[i]) *csv << CsvField(v) << ",";
    const PointResult& p = results[i];
    if (p.status != "ok") {
      *csv << ",,,,,,,,,,," << CsvField(p.status) << "\n";
      continue;
    }
    const llm::DecodeResult& r = p.result;
    const auto& b = r.breakdown;
    *csv << fmt::format("{:.4f},{:.6f},{:.4f},{:.4f},{:.6f},{:.4f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},ok\n",
                        r.baseline_tokens_per_s, r.baseline_step_ms, r.speculative ? r.speculative_tokens_per_s : 0.0,
                        r.speculative ? r.tau : 1.0, r.speculative ? r.cycle_ms : r.baseline_step_ms,
                        r.speculative ? r.speedup : 1.0, b.draft_compute_ms, b.draft_comm_ms, b.verify_compute_ms,
                        b.verify_comm_ms, b.launch_sync_ms);
  }
  return csv_text.str();
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
  int x_axis = 0;
  if (!flags.x.empty()) {
    auto it = std::find_if(axes.begin(), axes.end(), [&](const VaryAxis& a) { return a.field == flags.x; });
    if (it == axes.end()) return fail(InvalidArgumentError("--x '" + flags.x + "': not one of the --vary fields"));
    x_axis = static_cast<int>(it - axes.begin());
  }

  const auto points = CrossProduct(axes);
  const std::vector<PointResult> results = SimulatePoints(flags, axes, points, err);

  // The CSV whole, then to --out (written whole or not at all) or stdout.
  const std::string csv_text = SweepCsv(axes, points, results);
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

void AddSweepCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<SweepFlags>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Simulate the cross product of --vary'd scenario fields on all cores; write CSV and optionally an SVG.");
  cmd->add_option("scenario", flags->scenario, "scenario textproto (default: the embedded default scenario)");
  cmd->add_option("--vary", flags->vary, "field.path=v1,v2,... (repeatable; the cross product is simulated)")
      ->required();
  cmd->add_option("--set", flags->set, "fixed override field.path=value (repeatable)");
  cmd->add_option("--calibration", flags->calibration, "calibration textproto");
  cmd->add_option("--out", flags->out, "CSV file (default: stdout)");
  cmd->add_option("--svg", flags->svg, "draw tokens/s against a varied field into this SVG file");
  cmd->add_option("--x", flags->x, "the varied field on the SVG's x axis (default: the first --vary)");
  cmd->add_option("--threads", flags->threads, "worker threads (default: all cores)");
  cmd->add_flag("!--no-progress", flags->progress, "no progress bar on stderr");
  cmd->add_flag("--yes", flags->yes, "run more than 10000 points");
  cmd->callback([flags, exit_code] { *exit_code = RunSweep(*flags, std::cout, std::cerr); });
}

}  // namespace specsim::tools
