#include "sim/calib/loop_predictors.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/calib/injected_host_cost.h"
#include "sim/coll/executor.h"
#include "sim/compute/kernel.h"
#include "sim/llm/decode_simulator.h"
#include "sim/net/routing.h"
#include "sim/core/median.h"

namespace specsim::calib {
namespace {

using llm::HostOpClass;
using llm::RankTimelines;
using llm::TimelineProgram;
using llm::TimelineStep;

constexpr uint64_t kLoopSeed = 20261130;  // the same draws for every prediction (smooth fits)
constexpr int kMinIterations = 50;

Prediction Failed(std::string reason) { return Prediction::NotSimulated(std::move(reason)); }
Prediction Micros(double us) { return Prediction::Of(us); }

int IterationsOf(const trace::Item& item) { return std::max(kMinIterations, item.stats().iterations()); }

// The collective's transfer alone (its kernel's launch is the timeline's), ps.
StatusOr<SimTime> TransferPs(const trace::CollectiveParams& c, const net::Topology& topology,
                             const CalibParams& params) {
  ASSIGN_OR_RETURN(coll::CollectiveRequest request, CollectiveRequestOf(c, params));
  net::Router router(topology);
  ASSIGN_OR_RETURN(coll::PlannedCollective plan, coll::PlanCollective(topology, router, request));
  const SimTime ps = coll::CollectiveTimer(router).Time(plan.schedule, plan.rank_gpus).duration_ps;
  // One op of a loop's timelines: at most the longest op a run simulates (time.h).
  if (ps >= kMaxOpDurationPs)
    return InvalidArgumentError("the loop's collective takes past the longest op specsim simulates (1.1 s)");
  return ps;
}

// The injected host costs of a loop's ranks: validate's own draws (injected_host_cost.h), one
// stream per rank, replayed in the order the measurement drew them.
using RankDraws = std::vector<InjectedHostCost>;

RankDraws DrawsOf(const trace::HostCost& cost, int ranks) {
  RankDraws d;
  for (int r = 0; r < ranks; ++r) d.emplace_back(cost, r);
  return d;
}

// The injected host cost of a loop before an op: a host work step (nothing for NONE). With
// `draws`, an EXPONENTIAL cost is rank `draw_rank`'s next draw; without, a draw of the timeline's
// own (Exp(mean)).
void AppendInjectedCost(const trace::HostCost& cost, int rank, double extra_us, TimelineProgram* p,
                        RankDraws* draws = nullptr, int draw_rank = 0) {
  double fixed_us = extra_us, exp_us = 0;
  if (cost.distribution() == trace::HostCost::FIXED) fixed_us += cost.mean_us();
  if (cost.distribution() == trace::HostCost::EXPONENTIAL) {
    if (draws)
      fixed_us += (*draws)[draw_rank].NextUs();
    else
      exp_us = cost.mean_us();
  }
  if (fixed_us <= 0 && exp_us <= 0) return;
  TimelineStep w;
  w.kind = TimelineStep::Kind::kHostWork;
  w.host_ps = PicosFromMicros(fixed_us);
  w.host_exp_mean_us = exp_us;
  w.rank = rank;
  p->steps.push_back(w);
}

Status CheckHostCost(const trace::HostCost& c) {
  switch (c.distribution()) {
    case trace::HostCost::DISTRIBUTION_UNSPECIFIED:
    case trace::HostCost::NONE:
    case trace::HostCost::FIXED:
    case trace::HostCost::EXPONENTIAL: break;
    default:
      return InvalidArgumentError("host cost distribution " + trace::HostCost::Distribution_Name(c.distribution()) +
                                  " is not modelled");
  }
  if (!(c.mean_us() >= 0) || !std::isfinite(c.mean_us())) return InvalidArgumentError("host cost mean_us must be >= 0");
  return OkStatus();
}

}  // namespace

namespace {

// A layer loop's ranks and layers, its allreduce's GPUs, its injected host cost and its capture
// mode (graph or eager), in that order.
Status CheckLayerLoop(const trace::LayerLoopParams& l, int ranks, const net::Topology& topology) {
  if (ranks < 1 || l.layers() < 1) return InvalidArgumentError("layer loop without ranks or layers");
  if (l.allreduce_bytes() > 0)
    for (int g : l.collective().gpus())
      if (g < 0 || g >= topology.num_gpus())
        return InvalidArgumentError("GPU " + std::to_string(g) + " is not in the hardware config");
  RETURN_IF_ERROR(CheckHostCost(l.host_cost()));
  if (l.capture() != "graph" && l.capture() != "eager")
    return InvalidArgumentError("layer loop capture '" + l.capture() + "' is not known (graph, eager)");
  return OkStatus();
}

// The layer's GEMM: bf16 (m x k) by (k x n), weights, activations and output moved once.
compute::Kernel LayerLoopGemm(const trace::LayerLoopParams& l) {
  return GemmKernel16(l.gemm_m(), l.gemm_n(), l.gemm_k());
}

// What one layer of the loop runs and how it is launched.
struct LayerLoopOps {
  int ranks = 1;
  bool graph = false;      // captured in one graph; else every op issued by its rank's host
  bool allreduce = false;  // an allreduce after the GEMM
  SimTime gemm_ps = 0;
  SimTime transfer_ps = 0;  // the allreduce's transfer
};

// The injected cost before an eager op, on every rank's host (rank -1: a loop of one rank).
void AppendInjectedCostOnEveryRank(const trace::HostCost& cost, int ranks, TimelineProgram* p, RankDraws* draws) {
  for (int r = 0; r < ranks; ++r) AppendInjectedCost(cost, ranks > 1 ? r : -1, 0, p, draws, r);
}

TimelineStep LoopOp(TimelineStep::Kind kind, bool graph, HostOpClass host_class) {
  TimelineStep op;
  op.kind = kind;
  op.graph = graph;
  op.host_class = host_class;
  return op;
}

// One layer: the GEMM, the slow rank's spin kernel, the allreduce (each that the loop has), each
// eager op after its injected host cost.
void AppendLayer(const trace::LayerLoopParams& l, const LayerLoopOps& ops, TimelineProgram* p, RankDraws* draws) {
  const int slow = l.slow_rank();
  if (l.gemm()) {
    if (!ops.graph) AppendInjectedCostOnEveryRank(l.host_cost(), ops.ranks, p, draws);
    TimelineStep k = LoopOp(TimelineStep::Kind::kKernel, ops.graph, HostOpClass::kLibrary);
    k.device_ps = ops.gemm_ps;
    p->steps.push_back(k);
  }
  if (slow >= 0) {
    if (!ops.graph) AppendInjectedCost(l.host_cost(), slow, 0, p, draws, slow);
    TimelineStep spin = LoopOp(TimelineStep::Kind::kKernel, ops.graph, HostOpClass::kKernel);
    spin.device_ps = PicosFromMicros(l.slow_rank_extra_us());
    spin.rank = slow;
    p->steps.push_back(spin);
  }
  if (ops.allreduce) {
    if (!ops.graph) AppendInjectedCostOnEveryRank(l.host_cost(), ops.ranks, p, draws);
    TimelineStep c = LoopOp(TimelineStep::Kind::kCollective, ops.graph, HostOpClass::kCollective);
    c.transfer_ps = ops.transfer_ps;
    p->steps.push_back(c);
  }
}

// One iteration: the graph launch (graph), the layers, then the host waits for its GPU.
TimelineProgram LayerLoopProgram(const trace::LayerLoopParams& l, const LayerLoopOps& ops, RankDraws* draws) {
  TimelineProgram p;
  p.phases = {"loop"};
  if (ops.graph) {
    TimelineStep g;
    g.kind = TimelineStep::Kind::kGraphLaunch;
    p.steps.push_back(g);
  }
  for (int layer = 0; layer < l.layers(); ++layer) AppendLayer(l, ops, &p, draws);
  TimelineStep sync;
  sync.kind = TimelineStep::Kind::kHostSync;
  p.steps.push_back(sync);
  return p;
}

// The slowest rank's span from its start to its GPU's last op, us.
double SlowestRankSpanUs(const llm::RunResult& r, int ranks) {
  double slowest = 0;
  for (int rank = 0; rank < ranks; ++rank)
    slowest = std::max(slowest, static_cast<double>(r.gpu_end_ps[rank] - r.start_ps[rank]));
  return slowest * 1e-6;
}

// After a warm-up run, per iteration the slowest rank's span; the median over the iterations.
double MedianSlowestRankSpanUs(const TimelineProgram& p, int ranks, int iterations, RankTimelines* tl) {
  tl->Run(p);  // warm-up
  std::vector<double> per_iteration;
  for (int i = 0; i < iterations; ++i) per_iteration.push_back(SlowestRankSpanUs(tl->Run(p), ranks));
  return MedianOf(per_iteration);
}

}  // namespace

Prediction PredictLayerLoop(const trace::Item& item, const net::Topology& topology, const CalibParams& params) {
  if (!item.has_layer_loop()) return Failed("layer loop item without its parameters");
  const trace::LayerLoopParams& l = item.layer_loop();
  LayerLoopOps ops;
  ops.allreduce = l.allreduce_bytes() > 0;
  ops.ranks = ops.allreduce ? l.collective().nranks() : std::max(1, item.rank_timing_size());
  if (Status s = CheckLayerLoop(l, ops.ranks, topology); !s.ok()) return Failed(s.message());
  ops.graph = l.capture() == "graph";
  const int gpu0 = ops.allreduce && l.collective().gpus_size() > 0 ? l.collective().gpus(0) : 0;
  auto cost = compute::KernelCostModel::Create(topology.gpu_spec(gpu0), params.compute);
  if (!cost.ok()) return Failed(cost.status().message());
  if (l.gemm()) ops.gemm_ps = cost->KernelTime(LayerLoopGemm(l));
  if (ops.allreduce) {
    auto t = TransferPs(l.collective(), topology, params);
    if (!t.ok()) return Failed(t.status().message());
    ops.transfer_ps = *t;
  }
  if (l.slow_rank() >= ops.ranks)
    return Failed("slow rank " + std::to_string(l.slow_rank()) + " of " + std::to_string(ops.ranks) + " ranks");
  // The loop's structure is the same with drawn costs: it is checked once.
  const TimelineProgram p = LayerLoopProgram(l, ops, nullptr);
  if (Status s = llm::ValidateProgram(p, ops.ranks); !s.ok()) return Failed(s.message());
  RankTimelines tl(ops.ranks, llm::HostModelOf(params.host, *cost), llm::GpuVariation{}, kLoopSeed);
  if (ops.graph || l.host_cost().distribution() != trace::HostCost::EXPONENTIAL)
    return Micros(MedianSlowestRankSpanUs(p, ops.ranks, IterationsOf(item), &tl));
  // Exponential injected costs: every iteration the measurement ran, warm-ups included, with the
  // costs it drew; the median over its timed ones.
  RankDraws draws = DrawsOf(l.host_cost(), ops.ranks);
  std::vector<double> per_iteration;
  for (bool timed : LoopIterationsAsRun(item.stats().iterations(), item.stats().warmup(), l.rounds())) {
    const llm::RunResult r = tl.Run(LayerLoopProgram(l, ops, &draws));
    if (timed) per_iteration.push_back(SlowestRankSpanUs(r, ops.ranks));
  }
  return Micros(MedianOf(per_iteration));
}

Prediction PredictSkewLoop(const trace::Item& item, const net::Topology& topology, const CalibParams& params) {
  if (!item.has_skew()) return Failed("skew item without its parameters");
  const trace::SkewParams& k = item.skew();
  const trace::CollectiveParams& c = k.collective();
  const int n = c.nranks();
  if (n < 2) return Failed("a skew loop needs 2 or more ranks");
  for (int g : c.gpus())
    if (g < 0 || g >= topology.num_gpus()) return Failed("GPU " + std::to_string(g) + " is not in the hardware config");
  if (Status s = CheckHostCost(k.host_cost()); !s.ok()) return Failed(s.message());
  if (k.slow_rank() >= n) return Failed("slow rank out of range");
  auto cost = compute::KernelCostModel::Create(topology.gpu_spec(c.gpus_size() > 0 ? c.gpus(0) : 0), params.compute);
  if (!cost.ok()) return Failed(cost.status().message());
  auto transfer = TransferPs(c, topology, params);
  if (!transfer.ok()) return Failed(transfer.status().message());
  const llm::HostModel host = llm::HostModelOf(params.host, *cost);
  // One iteration: each rank's injected cost (with `draws`, validate's own draws), the graph
  // launch, the collective, the sync when the loop syncs.
  auto iteration = [&](RankDraws* draws) {
    TimelineProgram p;
    p.phases = {"iteration"};
    for (int r = 0; r < n; ++r)
      AppendInjectedCost(k.host_cost(), r, r == k.slow_rank() ? k.slow_rank_extra_us() : 0, &p, draws, r);
    TimelineStep launch;
    launch.kind = TimelineStep::Kind::kGraphLaunch;
    p.steps.push_back(launch);
    TimelineStep coll;
    coll.kind = TimelineStep::Kind::kCollective;
    coll.graph = true;
    coll.transfer_ps = *transfer;
    p.steps.push_back(coll);
    if (k.sync_each_iteration()) {
      TimelineStep sync;
      sync.kind = TimelineStep::Kind::kHostSync;
      p.steps.push_back(sync);
    }
    return p;
  };
  if (Status s = llm::ValidateProgram(iteration(nullptr), n); !s.ok()) return Failed(s.message());
  // Stamp to stamp: the first stamp kernel (a kernel floor), a graph gap, the collective (wait +
  // transfer), a graph gap to the second stamp.
  const double stamps_ps = static_cast<double>(2 * host.graph_gap_ps) + params.compute.kernel_floor_ns * 1e3;
  auto stamp_to_stamp_us = [&](const llm::RunResult& r) {
    const double wait = *std::max_element(r.wait_ps.begin(), r.wait_ps.end());
    return (wait + static_cast<double>(*transfer) + stamps_ps) * 1e-6;
  };
  RankTimelines tl(n, host, llm::GpuVariation{}, kLoopSeed);
  std::vector<double> per_iteration;
  if (k.host_cost().distribution() == trace::HostCost::EXPONENTIAL) {
    // Every iteration the measurement ran, warm-ups included, with the costs it drew.
    RankDraws draws = DrawsOf(k.host_cost(), n);
    for (bool timed : LoopIterationsAsRun(item.stats().iterations(), item.stats().warmup(), 1)) {
      const llm::RunResult r = tl.Run(iteration(&draws));
      if (timed) per_iteration.push_back(stamp_to_stamp_us(r));
    }
    return Micros(MedianOf(per_iteration));
  }
  const TimelineProgram p = iteration(nullptr);
  tl.Run(p);
  const int iterations = IterationsOf(item);
  for (int i = 0; i < iterations; ++i) per_iteration.push_back(stamp_to_stamp_us(tl.Run(p)));
  return Micros(MedianOf(per_iteration));
}

Prediction PredictDecodeLoop(const trace::Trace& trace, const trace::Item& item, const net::Topology& topology,
                             const CalibParams& params) {
  if (!item.has_decode()) return Failed("decode item without decode parameters");
  auto setup = DecodeSetupOfItem(trace, item, topology, params);
  if (!setup.ok()) return Failed(setup.status().message());
  setup->pacing_seed = kLoopSeed;  // the same draws for every prediction
  const trace::DecodeParams& d = item.decode();
  auto sim = llm::DecodeSimulator::Create(*setup);
  if (!sim.ok()) return Failed(sim.status().message());
  if (d.gpu_busy_only()) {
    // One target forward's GPU busy time (a profiler's pass): its kernels and collectives.
    if (d.speculative()) return Failed("a profiler pass item is one target forward, not a speculative cycle");
    const int q = std::max(1, d.query_tokens());
    auto t = (*sim)->Pass(q == 1 ? llm::PassKind::kTargetDecode : llm::PassKind::kVerify, q);
    if (!t.ok()) return Failed(t.status().message());
    return Micros(static_cast<double>(t->compute_ps + t->comm_ps) * 1e-6);
  }
  const TransferClass& readback = params.fabric.d2h_pinned;
  // validate's loop (decode_suite.cc Step) as stages: after the forward passes the host issues the
  // token read-back (a D2H copy of 4 bytes per token) and waits for it.
  constexpr int kForward = 0, kHost = 1;
  llm::LoopSpec loop;
  loop.phases = {"forward", "host"};
  auto read_back = [&](double tokens) {
    loop.stages.push_back(
        llm::LoopStage::Copy(PicosFromNanos(readback.TimeNs(4.0 * tokens)), kHost, "read tokens back"));
    loop.stages.push_back(llm::LoopStage::HostSync(kHost, "wait for the read-back"));
  };
  if (!d.speculative()) {
    // Plain step, or a verify-width sweep point: one target forward over batch x q tokens.
    const int q = std::max(1, d.query_tokens());
    loop.stages.push_back(llm::LoopStage::Pass(llm::PassKind::kTargetDecode, q, kForward));
    read_back(static_cast<double>(d.batch()) * q);
  } else {
    // draft steps 2..s, verify of v tokens, read-back, the draft's extend over the v tokens, a sync.
    const int s = d.draft_steps(), v = d.verify_tokens();
    for (int i = 0; i < s - 1; ++i) loop.stages.push_back(llm::LoopStage::Pass(llm::PassKind::kDraftStep, 1, kForward));
    loop.stages.push_back(llm::LoopStage::Pass(llm::PassKind::kVerify, v, kForward));
    read_back(static_cast<double>(d.batch()) * v);
    loop.stages.push_back(llm::LoopStage::Pass(llm::PassKind::kDraftExtend, v, kForward));
    loop.stages.push_back(llm::LoopStage::HostSync(kHost, "end of cycle"));
  }
  auto spans = (*sim)->RunLoop(loop, IterationsOf(item));
  if (!spans.ok()) return Failed(spans.status().message());
  std::vector<double> per_iteration;
  per_iteration.reserve(spans->size());
  for (SimTime ps : *spans) per_iteration.push_back(static_cast<double>(ps) * 1e-6);
  return Micros(MedianOf(per_iteration));
}

StatusOr<std::map<std::string, double>> PredictPassDeviceTimeByClass(const trace::Trace& trace, const trace::Item& item,
                                                                     const net::Topology& topology,
                                                                     const CalibParams& params) {
  if (!item.has_decode() || !item.decode().gpu_busy_only())
    return InvalidArgumentError(item.name() + ": not a profiler pass item (decode.gpu_busy_only)");
  ASSIGN_OR_RETURN(llm::DecodeSetup setup, DecodeSetupOfItem(trace, item, topology, params));
  ASSIGN_OR_RETURN(auto sim, llm::DecodeSimulator::Create(setup));
  const int q = std::max(1, item.decode().query_tokens());
  const llm::PassKind kind = q == 1 ? llm::PassKind::kTargetDecode : llm::PassKind::kVerify;
  ASSIGN_OR_RETURN(const auto ns, sim->PassDeviceTimeByClass(kind, q));
  std::map<std::string, double> us;
  for (const auto& [c, v] : ns) us[c] = v * 1e-3;
  return us;
}

}  // namespace specsim::calib
