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

// ---- Ranks: one trace per rank of one run.

// Every trace says its rank (a single file without distributedInfo is rank 0 of a world of 1).
Status CheckRanksNamed(std::vector<KinetoTrace>* ranks) {
  if (ranks->size() == 1 && (*ranks)[0].rank < 0) {
    (*ranks)[0].rank = 0;
    (*ranks)[0].world_size = 1;
  }
  for (const KinetoTrace& t : *ranks)
    if (t.rank < 0)
      return InvalidArgumentError(t.path +
                                  ": no distributedInfo.rank: with several files, each must say its rank "
                                  "(a trace of a torch.distributed process has it)");
  return OkStatus();
}

// The world size the traces (sorted by rank) agree on.
StatusOr<int> AgreedWorldSize(const std::vector<KinetoTrace>& ranks) {
  const int world = std::max(1, ranks[0].world_size);
  for (const KinetoTrace& t : ranks)
    if (std::max(1, t.world_size) != world)
      return InvalidArgumentError(t.path + ": world size " + std::to_string(t.world_size) + ", but " + ranks[0].path +
                                  " says " + std::to_string(world) + ": files of different runs?");
  return world;
}

// Ranks 0..world-1, each once.
Status CheckEveryRankOnce(const std::vector<KinetoTrace>& ranks, int world) {
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
  return OkStatus();
}

// Sorts the traces by rank and checks they are every rank of one run (distributedInfo): the world size.
StatusOr<int> SortRanks(std::vector<KinetoTrace>* ranks) {
  if (ranks->empty()) return InvalidArgumentError("no profiler traces given");
  RETURN_IF_ERROR(CheckRanksNamed(ranks));
  std::sort(ranks->begin(), ranks->end(), [](const KinetoTrace& a, const KinetoTrace& b) { return a.rank < b.rank; });
  ASSIGN_OR_RETURN(const int world, AgreedWorldSize(*ranks));
  RETURN_IF_ERROR(CheckEveryRankOnce(*ranks, world));
  return world;
}

// ---- Passes: each rank's kernels attributed to the phase range (or graph replay) that launched them.

// One rank's host calls that place a kernel in a pass: the launch call of each correlation id, and
// per host thread its phase ranges and its run ranges.
struct RankHostCalls {
  std::unordered_map<int64_t, const KinetoLaunch*> launch_of;
  std::map<int64_t, ThreadRanges> phase_ranges, run_ranges;  // by thread id
  std::string run_prefix;                                    // of the run ranges' names

  // The call that launched `k`, or null when the trace has none.
  const KinetoLaunch* LaunchOf(const KinetoKernel& k) const {
    auto it = launch_of.find(k.correlation);
    return it == launch_of.end() ? nullptr : it->second;
  }
};

RankHostCalls IndexHostCalls(const KinetoTrace& t, const std::set<std::string>& phases, const std::string& run_prefix) {
  RankHostCalls host;
  host.run_prefix = run_prefix;
  for (const KinetoLaunch& l : t.launches)
    if (l.correlation >= 0) host.launch_of[l.correlation] = &l;
  for (const KinetoRange& g : t.ranges) {
    if (phases.count(g.name))
      host.phase_ranges[g.tid].sorted.push_back(&g);
    else if (!run_prefix.empty() && g.name.rfind(run_prefix, 0) == 0)
      host.run_ranges[g.tid].sorted.push_back(&g);
  }
  for (auto& [tid, v] : host.phase_ranges) v.Finish();
  for (auto& [tid, v] : host.run_ranges) v.Finish();
  return host;
}

// The innermost of a thread's ranges containing time t, or null.
const KinetoRange* InnermostRange(const std::map<int64_t, ThreadRanges>& ranges, int64_t tid, int64_t t) {
  auto it = ranges.find(tid);
  const int i = it == ranges.end() ? -1 : it->second.Innermost(t);
  return i >= 0 ? it->second.sorted[i] : nullptr;
}

// A pass opened at its first kernel: the phase range `range` around the launch, or (range null) the
// graph replay `launch` itself; its run is the run range around its start.
PassInstance OpenPass(const KinetoRange* range, const KinetoLaunch& launch, const RankHostCalls& host) {
  PassInstance p;
  p.phase = range != nullptr ? range->name : std::string(kGraphReplayPhase);
  p.host_start = range != nullptr ? range->start_ns : launch.start_ns;
  p.host_end = range != nullptr ? range->start_ns + range->duration_ns : launch.start_ns + launch.duration_ns;
  const KinetoRange* run = InnermostRange(host.run_ranges, launch.tid, p.host_start);
  if (run != nullptr) p.run = run->name.substr(host.run_prefix.size());
  return p;
}

// The pass of a kernel launched by `launch`: an index into `passes` (opened at the pass's first
// kernel; `pass_of` maps its phase range or graph launch to the index), or -1 outside every pass.
int FindOrOpenPass(const KinetoLaunch& launch, bool graph, const RankHostCalls& host,
                   std::map<const void*, size_t>* pass_of, std::vector<PassInstance>* passes) {
  // The pass: the phase range around the launch; else, for a graph replay, the replay itself
  // (a framework that names no phases still replays one graph per forward).
  const KinetoRange* range = InnermostRange(host.phase_ranges, launch.tid, launch.start_ns);
  if (range == nullptr && !graph) return -1;
  const void* key = range != nullptr ? static_cast<const void*>(range) : static_cast<const void*>(&launch);
  auto [it, fresh] = pass_of->emplace(key, passes->size());
  if (fresh) passes->push_back(OpenPass(range, launch, host));
  return static_cast<int>(it->second);
}

void AddKernelToPass(const KinetoKernel& k, KernelClass cls, bool graph, PassInstance* p) {
  ++p->kernels;
  p->graph = p->graph || graph;
  p->gpu_start = std::min(p->gpu_start, k.start_ns);
  p->gpu_end = std::max(p->gpu_end, k.start_ns + k.duration_ns);
  p->busy_ns[KernelClassName(cls)] += static_cast<double>(k.duration_ns);
  p->intervals.push_back({k.start_ns, k.start_ns + k.duration_ns});
  if (cls == KernelClass::kNccl && ParseNcclKernelName(k.name).op == "AllReduce") {
    if (p->allreduces == 0 && k.in_elements > 0) p->allreduce_elements = k.in_elements;
    ++p->allreduces;
  }
}

// One NCCL kernel of a rank: the pass it ran in and whether a graph launched it.
struct NcclCall {
  const KinetoKernel* kernel;
  std::string phase, run;
  bool graph;
  int pass = -1;  // index into the rank's passes (-1: outside every pass)
};

// What the scan of every rank's kernels finds.
struct RankScans {
  std::vector<std::vector<PassInstance>> passes;  // per rank, in the order of their first kernels
  std::vector<std::vector<NcclCall>> nccl;        // per rank, by start
  GemmCallMap gemm_calls;                         // all ranks'
};

// A pass instance per phase range, and per graph replay outside every phase range: appends the
// rank's passes and its NCCL calls (sorted by start) and counts its kernels into `out`.
void ScanRankKernels(const KinetoTrace& t, const RankHostCalls& host, std::vector<PassInstance>* passes,
                     std::vector<NcclCall>* nccl, ProfileImport* out) {
  std::map<const void*, size_t> pass_of;
  for (const KinetoKernel& k : t.kernels) {
    ++out->kernels;
    const KernelClass cls = ClassifyKernel(k.name);
    const KinetoLaunch* launch = host.LaunchOf(k);
    if (launch == nullptr) ++out->kernels_without_launch;
    const bool graph = launch != nullptr && IsGraphLaunch(launch->name);
    const int pass = launch == nullptr ? -1 : FindOrOpenPass(*launch, graph, host, &pass_of, passes);
    if (pass >= 0) {
      AddKernelToPass(k, cls, graph, &(*passes)[pass]);
      ++out->kernels_in_passes;
    }
    if (cls != KernelClass::kNccl) continue;
    const PassInstance* p = pass >= 0 ? &(*passes)[pass] : nullptr;
    nccl->push_back({&k, p != nullptr ? p->phase : std::string(), p != nullptr ? p->run : std::string(), graph, pass});
  }
  std::stable_sort(nccl->begin(), nccl->end(),
                   [](const NcclCall& a, const NcclCall& b) { return a.kernel->start_ns < b.kernel->start_ns; });
}

// Every rank's passes, NCCL calls and GEMM calls; counts kernels and ignored events into `out`.
RankScans ScanRanks(const std::vector<KinetoTrace>& ranks, const ImportOptions& options, ProfileImport* out) {
  const int world = static_cast<int>(ranks.size());
  const std::set<std::string> phases(options.phases.begin(), options.phases.end());
  RankScans scans;
  scans.passes.resize(world);
  scans.nccl.resize(world);
  for (int r = 0; r < world; ++r) {
    const KinetoTrace& t = ranks[r];
    for (const auto& [cat, n] : t.ignored) out->ignored[cat] += n;
    const RankHostCalls host = IndexHostCalls(t, phases, options.run_prefix);
    ScanRankKernels(t, host, &scans.passes[r], &scans.nccl[r], out);
    CollectGemmCalls(t, &scans.gemm_calls, &out->gemms_skipped);
  }
  return scans;
}

// ---- Collectives: the i-th NCCL kernel of every rank is one call.

Status CheckSameNcclCallCount(const std::vector<KinetoTrace>& ranks, const std::vector<std::vector<NcclCall>>& nccl) {
  for (size_t r = 1; r < ranks.size(); ++r)
    if (nccl[r].size() != nccl[0].size())
      return InvalidArgumentError(ranks[r].path + ": " + std::to_string(nccl[r].size()) + " NCCL kernels, but " +
                                  ranks[0].path + " has " + std::to_string(nccl[0].size()) +
                                  ": the ranks' traces do not cover the same steps (profile every rank over the same "
                                  "window)");
  return OkStatus();
}

// Sizes of graph-replayed NCCL calls of unknown size taken from the eager passes (by pass), per
// call of rank 0, and the passes they were taken for.
struct NcclSizesFromPasses {
  std::vector<int64_t> elements;   // -1: not taken
  std::vector<std::string> dtype;  // "" alike
  std::set<std::string> notes;     // e.g. "3 verify passes of 125 kernels"
};

// A pass's NCCL calls: op, elements, dtype.
using NcclSequence = std::vector<std::tuple<std::string, int64_t, std::string>>;
// Eager passes by (phase, kernels, NCCL calls): the sequence every such pass agrees on, or none
// when they differ or one call has no size.
using EagerSequences = std::map<std::tuple<std::string, int, size_t>, std::optional<NcclSequence>>;

// Each pass's NCCL calls, in order (indices into `nccl`).
std::vector<std::vector<size_t>> NcclCallsOfPasses(size_t passes, const std::vector<NcclCall>& nccl) {
  std::vector<std::vector<size_t>> calls_of(passes);
  for (size_t i = 0; i < nccl.size(); ++i)
    if (nccl[i].pass >= 0) calls_of[nccl[i].pass].push_back(i);
  return calls_of;
}

EagerSequences AgreedEagerSequences(const std::vector<PassInstance>& passes, const std::vector<NcclCall>& nccl,
                                    const std::vector<std::vector<size_t>>& calls_of,
                                    const std::vector<std::string>& op_of) {
  EagerSequences eager_sequence;
  for (size_t e = 0; e < passes.size(); ++e) {
    const PassInstance& ep = passes[e];
    if (ep.graph) continue;
    std::optional<NcclSequence> sizes = NcclSequence{};
    for (size_t i : calls_of[e]) {
      const KinetoKernel& k = *nccl[i].kernel;
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
  return eager_sequence;
}

// The eager sequence graph pass `gp` replays (`calls`: its NCCL calls) when it needs one (a call of
// unknown size) and the eager passes of its phase and kernel count agree on one of the same ops;
// else null.
const NcclSequence* EagerTwinSequence(const PassInstance& gp, const std::vector<size_t>& calls,
                                      const std::vector<NcclCall>& nccl, const std::vector<std::string>& op_of,
                                      const EagerSequences& eager_sequence) {
  bool unknown = false;
  for (size_t i : calls) unknown = unknown || nccl[i].kernel->in_elements <= 0;
  if (!gp.graph || !unknown) return nullptr;
  auto it = eager_sequence.find(std::make_tuple(gp.phase, gp.kernels, calls.size()));
  if (it == eager_sequence.end() || !it->second) return nullptr;
  const NcclSequence& agreed = *it->second;
  bool same_ops = true;
  for (size_t j = 0; j < calls.size(); ++j) same_ops = same_ops && std::get<0>(agreed[j]) == op_of[calls[j]];
  return same_ops ? &agreed : nullptr;
}

// Graph replays of unknown size, first by their pass: a graph-replayed pass launches what an eager
// pass of the same phase and kernel count launched, so its i-th NCCL call has the size of the
// eager pass's i-th (op and dtype alike) when every such eager pass agrees (rank 0's passes).
NcclSizesFromPasses InferSizesFromEagerPasses(const std::vector<PassInstance>& passes,
                                              const std::vector<NcclCall>& nccl) {
  NcclSizesFromPasses sizes;
  sizes.elements.assign(nccl.size(), -1);
  sizes.dtype.resize(nccl.size());
  const std::vector<std::vector<size_t>> calls_of = NcclCallsOfPasses(passes.size(), nccl);
  std::vector<std::string> op_of(nccl.size());  // each call's NCCL op, parsed once
  for (size_t i = 0; i < nccl.size(); ++i) op_of[i] = ParseNcclKernelName(nccl[i].kernel->name).op;
  const EagerSequences eager_sequence = AgreedEagerSequences(passes, nccl, calls_of, op_of);
  std::map<std::string, int> by_sequence;
  for (size_t g = 0; g < passes.size(); ++g) {
    const NcclSequence* agreed = EagerTwinSequence(passes[g], calls_of[g], nccl, op_of, eager_sequence);
    if (agreed == nullptr) continue;
    for (size_t j = 0; j < calls_of[g].size(); ++j) {
      const size_t i = calls_of[g][j];
      if (nccl[i].kernel->in_elements > 0) continue;
      sizes.elements[i] = std::get<1>((*agreed)[j]);
      sizes.dtype[i] = std::get<2>((*agreed)[j]);
    }
    ++by_sequence[passes[g].phase + " passes of " + std::to_string(passes[g].kernels) + " kernels"];
  }
  for (const auto& [what, n] : by_sequence) sizes.notes.insert(std::to_string(n) + " " + what);
  return sizes;
}

// One NCCL call over all ranks.
struct CollectiveInstance {
  std::vector<double> duration_us, wait_us;  // per rank
  double transfer_us = 0;
  std::string phase;
  int pass0 = -1;  // rank 0's pass instance
};
// Key: op, bytes, dtype, graph, algorithm, protocol, channels, and for calls of unknown size the
// run and phase they ran in (so that calls of different, unknown sizes are pooled less).
using CollectiveKey = std::tuple<std::string, int64_t, std::string, bool, std::string, std::string, int, std::string>;
using CollectiveCalls = std::map<CollectiveKey, std::vector<CollectiveInstance>>;

// The ranks agree on the i-th call's op and size.
Status CheckSameCollective(const std::vector<KinetoTrace>& ranks, const std::vector<std::vector<NcclCall>>& nccl,
                           size_t i) {
  const KinetoKernel& k0 = *nccl[0][i].kernel;
  const std::string op = ParseNcclKernelName(k0.name).op;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const KinetoKernel& k = *nccl[r][i].kernel;
    if (ParseNcclKernelName(k.name).op != op || k.in_elements != k0.in_elements)
      return InvalidArgumentError(ranks[r].path + ": its NCCL kernel #" + std::to_string(i + 1) + " (" + k.name + ", " +
                                  std::to_string(k.in_elements) + " elements) is not rank 0's (" + k0.name + ", " +
                                  std::to_string(k0.in_elements) + " elements)");
  }
  return OkStatus();
}

// The i-th call's timing: the last rank to start it sets the start of the transfer; per rank,
// wait = last start - own start; the transfer time is the last-arriving rank's kernel duration.
CollectiveInstance TimeCollective(const std::vector<std::vector<NcclCall>>& nccl, size_t i) {
  int64_t last_start = INT64_MIN;
  int last = 0;
  for (size_t r = 0; r < nccl.size(); ++r) {
    const int64_t start = nccl[r][i].kernel->start_ns;
    if (start > last_start) {
      last_start = start;
      last = static_cast<int>(r);
    }
  }
  CollectiveInstance inst;
  inst.phase = nccl[0][i].phase;
  inst.pass0 = nccl[0][i].pass;
  for (const std::vector<NcclCall>& rank : nccl) {
    const KinetoKernel& k = *rank[i].kernel;
    inst.duration_us.push_back(static_cast<double>(k.duration_ns) * 1e-3);
    inst.wait_us.push_back(static_cast<double>(last_start - k.start_ns) * 1e-3);
  }
  inst.transfer_us = inst.duration_us[last];
  return inst;
}

// Rank 0's call `c` (its kernel's name parsed into `name`) keyed by what it transferred; a size
// taken from its pass (`pass_elements` > 0, `pass_dtype`) stands in for one torch did not record.
CollectiveKey KeyOfCollective(const NcclCall& c, const NcclKernel& name, int64_t pass_elements,
                              const std::string& pass_dtype) {
  const KinetoKernel& k0 = *c.kernel;
  // torch records the message (elements, dtype) on eagerly launched collectives only; a graph
  // replay's kernel has its dtype in its name at most.
  const std::string dtype = !k0.dtype.empty() ? k0.dtype : !pass_dtype.empty() ? pass_dtype : TorchDtype(name.dtype);
  const int bytes_per = DtypeBytes(dtype);
  const int64_t elements = pass_elements > 0 ? pass_elements : std::max(k0.in_elements, k0.out_elements);
  const int64_t bytes = bytes_per > 0 && elements > 0 ? elements * bytes_per : 0;
  return {name.op,        bytes,
          dtype,          c.graph,
          name.algorithm, name.protocol,
          k0.grid_x,      bytes > 0 ? std::string() : c.run + (c.run.empty() ? "" : " ") + c.phase};
}

// The pass an allreduce of `elements` ran in learns its allreduce size (tokens per pass), unless it
// has one.
void LearnAllreduceElements(int pass, int64_t elements, std::vector<PassInstance>* passes) {
  if (pass >= 0 && (*passes)[pass].allreduce_elements < 0) (*passes)[pass].allreduce_elements = elements;
}

// Every rank's i-th NCCL kernels as one call, grouped by what they transferred; rank 0's passes
// (`passes0`) learn their allreduce size from sizes taken by pass.
StatusOr<CollectiveCalls> MatchCollectives(const std::vector<KinetoTrace>& ranks,
                                           const std::vector<std::vector<NcclCall>>& nccl,
                                           const NcclSizesFromPasses& by_pass, std::vector<PassInstance>* passes0) {
  CollectiveCalls calls;
  for (size_t i = 0; i < nccl[0].size(); ++i) {
    RETURN_IF_ERROR(CheckSameCollective(ranks, nccl, i));
    const NcclKernel name = ParseNcclKernelName(nccl[0][i].kernel->name);
    CollectiveInstance inst = TimeCollective(nccl, i);
    // The pass learns its allreduce size (tokens per pass) from an inferred first allreduce too.
    if (by_pass.elements[i] > 0 && name.op == "AllReduce")
      LearnAllreduceElements(inst.pass0, by_pass.elements[i], passes0);
    calls[KeyOfCollective(nccl[0][i], name, by_pass.elements[i], by_pass.dtype[i])].push_back(std::move(inst));
  }
  return calls;
}

// The sizes (bytes, dtype) of the eager calls of known size with the op, algorithm, protocol and
// channels of `key` (and its dtype when it has one).
std::set<std::pair<int64_t, std::string>> EagerSizesLike(const CollectiveCalls& calls, const CollectiveKey& key) {
  const auto& [op, bytes, dtype, graph, algorithm, protocol, channels, where] = key;
  std::set<std::pair<int64_t, std::string>> sizes;
  for (const auto& [k, v] : calls) {
    const auto& [op2, bytes2, dtype2, graph2, algorithm2, protocol2, channels2, where2] = k;
    if (!graph2 && bytes2 > 0 && op2 == op && algorithm2 == algorithm && protocol2 == protocol &&
        channels2 == channels && (dtype.empty() || dtype2 == dtype))
      sizes.insert({bytes2, dtype2});
  }
  return sizes;
}

// Graph replays still of unknown size: NCCL picks the channels by size, so the eager calls of the
// same op, algorithm, protocol and channels tell it when they all have one size (and dtype). Rank
// 0's passes learn their allreduce size from them; returns what was taken, for the notes.
std::set<std::string> InferSizesFromEagerCalls(CollectiveCalls* calls, std::vector<PassInstance>* passes0) {
  std::set<std::string> inferred;
  for (auto it = calls->begin(); it != calls->end();) {
    const auto& [op, bytes, dtype, graph, algorithm, protocol, channels, where] = it->first;
    const auto sizes =
        bytes > 0 || !graph ? std::set<std::pair<int64_t, std::string>>() : EagerSizesLike(*calls, it->first);
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
    auto& dst = (*calls)[key];
    const int64_t elements = sizes.begin()->first / std::max(1, DtypeBytes(sizes.begin()->second));
    for (CollectiveInstance& inst : it->second) {
      // The pass it ran in now knows its allreduce size (tokens per pass), on every rank alike.
      if (op == "AllReduce") LearnAllreduceElements(inst.pass0, elements, passes0);
      dst.push_back(std::move(inst));
    }
    it = calls->erase(it);
  }
  return inferred;
}

// ---- Pass groups: passes by phase, run, graph or eager, and kernel count.

using PassGroupKey = std::tuple<std::string, std::string, bool, int>;

std::map<PassGroupKey, std::vector<const PassInstance*>> GroupPasses(
    const std::vector<std::vector<PassInstance>>& passes) {
  std::map<PassGroupKey, std::vector<const PassInstance*>> groups;
  for (const std::vector<PassInstance>& rank : passes)
    for (const PassInstance& p : rank) groups[{p.phase, p.run, p.graph, p.kernels}].push_back(&p);
  return groups;
}

PassGroup SummarisePassGroup(const PassGroupKey& key, const std::vector<const PassInstance*>& list) {
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
  return g;
}

// ---- The measurement trace.

void AddCollectivesNote(const std::string& message, trace::Trace* tr) {
  trace::Note* n = tr->add_notes();
  n->set_severity(trace::Note::INFO);
  n->set_suite("collectives");
  n->set_message(message);
}

// Where the sizes of graph-replayed NCCL calls came from: the eager calls like them (`by_calls`),
// the eager passes like theirs (`by_pass`).
void AddSizeNotes(const std::set<std::string>& by_calls, const std::set<std::string>& by_pass, trace::Trace* tr) {
  for (const std::string& what : by_calls)
    AddCollectivesNote(
        "graph-replayed NCCL calls carry no size in the profile; taken from the eager calls of the same " + what, tr);
  for (const std::string& what : by_pass)
    AddCollectivesNote("graph-replayed NCCL calls carry no size in the profile; taken for " + what +
                           " from the eager passes of the same phase and kernel count (call by call)",
                       tr);
}

// Rank r's GPU: the device its kernels ran on, described by deviceProperties.
void DescribeRankGpu(const KinetoTrace& t, int r, trace::Gpu* g) {
  g->set_index(r);
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

void DescribeEnvironment(const std::vector<KinetoTrace>& ranks, const ImportOptions& options, trace::Environment* env) {
  env->set_nccl_version(ranks[0].nccl_version);
  for (const auto& [k, v] : options.nccl_env) (*env->mutable_nccl_env())[k] = v;
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r) DescribeRankGpu(ranks[r], r, env->add_gpus());
}

std::string CollectiveName(const CollectiveKey& key, int world) {
  const auto& [op, bytes, dtype, graph, algorithm, protocol, channels, where] = key;
  return "profile/nccl/" + AsciiLower(op) + "/" + (graph ? "graph" : "eager") + "/n" + std::to_string(world) + "/" +
         (bytes > 0 ? SizeName(bytes) : "unknown-size") + (dtype.empty() || dtype == "BFloat16" ? "" : "/" + dtype) +
         (where.empty() ? "" : " [" + where + "]");
}

std::vector<double> TransferTimes(const std::vector<CollectiveInstance>& list) {
  std::vector<double> transfer;
  for (const CollectiveInstance& i : list) transfer.push_back(i.transfer_us);
  return transfer;
}

CollectiveGroup SummariseCollective(const CollectiveKey& key, const std::vector<CollectiveInstance>& list, int world) {
  CollectiveGroup c;
  std::tie(c.op, c.bytes, c.dtype, c.graph, c.algorithm, c.protocol, c.channels, std::ignore) = key;
  c.instances = static_cast<int>(list.size());
  double wait_sum = 0;
  for (const CollectiveInstance& i : list) {
    for (double w : i.wait_us) {
      wait_sum += w;
      c.wait_us_max = std::max(c.wait_us_max, w);
    }
    ++c.phases[i.phase.empty() ? "(no pass)" : i.phase];
  }
  c.transfer_us = Median(TransferTimes(list));
  c.wait_us_mean = wait_sum / static_cast<double>(list.size() * world);
  c.name = CollectiveName(key, world);
  return c;
}

trace::CollectiveOp TraceCollectiveOp(const std::string& op) {
  return op == "AllReduce"       ? trace::ALLREDUCE
         : op == "AllGather"     ? trace::ALLGATHER
         : op == "ReduceScatter" ? trace::REDUCESCATTER
                                 : trace::COLLECTIVE_OP_UNSPECIFIED;
}

// What NCCL ran (from the kernel) and the NCCL_* variables the run had (options.nccl_env).
void DescribeNcclCall(const CollectiveGroup& c, const ImportOptions& options, trace::CollectiveParams* p) {
  auto nccl_var = [&options](const char* name) {
    auto it = options.nccl_env.find(name);
    return it == options.nccl_env.end() ? std::string() : it->second;
  };
  p->set_cuda_graph(c.graph);
  p->set_nccl_chosen_algo(c.algorithm);
  p->set_nccl_chosen_proto(c.protocol);
  if (c.channels > 0) p->set_nccl_chosen_channels(c.channels);
  p->set_kernel_time_only(true);
  p->set_nccl_algo(nccl_var("NCCL_ALGO"));
  p->set_nccl_proto(nccl_var("NCCL_PROTO"));
  p->set_nccl_min_nchannels(nccl_var("NCCL_MIN_NCHANNELS"));
  p->set_nccl_max_nchannels(nccl_var("NCCL_MAX_NCHANNELS"));
  p->set_nccl_p2p_level(nccl_var("NCCL_P2P_LEVEL"));
  p->set_nccl_p2p_disable(nccl_var("NCCL_P2P_DISABLE"));
  p->set_nccl_shm_disable(nccl_var("NCCL_SHM_DISABLE"));
}

void DescribeCollective(const CollectiveGroup& c, trace::CollectiveOp top, int world, const ImportOptions& options,
                        trace::CollectiveParams* p) {
  p->set_op(top);
  p->set_implementation(trace::IMPL_NCCL);
  p->set_transport(trace::TRANSPORT_NCCL);
  p->set_bytes(c.bytes);
  const int bytes_per = std::max(1, DtypeBytes(c.dtype));
  p->set_count(top == trace::ALLGATHER ? c.bytes / bytes_per / world : c.bytes / bytes_per);
  p->set_dtype(TraceDtype(c.dtype));
  p->set_nranks(world);
  for (int r = 0; r < world; ++r) p->add_gpus(r);
  DescribeNcclCall(c, options, p);
}

// Per rank every instance's kernel duration and wait.
void AddRankTimings(const std::vector<CollectiveInstance>& list, int world, trace::Item* it) {
  for (int r = 0; r < world; ++r) {
    trace::RankTiming* rt = it->add_rank_timing();
    rt->set_rank(r);
    rt->set_gpu(r);
    std::vector<double> d;
    double w = 0;
    for (const CollectiveInstance& i : list) {
      rt->add_duration_us(static_cast<float>(i.duration_us[r]));
      rt->add_wait_us(static_cast<float>(i.wait_us[r]));
      d.push_back(i.duration_us[r]);
      w += i.wait_us[r];
    }
    rt->set_duration_median_us(Median(d));
    rt->set_wait_mean_us(w / static_cast<double>(list.size()));
  }
}

// The call's trace item, when the simulator has the op and the size is known; else a note saying why not.
void AddCollectiveItem(const CollectiveGroup& c, const std::vector<CollectiveInstance>& list, int world,
                       const ImportOptions& options, trace::Trace* tr) {
  const trace::CollectiveOp top = TraceCollectiveOp(c.op);
  if (top == trace::COLLECTIVE_OP_UNSPECIFIED || c.bytes <= 0) {
    AddCollectivesNote(c.name + ": " + std::to_string(c.instances) + " NCCL calls not written as items: " +
                           (c.bytes <= 0 ? std::string("their message size is not in the profile")
                                         : c.op + " is not modelled (allreduce, allgather, reducescatter are)"),
                       tr);
    return;
  }
  trace::Item* it = tr->add_items();
  it->set_suite(trace::SUITE_COLLECTIVES);
  it->set_kind(trace::KIND_COLLECTIVE);
  it->set_name(c.name);
  DescribeCollective(c, top, world, options, it->mutable_collective());
  FillStats(TransferTimes(list), it->mutable_stats());
  AddRankTimings(list, world, it);
  const double bw_bytes = static_cast<double>(c.bytes);
  it->set_algbw_gbps(bw_bytes / (c.transfer_us * 1e3));
  const double factor = top == trace::ALLREDUCE ? 2.0 * (world - 1) / world : double(world - 1) / world;
  it->set_busbw_gbps(it->algbw_gbps() * factor);
}

using GemmKey = GemmCallMap::key_type;

GemmGroup SummariseGemm(const GemmKey& key, const GemmCalls& calls) {
  GemmGroup g;
  std::tie(g.op, g.m, g.n, g.k, g.dtype) = key;
  g.calls = static_cast<int>(calls.us.size());
  g.kernels_per_call = calls.kernels_per_call;
  g.main_kernel = calls.main_kernel;
  g.median_us = Median(calls.us);
  g.name = std::string("profile/gemm/") + kTorchGemmLibrary + "/m" + std::to_string(g.m) + "/n" + std::to_string(g.n) +
           "/k" + std::to_string(g.k) + (g.dtype == "BFloat16" ? "" : "/" + g.dtype) +
           (g.op == "aten::mm" ? "" : "/addmm");
  return g;
}

void AddGemmItem(const GemmGroup& g, const GemmCalls& calls, trace::Trace* tr) {
  trace::Item* it = tr->add_items();
  it->set_suite(trace::SUITE_KERNELS);
  it->set_kind(trace::KIND_GEMM);
  it->set_name(g.name);
  trace::GemmParams* p = it->mutable_gemm();
  p->set_m(g.m);
  p->set_n(g.n);
  p->set_k(g.k);
  p->set_dtype(TraceDtype(g.dtype));
  p->set_op(g.op);
  p->set_weight_bytes(g.n * g.k * DtypeBytes(g.dtype));
  p->set_gpu(0);  // calls of every rank pooled, priced on the first GPU (a TP group runs one GPU model)
  p->set_library(kTorchGemmLibrary);
  p->set_kernel_time_only(true);
  FillStats(calls.us, it->mutable_stats());
  it->set_tflops(2.0 * g.m * g.n * g.k / (g.median_us * 1e6));
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
  ASSIGN_OR_RETURN(const int world, SortRanks(&ranks));
  ProfileImport out;
  out.ranks = world;
  RankScans scans = ScanRanks(ranks, options, &out);
  RETURN_IF_ERROR(CheckSameNcclCallCount(ranks, scans.nccl));
  const NcclSizesFromPasses by_pass = InferSizesFromEagerPasses(scans.passes[0], scans.nccl[0]);
  ASSIGN_OR_RETURN(CollectiveCalls calls, MatchCollectives(ranks, scans.nccl, by_pass, &scans.passes[0]));
  const std::set<std::string> by_calls = InferSizesFromEagerCalls(&calls, &scans.passes[0]);
  // The pass groups after the collectives: their passes learnt allreduce sizes from them.
  for (const auto& [key, list] : GroupPasses(scans.passes)) out.passes.push_back(SummarisePassGroup(key, list));

  trace::Trace& tr = out.trace;
  tr.set_schema_version(1);
  tr.set_tool("specsim import-profile");
  AddSizeNotes(by_calls, by_pass.notes, &tr);
  DescribeEnvironment(ranks, options, tr.mutable_environment());
  for (const auto& [key, list] : calls) {
    out.collectives.push_back(SummariseCollective(key, list, world));
    AddCollectiveItem(out.collectives.back(), list, world, options, &tr);
  }
  for (const auto& [key, gemm] : scans.gemm_calls) {
    out.gemms.push_back(SummariseGemm(key, gemm));
    AddGemmItem(out.gemms.back(), gemm, &tr);
  }
  return out;
}

}  // namespace specsim::profile
