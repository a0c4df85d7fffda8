#include "sim/tools/import_profile_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "sim/coll/nccl_transport.h"
#include "sim/coll/protocol.h"
#include "sim/core/median.h"
#include "sim/core/strings.h"
#include "sim/io/file_io.h"
#include "sim/profile/item_stats.h"
#include "sim/profile/kernel_class.h"
#include "sim/profile/profile_import.h"
#include "sim/scenario/eager_passes.h"
#include "sim/scenario/profile_passes.h"
#include "sim/scenario/scenario.h"

namespace specsim::tools {
namespace {

// NCCL's MAXCHANNELS: the most channels NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS can ask for.
constexpr int kMaxNcclChannels = 64;

bool IsTraceFile(const std::filesystem::path& p) {
  const std::string name = p.filename().string();
  auto ends = [&](const std::string& s) {
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".json") || ends(".json.gz");
}

// Files named on the command line, and the trace files of the directories named (not recursive).
StatusOr<std::vector<std::string>> TraceFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& named : paths) {
    const std::string p = io::CommittedPath(named);  // committed profiles (traces/...) from any directory
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::string> here;
      for (const auto& e : std::filesystem::directory_iterator(p, ec))
        if (e.is_regular_file() && IsTraceFile(e.path()) && e.path().filename() != "run.json")
          here.push_back(e.path().string());
      if (here.empty()) return InvalidArgumentError(p + ": no *.json or *.json.gz profiler traces in this directory");
      std::sort(here.begin(), here.end());
      files.insert(files.end(), here.begin(), here.end());
    } else if (std::filesystem::exists(p, ec)) {
      files.push_back(p);
    } else {
      return NotFoundError(p + ": no such file or directory");
    }
  }
  return files;
}

// An error of the command on `err`; returns the exit code.
int Fail(std::ostream& err, const std::string& message, int exit_code = 2) {
  err << "specsim import-profile: " << message << "\n";
  return exit_code;
}

// Every file's trace (one per rank), saying each file it reads on `err` unless the output is JSON.
StatusOr<std::vector<profile::KinetoTrace>> ReadRankTraces(const std::vector<std::string>& files, bool json,
                                                           std::ostream& err) {
  std::vector<profile::KinetoTrace> ranks;
  for (const std::string& f : files) {
    if (!json) err << "reading " << f << "\n";
    ASSIGN_OR_RETURN(profile::KinetoTrace t, profile::ReadKinetoTrace(f));
    ranks.push_back(std::move(t));
  }
  return ranks;
}

// A value of an NCCL variable that the trace's predictors read (calib::CollectiveRequestOf): one
// they model. Other NCCL_* variables are recorded as given.
Status CheckNcclEnvValue(const std::string& name, const std::string& value) {
  const std::string v = AsciiLower(value);
  auto refuse = [&](const char* allowed) {
    return InvalidArgumentError("--nccl-env " + name + "=" + value + ": allowed values of " + name + " are " + allowed);
  };
  if (name == "NCCL_ALGO" && !coll::ParseNcclAlgo(v).ok()) return refuse("ring, tree");
  if (name == "NCCL_PROTO" && !coll::ParseNcclProto(v).ok()) return refuse("ll, ll128, simple");
  if (name == "NCCL_P2P_LEVEL" && !coll::ParseP2pLevel(v).ok()) return refuse("pix, pxb, phb, sys");
  if ((name == "NCCL_P2P_DISABLE" || name == "NCCL_SHM_DISABLE") && v != "0" && v != "1") return refuse("0, 1");
  if (name == "NCCL_MIN_NCHANNELS" || name == "NCCL_MAX_NCHANNELS") {
    const bool digits = !v.empty() && v.size() <= 2 &&
                        std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
    if (!digits || std::stoi(v) < 1 || std::stoi(v) > kMaxNcclChannels) return refuse("integers 1..64");
  }
  return OkStatus();
}

StatusOr<profile::ImportOptions> ImportOptionsOf(const ImportProfileFlags& flags) {
  profile::ImportOptions options;
  if (flags.phases == std::vector<std::string>{"none"}) {
    options.names = {};  // graph replays as the passes
  } else if (!flags.phases.empty()) {
    options.names = profile::ExactPassNameMap(flags.phases);
  } else {
    ASSIGN_OR_RETURN(options.names, profile::BuiltinPassNameMap(flags.names));
  }
  if (!flags.name_map.empty()) {
    ASSIGN_OR_RETURN(profile::PassNameMap user, profile::LoadPassNameMapFile(io::CommittedPath(flags.name_map)));
    options.names = profile::ConcatPassNameMaps(std::move(user), options.names);
  }
  options.run_prefix = flags.run_prefix;
  options.call_ranges = flags.call_ranges;
  for (const std::string& kv : flags.nccl_env) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || kv.rfind("NCCL_", 0) != 0)
      return InvalidArgumentError("--nccl-env '" + kv + "': expected NCCL_NAME=value (e.g. NCCL_P2P_DISABLE=1)");
    const std::string name = kv.substr(0, eq), value = kv.substr(eq + 1);
    RETURN_IF_ERROR(CheckNcclEnvValue(name, value));
    options.nccl_env[name] = value;
  }
  return options;
}

// The profile's pass groups against the scenario (--scenario).
struct ScenarioPasses {
  std::optional<scenario::LoadedScenario> loaded;  // none without --scenario
  scenario::ProfilePasses passes;                  // sim/scenario/profile_passes.h
};

// Every pass group predicted from the scenario, when one is given (its warnings on `err`).
StatusOr<ScenarioPasses> PredictPasses(const ImportProfileFlags& flags, const profile::ProfileImport& r,
                                       std::ostream& err) {
  ScenarioPasses s;
  if (flags.scenario.empty()) return s;
  ASSIGN_OR_RETURN(scenario::LoadedScenario loaded,
                   scenario::LoadScenario(flags.scenario, flags.set, flags.calibration));
  s.loaded = std::move(loaded);
  // The scenario's passes run on its tensor-parallel group: predicting them against a profile of
  // another rank count compares two different runs.
  if (s.loaded->setup.parallel.tp != r.ranks)
    return InvalidArgumentError("--scenario " + s.loaded->path + ": parallelism.tensor_parallel " +
                                std::to_string(s.loaded->setup.parallel.tp) + ", but the profile has " +
                                std::to_string(r.ranks) +
                                " rank(s): give the scenario of the profiled run (e.g. --set "
                                "parallelism.tensor_parallel=" +
                                std::to_string(r.ranks) + ")");
  for (const std::string& w : s.loaded->warnings) err << "warning: " << w << "\n";
  s.passes = scenario::PredictProfilePasses(r, *s.loaded);
  return s;
}

// -o: the measurement trace, written whole; the exit code.
int WriteTrace(const std::string& path, trace::Trace* trace, std::ostream& err) {
  trace->set_command_line("specsim import-profile");
  std::string bytes;
  if (!trace->SerializeToString(&bytes)) return Fail(err, "cannot encode the trace", io::kWriteFailedExitCode);
  if (Status w = io::WriteFileAtomically(path, bytes); !w.ok()) return Fail(err, w.message(), io::kWriteFailedExitCode);
  return 0;
}

nlohmann::json PassesJson(const std::vector<profile::PassGroup>& passes) {
  nlohmann::json j = nlohmann::json::array();
  for (const profile::PassGroup& g : passes)
    j.push_back({{"phase", g.phase},
                 {"kind", g.kind},
                 {"rule", g.rule},
                 {"run", g.run},
                 {"graph", g.graph},
                 {"kernels", g.kernels},
                 {"passes", g.passes},
                 {"gpu_span_us", g.gpu_span_us},
                 {"host_span_us", g.host_span_us},
                 {"gpu_idle_us", g.gpu_idle_us},
                 {"busy_us", g.busy_us}});
  return j;
}

nlohmann::json CollectivesJson(const std::vector<profile::CollectiveGroup>& collectives) {
  nlohmann::json j = nlohmann::json::array();
  for (const profile::CollectiveGroup& c : collectives)
    j.push_back({{"name", c.name},
                 {"op", c.op},
                 {"bytes", c.bytes},
                 {"dtype", c.dtype},
                 {"graph", c.graph},
                 {"algorithm", c.algorithm},
                 {"protocol", c.protocol},
                 {"channels", c.channels},
                 {"calls", c.instances},
                 {"transfer_us", c.transfer_us},
                 {"wait_us_mean", c.wait_us_mean},
                 {"wait_us_max", c.wait_us_max},
                 {"phases", c.phases}});
  return j;
}

nlohmann::json GemmsJson(const std::vector<profile::GemmGroup>& gemms) {
  nlohmann::json j = nlohmann::json::array();
  for (const profile::GemmGroup& g : gemms)
    j.push_back({{"name", g.name},
                 {"op", g.op},
                 {"m", g.m},
                 {"n", g.n},
                 {"k", g.k},
                 {"dtype", g.dtype},
                 {"calls", g.calls},
                 {"kernels_per_call", g.kernels_per_call},
                 {"main_kernel", g.main_kernel},
                 {"median_us", g.median_us}});
  return j;
}

nlohmann::json AttentionJson(const std::vector<profile::AttentionGroup>& attention) {
  nlohmann::json j = nlohmann::json::array();
  for (const profile::AttentionGroup& a : attention)
    j.push_back({{"name", a.name},
                 {"implementation", a.implementation},
                 {"op", a.op},
                 {"batch", a.batch},
                 {"query_tokens", a.query_tokens},
                 {"q_heads", a.q_heads},
                 {"kv_heads", a.kv_heads},
                 {"keys", a.keys},
                 {"head_dim", a.head_dim},
                 {"v_head_dim", a.v_head_dim},
                 {"dtype", a.dtype},
                 {"calls", a.calls},
                 {"kernels_per_call", a.kernels_per_call},
                 {"main_kernel", a.main_kernel},
                 {"median_us", a.median_us},
                 {"main_median_us", a.main_median_us}});
  return j;
}

nlohmann::json NormsJson(const std::vector<profile::NormGroup>& norms) {
  nlohmann::json j = nlohmann::json::array();
  for (const profile::NormGroup& n : norms)
    j.push_back({{"name", n.name},
                 {"op", n.op},
                 {"tokens", n.tokens},
                 {"hidden", n.hidden},
                 {"fused_residual", n.fused_residual},
                 {"dtype", n.dtype},
                 {"calls", n.calls},
                 {"median_us", n.median_us}});
  return j;
}

nlohmann::json SamplingJson(const std::vector<profile::SamplingGroup>& sampling) {
  nlohmann::json j = nlohmann::json::array();
  for (const profile::SamplingGroup& g : sampling)
    j.push_back({{"name", g.name},
                 {"op", g.op},
                 {"rows", g.rows},
                 {"vocab", g.vocab},
                 {"dtype", g.dtype},
                 {"calls", g.calls},
                 {"main_kernel", g.main_kernel},
                 {"median_us", g.median_us}});
  return j;
}

nlohmann::json ElementwiseJson(const std::vector<profile::ElementwiseGroup>& elementwise) {
  nlohmann::json j = nlohmann::json::array();
  for (const profile::ElementwiseGroup& g : elementwise)
    j.push_back({{"name", g.name},
                 {"op", g.op},
                 {"elements", g.elements},
                 {"bytes", g.bytes},
                 {"strided", g.strided},
                 {"dtype", g.dtype},
                 {"calls", g.calls},
                 {"main_kernel", g.main_kernel},
                 {"median_us", g.median_us}});
  return j;
}

nlohmann::json HostOpsJson(const std::vector<profile::HostOpGroup>& ops) {
  nlohmann::json j = nlohmann::json::array();
  for (const profile::HostOpGroup& g : ops)
    j.push_back({{"kind", g.kind},
                 {"op", g.op},
                 {"op_class", g.op_class},
                 {"tokens", g.tokens},
                 {"rank", g.rank},
                 {"calls", g.host_us.size()},
                 {"kernels", g.kernels},
                 {"host_median_us", MedianOf(g.host_us)},
                 {"device_median_us", g.device_us}});
  return j;
}

nlohmann::json EagerPassesJson(const std::vector<scenario::EagerPassPrediction>& predicted) {
  nlohmann::json j = nlohmann::json::array();
  for (const scenario::EagerPassPrediction& p : predicted) {
    nlohmann::json e = {{"pass", p.loop->pass},
                        {"kind", p.loop->kind},
                        {"tokens", p.loop->tokens},
                        {"ops", p.loop->ops.size()},
                        {"measured_host_us", p.measured_us},
                        {"costs_from", p.costs_from}};
    if (p.ok)
      e["predicted_host_us"] = p.predicted_us;
    else
      e["not_predicted"] = p.why;
    j.push_back(e);
  }
  return j;
}

// Events dropped for a field that failed its check: [{category, reason, events}].
nlohmann::json DroppedJson(const std::map<std::string, std::map<std::string, int64_t>>& dropped) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [cat, reasons] : dropped)
    for (const auto& [why, n] : reasons) j.push_back({{"category", cat}, {"reason", why}, {"events", n}});
  return j;
}

// Each pass group against the scenario (--scenario): measured busy, predicted, tokens, layers, by
// class; or why not predicted.
nlohmann::json PassPredictionsJson(const ScenarioPasses& s) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [g, p] : s.passes.predicted)
    j.push_back({{"pass", g->Key()},
                 {"kind", p.kind},
                 {"tokens", p.tokens},
                 {"layers", p.layers},
                 {"measured_busy_us", g->busy_total_us},
                 {"predicted_busy_us", p.busy_us},
                 {"error", p.busy_us / std::max(1e-9, g->busy_total_us) - 1},
                 {"predicted_launch_us", p.launch_us},
                 {"measured_class_us", g->busy_us},
                 {"predicted_class_us", p.class_us}});
  for (const auto& [g, why] : s.passes.unpredicted) j.push_back({{"pass", g->Key()}, {"not_predicted", why}});
  return j;
}

void PrintJson(const profile::ProfileImport& r, const ScenarioPasses& s, const std::string& output, std::ostream& out) {
  nlohmann::json j;
  j["ranks"] = r.ranks;
  j["kernels"] = r.kernels;
  j["kernels_in_passes"] = r.kernels_in_passes;
  j["kernels_without_launch"] = r.kernels_without_launch;
  j["ignored_events"] = r.ignored;
  j["dropped_events"] = DroppedJson(r.dropped);
  j["passes"] = PassesJson(r.passes);
  j["collectives"] = CollectivesJson(r.collectives);
  j["gemms"] = GemmsJson(r.gemms);
  j["gemms_skipped"] = r.gemms_skipped;
  j["attention"] = AttentionJson(r.kernel_call_groups.attention);
  j["norms"] = NormsJson(r.kernel_call_groups.norms);
  j["sampling"] = SamplingJson(r.kernel_call_groups.sampling);
  j["elementwise"] = ElementwiseJson(r.kernel_call_groups.elementwise);
  j["kernel_calls_skipped"] = r.kernel_calls_skipped;
  j["unmatched_ranges"] = r.unmatched_ranges;
  j["host_ops"] = HostOpsJson(r.host_ops);
  j["eager_passes"] = EagerPassesJson(scenario::PredictEagerPasses(r));
  if (s.loaded) j["pass_predictions"] = PassPredictionsJson(s);
  if (!output.empty()) j["wrote"] = output;
  out << j.dump(1) << "\n";
}

// The kernels counted, and the events not used by category.
void PrintKernelCounts(const profile::ProfileImport& r, std::ostream& out) {
  out << fmt::format("{} rank(s), {} kernels: {} in passes, {} without their launch call in the trace\n", r.ranks,
                     r.kernels, r.kernels_in_passes, r.kernels_without_launch);
  std::string ignored;
  for (const auto& [cat, n] : r.ignored)
    ignored += fmt::format("{}{} {}", ignored.empty() ? "" : ", ", n, cat.empty() ? "(none)" : cat);
  out << "events not used: " << (ignored.empty() ? "none" : ignored) << "\n";
  for (const auto& [cat, reasons] : r.dropped)
    for (const auto& [why, n] : reasons) out << fmt::format("dropped {} {} events: {}\n", n, cat, why);
}

// Passes: one row per group, busy time of the classes that occur.
void PrintPassTable(const std::vector<profile::PassGroup>& passes, std::ostream& out) {
  std::set<std::string> classes;
  for (const profile::PassGroup& g : passes)
    for (const auto& [c, us] : g.busy_us) classes.insert(c);
  out << "\npasses (medians over the passes of all ranks; gpu = first kernel start to last kernel end; idle = no\n"
         "kernel running within it; busy = summed kernel time by class; us)\n";
  std::string head = fmt::format("{:<48} {:>6} {:>10} {:>10} {:>10}", "pass", "passes", "gpu_us", "idle_us", "host_us");
  for (const std::string& c : classes) head += fmt::format(" {:>9}", c);
  out << head << "\n";
  for (const profile::PassGroup& g : passes) {
    std::string row = fmt::format("{:<48} {:>6} {:>10.1f} {:>10.1f} {:>10.1f}", g.Key(), g.passes, g.gpu_span_us,
                                  g.gpu_idle_us, g.host_span_us);
    for (const std::string& c : classes) {
      auto it = g.busy_us.find(c);
      row += fmt::format(" {:>9.1f}", it == g.busy_us.end() ? 0.0 : it->second);
    }
    out << row << "\n";
  }
}

// Each pass group's kind and the rule that gave it; the range names no rule matched.
void PrintPassKinds(const profile::ProfileImport& r, std::ostream& out) {
  out << "\npass kinds (the name map's rule of each group's range: --names, --name-map, --phases)\n";
  for (const profile::PassGroup& g : r.passes)
    out << fmt::format("{:<48} {:>12}  {}\n", g.Key(), g.kind.empty() ? "(by replay)" : g.kind, g.rule);
  if (r.unmatched_ranges.empty()) return;
  out << "host ranges matched by no rule (not passes; add a rule with --name-map to make one a pass):\n";
  for (const auto& [name, n] : r.unmatched_ranges) out << fmt::format("  {:>6} x {}\n", n, name);
}

// Eager pass groups: host span predicted from the operators' host costs (held out by kind).
void PrintEagerPredictions(const profile::ProfileImport& r, std::ostream& out) {
  const std::vector<scenario::EagerPassPrediction> predicted = scenario::PredictEagerPasses(r);
  if (predicted.empty()) return;
  out << "\neager passes: host span (the range, median) against the operators' host costs re-simulated "
         "(PredictHostLoop; costs of the other kinds' passes; us)\n";
  out << fmt::format("{:<48} {:>6} {:>10} {:>10} {:>8}  {}\n", "pass", "ops", "host", "predicted", "error",
                     "costs from");
  for (const scenario::EagerPassPrediction& p : predicted) {
    if (!p.ok) {
      out << fmt::format("{:<48} not predicted: {}\n", p.loop->pass, p.why);
      continue;
    }
    out << fmt::format("{:<48} {:>6} {:>10.1f} {:>10.1f} {:>+7.1f}%  {}\n", p.loop->pass, p.loop->ops.size(),
                       p.measured_us, p.predicted_us, 100 * (p.predicted_us / std::max(1e-9, p.measured_us) - 1),
                       p.costs_from);
  }
}

// NCCL calls, then the trace's notes.
void PrintCollectiveTable(const profile::ProfileImport& r, std::ostream& out) {
  out << "\nNCCL calls (transfer: the last-arriving rank's kernel, median; wait: each rank's wait for the last)\n";
  out << fmt::format("{:<48} {:>16} {:>6} {:>12} {:>12} {:>12}  {}\n", "call", "algo/proto/ch", "calls", "transfer_us",
                     "wait_mean_us", "wait_max_us", "phases");
  for (const profile::CollectiveGroup& c : r.collectives) {
    std::string phases;
    for (const auto& [p, n] : c.phases) phases += fmt::format("{}{} {}", phases.empty() ? "" : ", ", n, p);
    out << fmt::format("{:<48} {:>16} {:>6} {:>12.2f} {:>12.2f} {:>12.2f}  {}\n", c.name,
                       fmt::format("{}/{}/{}", c.algorithm, c.protocol, c.channels), c.instances, c.transfer_us,
                       c.wait_us_mean, c.wait_us_max, phases);
  }
  for (const trace::Note& n : r.trace.notes()) out << "note: " << n.message() << "\n";
}

void PrintGemmTable(const profile::ProfileImport& r, std::ostream& out) {
  if (r.gemms.empty() && r.gemms_skipped.empty()) return;
  out << "\nGEMM calls launched eagerly (aten::mm / addmm with their shapes; time = the call's kernels, median "
         "over calls of all ranks)\n";
  out << fmt::format("{:<40} {:>6} {:>8} {:>10} {:>8}  {}\n", "gemm", "calls", "kernels", "median_us", "TFLOP/s",
                     "main kernel");
  for (const profile::GemmGroup& g : r.gemms)
    out << fmt::format("{:<40} {:>6} {:>8} {:>10.2f} {:>8.1f}  {}\n", g.name, g.calls, g.kernels_per_call, g.median_us,
                       2.0 * g.m * g.n * g.k / (g.median_us * 1e6), g.main_kernel.substr(0, 60));
  for (const auto& [why, n] : r.gemms_skipped) out << fmt::format("note: {} GEMM call(s) skipped: {}\n", n, why);
}

// Eager argmax and elementwise calls with their shapes (profile/kernel_calls.h).
void PrintSamplingAndElementwise(const profile::KernelCallGroups& r, std::ostream& out) {
  if (!r.sampling.empty()) {
    out << "\nargmax calls launched eagerly (greedy sampling; median over calls of all ranks)\n";
    out << fmt::format("{:<40} {:>7} {:>7} {:>9} {:>6} {:>10}\n", "sampling", "rows", "vocab", "dtype", "calls",
                       "median_us");
    for (const profile::SamplingGroup& g : r.sampling)
      out << fmt::format("{:<40} {:>7} {:>7} {:>9} {:>6} {:>10.2f}\n", g.name, g.rows, g.vocab, g.dtype, g.calls,
                         g.median_us);
  }
  if (!r.elementwise.empty()) {
    out << "\nelementwise calls launched eagerly (bytes = inputs read + output written; median over calls of all "
           "ranks)\n";
    out << fmt::format("{:<52} {:>10} {:>11} {:>6} {:>10} {:>7}  {}\n", "elementwise", "elements", "bytes", "calls",
                       "median_us", "GB/s", "main kernel");
    for (const profile::ElementwiseGroup& g : r.elementwise)
      out << fmt::format("{:<52} {:>10} {:>11} {:>6} {:>10.2f} {:>7.0f}  {}\n", g.name, g.elements, g.bytes, g.calls,
                         g.median_us, static_cast<double>(g.bytes) / (g.median_us * 1e3), g.main_kernel.substr(0, 50));
  }
}

// Eager attention and RMSNorm calls with their shapes (profile/kernel_calls.h).
void PrintKernelCallTables(const profile::ProfileImport& imported, std::ostream& out) {
  const profile::KernelCallGroups& r = imported.kernel_call_groups;
  if (!r.attention.empty()) {
    out << "\nattention calls launched eagerly (shapes per GPU; keys = cached + new tokens; time = the call's "
           "kernels, main = its longest alone; median over calls of all ranks)\n";
    out << fmt::format("{:<34} {:>5} {:>5} {:>4} {:>4} {:>7} {:>6} {:>10} {:>9} {:>7}\n", "implementation", "batch",
                       "q", "hq", "hkv", "keys", "calls", "median_us", "main_us", "TB/s");
    for (const profile::AttentionGroup& a : r.attention) {
      const double kv_bytes = double(a.batch) * a.kv_heads * a.keys * (a.head_dim + a.v_head_dim) * 2;
      out << fmt::format(
          "{:<34} {:>5} {:>5} {:>4} {:>4} {:>7} {:>6} {:>10.2f} {:>9.2f} {:>7.2f}\n",
          a.implementation.empty() ? "(unrecognised: " + a.main_kernel.substr(0, 20) + ")" : a.implementation, a.batch,
          a.query_tokens, a.q_heads, a.kv_heads, a.keys, a.calls, a.median_us, a.main_median_us,
          kv_bytes / (a.median_us * 1e6));
    }
  }
  if (!r.norms.empty()) {
    out << "\nRMSNorm calls launched eagerly (median over calls of all ranks)\n";
    out << fmt::format("{:<40} {:>7} {:>7} {:>9} {:>6} {:>10}\n", "norm", "tokens", "hidden", "residual", "calls",
                       "median_us");
    for (const profile::NormGroup& n : r.norms)
      out << fmt::format("{:<40} {:>7} {:>7} {:>9} {:>6} {:>10.2f}\n", n.name, n.tokens, n.hidden,
                         n.fused_residual ? "yes" : "no", n.calls, n.median_us);
  }
  PrintSamplingAndElementwise(r, out);
  for (const auto& [why, n] : imported.kernel_calls_skipped)
    out << fmt::format("note: {} call(s) skipped: {}\n", n, why);
}

// Each pass group's measured busy time against the predicted one, or why it is not predicted.
void PrintPredictions(const ScenarioPasses& s, std::ostream& out) {
  out << "\npasses against " << s.loaded->path << " (busy = GPU time with a kernel of the pass running; predicted: "
      << "the pass's compute + communication; idle against the predicted launch / sync time; us)\n";
  out << fmt::format("{:<48} {:>14} {:>7} {:>7} {:>10} {:>10} {:>8} {:>9} {:>9}\n", "pass", "as", "tokens", "layers",
                     "busy", "predicted", "error", "idle", "launch");
  for (const auto& [g, why] : s.passes.unpredicted) out << fmt::format("{:<48} not predicted: {}\n", g->Key(), why);
  for (const auto& [g, p] : s.passes.predicted) {
    out << fmt::format("{:<48} {:>14} {:>7} {:>7} {:>10.1f} {:>10.1f} {:>+7.1f}% {:>9.1f} {:>9.1f}\n", g->Key(), p.kind,
                       p.tokens, p.layers, g->busy_total_us, p.busy_us,
                       100 * (p.busy_us / std::max(1e-9, g->busy_total_us) - 1), g->gpu_idle_us, p.launch_us);
  }
}

// One graph pass by kernel class: measured busy -> predicted device time per class, and the class
// with the largest gap.
void PrintClassGaps(const profile::PassGroup& g, const scenario::PassPrediction& p, std::ostream& out) {
  std::map<std::string, double> measured;
  for (const auto& [c, us] : g.busy_us) measured[profile::ComparedClassOf(c)] += us;
  std::set<std::string> classes;
  for (const auto& [c, us] : measured) classes.insert(c);
  for (const auto& [c, us] : p.class_us) classes.insert(c);
  std::string row, largest;
  double gap = -1;
  for (const std::string& c : classes) {
    const double m = measured.count(c) ? measured.at(c) : 0.0, q = p.class_us.count(c) ? p.class_us.at(c) : 0.0;
    row += fmt::format("  {} {:.1f}->{:.1f}", c, m, q);
    if (std::abs(m - q) > gap) {
      gap = std::abs(m - q);
      largest = fmt::format("{} ({:+.1f} us)", c, q - m);
    }
  }
  out << fmt::format("{:<48}{}\n{:<48}  largest gap: {}\n", g.Key(), row, "", largest);
}

// By kernel class, graph passes (eager ones under a profiler are dominated by its host cost).
void PrintClassTable(const ScenarioPasses& s, std::ostream& out) {
  out << "\nby kernel class, graph passes (measured busy -> predicted device time, us; nccl: kernel time incl. "
         "waits -> transfer)\n";
  for (const auto& [g, p] : s.passes.predicted)
    if (g->graph) PrintClassGaps(*g, p, out);
}

void PrintText(const profile::ProfileImport& r, const ScenarioPasses& s, const std::string& output, std::ostream& out) {
  PrintKernelCounts(r, out);
  PrintPassTable(r.passes, out);
  PrintPassKinds(r, out);
  PrintEagerPredictions(r, out);
  PrintCollectiveTable(r, out);
  PrintGemmTable(r, out);
  PrintKernelCallTables(r, out);
  if (s.loaded) {
    PrintPredictions(s, out);
    PrintClassTable(s, out);
  }
  if (!output.empty())
    out << "\nwrote " << output << " (" << r.trace.items_size() << " items); compare it with: specsim compare "
        << output << " --hardware <box.textproto>\n";
}

}  // namespace

int RunImportProfile(const ImportProfileFlags& flags, std::ostream& out, std::ostream& err) {
  if (flags.scenario.empty() && (!flags.set.empty() || !flags.calibration.empty()))
    return Fail(err, "--set and --calibration apply to --scenario, which is not given");
  auto options = ImportOptionsOf(flags);  // the flags first: a bad one costs no reading
  if (!options.ok()) return Fail(err, options.status().message());
  auto files = TraceFiles(flags.paths);
  if (!files.ok()) return Fail(err, files.status().message());
  auto ranks = ReadRankTraces(*files, flags.json, err);
  if (!ranks.ok()) return Fail(err, ranks.status().message());
  auto r = profile::ImportProfile(std::move(*ranks), *options);
  if (!r.ok()) return Fail(err, r.status().message());
  // The passes against the scenario, and (with -o) its target forwards as decode items.
  auto passes = PredictPasses(flags, *r, err);
  if (!passes.ok()) return Fail(err, passes.status().message());
  if (passes->loaded && !flags.output.empty())
    if (Status s = scenario::AddPassItems(passes->passes, *passes->loaded, &*r); !s.ok()) return Fail(err, s.message());
  if (!flags.output.empty())
    if (const int rc = WriteTrace(flags.output, &r->trace, err); rc != 0) return rc;
  if (flags.json)
    PrintJson(*r, *passes, flags.output, out);
  else
    PrintText(*r, *passes, flags.output, out);
  return 0;
}

}  // namespace specsim::tools
