#include "sim/tools/sweep_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "sim/advise/framework_rules.h"
#include "sim/calib/calibration_loader.h"
#include "sim/core/parallel_for.h"
#include "sim/core/progress_line.h"
#include "sim/io/file_io.h"
#include "sim/scenario/scenario.h"
#include "sim/tools/config_files.h"
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

// The dimensions of the cross product: an ungrouped axis, or a group's axes together, in order of
// first appearance; each with its length (the shortest list of a group).
std::vector<std::pair<std::vector<size_t>, size_t>> Dimensions(const std::vector<VaryAxis>& axes) {
  std::vector<std::pair<std::vector<size_t>, size_t>> dims;
  std::map<int, size_t> dim_of_group;
  for (size_t a = 0; a < axes.size(); ++a) {
    if (axes[a].group >= 0 && dim_of_group.count(axes[a].group)) {
      auto& d = dims[dim_of_group[axes[a].group]];
      d.first.push_back(a);
      d.second = std::min(d.second, axes[a].values.size());
      continue;
    }
    if (axes[a].group >= 0) dim_of_group[axes[a].group] = dims.size();
    dims.push_back({{a}, axes[a].values.size()});
  }
  return dims;
}

}  // namespace

int64_t CrossProductSize(const std::vector<VaryAxis>& axes) {
  int64_t n = 1;
  for (const auto& d : Dimensions(axes)) {
    n *= static_cast<int64_t>(d.second);
    if (n > int64_t{1} << 50) return n;  // far past any limit; no overflow
  }
  return n;
}

std::vector<std::string> CrossProductPoint(const std::vector<VaryAxis>& axes, int64_t i) {
  std::vector<std::string> point(axes.size());
  const auto dims = Dimensions(axes);
  for (size_t d = dims.size(); d-- > 0;) {  // the last dimension varies fastest
    const int64_t n = static_cast<int64_t>(dims[d].second);
    const size_t v = static_cast<size_t>(i % n);
    i /= n;
    for (size_t a : dims[d].first) point[a] = axes[a].values[v];
  }
  return point;
}

StatusOr<SweepShard> ParseShard(const std::string& text) {
  const size_t slash = text.find('/');
  SweepShard s;
  try {
    size_t used_i = 0, used_n = 0;
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    s.index = std::stoll(text.substr(0, slash), &used_i);
    s.count = std::stoll(text.substr(slash + 1), &used_n);
    if (used_i != slash || used_n != text.size() - slash - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    return InvalidArgumentError("--shard '" + text + "': expected I/N (block I of N, 0 <= I < N), e.g. 3/16");
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count)
    return InvalidArgumentError(
        fmt::format("--shard {}: needs 0 <= I < N (blocks are numbered from 0, as a job array's index)", text));
  return s;
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
StatusOr<std::vector<VaryAxis>> SweepAxes(const SweepFlags& flags, int64_t shards) {
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
  // With --shard the limits are this process's: its block of the points.
  {
    const int64_t total = CrossProductSize(axes);
    const int64_t n = (total + shards - 1) / shards;
    const std::string what = shards > 1 ? fmt::format("{} points in this shard's block (of {})", n, total)
                                        : fmt::format("{} points (the product of the --vary lists)", n);
    // Each point's row and result are held until the table is written (a few hundred bytes to a few
    // kB a point): past kSweepPointsMax the sweep would hold gigabytes, --yes or not.
    if (n > kSweepPointsMax)
      return InvalidArgumentError(fmt::format(
          "{} is more than {}, the most one sweep process runs: shard it (--shard I/N with N >= {}) or shorten the "
          "lists",
          what, kSweepPointsMax, (total + kSweepPointsMax - 1) / kSweepPointsMax));
    if (n > kSweepPointsWithoutYes && !flags.yes)
      return InvalidArgumentError(fmt::format(
          "{} is more than {} without --yes: each point simulates the scenario once (milliseconds to a second "
          "each); pass --yes to run them all",
          what, kSweepPointsWithoutYes));
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
  const size_t total = points.size();
  ProgressLine line(flags.progress ? &err : nullptr, [total](size_t done, double seconds) {
    constexpr size_t kWidth = 30;
    const size_t filled = kWidth * done / total;
    return fmt::format("[{}{}] {}/{} points, {:.1f} s", std::string(filled, '#'), std::string(kWidth - filled, '.'),
                       done, total, seconds);
  });
  ParallelFor(points.size(), flags.threads, [&](size_t i) {
    results[i] = SimulatePoint(flags, axes, points[i]);
    line.Advance();
  });
  line.Finish();
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

// What makes two shards parts of one sweep: the scenario, calibration, fixed and varied fields
// (FNV-1a over their text), as 16 hex digits.
std::string SweepFingerprint(const SweepFlags& flags, const std::vector<VaryAxis>& axes) {
  uint64_t h = 1469598103934665603ull;
  auto add = [&h](const std::string& text) {
    for (unsigned char c : text + '\x1f') {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  add(flags.scenario);
  add(flags.calibration);
  for (const std::string& x : flags.set) add("set " + x);
  for (const VaryAxis& a : axes) {
    add(fmt::format("axis {} group {}", a.field, a.group));
    for (const std::string& v : a.values) add(v);
  }
  return fmt::format("{:016x}", h);
}

// The first of N blocks' points: block I holds [I * P / N, (I + 1) * P / N).
int64_t BlockStart(int64_t index, int64_t count, int64_t total) {
  return static_cast<int64_t>(static_cast<__int128>(index) * total / count);
}

constexpr const char* kShardLine = "# specsim sweep shard {}/{}: points {}..{} of {}, sweep {}\n";

// --merge: the shards read, checked (one sweep, every block once, each block's rows) and joined
// into the unsharded sweep's CSV.
StatusOr<std::string> MergeShards(const std::vector<std::string>& paths) {
  struct Shard {
    std::string path;
    long long index = 0, count = 0, first = 0, end = 0, total = 0;
    std::string fingerprint, header, rows;
    int64_t row_count = 0;
  };
  std::vector<Shard> shards;
  for (const std::string& path : paths) {
    std::ifstream in(path);
    if (!in) return NotFoundError("--merge " + path + ": cannot be read");
    Shard sh;
    sh.path = path;
    std::string line;
    char fp[17] = {0};
    if (!std::getline(in, line) ||
        std::sscanf(line.c_str(), "# specsim sweep shard %lld/%lld: points %lld..%lld of %lld, sweep %16s", &sh.index,
                    &sh.count, &sh.first, &sh.end, &sh.total, fp) != 6)
      return InvalidArgumentError("--merge " + path +
                                  ": not a sweep shard (its first line must be '# specsim sweep shard I/N: ...', "
                                  "as `specsim sweep --shard I/N` writes it)");
    sh.fingerprint = fp;
    if (!std::getline(in, sh.header)) return InvalidArgumentError("--merge " + path + ": no CSV header");
    while (std::getline(in, line)) {
      sh.rows += line + "\n";
      ++sh.row_count;
    }
    shards.push_back(std::move(sh));
  }
  if (shards.empty()) return InvalidArgumentError("--merge: no shard files given");
  const Shard& ref = shards.front();
  for (const Shard& sh : shards) {
    if (sh.count < 1 || sh.index < 0 || sh.index >= sh.count || sh.total < 0)
      return InvalidArgumentError(
          fmt::format("--merge {}: shard {}/{} of {} points: needs 0 <= I < N", sh.path, sh.index, sh.count, sh.total));
    if (sh.fingerprint != ref.fingerprint || sh.count != ref.count || sh.total != ref.total || sh.header != ref.header)
      return InvalidArgumentError(fmt::format(
          "--merge {}: from another sweep than {} (sweep {} with {} shards of {} points vs sweep {} with {} of {})",
          sh.path, ref.path, sh.fingerprint, sh.count, sh.total, ref.fingerprint, ref.count, ref.total));
    const int64_t first = BlockStart(sh.index, sh.count, sh.total), end = BlockStart(sh.index + 1, sh.count, sh.total);
    if (sh.first != first || sh.end != end || sh.row_count != end - first)
      return InvalidArgumentError(
          fmt::format("--merge {}: shard {}/{} should hold points {}..{} ({} rows); it says "
                      "{}..{} and has {} rows (cut short?)",
                      sh.path, sh.index, sh.count, first, end, end - first, sh.first, sh.end, sh.row_count));
  }
  std::sort(shards.begin(), shards.end(), [](const Shard& a, const Shard& b) { return a.index < b.index; });
  std::string missing, twice;
  for (long long i = 0, k = 0; i < ref.count; ++i) {
    int seen = 0;
    while (k < static_cast<long long>(shards.size()) && shards[k].index == i) ++seen, ++k;
    if (seen == 0) missing += fmt::format("{}{}", missing.empty() ? "" : ", ", i);
    if (seen > 1) twice += fmt::format("{}{}", twice.empty() ? "" : ", ", i);
  }
  if (!twice.empty()) return InvalidArgumentError("--merge: shard(s) " + twice + " given more than once");
  if (!missing.empty())
    return InvalidArgumentError(fmt::format("--merge: shard(s) {} of {} missing", missing, ref.count));
  std::string csv = ref.header + "\n";
  for (const Shard& sh : shards) csv += sh.rows;
  return csv;
}

// The flags that combine badly with the axes: a --set of a varied field (the varied value would
// win at every point), one file for --out and --svg, an --x that is not varied. Returns the SVG's
// x axis.
StatusOr<int> CheckOutputsAndFields(const SweepFlags& flags, const std::vector<VaryAxis>& axes) {
  for (const std::string& set : flags.set) {
    const std::string field = set.substr(0, set.find('='));
    for (const VaryAxis& a : axes)
      if (a.field == field)
        return InvalidArgumentError("--set " + set + ": " + field +
                                    " is also varied (--vary / --vary-together), which would override it at every "
                                    "point: give it one way");
  }
  if (!flags.out.empty() && !flags.svg.empty()) {
    std::error_code ec_out, ec_svg;
    const auto out_path = std::filesystem::weakly_canonical(flags.out, ec_out);
    const auto svg_path = std::filesystem::weakly_canonical(flags.svg, ec_svg);
    if (!ec_out && !ec_svg && out_path == svg_path)
      return InvalidArgumentError("--out " + flags.out + " and --svg " + flags.svg +
                                  " name the same file: the SVG would replace the table");
  }
  if (flags.x.empty()) return 0;
  auto it = std::find_if(axes.begin(), axes.end(), [&](const VaryAxis& a) { return a.field == flags.x; });
  if (it == axes.end()) return InvalidArgumentError("--x '" + flags.x + "': not one of the --vary fields");
  return static_cast<int>(it - axes.begin());
}

}  // namespace

int RunSweep(const SweepFlags& flags, std::ostream& out, std::ostream& err) {
  auto fail = [&err](const Status& s) {
    err << "specsim sweep: " << s.message() << "\n";
    return 2;
  };
  auto write = [&](const std::string& text) {
    if (flags.out.empty()) {
      out << text;
    } else if (Status w = io::WriteFileAtomically(flags.out, text); !w.ok()) {
      err << "specsim sweep: --out " << w.message() << "\n";
      return io::kWriteFailedExitCode;
    }
    return 0;
  };
  if (!flags.merge.empty()) {
    if (!flags.vary.empty() || !flags.vary_together.empty() || !flags.shard.empty() || !flags.svg.empty() || flags.json)
      return fail(InvalidArgumentError(
          "--merge takes shard CSVs and --out only (the sweep's fields are in the shards; --json, --svg and --shard "
          "are for a sweep that runs)"));
    auto merged = MergeShards(flags.merge);
    if (!merged.ok()) return fail(merged.status());
    return write(*merged);
  }
  SweepShard shard;
  if (!flags.shard.empty()) {
    auto parsed = ParseShard(flags.shard);
    if (!parsed.ok()) return fail(parsed.status());
    shard = *parsed;
    if (flags.json || !flags.svg.empty())
      return fail(InvalidArgumentError("--shard writes CSV for --merge: --json and --svg are for the merged sweep"));
  }
  auto axes_or = SweepAxes(flags, shard.count);
  if (!axes_or.ok()) return fail(axes_or.status());
  const std::vector<VaryAxis>& axes = *axes_or;
  auto x_axis = CheckOutputsAndFields(flags, axes);
  if (!x_axis.ok()) return fail(x_axis.status());
  // Which config files the points read, and from where (stderr: the CSV / JSON stays data).
  if (auto base = scenario::LoadScenario(flags.scenario, flags.set, flags.calibration); base.ok())
    err << "specsim sweep: " << ConfigFilesText(base->scenario, flags.scenario, flags.calibration) << "\n";

  const int64_t total = CrossProductSize(axes);
  const int64_t first = BlockStart(shard.index, shard.count, total);
  const int64_t end = BlockStart(shard.index + 1, shard.count, total);
  std::vector<std::vector<std::string>> points;
  points.reserve(static_cast<size_t>(end - first));
  for (int64_t i = first; i < end; ++i) points.push_back(CrossProductPoint(axes, i));
  const std::vector<PointResult> results = SimulatePoints(flags, axes, points, err);
  if (!flags.shard.empty())
    return write(fmt::format(fmt::runtime(kShardLine), shard.index, shard.count, first, end, total,
                             SweepFingerprint(flags, axes)) +
                 SweepCsv(axes, points, results));

  // The CSV (or JSON) whole, then to --out (written whole or not at all) or stdout.
  if (const int rc = write(flags.json ? SweepJson(axes, points, results) : SweepCsv(axes, points, results)); rc != 0)
    return rc;
  if (!flags.svg.empty()) {
    if (Status w = io::WriteFileAtomically(flags.svg, RenderSvgLinePlot(SweepPlot(axes, *x_axis, points, results)));
        !w.ok()) {
      err << "specsim sweep: --svg " << w.message() << "\n";
      return io::kWriteFailedExitCode;
    }
  }
  return 0;
}

}  // namespace specsim::tools
