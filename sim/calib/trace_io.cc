#include "sim/calib/trace_io.h"

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "sim/calib/hardware_from_trace.h"
#include "sim/calib/nccl_tests_log.h"
#include "sim/io/field_ranges.h"
#include "sim/io/file_io.h"

namespace specsim::calib {
namespace {

std::string BoxText(int gpu_count, const std::string& gpu_name) {
  return std::to_string(gpu_count) + "x " + (gpu_name.empty() ? std::string("(unnamed GPU)") : gpu_name);
}

std::string Joined(const std::vector<std::string>& v, const std::string& separator) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : separator) + s;
  return out;
}

// The GpuModel name KnownGpus gives a CUDA device name or a model name ("NVIDIA H200" -> "H200"),
// else the name itself.
std::string CanonicalGpuModel(const std::string& name) {
  for (const KnownGpu& k : KnownGpus())
    if (name == k.model_name) return k.model_name;
  for (const KnownGpu& k : KnownGpus())
    if (name.find(k.match) != std::string::npos) return k.model_name;
  return name;
}

// Calibration box against (gpu names of the other box, its count); `same` compares two names.
template <typename Same>
std::vector<std::string> Mismatches(const config::Calibration& c, const std::vector<std::string>& names, int count,
                                    const char* other, Same same) {
  std::vector<std::string> out;
  if (!HasProvenance(c)) return out;
  const config::CalibrationProvenance& p = c.provenance();
  if (p.gpu_count() > 0 && p.gpu_count() != count)
    out.push_back("GPU count: " + std::to_string(p.gpu_count()) + " in the calibration, " + std::to_string(count) +
                  " in the " + other);
  if (!p.gpu_name().empty()) {
    std::vector<std::string> differ;
    for (const std::string& n : names)
      if (!same(p.gpu_name(), n) && std::find(differ.begin(), differ.end(), n) == differ.end()) differ.push_back(n);
    if (!differ.empty())
      out.push_back("GPU: " + p.gpu_name() + " in the calibration, " + Joined(differ, " and ") + " in the " + other);
  }
  return out;
}

std::string Warning(const config::Calibration& c, const std::string& path, const std::string& box,
                    const std::vector<std::string>& mismatches) {
  if (!HasProvenance(c))
    return "warning: calibration " + path +
           " records no provenance (written before provenance existed): cannot check it was fitted on this box";
  if (mismatches.empty()) return "";
  const config::CalibrationProvenance& p = c.provenance();
  std::vector<std::string> traces(p.traces().begin(), p.traces().end());
  return "warning: calibration " + path + " was fitted on " + BoxText(p.gpu_count(), p.gpu_name()) +
         (traces.empty() ? std::string() : " (" + Joined(traces, ", ") + ")") + "; " + box + ": " +
         Joined(mismatches, "; ");
}

}  // namespace

StatusOr<trace::Trace> LoadTrace(const std::string& path, std::vector<std::string>* warnings) {
  // A committed trace (traces/...) from any directory (io::CommittedPath).
  ASSIGN_OR_RETURN(std::string bytes, io::ReadFileToString(io::CommittedPath(path)));
  trace::Trace t;
  if (LooksLikeNcclTestsLog(bytes)) {
    // nccl-tests' own output (all_reduce_perf and its siblings): read as collective items.
    ASSIGN_OR_RETURN(t, ParseNcclTestsLog(bytes, path));
  } else if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) {
    // The JSON form (protobuf's JSON mapping): specsim-validate's .json copies, and the traces of
    // the Python probes, which write it without the protobuf package.
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    const auto parsed = google::protobuf::util::JsonStringToMessage(bytes, &t, options);
    if (!parsed.ok())
      return InvalidArgumentError(path +
                                  ": not a specsim.trace.Trace in protobuf's JSON mapping "
                                  "(proto/specsim/trace.proto): " +
                                  std::string(parsed.message()));
  } else if (!t.ParseFromString(bytes)) {
    return InvalidArgumentError(path +
                                ": not a binary specsim.trace.Trace (proto/specsim/trace.proto); a trace "
                                "in protobuf's JSON mapping is read from a file named *.json, an nccl-tests log "
                                "from a file that begins '# nccl-tests version'");
  }
  // First and alone: the other fields of another schema's trace mean something else.
  if (t.schema_version() != 1)
    return InvalidArgumentError(path + ": schema_version = " + std::to_string(t.schema_version()) +
                                ": this specsim reads schema_version 1");
  if (t.items_size() == 0) return InvalidArgumentError(path + ": the trace has no items");
  RETURN_IF_ERROR(ValidateTraceItems(t, path, warnings));
  return t;
}

Status ValidateTraceItems(const trace::Trace& t, const std::string& path, std::vector<std::string>* warnings) {
  // Every number against the unit and range trace.proto declares beside it.
  RETURN_IF_ERROR(io::CheckFieldRanges(t, path, warnings));
  // The box: at most 1024 GPUs, each index once (a GPU listed 1,000 times became a 1,000-GPU box).
  const auto& gpus = t.environment().gpus();
  if (gpus.size() > 1024)
    return InvalidArgumentError(path + ": environment.gpus has " + std::to_string(gpus.size()) +
                                " entries: at most 1024");
  std::set<int> seen;
  for (int i = 0; i < gpus.size(); ++i)
    if (!seen.insert(gpus[i].index()).second)
      return InvalidArgumentError(path + ": environment.gpus[" + std::to_string(i) +
                                  "].index = " + std::to_string(gpus[i].index()) + ": listed twice");
  // A collective's ranks: each GPU once.
  for (int i = 0; i < t.items_size(); ++i) {
    const trace::Item& it = t.items(i);
    if (!it.has_collective()) continue;
    std::set<int> ranks;
    for (int g : it.collective().gpus())
      if (!ranks.insert(g).second)
        return InvalidArgumentError(path + ": items[" + std::to_string(i) + "] (" + it.name() +
                                    ").collective.gpus: GPU " + std::to_string(g) + " is listed twice");
  }
  return OkStatus();
}

std::string FileStem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

StatusOr<trace::Trace> MergeTraces(const std::vector<std::pair<std::string, trace::Trace>>& traces) {
  if (traces.empty()) return InvalidArgumentError("no traces to merge");
  if (traces.size() == 1) return traces[0].second;
  const auto& [first_path, first] = traces[0];
  const trace::Environment& env0 = first.environment();
  trace::Trace merged = first;
  merged.clear_items();
  merged.clear_models();
  merged.clear_notes();
  std::map<std::string, std::pair<std::string, const trace::ModelShape*>> models;  // name -> (path, shape)
  std::set<std::string> names;
  for (const auto& [path, t] : traces) {
    const trace::Environment& env = t.environment();
    if (env.gpus_size() != env0.gpus_size())
      return InvalidArgumentError(path + " and " + first_path + " are not from the same box: environment.gpus has " +
                                  std::to_string(env.gpus_size()) + " GPUs in " + path + ", " +
                                  std::to_string(env0.gpus_size()) + " in " + first_path);
    for (int i = 0; i < env.gpus_size(); ++i)
      if (env.gpus(i).name() != env0.gpus(i).name())
        return InvalidArgumentError(path + " and " + first_path + " are not from the same box: environment.gpus[" +
                                    std::to_string(i) + "].name is '" + env.gpus(i).name() + "' in " + path + ", '" +
                                    env0.gpus(i).name() + "' in " + first_path);
    for (const trace::ModelShape& m : t.models()) {
      auto [it, inserted] = models.try_emplace(m.name(), path, &m);
      if (inserted) {
        *merged.add_models() = m;
      } else if (!google::protobuf::util::MessageDifferencer::Equals(*it->second.second, m)) {
        return InvalidArgumentError(path + " and " + it->second.first + " both list model '" + m.name() +
                                    "' (models[].name) with different shapes: merge traces measured with the same "
                                    "model files");
      }
    }
    const std::string stem = FileStem(path);
    for (const trace::Item& item : t.items()) {
      trace::Item* out = merged.add_items();
      *out = item;
      out->set_name(stem + "/" + item.name());
      if (!names.insert(out->name()).second)
        return InvalidArgumentError(path + ": item '" + item.name() + "' becomes '" + out->name() +
                                    "', a name another trace's item already has (the same file given twice, or two "
                                    "traces with the file stem '" +
                                    stem + "': rename one)");
    }
    for (const trace::Note& n : t.notes()) {
      trace::Note* out = merged.add_notes();
      *out = n;
      out->set_message(stem + ": " + n.message());
    }
  }
  return merged;
}

config::CalibrationProvenance ProvenanceFromTrace(const trace::Trace& trace, const std::vector<std::string>& paths) {
  config::CalibrationProvenance p;
  for (const std::string& path : paths) p.add_traces(path);
  const trace::Environment& env = trace.environment();
  if (env.gpus_size() > 0) p.set_gpu_name(env.gpus(0).name());
  p.set_gpu_count(env.gpus_size());
  p.set_hostname(env.hostname());
  p.set_nccl_version(env.nccl_version());
  p.set_driver_version(env.driver_version());
  p.set_cpu_model(env.cpu_model());
  p.set_cpu_logical_cores(env.cpu_logical_cores());
  p.set_kernel_release(env.kernel_release());
  p.set_sandbox(env.sandbox());
  return p;
}

bool HasProvenance(const config::Calibration& c) {
  return c.has_provenance() && (!c.provenance().gpu_name().empty() || c.provenance().gpu_count() > 0);
}

std::vector<std::string> CalibrationMismatches(const config::Calibration& c, const trace::Trace& trace) {
  std::vector<std::string> names;
  for (const trace::Gpu& g : trace.environment().gpus()) names.push_back(g.name());
  return Mismatches(c, names, trace.environment().gpus_size(), "trace",
                    [](const std::string& a, const std::string& b) { return a == b; });
}

std::vector<std::string> CalibrationMismatches(const config::Calibration& c, const std::string& gpu_model_name,
                                               int gpu_count) {
  return Mismatches(c, {gpu_model_name}, gpu_count, "hardware config", [](const std::string& a, const std::string& b) {
    return a == b || CanonicalGpuModel(a) == CanonicalGpuModel(b);
  });
}

std::string CalibrationWarning(const config::Calibration& c, const std::string& path, const trace::Trace& trace) {
  const trace::Environment& env = trace.environment();
  return Warning(c, path, "this trace is from " + BoxText(env.gpus_size(), env.gpus_size() ? env.gpus(0).name() : ""),
                 CalibrationMismatches(c, trace));
}

std::string CalibrationWarning(const config::Calibration& c, const std::string& path, const std::string& gpu_model_name,
                               int gpu_count) {
  return Warning(c, path, "this box has " + BoxText(gpu_count, gpu_model_name),
                 CalibrationMismatches(c, gpu_model_name, gpu_count));
}

const char* SuiteName(trace::Suite suite) {
  switch (suite) {
    case trace::SUITE_PCIE: return "pcie";
    case trace::SUITE_COLLECTIVES: return "collectives";
    case trace::SUITE_KERNELS: return "kernels";
    case trace::SUITE_DECODE: return "decode";
    case trace::SUITE_PACING: return "pacing";
    case trace::SUITE_HOST_STAGED: return "host_staged";
    default: return "unspecified";
  }
}

const char* PathClassName(trace::PathClass c) {
  switch (c) {
    case trace::PATH_SELF: return "SELF";
    case trace::PATH_NVLINK: return "NV";
    case trace::PATH_PIX: return "PIX";
    case trace::PATH_PXB: return "PXB";
    case trace::PATH_PHB: return "PHB";
    case trace::PATH_NODE: return "NODE";
    case trace::PATH_SYS: return "SYS";
    default: return "";
  }
}

}  // namespace specsim::calib
