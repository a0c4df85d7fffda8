#include "sim/profile/profile_import.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <tuple>
#include <unordered_map>

#include "sim/core/median.h"
#include "sim/core/strings.h"
#include "sim/profile/collective_calls.h"
#include "sim/profile/item_stats.h"
#include "sim/profile/kernel_calls.h"
#include "sim/profile/rank_passes.h"

namespace specsim::profile {
namespace {

std::string SizeName(int64_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + "MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + "KiB";
  return std::to_string(bytes) + "B";
}

// GEMM calls by (op, m, n, k, torch dtype): per call its kernels' summed duration.
struct GemmCalls {
  std::vector<double> us;
  int kernels_per_call = 0;
  std::string main_kernel;
};
using GemmCallMap = std::map<std::tuple<std::string, int64_t, int64_t, int64_t, std::string>, GemmCalls>;

// One rank's eager GEMM calls: the kernels of each aten::mm / addmm call (by External id).
void CollectGemmCalls(const std::vector<OperatorCall>& calls_of_rank, GemmCallMap* calls,
                      std::map<std::string, int64_t>* skipped) {
  for (const OperatorCall& c : calls_of_rank) {
    const KinetoOp& o = *c.op;
    if (!IsGemmOp(o.name)) continue;
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

// The ranks of 0..world-1 not in `seen`: the first 16, then how many more.
std::string MissingRanks(const std::set<int>& seen, int world) {
  std::string missing;
  int listed = 0, more = 0;
  for (int r = 0; r < world; ++r) {
    if (seen.count(r)) continue;
    if (listed++ < 16)
      missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    else
      ++more;
  }
  return more == 0 ? missing : missing + " and " + std::to_string(more) + " more";
}

// Ranks 0..world-1, each once.
Status CheckEveryRankOnce(const std::vector<KinetoTrace>& ranks, int world) {
  std::string repeated;
  std::set<int> seen;
  for (const KinetoTrace& t : ranks) {
    if (t.rank >= world)
      return InvalidArgumentError(t.path + ": rank " + std::to_string(t.rank) + " of world size " +
                                  std::to_string(world));
    if (!seen.insert(t.rank).second) repeated += (repeated.empty() ? "" : ", ") + std::to_string(t.rank);
  }
  if (!repeated.empty()) return InvalidArgumentError("rank(s) " + repeated + " given more than once");
  if (static_cast<int>(seen.size()) < world)
    return InvalidArgumentError("missing rank(s) " + MissingRanks(seen, world) + " of world size " +
                                std::to_string(world) + " (distributedInfo.world_size of " + ranks[0].path +
                                "): give every rank's trace file (or the directory holding them)");
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
  const PassNameRule* rule = list.front()->rule;
  g.kind = rule != nullptr ? PassNameKindName(rule->kind) : "";
  g.rule = rule != nullptr ? rule->Describe() : "a CUDA-graph replay outside every pass range";
  g.name_tokens = rule != nullptr ? rule->TokensIn(g.phase) : 0;
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
  g.gpu_span_us = MedianOf(gpu);
  g.host_span_us = MedianOf(host);
  g.gpu_idle_us = MedianOf(idle);
  g.busy_total_us = MedianOf(busy_total);
  for (auto& [c, v] : busy) {
    v.resize(list.size(), 0.0);  // passes without that class: 0
    g.busy_us[c] = MedianOf(v);
  }
  return g;
}

// ---- Eager passes operator by operator (host_ops.h).

// Per eager pass group with a named range: its passes' operators; their host costs pooled per
// (kind, op, tokens, rank) and the group as a loop of its first pass's operators.
void CollectHostOps(const std::vector<KinetoTrace>& ranks,
                    const std::map<PassGroupKey, std::vector<const PassInstance*>>& groups,
                    const std::vector<PassGroup>& summaries, ProfileImport* out) {
  std::vector<HostCallIndex> index;
  for (const KinetoTrace& t : ranks) index.emplace_back(t);
  std::map<std::tuple<std::string, std::string, int, int>, HostOpGroup> ops;  // (kind, op, tokens, rank)
  std::map<std::tuple<std::string, std::string, int, int>, std::vector<double>> device;
  size_t gi = 0;
  for (const auto& [key, list] : groups) {
    const PassGroup& summary = summaries[gi++];
    if (summary.graph || list.front()->rule == nullptr) continue;
    HostLoopGroup loop;
    for (const PassInstance* p : list) {
      const int rank = p->rank;
      const EagerPassOps pass = index[rank].PassOps(p->tid, p->host_start, p->host_end, p->gpu_end);
      std::vector<HostOpCall> calls = pass.ops;
      if (pass.has_sync) calls.push_back(pass.sync);
      for (const HostOpCall& c : calls) {
        HostOpGroup& g = ops[{summary.kind, c.name, pass.tokens, rank}];
        g.kind = summary.kind;
        g.op = c.name;
        g.tokens = pass.tokens;
        g.rank = rank;
        g.kernels = std::max(g.kernels, c.kernels);
        g.host_us.push_back(static_cast<double>(c.host_ns) * 1e-3);
        device[{summary.kind, c.name, pass.tokens, rank}].push_back(static_cast<double>(c.device_ns) * 1e-3);
      }
      if (loop.ops.empty() && pass.has_sync && !pass.ops.empty()) {
        loop.pass = summary.Key();
        loop.phase = summary.phase;
        loop.kind = summary.kind;
        loop.tokens = pass.tokens;
        loop.rank = rank;
        loop.layers = summary.allreduces / 2;
        for (const HostOpCall& c : pass.ops) loop.ops.push_back(c.name);
        loop.ops.push_back("sync");
        loop.device_us = summary.busy_total_us;
      }
      loop.host_span_us.push_back(static_cast<double>(p->host_end - p->host_start) * 1e-3);
    }
    if (!loop.ops.empty()) out->host_loops.push_back(std::move(loop));
  }
  for (auto& [key, g] : ops) {
    g.op_class = HostOpClass(g.op, g.kernels);
    g.device_us = MedianOf(device[key]);
    out->host_ops.push_back(std::move(g));
  }
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
  c.transfer_us = MedianOf(TransferTimes(list));
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
    rt->set_duration_median_us(MedianOf(d));
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
  g.median_us = MedianOf(calls.us);
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

namespace {

// The calls whose operator starts inside a host range (same thread) whose name matches `ranges`:
// the matching ranges of each thread merged into disjoint spans, each call's start looked up.
std::vector<OperatorCall> CallsInRanges(const std::vector<OperatorCall>& calls, const KinetoTrace& t,
                                        const std::regex& ranges) {
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> spans;  // tid -> [start, end), disjoint
  for (const KinetoRange& r : t.ranges)
    if (std::regex_search(r.name, ranges)) spans[r.tid].push_back({r.start_ns, r.start_ns + r.duration_ns});
  for (auto& [tid, v] : spans) {
    std::sort(v.begin(), v.end());
    std::vector<std::pair<int64_t, int64_t>> merged;
    for (const auto& span : v) {
      if (!merged.empty() && span.first <= merged.back().second)
        merged.back().second = std::max(merged.back().second, span.second);
      else
        merged.push_back(span);
    }
    v = std::move(merged);
  }
  std::vector<OperatorCall> kept;
  for (const OperatorCall& c : calls) {
    auto it = spans.find(c.op->tid);
    if (it == spans.end()) continue;
    const auto& v = it->second;
    auto after =
        std::upper_bound(v.begin(), v.end(), c.op->start_ns,
                         [](int64_t start, const std::pair<int64_t, int64_t>& span) { return start < span.first; });
    if (after != v.begin() && c.op->start_ns < std::prev(after)->second) kept.push_back(c);
  }
  return kept;
}

}  // namespace

StatusOr<ProfileImport> ImportProfile(std::vector<KinetoTrace> ranks, const ImportOptions& options) {
  ASSIGN_OR_RETURN(const int world, SortRanks(&ranks));
  ProfileImport out;
  out.ranks = world;
  RankScans scans = ScanRanks(ranks, options, &out);
  GemmCallMap gemm_calls;
  KernelCallSamples kernel_calls;
  std::optional<std::regex> call_ranges;
  if (!options.call_ranges.empty()) {
    try {
      call_ranges.emplace(options.call_ranges, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return InvalidArgumentError("--call-ranges '" + options.call_ranges + "': not a regular expression (" + e.what() +
                                  ")");
    }
  }
  for (const KinetoTrace& t : ranks) {
    for (const auto& [cat, n] : t.ignored) out.ignored[cat] += n;
    for (const auto& [cat, reasons] : t.dropped)
      for (const auto& [why, n] : reasons) out.dropped[cat][why] += n;
    std::vector<OperatorCall> calls = OperatorCalls(t);
    if (call_ranges) calls = CallsInRanges(calls, t, *call_ranges);
    CollectGemmCalls(calls, &gemm_calls, &out.gemms_skipped);
    CollectKernelCalls(calls, &kernel_calls, &out.kernel_calls_skipped);
  }
  ASSIGN_OR_RETURN(const MatchedCollectives collectives, MatchCollectives(ranks, &scans));
  // The pass groups after the collectives: their passes learnt allreduce sizes from them.
  const auto groups = GroupPasses(scans.passes);
  for (const auto& [key, list] : groups) out.passes.push_back(SummarisePassGroup(key, list));
  CollectHostOps(ranks, groups, out.passes, &out);

  trace::Trace& tr = out.trace;
  tr.set_schema_version(1);
  tr.set_tool("specsim import-profile");
  AddSizeNotes(collectives.sizes_from_calls, collectives.sizes_from_passes, &tr);
  DescribeEnvironment(ranks, options, tr.mutable_environment());
  for (const auto& [key, list] : collectives.calls) {
    out.collectives.push_back(SummariseCollective(key, list, world));
    AddCollectiveItem(out.collectives.back(), list, world, options, &tr);
  }
  for (const auto& [key, gemm] : gemm_calls) {
    out.gemms.push_back(SummariseGemm(key, gemm));
    AddGemmItem(out.gemms.back(), gemm, &tr);
  }
  AddKernelCallItems(kernel_calls, &out.kernel_call_groups, &tr);
  for (const HostOpGroup& g : out.host_ops) DescribeHostOpItem(g, tr.add_items());
  for (const HostLoopGroup& g : out.host_loops) DescribeHostLoopItem(g, tr.add_items());
  return out;
}

}  // namespace specsim::profile
