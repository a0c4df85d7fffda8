#include "sim/profile/rank_passes.h"

#include <set>
#include <unordered_map>

#include "sim/profile/kernel_class.h"

namespace specsim::profile {
namespace {

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

// One rank's host calls that place a kernel in a pass: the launch call of each correlation id, and
// per host thread its phase ranges and its run ranges.
struct RankHostCalls {
  std::unordered_map<int64_t, const KinetoLaunch*> launch_of;
  std::unordered_map<const KinetoRange*, const PassNameRule*> rule_of;  // the phase ranges' rules
  std::map<int64_t, ThreadRanges> phase_ranges, run_ranges;             // by thread id
  std::string run_prefix;                                               // of the run ranges' names

  // The call that launched `k`, or null when the trace has none.
  const KinetoLaunch* LaunchOf(const KinetoKernel& k) const {
    auto it = launch_of.find(k.correlation);
    return it == launch_of.end() ? nullptr : it->second;
  }
};

// The rank's launches by correlation, its phase ranges (those the name map gives a pass kind:
// the rule of each matched name is looked up once) and run ranges; the names no rule matched
// counted into `unmatched`.
RankHostCalls IndexHostCalls(const KinetoTrace& t, const PassNameMap& names, const std::string& run_prefix,
                             std::map<std::string, int64_t>* unmatched) {
  RankHostCalls host;
  host.run_prefix = run_prefix;
  for (const KinetoLaunch& l : t.launches)
    if (l.correlation >= 0) host.launch_of[l.correlation] = &l;
  std::unordered_map<std::string, const PassNameRule*> rule_of_name;
  for (const KinetoRange& g : t.ranges) {
    if (!run_prefix.empty() && g.name.rfind(run_prefix, 0) == 0) {
      host.run_ranges[g.tid].sorted.push_back(&g);
      continue;
    }
    auto [it, fresh] = rule_of_name.emplace(g.name, nullptr);
    if (fresh) it->second = names.Match(g.name);
    if (it->second == nullptr) {
      ++(*unmatched)[g.name];
    } else if (it->second->kind != PassNameKind::kIgnore) {
      host.phase_ranges[g.tid].sorted.push_back(&g);
      host.rule_of[&g] = it->second;
    }
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
  p.rule = range != nullptr ? host.rule_of.at(range) : nullptr;
  p.tid = launch.tid;
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

}  // namespace

RankScans ScanRanks(const std::vector<KinetoTrace>& ranks, const ImportOptions& options, ProfileImport* out) {
  const int world = static_cast<int>(ranks.size());
  RankScans scans;
  scans.passes.resize(world);
  scans.nccl.resize(world);
  for (int r = 0; r < world; ++r) {
    const RankHostCalls host = IndexHostCalls(ranks[r], options.names, options.run_prefix, &out->unmatched_ranges);
    ScanRankKernels(ranks[r], host, &scans.passes[r], &scans.nccl[r], out);
    for (PassInstance& p : scans.passes[r]) p.rank = r;
  }
  return scans;
}

}  // namespace specsim::profile
