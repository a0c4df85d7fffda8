#include "sim/profile/profile_import.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "sim/core/strings.h"
#include "sim/profile/kernel_class.h"

namespace specsim::profile {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// A trace item's stats from a profile's samples (us): count, median, min, max, p10, p90, mean.
// REQUIRES: !v.empty().
void FillStats(const std::vector<double>& v, trace::Stats* s) {
  s->set_iterations(static_cast<int>(v.size()));
  s->set_median_us(Median(v));
  s->set_min_us(*std::min_element(v.begin(), v.end()));
  s->set_max_us(*std::max_element(v.begin(), v.end()));
  s->set_p10_us(Percentile(v, 0.1));
  s->set_p90_us(Percentile(v, 0.9));
  double mean = 0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  s->set_mean_us(mean);
  s->set_timer("kineto");
}

std::string SizeName(int64_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + "MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + "KiB";
  return std::to_string(bytes) + "B";
}

trace::DType TraceDtype(const std::string& dtype) {
  if (dtype == "BFloat16" || dtype == "bf16" || dtype == "bfloat16") return trace::DTYPE_BF16;
  if (dtype == "Half" || dtype == "f16" || dtype == "half") return trace::DTYPE_FP16;
  if (dtype == "Float" || dtype == "f32" || dtype == "float") return trace::DTYPE_FP32;
  if (dtype == "Byte" || dtype == "u8" || dtype == "uint8") return trace::DTYPE_U8;
  return trace::DTYPE_UNSPECIFIED;
}

// One rank's passes: for each phase-range occurrence, its kernels.
struct PassInstance {
  std::string phase, run;
  int64_t host_start = 0, host_end = 0;
  int64_t gpu_start = INT64_MAX, gpu_end = INT64_MIN;
  int kernels = 0;
  bool graph = false;
  std::map<std::string, double> busy_ns;
  std::vector<std::pair<int64_t, int64_t>> intervals;  // kernels' [start, end)
  int allreduces = 0;
  int64_t allreduce_elements = -1;  // the first allreduce's, when recorded
  // GPU time inside the span with no kernel running: the host not keeping up (launch gaps, host
  // syncs) plus graph-internal gaps.
  double IdleNs() const {
    std::vector<std::pair<int64_t, int64_t>> v = intervals;
    std::sort(v.begin(), v.end());
    int64_t covered = 0, end = INT64_MIN;
    for (const auto& [a, b] : v) {
      const int64_t from = std::max(a, end);
      if (b > from) covered += b - from;
      end = std::max(end, b);
    }
    return static_cast<double>(gpu_end - gpu_start - covered);
  }
};

// One host thread's ranges of a kind, sorted by start, each with its parent (the innermost range
// of the list that encloses it; -1 for none): ranges on one thread nest.
struct ThreadRanges {
  std::vector<const KinetoRange*> sorted;
  std::vector<int> parent;

  void Finish() {
    std::sort(sorted.begin(), sorted.end(),
              [](const KinetoRange* a, const KinetoRange* b) { return a->start_ns < b->start_ns; });
    parent.assign(sorted.size(), -1);
    std::vector<int> open;  // enclosing ranges of the current one, innermost last
    for (int i = 0; i < static_cast<int>(sorted.size()); ++i) {
      while (!open.empty() && End(open.back()) < sorted[i]->start_ns) open.pop_back();
      if (!open.empty()) parent[i] = open.back();
      open.push_back(i);
    }
  }
  int64_t End(int i) const { return sorted[i]->start_ns + sorted[i]->duration_ns; }
  // The innermost range containing t, or -1: the last range starting at or before t, then its
  // enclosing ranges outwards (as deep as the nesting, whatever number of siblings ended before t).
  int Innermost(int64_t t) const {
    auto it = std::upper_bound(sorted.begin(), sorted.end(), t,
                               [](int64_t v, const KinetoRange* r) { return v < r->start_ns; });
    int i = static_cast<int>(it - sorted.begin()) - 1;
    while (i >= 0 && End(i) < t) i = parent[i];
    return i;
  }
};

bool IsGraphLaunch(const std::string& call) { return call.find("GraphLaunch") != std::string::npos; }

// torch's dtype name for the dtype in an NCCL kernel's name ("" when unknown).
std::string TorchDtype(const std::string& nccl) {
  static const std::map<std::string, std::string> kNames = {
      {"bf16", "BFloat16"}, {"bfloat16", "BFloat16"},    {"f16", "Half"},          {"half", "Half"}, {"f32", "Float"},
      {"float", "Float"},   {"f64", "Double"},           {"i8", "Char"},           {"u8", "Byte"},   {"i32", "Int"},
      {"i64", "Long"},      {"f8e4m3", "Float8_e4m3fn"}, {"f8e5m2", "Float8_e5m2"}};
  auto it = kNames.find(nccl);
  return it == kNames.end() ? std::string() : it->second;
}

// GEMM calls by (op, m, n, k, torch dtype): per call its kernels' summed duration.
struct GemmCalls {
  std::vector<double> us;
  int kernels_per_call = 0;
  std::string main_kernel;
};
using GemmCallMap = std::map<std::tuple<std::string, int64_t, int64_t, int64_t, std::string>, GemmCalls>;

std::string TorchTypeName(const std::string& input_type) {
  // "c10::BFloat16" -> "BFloat16"; "float" -> "Float"
  std::string t = input_type.rfind("c10::", 0) == 0 ? input_type.substr(5) : input_type;
  if (t == "float") return "Float";
  if (t == "double") return "Double";
  return t;
}

// One rank's eager GEMM calls: the kernels of each aten::mm / addmm call (by External id).
void CollectGemmCalls(const KinetoTrace& t, GemmCallMap* calls, std::map<std::string, int64_t>* skipped) {
  std::unordered_map<int64_t, const KinetoOp*> op_of;
  for (const KinetoOp& o : t.ops)
    if (o.external_id >= 0) op_of[o.external_id] = &o;
  struct Call {
    double ns = 0;
    int kernels = 0;
    const KinetoKernel* longest = nullptr;
  };
  std::map<int64_t, Call> by_op;  // External id -> the call's kernels
  for (const KinetoKernel& k : t.kernels) {
    if (k.external_id < 0 || !op_of.count(k.external_id)) continue;
    Call& c = by_op[k.external_id];
    c.ns += static_cast<double>(k.duration_ns);
    ++c.kernels;
    if (c.longest == nullptr || k.duration_ns > c.longest->duration_ns) c.longest = &k;
  }
  for (const auto& [id, c] : by_op) {
    const KinetoOp& o = *op_of[id];
    // mm(self[m, k], mat2[k, n]); addmm(bias, mat1[m, k], mat2[k, n]).
    const size_t a = o.name == "aten::addmm" ? 1 : 0;
    if (o.input_dims.size() < a + 2 || o.input_dims[a].size() != 2 || o.input_dims[a + 1].size() != 2) {
      ++(*skipped)[o.name + " without its input shapes (profile with record_shapes=True)"];
      continue;
    }
    const int64_t m = o.input_dims[a][0], k = o.input_dims[a][1], n = o.input_dims[a + 1][1];
    if (o.input_dims[a + 1][0] != k || m < 1 || n < 1 || k < 1) {
      ++(*skipped)[o.name + " with inconsistent input shapes"];
      continue;
    }
    const std::string dtype = o.input_types.size() > a ? TorchTypeName(o.input_types[a]) : std::string();
    if (dtype != "BFloat16" && dtype != "Half") {
      ++(*skipped)[o.name + " in " + (dtype.empty() ? std::string("an unrecorded dtype") : dtype) +
                   " (the GEMM items are bf16 / fp16)"];
      continue;
    }
    GemmCalls& g = (*calls)[{o.name, m, n, k, dtype}];
    g.us.push_back(c.ns * 1e-3);
    g.kernels_per_call = std::max(g.kernels_per_call, c.kernels);
    if (g.main_kernel.empty() && c.longest != nullptr) g.main_kernel = c.longest->name;
  }
}

}  // namespace

int DtypeBytes(const std::string& dtype) {
  static const std::map<std::string, int> kBytes = {
      {"BFloat16", 2},      {"Half", 2},        {"Float", 4}, {"Double", 8}, {"Byte", 1},
      {"Char", 1},          {"Bool", 1},        {"Short", 2}, {"Int", 4},    {"Long", 8},
      {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}, {"bf16", 2},  {"f16", 2},    {"f32", 4},
      {"f64", 8},           {"u8", 1},          {"i8", 1},    {"i32", 4},    {"i64", 8}};
  auto it = kBytes.find(dtype);
  return it == kBytes.end() ? 0 : it->second;
}

std::string PassGroup::Key() const {
  return phase + (run.empty() ? "" : " [" + run + "]") + (graph ? " graph" : " eager") + ", " +
         std::to_string(kernels) + " kernels";
}

StatusOr<ProfileImport> ImportProfile(std::vector<KinetoTrace> ranks, const ImportOptions& options) {
  if (ranks.empty()) return InvalidArgumentError("no profiler traces given");
  // Ranks: every file's distributedInfo, 0..W-1 once each.
  if (ranks.size() == 1 && ranks[0].rank < 0) {
    ranks[0].rank = 0;
    ranks[0].world_size = 1;
  }
  for (const KinetoTrace& t : ranks)
    if (t.rank < 0)
      return InvalidArgumentError(t.path +
                                  ": no distributedInfo.rank: with several files, each must say its rank "
                                  "(a trace of a torch.distributed process has it)");
  std::sort(ranks.begin(), ranks.end(), [](const KinetoTrace& a, const KinetoTrace& b) { return a.rank < b.rank; });
  const int world = std::max(1, ranks[0].world_size);
  for (const KinetoTrace& t : ranks)
    if (std::max(1, t.world_size) != world)
      return InvalidArgumentError(t.path + ": world size " + std::to_string(t.world_size) + ", but " + ranks[0].path +
                                  " says " + std::to_string(world) + ": files of different runs?");
  {
    std::string missing, repeated;
    std::set<int> seen;
    for (const KinetoTrace& t : ranks) {
      if (t.rank >= world)
        return InvalidArgumentError(t.path + ": rank " + std::to_string(t.rank) + " of world size " +
                                    std::to_string(world));
      if (!seen.insert(t.rank).second) repeated += (repeated.empty() ? "" : ", ") + std::to_string(t.rank);
    }
    for (int r = 0; r < world; ++r)
      if (!seen.count(r)) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    if (!repeated.empty()) return InvalidArgumentError("rank(s) " + repeated + " given more than once");
    if (!missing.empty())
      return InvalidArgumentError("missing rank(s) " + missing + " of world size " + std::to_string(world) +
                                  ": give every rank's trace file (or the directory holding them)");
  }

  ProfileImport out;
  out.ranks = world;
  const std::set<std::string> phases(options.phases.begin(), options.phases.end());
  std::map<std::tuple<std::string, std::string, bool, int>, std::vector<const PassInstance*>> groups;
  std::vector<std::vector<PassInstance>> instances(world);
  // Per rank, each NCCL kernel's pass phase and whether a graph launched it.
  struct NcclCall {
    const KinetoKernel* kernel;
    std::string phase, run;
    bool graph;
    int pass = -1;  // index into instances[rank] (-1: outside every pass)
  };
  std::vector<std::vector<NcclCall>> nccl(world);
  GemmCallMap gemm_calls;

  for (int r = 0; r < world; ++r) {
    const KinetoTrace& t = ranks[r];
    for (const auto& [cat, n] : t.ignored) out.ignored[cat] += n;
    std::unordered_map<int64_t, const KinetoLaunch*> launch_of;
    for (const KinetoLaunch& l : t.launches)
      if (l.correlation >= 0) launch_of[l.correlation] = &l;
    std::map<int64_t, ThreadRanges> phase_ranges, run_ranges;
    for (const KinetoRange& g : t.ranges) {
      if (phases.count(g.name))
        phase_ranges[g.tid].sorted.push_back(&g);
      else if (!options.run_prefix.empty() && g.name.rfind(options.run_prefix, 0) == 0)
        run_ranges[g.tid].sorted.push_back(&g);
    }
    for (auto& [tid, v] : phase_ranges) v.Finish();
    for (auto& [tid, v] : run_ranges) v.Finish();
    // A pass instance per phase range, and per graph replay outside every phase range.
    std::map<const void*, size_t> instance_of;
    for (const KinetoKernel& k : t.kernels) {
      ++out.kernels;
      const KernelClass cls = ClassifyKernel(k.name);
      auto l = launch_of.find(k.correlation);
      const KinetoLaunch* launch = l == launch_of.end() ? nullptr : l->second;
      if (launch == nullptr) ++out.kernels_without_launch;
      const bool graph = launch != nullptr && IsGraphLaunch(launch->name);
      std::string phase, run;
      int pass = -1;
      if (launch != nullptr) {
        auto pr = phase_ranges.find(launch->tid);
        const int i = pr == phase_ranges.end() ? -1 : pr->second.Innermost(launch->start_ns);
        // The pass: the phase range around the launch; else, for a graph replay, the replay itself
        // (a framework that names no phases still replays one graph per forward).
        const KinetoRange* range = i >= 0 ? pr->second.sorted[i] : nullptr;
        if (range != nullptr || graph) {
          const void* key = range != nullptr ? static_cast<const void*>(range) : static_cast<const void*>(launch);
          auto [it, fresh] = instance_of.emplace(key, instances[r].size());
          if (fresh) {
            PassInstance p;
            p.phase = range != nullptr ? range->name : std::string(kGraphReplayPhase);
            p.host_start = range != nullptr ? range->start_ns : launch->start_ns;
            p.host_end =
                range != nullptr ? range->start_ns + range->duration_ns : launch->start_ns + launch->duration_ns;
            auto rr = run_ranges.find(launch->tid);
            const int j = rr == run_ranges.end() ? -1 : rr->second.Innermost(p.host_start);
            if (j >= 0) p.run = rr->second.sorted[j]->name.substr(options.run_prefix.size());
            instances[r].push_back(std::move(p));
          }
          PassInstance& p = instances[r][it->second];
          phase = p.phase;
          run = p.run;
          pass = static_cast<int>(it->second);
          ++p.kernels;
          p.graph = p.graph || graph;
          p.gpu_start = std::min(p.gpu_start, k.start_ns);
          p.gpu_end = std::max(p.gpu_end, k.start_ns + k.duration_ns);
          p.busy_ns[KernelClassName(cls)] += static_cast<double>(k.duration_ns);
          p.intervals.push_back({k.start_ns, k.start_ns + k.duration_ns});
          if (cls == KernelClass::kNccl && ParseNcclKernelName(k.name).op == "AllReduce") {
            if (p.allreduces == 0 && k.in_elements > 0) p.allreduce_elements = k.in_elements;
            ++p.allreduces;
          }
          ++out.kernels_in_passes;
        }
      }
      if (cls == KernelClass::kNccl) nccl[r].push_back({&k, phase, run, graph, pass});
    }
    for (const PassInstance& p : instances[r]) groups[{p.phase, p.run, p.graph, p.kernels}].push_back(&p);
    CollectGemmCalls(t, &gemm_calls, &out.gemms_skipped);
    std::stable_sort(nccl[r].begin(), nccl[r].end(),
                     [](const NcclCall& a, const NcclCall& b) { return a.kernel->start_ns < b.kernel->start_ns; });
  }

  // Collectives: the i-th NCCL kernel of every rank is one call.
  for (int r = 1; r < world; ++r)
    if (nccl[r].size() != nccl[0].size())
      return InvalidArgumentError(ranks[r].path + ": " + std::to_string(nccl[r].size()) + " NCCL kernels, but " +
                                  ranks[0].path + " has " + std::to_string(nccl[0].size()) +
                                  ": the ranks' traces do not cover the same steps (profile every rank over the same "
                                  "window)");
  struct Instance {
    std::vector<double> duration_us, wait_us;  // per rank
    double transfer_us = 0;
    std::string phase;
    int pass0 = -1;  // rank 0's pass instance
  };
  // Key: op, bytes, dtype, graph, algorithm, protocol, channels, and for calls of unknown size the
  // run and phase they ran in (so that calls of different, unknown sizes are pooled less).
  std::map<std::tuple<std::string, int64_t, std::string, bool, std::string, std::string, int, std::string>,
           std::vector<Instance>>
      calls;
  // Graph replays of unknown size, first by their pass: a graph-replayed pass launches what an eager
  // pass of the same phase and kernel count launched, so its i-th NCCL call has the size of the
  // eager pass's i-th (op and dtype alike) when every such eager pass agrees (rank 0's passes).
  std::vector<int64_t> pass_elements(nccl[0].size(), -1);
  std::vector<std::string> pass_dtype(nccl[0].size());
  std::set<std::string> inferred, inferred_by_pass;
  {
    std::vector<std::vector<size_t>> calls_of(instances[0].size());  // each pass's NCCL calls, in order
    for (size_t i = 0; i < nccl[0].size(); ++i)
      if (nccl[0][i].pass >= 0) calls_of[nccl[0][i].pass].push_back(i);
    std::map<std::string, int> by_sequence;
    std::vector<std::string> op_of(nccl[0].size());  // each call's NCCL op, parsed once
    for (size_t i = 0; i < nccl[0].size(); ++i) op_of[i] = ParseNcclKernelName(nccl[0][i].kernel->name).op;
    // The eager passes' call sequences (op, elements, dtype) by (phase, kernels, calls), once:
    // the sequence every such pass agrees on, or none when they differ or one call has no size.
    using Sequence = std::vector<std::tuple<std::string, int64_t, std::string>>;
    std::map<std::tuple<std::string, int, size_t>, std::optional<Sequence>> eager_sequence;
    for (size_t e = 0; e < instances[0].size(); ++e) {
      const PassInstance& ep = instances[0][e];
      if (ep.graph) continue;
      std::optional<Sequence> sizes = Sequence{};
      for (size_t i : calls_of[e]) {
        const KinetoKernel& k = *nccl[0][i].kernel;
        if (k.in_elements <= 0) {
          sizes.reset();
          break;
        }
        sizes->emplace_back(op_of[i], std::max(k.in_elements, k.out_elements), k.dtype);
      }
      const auto key = std::make_tuple(ep.phase, ep.kernels, calls_of[e].size());
      auto [it, fresh] = eager_sequence.emplace(key, sizes);
      if (!fresh && it->second != sizes) it->second.reset();
    }
    for (size_t g = 0; g < instances[0].size(); ++g) {
      const PassInstance& gp = instances[0][g];
      bool unknown = false;
      for (size_t i : calls_of[g]) unknown = unknown || nccl[0][i].kernel->in_elements <= 0;
      if (!gp.graph || !unknown) continue;
      auto it = eager_sequence.find(std::make_tuple(gp.phase, gp.kernels, calls_of[g].size()));
      if (it == eager_sequence.end() || !it->second) continue;
      const Sequence& agreed = *it->second;
      bool same_ops = true;
      for (size_t j = 0; j < calls_of[g].size(); ++j)
        same_ops = same_ops && std::get<0>(agreed[j]) == op_of[calls_of[g][j]];
      if (!same_ops) continue;
      for (size_t j = 0; j < calls_of[g].size(); ++j) {
        const size_t i = calls_of[g][j];
        if (nccl[0][i].kernel->in_elements > 0) continue;
        pass_elements[i] = std::get<1>(agreed[j]);
        pass_dtype[i] = std::get<2>(agreed[j]);
      }
      ++by_sequence[gp.phase + " passes of " + std::to_string(gp.kernels) + " kernels"];
    }
    for (const auto& [what, n] : by_sequence) inferred_by_pass.insert(std::to_string(n) + " " + what);
  }
  for (size_t i = 0; i < nccl[0].size(); ++i) {
    const KinetoKernel& k0 = *nccl[0][i].kernel;
    const NcclKernel name = ParseNcclKernelName(k0.name);
    int64_t last_start = INT64_MIN;
    int last = 0;
    for (int r = 0; r < world; ++r) {
      const KinetoKernel& k = *nccl[r][i].kernel;
      if (ParseNcclKernelName(k.name).op != name.op || k.in_elements != k0.in_elements)
        return InvalidArgumentError(ranks[r].path + ": its NCCL kernel #" + std::to_string(i + 1) + " (" + k.name +
                                    ", " + std::to_string(k.in_elements) + " elements) is not rank 0's (" + k0.name +
                                    ", " + std::to_string(k0.in_elements) + " elements)");
      if (k.start_ns > last_start) {
        last_start = k.start_ns;
        last = r;
      }
    }
    Instance inst;
    inst.phase = nccl[0][i].phase;
    inst.pass0 = nccl[0][i].pass;
    for (int r = 0; r < world; ++r) {
      const KinetoKernel& k = *nccl[r][i].kernel;
      inst.duration_us.push_back(static_cast<double>(k.duration_ns) * 1e-3);
      inst.wait_us.push_back(static_cast<double>(last_start - k.start_ns) * 1e-3);
    }
    inst.transfer_us = inst.duration_us[last];
    // torch records the message (elements, dtype) on eagerly launched collectives only; a graph
    // replay's kernel has its dtype in its name at most.
    const std::string dtype = !k0.dtype.empty()        ? k0.dtype
                              : !pass_dtype[i].empty() ? pass_dtype[i]
                                                       : TorchDtype(name.dtype);
    const int bytes_per = DtypeBytes(dtype);
    const int64_t elements = pass_elements[i] > 0 ? pass_elements[i] : std::max(k0.in_elements, k0.out_elements);
    // The pass learns its allreduce size (tokens per pass) from an inferred first allreduce too.
    if (pass_elements[i] > 0 && name.op == "AllReduce" && inst.pass0 >= 0 &&
        instances[0][inst.pass0].allreduce_elements < 0)
      instances[0][inst.pass0].allreduce_elements = pass_elements[i];
    const int64_t bytes = bytes_per > 0 && elements > 0 ? elements * bytes_per : 0;
    calls[{name.op, bytes, dtype, nccl[0][i].graph, name.algorithm, name.protocol, k0.grid_x,
           bytes > 0 ? std::string() : nccl[0][i].run + (nccl[0][i].run.empty() ? "" : " ") + nccl[0][i].phase}]
        .push_back(std::move(inst));
  }
  // Graph replays still of unknown size: NCCL picks the channels by size, so the eager calls of the
  // same op, algorithm, protocol and channels tell it when they all have one size (and dtype).
  for (auto it = calls.begin(); it != calls.end();) {
    const auto& [op, bytes, dtype, graph, algorithm, protocol, channels, where] = it->first;
    if (bytes > 0 || !graph) {
      ++it;
      continue;
    }
    std::set<std::pair<int64_t, std::string>> sizes;
    for (const auto& [k, v] : calls) {
      const auto& [op2, bytes2, dtype2, graph2, algorithm2, protocol2, channels2, where2] = k;
      if (!graph2 && bytes2 > 0 && op2 == op && algorithm2 == algorithm && protocol2 == protocol &&
          channels2 == channels && (dtype.empty() || dtype2 == dtype))
        sizes.insert({bytes2, dtype2});
    }
    if (sizes.size() != 1) {
      ++it;
      continue;
    }
    auto key = it->first;
    std::get<1>(key) = sizes.begin()->first;
    std::get<2>(key) = sizes.begin()->second;
    std::get<7>(key).clear();
    inferred.insert(op + " " + algorithm + "/" + protocol + " on " + std::to_string(channels) +
                    " channels: " + std::to_string(sizes.begin()->first) + " B");
    auto& dst = calls[key];
    const int64_t elements = sizes.begin()->first / std::max(1, DtypeBytes(sizes.begin()->second));
    for (Instance& inst : it->second) {
      // The pass it ran in now knows its allreduce size (tokens per pass), on every rank alike.
      if (op == "AllReduce" && inst.pass0 >= 0 && instances[0][inst.pass0].allreduce_elements < 0)
        instances[0][inst.pass0].allreduce_elements = elements;
      dst.push_back(std::move(inst));
    }
    it = calls.erase(it);
  }

  for (const auto& [key, list] : groups) {
    PassGroup g;
    std::tie(g.phase, g.run, g.graph, g.kernels) = key;
    g.passes = static_cast<int>(list.size());
    std::vector<double> gpu, host, idle, busy_total;
    std::map<std::string, std::vector<double>> busy;
    for (const PassInstance* p : list) {
      gpu.push_back(static_cast<double>(p->gpu_end - p->gpu_start) * 1e-3);
      idle.push_back(p->IdleNs() * 1e-3);
      busy_total.push_back(gpu.back() - idle.back());
      g.allreduces = std::max(g.allreduces, p->allreduces);
      if (g.allreduce_elements < 0) g.allreduce_elements = p->allreduce_elements;
      host.push_back(static_cast<double>(p->host_end - p->host_start) * 1e-3);
      for (const auto& [c, ns] : p->busy_ns) busy[c].push_back(ns * 1e-3);
    }
    g.gpu_span_us = Median(gpu);
    g.host_span_us = Median(host);
    g.gpu_idle_us = Median(idle);
    g.busy_total_us = Median(busy_total);
    for (auto& [c, v] : busy) {
      v.resize(list.size(), 0.0);  // passes without that class: 0
      g.busy_us[c] = Median(v);
    }
    out.passes.push_back(std::move(g));
  }

  trace::Trace& tr = out.trace;
  tr.set_schema_version(1);
  tr.set_tool("specsim import-profile");
  for (const std::string& what : inferred) {
    trace::Note* n = tr.add_notes();
    n->set_severity(trace::Note::INFO);
    n->set_suite("collectives");
    n->set_message("graph-replayed NCCL calls carry no size in the profile; taken from the eager calls of the same " +
                   what);
  }
  for (const std::string& what : inferred_by_pass) {
    trace::Note* n = tr.add_notes();
    n->set_severity(trace::Note::INFO);
    n->set_suite("collectives");
    n->set_message("graph-replayed NCCL calls carry no size in the profile; taken for " + what +
                   " from the eager passes of the same phase and kernel count (call by call)");
  }
  trace::Environment* env = tr.mutable_environment();
  env->set_nccl_version(ranks[0].nccl_version);
  for (const auto& [k, v] : options.nccl_env) (*env->mutable_nccl_env())[k] = v;
  auto nccl_var = [&options](const char* name) {
    auto it = options.nccl_env.find(name);
    return it == options.nccl_env.end() ? std::string() : it->second;
  };
  for (int r = 0; r < world; ++r) {
    trace::Gpu* g = env->add_gpus();
    g->set_index(r);
    const KinetoTrace& t = ranks[r];
    // The rank's GPU: the device its kernels ran on, described by deviceProperties.
    const int device = t.kernels.empty() ? -1 : t.kernels.front().device;
    for (const KinetoDevice& d : t.devices)
      if (d.id == device || (device < 0 && &d == &t.devices.front())) {
        g->set_name(d.name);
        g->set_sm_count(d.sm_count);
        g->set_memory_bytes(d.memory_bytes);
        g->set_compute_capability_major(d.compute_major);
        g->set_compute_capability_minor(d.compute_minor);
        g->set_l2_cache_bytes(d.l2_cache_bytes);
      }
    g->set_numa_node(-1);
  }
  for (const auto& [key, list] : calls) {
    const auto& [op, bytes, dtype, graph, algorithm, protocol, channels, where] = key;
    CollectiveGroup c;
    c.op = op;
    c.bytes = bytes;
    c.dtype = dtype;
    c.graph = graph;
    c.algorithm = algorithm;
    c.protocol = protocol;
    c.channels = channels;
    c.instances = static_cast<int>(list.size());
    std::vector<double> transfer;
    double wait_sum = 0;
    for (const Instance& i : list) {
      transfer.push_back(i.transfer_us);
      for (double w : i.wait_us) {
        wait_sum += w;
        c.wait_us_max = std::max(c.wait_us_max, w);
      }
      ++c.phases[i.phase.empty() ? "(no pass)" : i.phase];
    }
    c.transfer_us = Median(transfer);
    c.wait_us_mean = wait_sum / static_cast<double>(list.size() * world);
    c.name = "profile/nccl/" + AsciiLower(op) + "/" + (graph ? "graph" : "eager") + "/n" + std::to_string(world) + "/" +
             (bytes > 0 ? SizeName(bytes) : "unknown-size") +
             (dtype.empty() || dtype == "BFloat16" ? "" : "/" + dtype) + (where.empty() ? "" : " [" + where + "]");
    out.collectives.push_back(c);
    // The trace item, when the simulator has the op and the size is known.
    trace::CollectiveOp top = op == "AllReduce"       ? trace::ALLREDUCE
                              : op == "AllGather"     ? trace::ALLGATHER
                              : op == "ReduceScatter" ? trace::REDUCESCATTER
                                                      : trace::COLLECTIVE_OP_UNSPECIFIED;
    if (top == trace::COLLECTIVE_OP_UNSPECIFIED || bytes <= 0) {
      trace::Note* n = tr.add_notes();
      n->set_severity(trace::Note::INFO);
      n->set_suite("collectives");
      n->set_message(c.name + ": " + std::to_string(c.instances) + " NCCL calls not written as items: " +
                     (bytes <= 0 ? std::string("their message size is not in the profile")
                                 : op + " is not modelled (allreduce, allgather, reducescatter are)"));
      continue;
    }
    trace::Item* it = tr.add_items();
    it->set_suite(trace::SUITE_COLLECTIVES);
    it->set_kind(trace::KIND_COLLECTIVE);
    it->set_name(c.name);
    trace::CollectiveParams* p = it->mutable_collective();
    p->set_op(top);
    p->set_implementation(trace::IMPL_NCCL);
    p->set_transport(trace::TRANSPORT_NCCL);
    p->set_bytes(bytes);
    const int bytes_per = std::max(1, DtypeBytes(dtype));
    p->set_count(top == trace::ALLGATHER ? bytes / bytes_per / world : bytes / bytes_per);
    p->set_dtype(TraceDtype(dtype));
    p->set_nranks(world);
    for (int r = 0; r < world; ++r) p->add_gpus(r);
    p->set_cuda_graph(graph);
    p->set_nccl_chosen_algo(algorithm);
    p->set_nccl_chosen_proto(protocol);
    if (channels > 0) p->set_nccl_chosen_channels(channels);
    p->set_kernel_time_only(true);
    p->set_nccl_algo(nccl_var("NCCL_ALGO"));
    p->set_nccl_proto(nccl_var("NCCL_PROTO"));
    p->set_nccl_min_nchannels(nccl_var("NCCL_MIN_NCHANNELS"));
    p->set_nccl_max_nchannels(nccl_var("NCCL_MAX_NCHANNELS"));
    p->set_nccl_p2p_level(nccl_var("NCCL_P2P_LEVEL"));
    p->set_nccl_p2p_disable(nccl_var("NCCL_P2P_DISABLE"));
    p->set_nccl_shm_disable(nccl_var("NCCL_SHM_DISABLE"));
    FillStats(transfer, it->mutable_stats());
    for (int r = 0; r < world; ++r) {
      trace::RankTiming* rt = it->add_rank_timing();
      rt->set_rank(r);
      rt->set_gpu(r);
      std::vector<double> d;
      double w = 0;
      for (const Instance& i : list) {
        rt->add_duration_us(static_cast<float>(i.duration_us[r]));
        rt->add_wait_us(static_cast<float>(i.wait_us[r]));
        d.push_back(i.duration_us[r]);
        w += i.wait_us[r];
      }
      rt->set_duration_median_us(Median(d));
      rt->set_wait_mean_us(w / static_cast<double>(list.size()));
    }
    const double bw_bytes = static_cast<double>(bytes);
    it->set_algbw_gbps(bw_bytes / (c.transfer_us * 1e3));
    const double factor = top == trace::ALLREDUCE ? 2.0 * (world - 1) / world : double(world - 1) / world;
    it->set_busbw_gbps(it->algbw_gbps() * factor);
  }
  for (const auto& [key, calls] : gemm_calls) {
    const auto& [op, m, n, k, dtype] = key;
    GemmGroup g;
    g.op = op;
    g.m = m;
    g.n = n;
    g.k = k;
    g.dtype = dtype;
    g.calls = static_cast<int>(calls.us.size());
    g.kernels_per_call = calls.kernels_per_call;
    g.main_kernel = calls.main_kernel;
    g.median_us = Median(calls.us);
    g.name = std::string("profile/gemm/") + kTorchGemmLibrary + "/m" + std::to_string(m) + "/n" + std::to_string(n) +
             "/k" + std::to_string(k) + (dtype == "BFloat16" ? "" : "/" + dtype) + (op == "aten::mm" ? "" : "/addmm");
    out.gemms.push_back(g);
    trace::Item* it = tr.add_items();
    it->set_suite(trace::SUITE_KERNELS);
    it->set_kind(trace::KIND_GEMM);
    it->set_name(g.name);
    trace::GemmParams* p = it->mutable_gemm();
    p->set_m(m);
    p->set_n(n);
    p->set_k(k);
    p->set_dtype(TraceDtype(dtype));
    p->set_op(op);
    p->set_weight_bytes(n * k * DtypeBytes(dtype));
    p->set_gpu(0);  // calls of every rank pooled, priced on the first GPU (a TP group runs one GPU model)
    p->set_library(kTorchGemmLibrary);
    p->set_kernel_time_only(true);
    FillStats(calls.us, it->mutable_stats());
    it->set_tflops(2.0 * m * n * k / (g.median_us * 1e6));
  }
  return out;
}

}  // namespace specsim::profile
