// NCCL (fitters.h), through the predictor (FitBySimulation: the laws are the simulated copy
// kernel and the planner's schedules), or a statistic of it:
//   one rank, graph  the local copy kernel's fill time and memory efficiency from the calls replayed
//                    in graphs (per call: the graph launch's share + the copy + the graph gap)
//   one rank, eager  NCCL's host per-call overhead O: the host-bound eager calls measure
//                    issue + floor + O, so O = t - (predicted - O_current), least squares over them
//   2+ ranks         per (transport, protocol, op): the base latency (once per collective), the
//                    per-step latency (a floor on every chunk's step) and the channel rate (the most
//                    one channel moves)
//   per-call extra   in-graph minus eager: the median over the items measured both ways of
//                    (graph - eager measured) - (graph - eager predicted)
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "sim/calib/fitters.h"
#include "sim/calib/predictors.h"
#include "sim/coll/collective_planner.h"
#include "sim/coll/protocol.h"
#include "sim/net/routing.h"

namespace specsim::calib {
namespace {

using NcclStepKey = std::tuple<coll::NcclTransport, coll::NcclProto, int>;  // transport, protocol, op

bool IsOneRankNccl(const trace::Item& it) {
  return it.kind() == trace::KIND_COLLECTIVE && it.collective().nranks() <= 1 &&
         it.collective().implementation() == trace::IMPL_NCCL;
}

bool IsMultiRankNccl(const trace::Item& it) {
  return it.kind() == trace::KIND_COLLECTIVE && it.collective().nranks() >= 2 &&
         it.collective().implementation() == trace::IMPL_NCCL;
}

// The local copy kernel's fill time and bandwidth from the one-rank calls replayed in graphs
// (Gauss-Newton on finite differences, as the copy may sit on its floor).
Status FitNcclLocalCopy(FitContext& c) {
  std::vector<const trace::Item*> graph;
  for (const trace::Item* it : c.items)
    if (IsOneRankNccl(*it) && it->collective().cuda_graph()) graph.push_back(it);
  if (graph.empty()) {
    c.result.not_fitted.push_back(
        "nccl.local_copy_ramp_ns, nccl.local_copy_memory_efficiency: no one-rank NCCL calls in CUDA graphs (the "
        "compute model's memory ramp and efficiency are used)");
    return OkStatus();
  }
  const NcclParams& n = c.result.params.nccl;
  const compute::ComputeParams& cp = c.result.params.compute;
  std::vector<SimUnknown> u = {
      {"nccl.local_copy_ramp_ns", "ns", n.local_copy_ramp_ns > 0 ? n.local_copy_ramp_ns : cp.memory_ramp_ns, 100, 1e-3,
       1e6},
      {"nccl.local_copy_memory_efficiency", "",
       n.local_copy_memory_efficiency > 0 ? n.local_copy_memory_efficiency : cp.memory_efficiency, 0.01, 0.01, 1.0}};
  return c.FitBySimulation("nccl one-rank calls in graphs", graph, u, [](const std::vector<double>& t, CalibParams* p) {
    p->nccl.local_copy_ramp_ns = t[0];
    p->nccl.local_copy_memory_efficiency = t[1];
  });
}

// The eager one-rank calls: host-bound ones (the prediction moves with the overhead) measure
// issue + floor + overhead; a few rounds settle which ones those are. (Every one-rank collective
// item, NCCL or not, as it always was: the predictor refuses the others.)
Status FitNcclLocalCallOverhead(FitContext& c) {
  std::vector<const trace::Item*> eager;
  for (const trace::Item* it : c.items)
    if (it->kind() == trace::KIND_COLLECTIVE && it->collective().nranks() <= 1 && !it->collective().cuda_graph())
      eager.push_back(it);
  bool any = false;
  LinearSolution s;
  for (int round = 0; round < 3 && !eager.empty(); ++round) {
    CalibParams bumped = c.result.params;
    bumped.nccl.local_call_overhead_ns += 100;
    const Predictor predictor(c.trace, c.topology, c.result.params), p1(c.trace, c.topology, bumped);
    LinearProblem p;
    p.names = {"nccl.local_call_overhead_ns"};
    p.defaults = {c.result.params.nccl.local_call_overhead_ns};
    const double current = c.result.params.nccl.local_call_overhead_ns;
    for (const trace::Item* it : eager) {
      const Prediction pr = predictor.Predict(*it), pb = p1.Predict(*it);
      if (!pr.simulated || !pb.simulated) continue;
      any = true;
      if (pb.predicted_us - pr.predicted_us < 0.05) continue;  // device-bound: says nothing of it
      const double ns = MeasuredNs(*it);
      p.AddRow({1}, ns - (pr.predicted_us * 1e3 - current), 1 / ns);
    }
    if (p.rows.empty()) break;
    ASSIGN_OR_RETURN(s, SolveLeastSquares(p, c.options.fix_undetermined, "NCCL one-rank calls"));
    const bool done = std::abs(s.x[0] - current) < 1;
    c.result.params.nccl.local_call_overhead_ns = s.x[0];
    if (done) break;
  }
  if (!any) {
    c.result.not_fitted.push_back("nccl.local_call_overhead_ns: no one-rank NCCL items (default kept)");
  } else if (s.x.empty()) {
    c.result.not_fitted.push_back(
        "nccl.local_call_overhead_ns: every eager one-rank call is device-bound (default kept)");
  } else {
    c.Record("nccl.local_call_overhead_ns", "ns", c.result.params.nccl.local_call_overhead_ns, s, 0);
  }
  return OkStatus();
}

// The multi-rank NCCL items by the (transport, protocol, op) the planner gives them (the recorded
// NCCL pick and environment); `multi` counts every multi-rank NCCL item, planned or not.
std::map<NcclStepKey, std::vector<const trace::Item*>> NcclStepGroups(const FitContext& c, int* multi) {
  std::map<NcclStepKey, std::vector<const trace::Item*>> groups;
  *multi = 0;
  for (const trace::Item* it : c.items) {
    if (!IsMultiRankNccl(*it)) continue;
    ++*multi;
    auto request = CollectiveRequestOf(it->collective(), c.result.params);
    if (!request.ok()) continue;
    net::Router router(c.topology);
    auto plan = coll::PlanCollective(c.topology, router, *request);
    if (!plan.ok()) continue;
    auto proto = coll::ParseNcclProto(plan->protocol);
    if (!proto.ok()) continue;
    groups[{plan->worst_transport, *proto, static_cast<int>(request->collective)}].push_back(it);
  }
  return groups;
}

// The channels the planner gives a call (1 when it cannot plan it).
int PlannedChannels(const FitContext& c, const trace::CollectiveParams& collective) {
  auto request = CollectiveRequestOf(collective, c.result.params);
  if (!request.ok()) return 1;
  net::Router router(c.topology);
  auto plan = coll::PlanCollective(c.topology, router, *request);
  if (!plan.ok()) return 1;
  return plan->channels;
}

// Channel rate start: slightly above the largest item's measured bus bandwidth per channel (so
// that it binds there and the fit can move it); the channels are the recorded ones, else the
// planner's.
double NcclChannelRateStart(const FitContext& c, const std::vector<const trace::Item*>& group_items) {
  double channel_start = 0;
  for (const trace::Item* it : group_items) {
    int ch = it->collective().nccl_chosen_channels();
    if (ch <= 0) ch = PlannedChannels(c, it->collective());
    channel_start = std::max(channel_start, 1.2 * it->busbw_gbps() / std::max(1, ch));
  }
  return channel_start;
}

// One (transport, protocol, op) group's base latency, per-step latency and channel rate, from
// NCCL's table and the planner's overrides so far. With `report` false the group's lines in the
// fitted / not-fitted lists are dropped (the first pass's are superseded by the second's).
Status FitNcclGroup(FitContext& c, const NcclStepKey& key, const std::vector<const trace::Item*>& group_items,
                    bool report) {
  const auto [transport, proto, op] = key;
  const std::string base = std::string("nccl.") + coll::NcclTransportName(transport) + "." +
                           coll::NcclProtoName(proto) + "." + coll::CollectiveName(static_cast<coll::Collective>(op));
  const coll::ProtocolCost& cost = c.result.params.nccl.protocol.per_op[key];
  const coll::ProtocolModel table =
      coll::ApplyProtocolOverrides(coll::NcclProtocolModel(proto, coll::NcclAlgo::kRing, coll::NcclHwOf(transport)),
                                   proto, transport, c.result.params.nccl.protocol, op);
  double channel_start = NcclChannelRateStart(c, group_items);
  if (cost.channel_gbps) channel_start = *cost.channel_gbps;
  std::vector<SimUnknown> u = {
      {base + ".base_latency_us", "us", NanosFromPicos(table.base_latency_ps) * 1e-3, 0.5, 0, 200, 1},
      {base + ".hop_latency_us", "us", NanosFromPicos(table.hop_latency_ps) * 1e-3, 0.25, 0, 100, 0},
      {base + ".channel_gbps", "GB/s", std::max(channel_start, 0.1), 0.05 * std::max(channel_start, 0.1), 0.01, 1e4,
       2}};
  const size_t fitted_before = c.result.fitted.size(), not_fitted_before = c.result.not_fitted.size();
  RETURN_IF_ERROR(c.FitBySimulation(base, group_items, u, [key](const std::vector<double>& t, CalibParams* p) {
    coll::ProtocolCost& pc = p->nccl.protocol.per_op[key];
    pc.base_latency_us = t[0];
    pc.hop_latency_us = t[1];
    pc.channel_gbps = t[2];
  }));
  if (!report) {
    c.result.fitted.resize(fitted_before);
    c.result.not_fitted.resize(not_fitted_before);
  }
  return OkStatus();
}

// One op, size, rank count and trace measured eager ([0]) and in a graph ([1]).
struct NcclModeSide {
  double measured_ns = -1, predicted_ns = 0;
};

// The multi-rank NCCL items that time a call (not a profiler's kernel durations, which carry no
// per-call cost) by their name with the mode taken out (".../allreduce/graph/n2/1KiB" ->
// ".../allreduce/n2/1KiB"; a name without one gets "#graph" / "#eager").
std::map<std::string, std::array<NcclModeSide, 2>> NcclModePairs(const FitContext& c) {
  const Predictor at(c.trace, c.topology, c.result.params);
  std::map<std::string, std::array<NcclModeSide, 2>> pairs;
  for (const trace::Item* it : c.items) {
    if (!IsMultiRankNccl(*it) || it->collective().kernel_time_only()) continue;
    const Prediction p = at.Predict(*it);
    if (!p.simulated) continue;
    const bool graph = it->collective().cuda_graph();
    std::string key = it->name();
    const std::string mode = graph ? "/graph/" : "/eager/";
    if (const size_t at_mode = key.find(mode); at_mode != std::string::npos)
      key = key.substr(0, at_mode) + "/" + key.substr(at_mode + mode.size());
    else
      key += graph ? "#graph" : "#eager";
    NcclModeSide& side = pairs[key][graph ? 1 : 0];
    side.measured_ns = MeasuredNs(*it);
    side.predicted_ns = p.predicted_us * 1e3;
  }
  return pairs;
}

// Eager and in-graph NCCL calls differ by what NCCL does per call on the host (eager) or per
// captured call (graph). The extra is the median, over the items named alike but for their mode
// (NcclModePairs) of (graph - eager measured) - (graph - eager predicted), over the pairs whose
// eager time is under 1 ms (all pairs if none is): a per-call cost of a few us is invisible in
// the noise of a 30 ms call (0.5% = 150 us), and a mean over all sizes would be that noise (it
// gave -23 us on the SHM LL trace, and negative predictions).
void FitNcclCallExtras(FitContext& c) {
  std::vector<double> small, all;
  for (const auto& [key, pair] : NcclModePairs(c)) {
    if (pair[0].measured_ns < 0 || pair[1].measured_ns < 0) continue;
    const double d = (pair[1].measured_ns - pair[0].measured_ns) - (pair[1].predicted_ns - pair[0].predicted_ns);
    all.push_back(d);
    if (pair[0].measured_ns < 1e6) small.push_back(d);
  }
  if (all.empty()) {
    c.result.not_fitted.push_back(
        "nccl.graph_call_extra_ns: needs NCCL items of one size both eager and in CUDA graphs (default kept)");
    return;
  }
  std::vector<double>& use = small.empty() ? all : small;
  std::sort(use.begin(), use.end());
  const size_t n = use.size();
  const double median = n % 2 ? use[n / 2] : 0.5 * (use[n / 2 - 1] + use[n / 2]);
  c.result.params.nccl.graph_call_extra_ns += median;
  c.result.fitted.push_back(
      {"nccl.graph_call_extra_ns", "ns", c.result.params.nccl.graph_call_extra_ns, 0, static_cast<int>(2 * n)});
}

}  // namespace

// One-rank NCCL calls: the local copy kernel's fill time and bandwidth from the calls replayed in
// graphs, then NCCL's eager per-call cost over the eager calls with that copy.
Status FitNcclLocal(FitContext& c) {
  RETURN_IF_ERROR(FitNcclLocalCopy(c));
  return FitNcclLocalCallOverhead(c);
}

// NCCL's per-step costs per (transport, protocol, op) from collectives of 2+ ranks, each group
// fitted on its own items by FitBySimulation. With one rank count the base and per-step latencies
// separate only through the chunk counts of larger messages; when they do not, NCCL's per-step
// value is kept and named. Two passes: the groups, then NCCL's per-call extras from what is left
// (one pair for every group), then the groups again with those extras.
Status FitNcclSteps(FitContext& c) {
  int multi = 0;
  const std::map<NcclStepKey, std::vector<const trace::Item*>> groups = NcclStepGroups(c, &multi);
  if (multi == 0) {
    c.result.not_fitted.push_back(
        "nccl per-step costs (per transport and protocol): need NCCL collectives of 2 or more ranks (NCCL's tables "
        "kept)");
    return OkStatus();
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& [key, group_items] : groups) RETURN_IF_ERROR(FitNcclGroup(c, key, group_items, pass == 1));
    if (pass == 0) FitNcclCallExtras(c);
  }
  return OkStatus();
}

}  // namespace specsim::calib
