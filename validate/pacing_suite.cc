// pacing: how host pacing and one slower rank shape multi-rank collectives (2+ GPUs; with one GPU
// only the GEMM-only balanced layer loops run, with a note). Every rank has its own host thread, stream and NCCL
// communicator (ncclCommInitAll over the GPUs used); the host costs are seeded busy-waits
// (validate/pacing.h), and the host waits for the GPU by spinning (SpinWaitEvent), as
// cudaStreamSynchronize does, so that no sleep granularity adds jitter of its own.
//
//   skew:   KIND_COLLECTIVE_SKEW. Per rank a CUDA graph captured once: [stamp kernel, ncclAllReduce,
//           stamp kernel]. The stamp kernel writes %globaltimer; it cannot take the iteration as an
//           argument (a graph's kernel arguments are fixed), so it keeps a counter on the GPU: the
//           first stamp writes slot 2c, the second slot 2c+1 and then sets the counter to c+1
//           (LaunchStampKernel). The counter is reset after the warm-up, so replay i of the timed
//           loop writes slots 2i and 2i+1. Per iteration each rank's host thread busy-waits its host
//           cost (plus slow_rank_extra_us on slow_rank), launches the graph and, when
//           sync_each_iteration, waits for its stream. Without the sync at most kMaxInFlight graphs
//           are queued ahead (the host waits for the graph launched kMaxInFlight iterations before):
//           the GPU still runs them back to back, and a hung collective is caught by a timeout
//           instead of blocking a launch forever. Per iteration and rank: duration = last stamp -
//           first stamp (ns on that GPU's own clock), wait = duration - the shortest duration of
//           that iteration (ComputeSkew). The item's time per iteration is the longest duration.
//   layers: KIND_LAYER_LOOP. 32 layers, each a cuBLAS bf16 GEMM [m x 4096] x [4096 x 4096] with its
//           own weights (32 x 32 MiB per GPU, far more than the L2: they stream from HBM as in
//           decode) followed by an NCCL allreduce of m x 4096 bf16 in place on the GEMM's output;
//           m = 1 and 32. Components: both, GEMM only, allreduce only. Captured as one graph per
//           loop, or eager with a host cost before every op; balanced, or rank n-1 running a 20 us
//           spin kernel after every GEMM (where the GEMM would be, allreduce only). Per rank events
//           around the loop, the host waiting for the GPU after every iteration; the item's time per
//           iteration is the slowest rank's. The loops are timed in interleaved rounds
//           (--pacing-rounds, default 4; pacing.h PlanRounds): every graph is captured first, then
//           each round times every loop for its share of the iterations (5 warm-up in the first
//           round, 2 in later ones), in order in even rounds and in reverse in odd ones, on newly
//           started rank threads. Eager loops are host-bound, and the host's issue speed drifts and
//           depends on where the OS put the threads (the 2x H200's runs: the same loop 13.6% apart
//           from run to run); rounds make both fall on every loop alike instead of on one.
#include <algorithm>
#include <cstring>

#include "validate/gemm.h"
#include "validate/kernels.h"
#include "validate/pacing.h"
#include "validate/suite.h"
#include "validate/sweep.h"

namespace specsim::validate {
namespace {

constexpr const char* kSuite = "pacing";
constexpr int kLayers = 32;
constexpr int64_t kHidden = 4096;          // GEMM n = k, and the allreduce's row width
constexpr int64_t kMaxTokens = 32;         // GEMM m of the larger loop
constexpr int kMaxInFlight = 16;           // graphs queued ahead of the GPU without sync
constexpr double kSlowGpuExtraUs = 20.0;   // layer loops: the slow rank's spin per GEMM
constexpr double kSlowHostExtraUs = 30.0;  // skew: the slow rank's extra host delay per iteration
constexpr int64_t kSkewSizes[] = {64 << 10, 1 << 20};

struct PacingRank {
  int rank = 0;
  int device = 0;
  Stream stream;
  CublasHandle blas;
  DeviceBuffer send, recv;            // skew: out-of-place allreduce, up to 1 MiB
  DeviceBuffer stamps;                // skew: 2 x capacity uint64 (globaltimer ns)
  DeviceBuffer counter;               // skew: the stamp kernel's replay counter
  std::vector<DeviceBuffer> weights;  // layers: kLayers x [4096][4096] bf16
  DeviceBuffer x, y;                  // layers: [kMaxTokens][4096] GEMM input and output
  Event start, end, fence;            // per-iteration events
  std::vector<Event> in_flight;       // skew without sync: kMaxInFlight ring
};

void FillCollective(const Context& ctx, int64_t bytes, bool graph, bool in_place, int ops_per_graph,
                    trace::CollectiveParams* p) {
  p->set_op(trace::ALLREDUCE);
  p->set_implementation(trace::IMPL_NCCL);
  p->set_transport(trace::TRANSPORT_NCCL);
  p->set_bytes(bytes);
  p->set_count(bytes / 2);
  p->set_dtype(trace::DTYPE_BF16);
  p->set_nranks(ctx.n());
  for (int d : ctx.devices) p->add_gpus(d);
  p->set_cuda_graph(graph);
  p->set_in_place(in_place);
  p->set_ops_per_graph(graph ? ops_per_graph : 0);
  FillNcclEnv(p);
}

// Warm-up and timed iterations of the pacing loops: --warmup / --iters when given, else the
// defaults (--quick shortens only the timed loop).
TimingConfig PacingTiming(const Context& ctx, int warmup, int iters, int quick_iters) {
  TimingConfig c;
  c.warmup = ctx.opt.warmup >= 0 ? ctx.opt.warmup : warmup;
  c.iters = ctx.opt.iterations > 0 ? ctx.opt.iterations : (ctx.opt.quick ? quick_iters : iters);
  c.timeout_s = ctx.opt.collective_timeout_s;
  return c;
}

// One eager allreduce of `count` bf16 elements on every rank, waited for. NCCL (2.28, runtime
// connect) sets up a communicator's peer connections at the first collective that needs them, and
// that set-up is not allowed while a stream is being captured ("operation not permitted when stream
// is capturing"): every size a graph will hold runs once eagerly first.
Status WarmNcclAllReduce(Context& ctx, std::vector<PacingRank>& ranks, NcclComms& comms, int64_t count,
                         bool layer_buffers) {
  return ParallelFor(ctx.n(), ctx.rank_cpus, [&](int r) -> Status {
    PacingRank& pr = ranks[r];
    CUDA_RETURN_IF_ERROR(cudaSetDevice(pr.device));
    cudaStream_t s = pr.stream.get();
    void* send = layer_buffers ? pr.y.data() : pr.send.data();
    void* recv = layer_buffers ? pr.y.data() : pr.recv.data();
    NCCL_RETURN_IF_ERROR(ncclAllReduce(send, recv, count, ncclBfloat16, ncclSum, comms.get(r), s));
    return SyncStream(pr.device, s, ctx.opt.collective_timeout_s, "NCCL warm-up before capture");
  });
}

// ---- skew ----

struct SkewCase {
  trace::HostCost cost;
  int slow_rank = -1;
  bool sync = true;
};

std::string SkewName(const Context& ctx, int64_t bytes, const SkewCase& c) {
  return "pacing/skew/allreduce/n" + std::to_string(ctx.n()) + "/" + SizeLabel(bytes) + "/" + HostCostLabel(c.cost) +
         (c.slow_rank >= 0 ? "/slow" + std::to_string(c.slow_rank) : "") + (c.sync ? "/sync" : "/nosync");
}

// Runs body(rank, its PacingRank with its device current, the barrier the ranks share, its
// per-iteration durations to fill) on every rank's thread; returns the durations per rank.
using RankBody = std::function<Status(int, PacingRank&, TimedBarrier&, std::vector<double>*)>;
StatusOr<std::vector<std::vector<double>>> RunRanks(Context& ctx, std::vector<PacingRank>& ranks,
                                                    const RankBody& body) {
  std::vector<std::vector<double>> dur(ctx.n());
  TimedBarrier barrier(ctx.n());
  RETURN_IF_ERROR(ParallelForWithBarrier(ctx.n(), &barrier, ctx.rank_cpus, [&](int r) -> Status {
    CUDA_RETURN_IF_ERROR(cudaSetDevice(ranks[r].device));
    return body(r, ranks[r], barrier, &dur[r]);
  }));
  return dur;
}

Status RunSkew(Context& ctx, std::vector<PacingRank>& ranks, const std::vector<GraphExec>& graphs, int64_t bytes,
               const SkewCase& c, const TimingConfig& cfg) {
  const int n = ctx.n();
  auto timed = RunRanks(ctx, ranks, [&](int r, PacingRank& pr, TimedBarrier& barrier, std::vector<double>* dur) {
    cudaStream_t s = pr.stream.get();
    HostCostSampler cost(c.cost, r);
    const double extra_us = r == c.slow_rank ? kSlowHostExtraUs : 0.0;
    const std::string what = "skew allreduce " + SizeLabel(bytes);
    auto loop = [&](int count) -> Status {
      for (int i = 0; i < count; ++i) {
        SpinForUs(cost.NextUs() + extra_us);
        if (!c.sync && i >= kMaxInFlight)
          RETURN_IF_ERROR(SpinWaitEvent(pr.in_flight[i % kMaxInFlight].get(), cfg.timeout_s, what));
        RETURN_IF_ERROR(graphs[r].Launch(s));
        if (c.sync) {
          CUDA_RETURN_IF_ERROR(cudaEventRecord(pr.fence.get(), s));
          RETURN_IF_ERROR(SpinWaitEvent(pr.fence.get(), cfg.timeout_s, what));
        } else {
          CUDA_RETURN_IF_ERROR(cudaEventRecord(pr.in_flight[i % kMaxInFlight].get(), s));
        }
      }
      CUDA_RETURN_IF_ERROR(cudaEventRecord(pr.fence.get(), s));
      return SpinWaitEvent(pr.fence.get(), cfg.timeout_s + 0.001 * count, what);
    };
    RETURN_IF_ERROR(loop(cfg.warmup).Annotate("warm-up"));
    // Keep only the timed replays' stamps: restart the counter, then start the ranks together.
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(pr.counter.data(), 0, sizeof(unsigned int), s));
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(pr.stamps.data(), 0, pr.stamps.bytes(), s));
    RETURN_IF_ERROR(SyncStream(pr.device, s, cfg.timeout_s, "stamp reset"));
    RETURN_IF_ERROR(barrier.ArriveAndWait(cfg.timeout_s));
    RETURN_IF_ERROR(loop(cfg.iters));
    unsigned int replays = 0;
    std::vector<uint64_t> stamps(2 * static_cast<size_t>(cfg.iters));
    CUDA_RETURN_IF_ERROR(cudaMemcpy(&replays, pr.counter.data(), sizeof(replays), cudaMemcpyDeviceToHost));
    CUDA_RETURN_IF_ERROR(
        cudaMemcpy(stamps.data(), pr.stamps.data(), stamps.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    if (replays != static_cast<unsigned int>(cfg.iters))
      return Internal("stamp counter at " + std::to_string(replays) + " after " + std::to_string(cfg.iters) +
                      " replays");
    for (int i = 0; i < cfg.iters; ++i) {
      const uint64_t a = stamps[2 * i], b = stamps[2 * i + 1];
      if (a == 0 || b < a) return Internal("missing or reversed globaltimer stamps at replay " + std::to_string(i));
      dur->push_back(static_cast<double>(b - a) * 1e-3);
    }
    return Status::Ok();
  });
  if (!timed.ok()) return timed.status();
  const std::vector<std::vector<double>>& dur = *timed;
  const SkewTimings st = ComputeSkew(dur);
  auto* it = ctx.NewItem(trace::SUITE_PACING, trace::KIND_COLLECTIVE_SKEW, SkewName(ctx, bytes, c));
  auto* p = it->mutable_skew();
  FillCollective(ctx, bytes, /*graph=*/true, /*in_place=*/false, 1, p->mutable_collective());
  *p->mutable_host_cost() = c.cost;
  p->set_slow_rank(c.slow_rank);
  p->set_slow_rank_extra_us(c.slow_rank >= 0 ? kSlowHostExtraUs : 0.0);
  p->set_sync_each_iteration(c.sync);
  for (int r = 0; r < n; ++r) {
    auto* rt = it->add_rank_timing();
    rt->set_rank(r);
    rt->set_gpu(ctx.devices[r]);
    double wait_sum = 0;
    for (int i = 0; i < cfg.iters; ++i) {
      rt->add_duration_us(static_cast<float>(dur[r][i]));
      rt->add_wait_us(static_cast<float>(st.wait_us[r][i]));
      wait_sum += st.wait_us[r][i];
    }
    rt->set_duration_median_us(Percentile(dur[r], 50));
    rt->set_wait_mean_us(cfg.iters > 0 ? wait_sum / cfg.iters : 0.0);
  }
  FillStats(st.max_duration_us, cfg, "gpu_globaltimer", it);
  return Status::Ok();
}

Status SkewItems(Context& ctx, std::vector<PacingRank>& ranks, NcclComms& comms) {
  const int n = ctx.n();
  const TimingConfig cfg = PacingTiming(ctx, 20, 200, 50);
  const uint64_t seed = ctx.opt.seed;
  std::vector<SkewCase> cases{
      {MakeHostCost(trace::HostCost::NONE, 0, seed), -1, true},
      {MakeHostCost(trace::HostCost::EXPONENTIAL, 10, seed), -1, true},
      {MakeHostCost(trace::HostCost::EXPONENTIAL, 50, seed), -1, true},
      {MakeHostCost(trace::HostCost::FIXED, 20, seed), -1, true},
      {MakeHostCost(trace::HostCost::NONE, 0, seed), n - 1, true},
      {MakeHostCost(trace::HostCost::NONE, 0, seed), -1, false},
  };
  for (int64_t bytes : kSkewSizes) {
    if (bytes > ctx.opt.max_bytes) continue;
    const int64_t count = bytes / 2;
    RETURN_IF_ERROR(WarmNcclAllReduce(ctx, ranks, comms, count, /*layer_buffers=*/false));
    std::vector<GraphExec> graphs(n);
    RETURN_IF_ERROR(ParallelFor(n, ctx.rank_cpus, [&](int r) -> Status {
      PacingRank& pr = ranks[r];
      ASSIGN_OR_RETURN(graphs[r], GraphExec::Capture(pr.device, pr.stream.get(), [&]() -> Status {
                         auto* stamps = pr.stamps.as<uint64_t>();
                         auto* counter = pr.counter.as<unsigned int>();
                         cudaStream_t s = pr.stream.get();
                         CUDA_RETURN_IF_ERROR(LaunchStampKernel(stamps, counter, 0, cfg.iters, s));
                         NCCL_RETURN_IF_ERROR(ncclAllReduce(pr.send.data(), pr.recv.data(), count, ncclBfloat16,
                                                            ncclSum, comms.get(r), s));
                         CUDA_RETURN_IF_ERROR(LaunchStampKernel(stamps, counter, 1, cfg.iters, s));
                         return Status::Ok();
                       }));
      return Status::Ok();
    }));
    for (const SkewCase& c : cases)
      RETURN_IF_ERROR(RunSkew(ctx, ranks, graphs, bytes, c, cfg).Annotate(SkewName(ctx, bytes, c)));
  }
  return Status::Ok();
}

// ---- layer loops ----

struct LoopCase {
  int64_t m = 1;
  bool gemm = true;
  bool allreduce = true;
  bool graph = false;
  trace::HostCost cost;  // eager only
  int slow_rank = -1;
};

const char* Component(const LoopCase& c) { return c.gemm && c.allreduce ? "both" : c.gemm ? "gemm" : "allreduce"; }

std::string LoopName(const Context& ctx, const LoopCase& c) {
  return "pacing/layers/n" + std::to_string(ctx.n()) + "/m" + std::to_string(c.m) + "/" + Component(c) +
         (c.graph ? "/graph/" : "/eager/") + HostCostLabel(c.cost) + "/" +
         (c.slow_rank >= 0 ? "slow" + std::to_string(c.slow_rank) : "balanced");
}

// Enqueues one loop of kLayers layers on rank r's stream. `cost` (eager only; nullptr in a graph
// capture) is waited before every op.
Status EnqueueLayers(PacingRank& pr, ncclComm_t comm, const LoopCase& c, HostCostSampler* cost) {
  cudaStream_t s = pr.stream.get();
  const bool slow = pr.rank == c.slow_rank;
  const uint64_t spin_ns = static_cast<uint64_t>(kSlowGpuExtraUs * 1e3);
  for (int l = 0; l < kLayers; ++l) {
    if (c.gemm) {
      if (cost) SpinForUs(cost->NextUs());
      RETURN_IF_ERROR(GemmBf16(pr.blas.get(), pr.x.data(), pr.weights[l].data(), pr.y.data(), c.m, kHidden, kHidden));
    }
    if (slow) {
      if (cost) SpinForUs(cost->NextUs());
      CUDA_RETURN_IF_ERROR(LaunchSpinKernel(spin_ns, s));
    }
    if (c.allreduce) {
      if (cost) SpinForUs(cost->NextUs());
      NCCL_RETURN_IF_ERROR(ncclAllReduce(pr.y.data(), pr.y.data(), c.m * kHidden, ncclBfloat16, ncclSum, comm, s));
    }
  }
  return Status::Ok();
}

// One case of the loops with what it has gathered over the rounds: its graphs (an index into the
// captured sets), each rank's host-cost draws (continued from round to round, as one long run
// would draw them) and each rank's timed iteration durations, in the order taken.
struct LoopRun {
  LoopCase c;
  size_t graphs = 0;
  std::vector<HostCostSampler> costs;
  std::vector<std::vector<double>> dur;
};

// One round's block of `run`: `warmup` untimed then `iters` timed iterations on every rank's
// (newly started) thread, the host waiting for the GPU after every iteration.
Status TimeLoopBlock(Context& ctx, std::vector<PacingRank>& ranks, NcclComms& comms,
                     const std::vector<GraphExec>& graphs, LoopRun& run, int warmup, int iters, double timeout_s) {
  const LoopCase& c = run.c;
  auto timed = RunRanks(ctx, ranks, [&](int r, PacingRank& pr, TimedBarrier& barrier, std::vector<double>* dur) {
    cudaStream_t s = pr.stream.get();
    const std::string what = "layer loop";
    for (int i = 0; i < warmup + iters; ++i) {
      if (i == warmup) RETURN_IF_ERROR(barrier.ArriveAndWait(timeout_s));
      CUDA_RETURN_IF_ERROR(cudaEventRecord(pr.start.get(), s));
      if (c.graph)
        RETURN_IF_ERROR(graphs[r].Launch(s));
      else
        RETURN_IF_ERROR(EnqueueLayers(pr, comms.get(r), c, &run.costs[r]));
      CUDA_RETURN_IF_ERROR(cudaEventRecord(pr.end.get(), s));
      RETURN_IF_ERROR(SpinWaitEvent(pr.end.get(), timeout_s, what));
      if (i < warmup) continue;
      float ms = 0;
      CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, pr.start.get(), pr.end.get()));
      dur->push_back(ms * 1000.0);
    }
    return Status::Ok();
  });
  if (!timed.ok()) return timed.status();
  for (int r = 0; r < ctx.n(); ++r) run.dur[r].insert(run.dur[r].end(), (*timed)[r].begin(), (*timed)[r].end());
  return Status::Ok();
}

// The item of a case after its last round: per iteration the slowest rank's duration.
void WriteLoopItem(Context& ctx, const LoopRun& run, const TimingConfig& cfg, int rounds) {
  const LoopCase& c = run.c;
  const int n = ctx.n();
  const std::vector<std::vector<double>>& dur = run.dur;
  std::vector<double> slowest(dur[0].size(), 0.0);
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < slowest.size(); ++i) slowest[i] = std::max(slowest[i], dur[r][i]);
  auto* it = ctx.NewItem(trace::SUITE_PACING, trace::KIND_LAYER_LOOP, LoopName(ctx, c));
  auto* p = it->mutable_layer_loop();
  p->set_layers(kLayers);
  p->set_gemm(c.gemm);
  if (c.gemm) {
    p->set_gemm_m(c.m);
    p->set_gemm_n(kHidden);
    p->set_gemm_k(kHidden);
  }
  const int64_t ar_bytes = c.allreduce ? c.m * kHidden * 2 : 0;
  p->set_allreduce_bytes(ar_bytes);
  p->set_capture(c.graph ? "graph" : "eager");
  *p->mutable_host_cost() = c.cost;
  p->set_slow_rank(c.slow_rank);
  p->set_slow_rank_extra_us(c.slow_rank >= 0 ? kSlowGpuExtraUs : 0.0);
  if (c.allreduce) FillCollective(ctx, ar_bytes, c.graph, /*in_place=*/true, kLayers, p->mutable_collective());
  p->set_rounds(rounds);
  for (int r = 0; r < n; ++r) {
    auto* rt = it->add_rank_timing();
    rt->set_rank(r);
    rt->set_gpu(ctx.devices[r]);
    for (double d : dur[r]) rt->add_duration_us(static_cast<float>(d));
    rt->set_duration_median_us(Percentile(dur[r], 50));
  }
  FillStats(slowest, cfg, "cuda_events", it);
}

// Every case's graphs are captured first; then the cases are timed in interleaved rounds
// (pacing.h PlanRounds, RoundOrder), and each case's item holds all its rounds' iterations.
Status LoopItems(Context& ctx, std::vector<PacingRank>& ranks, NcclComms& comms) {
  const int n = ctx.n();
  const TimingConfig cfg = PacingTiming(ctx, 5, 60, 12);
  const RoundPlan plan = PlanRounds(cfg.iters, cfg.warmup, ctx.opt.pacing_rounds);
  const uint64_t seed = ctx.opt.seed;
  const trace::HostCost none = MakeHostCost(trace::HostCost::NONE, 0, seed);
  struct Pacing {
    bool graph;
    trace::HostCost cost;
  };
  const std::vector<Pacing> pacings{{true, none},
                                    {false, none},
                                    {false, MakeHostCost(trace::HostCost::FIXED, 10, seed)},
                                    {false, MakeHostCost(trace::HostCost::EXPONENTIAL, 10, seed)}};
  std::vector<std::vector<GraphExec>> graph_sets;
  std::vector<LoopRun> runs;
  for (int64_t m : {int64_t{1}, kMaxTokens}) {
    for (auto [gemm, allreduce] : {std::pair{true, true}, std::pair{true, false}, std::pair{false, true}}) {
      for (int slow_rank : {-1, n - 1}) {
        if (n < 2 && (allreduce || slow_rank >= 0)) continue;  // two ranks needed
        LoopCase base;
        base.m = m;
        base.gemm = gemm;
        base.allreduce = allreduce;
        base.slow_rank = slow_rank;
        base.cost = none;
        // The graph of this loop, captured once per rank (NCCL connected eagerly first).
        if (allreduce) RETURN_IF_ERROR(WarmNcclAllReduce(ctx, ranks, comms, m * kHidden, /*layer_buffers=*/true));
        std::vector<GraphExec> graphs(n);
        RETURN_IF_ERROR(ParallelFor(n, ctx.rank_cpus, [&](int r) -> Status {
          PacingRank& pr = ranks[r];
          ASSIGN_OR_RETURN(graphs[r], GraphExec::Capture(pr.device, pr.stream.get(), [&] {
                             return EnqueueLayers(pr, comms.get(r), base, nullptr);
                           }));
          return Status::Ok();
        }));
        graph_sets.push_back(std::move(graphs));
        for (const Pacing& pc : pacings) {
          LoopRun run;
          run.c = base;
          run.c.graph = pc.graph;
          run.c.cost = pc.cost;
          run.graphs = graph_sets.size() - 1;
          for (int r = 0; r < n; ++r) run.costs.emplace_back(pc.cost, r);
          run.dur.resize(n);
          runs.push_back(std::move(run));
        }
      }
    }
  }
  for (int round = 0; round < plan.rounds; ++round) {
    for (int i : RoundOrder(static_cast<int>(runs.size()), round)) {
      LoopRun& run = runs[i];
      const int warmup = round == 0 ? plan.first_warmup : plan.later_warmup;
      RETURN_IF_ERROR(TimeLoopBlock(ctx, ranks, comms, graph_sets[run.graphs], run, warmup, plan.iterations_per_round,
                                    cfg.timeout_s)
                          .Annotate(LoopName(ctx, run.c) + " (round " + std::to_string(round + 1) + " of " +
                                    std::to_string(plan.rounds) + ")"));
    }
  }
  TimingConfig total = cfg;
  total.iters = plan.TotalIterations();
  for (const LoopRun& run : runs) WriteLoopItem(ctx, run, total, plan.rounds);
  return Status::Ok();
}

Status MakeRanks(Context& ctx, std::vector<PacingRank>& ranks, int stamp_capacity) {
  const int n = ctx.n();
  ranks.resize(n);
  return ParallelFor(n, ctx.rank_cpus, [&](int r) -> Status {
    PacingRank& pr = ranks[r];
    pr.rank = r;
    pr.device = ctx.devices[r];
    ASSIGN_OR_RETURN(pr.stream, Stream::Create(pr.device));
    cudaStream_t s = pr.stream.get();
    ASSIGN_OR_RETURN(pr.blas, CublasHandle::Create(pr.device, s));
    const int64_t skew_bytes = *std::max_element(std::begin(kSkewSizes), std::end(kSkewSizes));
    ASSIGN_OR_RETURN(pr.send, DeviceBuffer::Create(pr.device, skew_bytes));
    ASSIGN_OR_RETURN(pr.recv, DeviceBuffer::Create(pr.device, skew_bytes));
    CUDA_RETURN_IF_ERROR(LaunchFillPattern(pr.send.data(), skew_bytes / 2, 0, r, s));
    ASSIGN_OR_RETURN(pr.stamps, DeviceBuffer::Create(pr.device, 2 * int64_t{stamp_capacity} * sizeof(uint64_t)));
    ASSIGN_OR_RETURN(pr.counter, DeviceBuffer::Create(pr.device, sizeof(unsigned int)));
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(pr.counter.data(), 0, sizeof(unsigned int), s));
    const uint64_t seed = ctx.opt.seed * 1000003 + 31 * r;
    for (int l = 0; l < kLayers; ++l) {
      ASSIGN_OR_RETURN(DeviceBuffer w, DeviceBuffer::Create(pr.device, kHidden * kHidden * 2));
      CUDA_RETURN_IF_ERROR(LaunchFillRandom(w.data(), kHidden * kHidden, seed + l, 0.02f, s));
      pr.weights.push_back(std::move(w));
    }
    ASSIGN_OR_RETURN(pr.x, DeviceBuffer::Create(pr.device, kMaxTokens * kHidden * 2));
    ASSIGN_OR_RETURN(pr.y, DeviceBuffer::Create(pr.device, kMaxTokens * kHidden * 2));
    CUDA_RETURN_IF_ERROR(LaunchFillRandom(pr.x.data(), kMaxTokens * kHidden, seed + 1000, 1.0f, s));
    // Allreduce-only loops sum y in place 32 times per loop: zeros stay finite.
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(pr.y.data(), 0, kMaxTokens * kHidden * 2, s));
    ASSIGN_OR_RETURN(pr.start, Event::Create(pr.device));
    ASSIGN_OR_RETURN(pr.end, Event::Create(pr.device));
    ASSIGN_OR_RETURN(pr.fence, Event::Create(pr.device));
    for (int i = 0; i < kMaxInFlight; ++i) {
      ASSIGN_OR_RETURN(Event e, Event::Create(pr.device));
      pr.in_flight.push_back(std::move(e));
    }
    return SyncStream(pr.device, s, 600, "pacing buffers");
  });
}

}  // namespace

Status RunPacingSuite(Context& ctx) {
  const int n = ctx.n();
  if (n < 2)
    ctx.Note(trace::Note::INFO, kSuite,
             "one GPU: the skew items and the layer loops with an allreduce or a slow rank need two ranks and are "
             "skipped; the GEMM-only layer loops run on the one rank");
  auto comms_or = NcclComms::Create(ctx.devices);
  if (!comms_or.ok()) return comms_or.status().Annotate("creating NCCL communicators");
  NcclComms comms = std::move(comms_or).value();
  std::vector<PacingRank> ranks;
  const int capacity = std::max(1, PacingTiming(ctx, 20, 200, 50).iters);
  Status st = MakeRanks(ctx, ranks, capacity).Annotate("pacing buffers");
  if (st.ok() && n >= 2) st = SkewItems(ctx, ranks, comms).Annotate("pacing skew");
  if (st.ok()) st = LoopItems(ctx, ranks, comms).Annotate("pacing layer loops");
  if (st.ok()) return st;
  // Whatever failed, a peer may still be blocked in a collective: abort the communicators before
  // the buffers are freed (cudaFree would wait for that kernel forever).
  comms.Abort();
  if (st.code() == StatusCode::kDeadlineExceeded) {
    ctx.Note(trace::Note::ERROR, kSuite, "a collective hung, communicators aborted: " + st.message());
    return Status::Ok();
  }
  return st;
}

}  // namespace specsim::validate
