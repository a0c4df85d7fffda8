// collectives: NCCL allreduce / all-gather / reduce-scatter over 1 KB..max (nccl-tests conventions:
// time, algbw, busbw, a data check of every size), eager and CUDA-graph captured, under whatever
// NCCL_* variables are set; then our one-shot and two-shot allreduce kernels over peer memory (when
// every pair has P2P access) and over mapped host memory, checked exactly and against NCCL.
// Timing is gated (validate/timing.h): the GPU time of back-to-back ops, each rank's stream fed ahead
// of its GPU, so that the host threads' launch rate and phase stay out of it.
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>

#include "validate/kernels.h"
#include "validate/suite.h"
#include "validate/sweep.h"

namespace specsim::validate {
namespace {

constexpr const char* kSuite = "collectives";

const char* OpName(trace::CollectiveOp op) {
  switch (op) {
    case trace::ALLREDUCE: return "allreduce";
    case trace::ALLGATHER: return "allgather";
    case trace::REDUCESCATTER: return "reducescatter";
    default: return "?";
  }
}

struct RankRig {
  int device = 0;
  Stream stream;
  DeviceBuffer send, recv, ref;
  DeviceBuffer counter;  // unsigned long long mismatches + unsigned max-err bits
};

// Geometry of one collective at nccl-tests "size" bytes: per-rank send/recv element counts.
struct Geometry {
  int64_t send_count = 0, recv_count = 0, bytes = 0;
};
Geometry GeometryFor(trace::CollectiveOp op, int64_t size, int n) {
  Geometry g;
  int64_t elems = size / 2;
  if (op == trace::ALLREDUCE) {
    elems = elems / 8 * 8;  // 16-byte multiples (custom kernels need it; harmless for NCCL)
    g.send_count = g.recv_count = elems;
    g.bytes = elems * 2;
  } else {
    int64_t per = elems / n;
    if (op == trace::ALLGATHER) {
      g.send_count = per;
      g.recv_count = per * n;
    } else {
      g.send_count = per * n;
      g.recv_count = per;
    }
    g.bytes = per * n * 2;
  }
  return g;
}

Status Enqueue(trace::CollectiveOp op, const Geometry& g, ncclComm_t comm, const void* send, void* recv,
               cudaStream_t s) {
  switch (op) {
    case trace::ALLREDUCE:
      NCCL_RETURN_IF_ERROR(ncclAllReduce(send, recv, g.send_count, ncclBfloat16, ncclSum, comm, s));
      break;
    case trace::ALLGATHER: NCCL_RETURN_IF_ERROR(ncclAllGather(send, recv, g.send_count, ncclBfloat16, comm, s)); break;
    case trace::REDUCESCATTER:
      NCCL_RETURN_IF_ERROR(ncclReduceScatter(send, recv, g.recv_count, ncclBfloat16, ncclSum, comm, s));
      break;
    default: return InvalidArgument("bad op");
  }
  return Status::Ok();
}

// Runs the collective once on every rank (all ranks enqueue concurrently) and checks the output.
StatusOr<int64_t> CheckOnce(Context& ctx, std::vector<RankRig>& rigs, NcclComms& comms, trace::CollectiveOp op,
                            const Geometry& g, const std::function<Status(int)>& run) {
  const int n = ctx.n();
  std::vector<unsigned long long> bad(n, 0);
  RETURN_IF_ERROR(ParallelFor(n, ctx.rank_cpus, [&](int r) -> Status {
    RankRig& rr = rigs[r];
    CUDA_RETURN_IF_ERROR(cudaSetDevice(rr.device));
    cudaStream_t s = rr.stream.get();
    // Pattern input; all-gather's element offset is this rank's chunk, reduce-scatter reads the full range.
    CUDA_RETURN_IF_ERROR(LaunchFillPattern(rr.send.data(), g.send_count, 0, r, s));
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(rr.recv.data(), 0xff, g.recv_count * 2, s));
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(rr.counter.data(), 0, 16, s));
    RETURN_IF_ERROR(SyncStream(rr.device, s, ctx.opt.collective_timeout_s, "check setup"));
    RETURN_IF_ERROR(run(r));
    int code = op == trace::ALLREDUCE ? 1 : op == trace::ALLGATHER ? 2 : 3;
    CUDA_RETURN_IF_ERROR(
        LaunchCheckCollective(rr.recv.data(), g.recv_count, code, n, r, rr.counter.as<unsigned long long>(), s));
    RETURN_IF_ERROR(SyncStream(rr.device, s, ctx.opt.collective_timeout_s, std::string(OpName(op)) + " data check"));
    CUDA_RETURN_IF_ERROR(cudaMemcpy(&bad[r], rr.counter.data(), sizeof(bad[r]), cudaMemcpyDeviceToHost));
    return Status::Ok();
  }));
  int64_t total = 0;
  for (auto b : bad) total += static_cast<int64_t>(b);
  return total;
}

// One timed collective: per-iteration times of the slowest rank, and how the gate went.
struct TimedCollective {
  std::vector<double> us;
  bool gated = false;
  int gate_batch = 0;
};

// Times run(r) on every rank, eagerly or (graph) replayed from a CUDA graph each rank captures of it.
StatusOr<TimedCollective> TimeCollective(Context& ctx, std::vector<RankRig>& rigs, const TimingConfig& cfg, bool graph,
                                         const std::function<Status(int)>& run, const std::string& what) {
  const int n = ctx.n();
  std::vector<cudaStream_t> streams;
  for (auto& r : rigs) streams.push_back(r.stream.get());
  std::vector<GraphExec> execs(n);
  if (graph) {
    RETURN_IF_ERROR(ParallelFor(n, ctx.rank_cpus, [&](int r) -> Status {
      ASSIGN_OR_RETURN(execs[r], GraphExec::Capture(rigs[r].device, rigs[r].stream.get(), [&] { return run(r); }));
      return Status::Ok();
    }));
  }
  TimedCollective out;
  ASSIGN_OR_RETURN(out.us, TimeOpOnAll(
                               ctx.devices, streams, cfg,
                               [&](int r) -> Status { return graph ? execs[r].Launch(rigs[r].stream.get()) : run(r); },
                               what, &out.gated, &out.gate_batch));
  return out;
}

// The collective parameters every timed collective item carries, its statistics and bandwidths;
// returns the parameters for the caller's own fields.
trace::CollectiveParams* FillTimedCollective(const Context& ctx, trace::Item* it, trace::CollectiveOp op,
                                             trace::Implementation impl, trace::Transport transport, const Geometry& g,
                                             bool graph, const TimingConfig& cfg, const TimedCollective& t) {
  auto* p = it->mutable_collective();
  p->set_op(op);
  p->set_implementation(impl);
  p->set_transport(transport);
  p->set_bytes(g.bytes);
  p->set_count(g.send_count);
  p->set_dtype(trace::DTYPE_BF16);
  p->set_nranks(ctx.n());
  for (int d : ctx.devices) p->add_gpus(d);
  p->set_cuda_graph(graph);
  p->set_ops_per_graph(graph ? 1 : 0);
  FillStats(t.us, cfg, t.gated ? "cuda_events_gated" : "cuda_events", it);
  it->mutable_stats()->set_gate_batch(t.gate_batch);
  if (cfg.gate_us > 0 && !t.gated)
    ctx.Note(trace::Note::WARNING, kSuite, it->name() + ": no gate held; timed ungated (host launch rate included)");
  it->set_algbw_gbps(GBps(g.bytes, it->stats().median_us()));
  it->set_busbw_gbps(it->algbw_gbps() * BusBwFactor(op, ctx.n()));
  return p;
}

Status NcclSweep(Context& ctx, std::vector<RankRig>& rigs, NcclComms& comms) {
  const int n = ctx.n();
  for (trace::CollectiveOp op : {trace::ALLREDUCE, trace::ALLGATHER, trace::REDUCESCATTER}) {
    for (int64_t size : CollectiveSizes(ctx.opt.max_bytes, ctx.opt.quick)) {
      const Geometry g = GeometryFor(op, size, n);
      if (g.send_count == 0 || g.recv_count == 0) continue;
      auto run = [&](int r) {
        return Enqueue(op, g, comms.get(r), rigs[r].send.data(), rigs[r].recv.data(), rigs[r].stream.get());
      };
      auto bad = CheckOnce(ctx, rigs, comms, op, g, run);
      if (!bad.ok()) return bad.status();
      for (bool graph : {false, true}) {
        TimingConfig cfg = ctx.Timing(5, IterationsFor(g.bytes, 2LL << 30, 10, 50));
        // Graph launches are gated (GPU time, not the host threads' phase). Eager NCCL calls are not:
        // NCCL's enqueue waits for the GPU when the stream is held (measured on the 2x H200 with NCCL
        // 2.28: no gate up to 83 ms held for 50 eager 1 KiB allreduces), so eager is NCCL's own rate.
        if (graph) cfg.gate_us = GateUsFor(cfg.iters);
        ASSIGN_OR_RETURN(
            TimedCollective t,
            TimeCollective(ctx, rigs, cfg, graph, run, std::string("NCCL ") + OpName(op) + " " + SizeLabel(g.bytes)));
        auto* it = ctx.NewItem(trace::SUITE_COLLECTIVES, trace::KIND_COLLECTIVE,
                               std::string("collectives/nccl/") + OpName(op) + (graph ? "/graph/" : "/eager/") + "n" +
                                   std::to_string(n) + "/" + SizeLabel(g.bytes));
        FillNcclEnv(FillTimedCollective(ctx, it, op, trace::IMPL_NCCL, trace::TRANSPORT_NCCL, g, graph, cfg, t));
        auto* c = it->mutable_check();
        c->set_performed(true);
        c->set_mismatches(*bad);
        c->set_passed(*bad == 0);
        c->set_against("exact expected values");
        if (*bad != 0)
          ctx.Note(trace::Note::ERROR, kSuite, it->name() + ": " + std::to_string(*bad) + " wrong elements");
      }
    }
  }
  return Status::Ok();
}

// Custom allreduce state for one transport: exchange buffers and signals of every rank.
struct CustomRig {
  trace::Transport transport = trace::TRANSPORT_UNSPECIFIED;
  std::vector<DeviceBuffer> dev_exchange, dev_signals;
  std::vector<HostBuffer> host_exchange, host_signals;
  std::vector<DeviceBuffer> epochs, errors;
  CustomAllreduceArgs base[kMaxRanks];
};

StatusOr<std::unique_ptr<CustomRig>> MakeCustomRig(Context& ctx, std::vector<RankRig>& rigs, trace::Transport tr,
                                                   int64_t max_count) {
  auto c = std::make_unique<CustomRig>();
  c->transport = tr;
  const int n = ctx.n();
  const int64_t sig_bytes = kMaxRanks * kMaxArBlocks * sizeof(uint32_t);
  void* ex[kMaxRanks] = {};
  uint32_t* sig[kMaxRanks] = {};
  for (int r = 0; r < n; ++r) {
    CUDA_RETURN_IF_ERROR(cudaSetDevice(rigs[r].device));
    if (tr == trace::TRANSPORT_PEER_MEMORY) {
      ASSIGN_OR_RETURN(DeviceBuffer e, DeviceBuffer::Create(rigs[r].device, 2 * max_count * 2));
      ASSIGN_OR_RETURN(DeviceBuffer s, DeviceBuffer::Create(rigs[r].device, sig_bytes));
      CUDA_RETURN_IF_ERROR(cudaMemset(s.data(), 0, sig_bytes));
      ex[r] = e.data();
      sig[r] = s.as<uint32_t>();
      c->dev_exchange.push_back(std::move(e));
      c->dev_signals.push_back(std::move(s));
    } else {
      ASSIGN_OR_RETURN(HostBuffer e, HostBuffer::Create(2 * max_count * 2, HostKind::kMapped));
      ASSIGN_OR_RETURN(HostBuffer s, HostBuffer::Create(sig_bytes, HostKind::kMapped));
      std::memset(s.data(), 0, sig_bytes);
      ex[r] = e.device_ptr();
      sig[r] = static_cast<uint32_t*>(s.device_ptr());
      c->host_exchange.push_back(std::move(e));
      c->host_signals.push_back(std::move(s));
    }
    ASSIGN_OR_RETURN(DeviceBuffer ep, DeviceBuffer::Create(rigs[r].device, kMaxArBlocks * sizeof(uint32_t)));
    ASSIGN_OR_RETURN(DeviceBuffer er, DeviceBuffer::Create(rigs[r].device, sizeof(int)));
    CUDA_RETURN_IF_ERROR(cudaMemset(ep.data(), 0, kMaxArBlocks * sizeof(uint32_t)));
    CUDA_RETURN_IF_ERROR(cudaMemset(er.data(), 0, sizeof(int)));
    c->epochs.push_back(std::move(ep));
    c->errors.push_back(std::move(er));
  }
  for (int r = 0; r < n; ++r) {
    CustomAllreduceArgs& a = c->base[r];
    a.rank = r;
    a.nranks = n;
    for (int p = 0; p < n; ++p) {
      a.exchange[p] = ex[p];
      a.signals[p] = sig[p];
    }
    a.epochs = c->epochs[r].as<uint32_t>();
    a.error = c->errors[r].as<int>();
    a.timeout_ns = static_cast<uint64_t>(ctx.opt.collective_timeout_s * 1e9);
    a.blocks = 36;
    a.threads = 512;
    a.input = rigs[r].send.data();
    a.output = rigs[r].recv.data();
  }
  return c;
}

Status CustomSweep(Context& ctx, std::vector<RankRig>& rigs, NcclComms& comms, CustomRig& cr, int64_t max_bytes) {
  const int n = ctx.n();
  const char* tname = cr.transport == trace::TRANSPORT_PEER_MEMORY ? "p2p" : "host";
  for (trace::Implementation impl : {trace::IMPL_ONE_SHOT, trace::IMPL_TWO_SHOT}) {
    const char* iname = impl == trace::IMPL_ONE_SHOT ? "oneshot" : "twoshot";
    for (int64_t size : CollectiveSizes(max_bytes, ctx.opt.quick)) {
      const Geometry g = GeometryFor(trace::ALLREDUCE, size, n);
      if (g.send_count == 0) continue;
      auto run = [&](int r) -> Status {
        CustomAllreduceArgs a = cr.base[r];
        a.count = g.send_count;
        CUDA_RETURN_IF_ERROR(impl == trace::IMPL_ONE_SHOT ? LaunchOneShotAllreduce(a, rigs[r].stream.get())
                                                          : LaunchTwoShotAllreduce(a, rigs[r].stream.get()));
        return Status::Ok();
      };
      auto check_errors = [&]() -> Status {
        for (int r = 0; r < n; ++r) {
          int err = 0;
          CUDA_RETURN_IF_ERROR(cudaSetDevice(rigs[r].device));
          CUDA_RETURN_IF_ERROR(cudaMemcpy(&err, cr.errors[r].data(), sizeof(int), cudaMemcpyDeviceToHost));
          if (err)
            return DeadlineExceeded(std::string(iname) + " allreduce barrier timed out on rank " + std::to_string(r));
        }
        return Status::Ok();
      };
      // Exact check against the pattern, then the same input through NCCL, compared element-wise.
      auto bad = CheckOnce(ctx, rigs, comms, trace::ALLREDUCE, g, run);
      if (!bad.ok()) return bad.status();
      RETURN_IF_ERROR(check_errors());
      std::vector<unsigned> max_bits(n, 0);
      {
        // NCCL reference into `ref` (all ranks concurrently), then max |custom - nccl|.
        RETURN_IF_ERROR(ParallelFor(n, ctx.rank_cpus, [&](int r) -> Status {
          RankRig& rr = rigs[r];
          CUDA_RETURN_IF_ERROR(cudaSetDevice(rr.device));
          cudaStream_t s = rr.stream.get();
          NCCL_RETURN_IF_ERROR(
              ncclAllReduce(rr.send.data(), rr.ref.data(), g.send_count, ncclBfloat16, ncclSum, comms.get(r), s));
          CUDA_RETURN_IF_ERROR(cudaMemsetAsync(rr.counter.as<char>() + 8, 0, 4, s));
          CUDA_RETURN_IF_ERROR(LaunchMaxAbsDiff(rr.recv.data(), rr.ref.data(), g.send_count,
                                                reinterpret_cast<unsigned*>(rr.counter.as<char>() + 8), s));
          RETURN_IF_ERROR(SyncStream(rr.device, s, ctx.opt.collective_timeout_s, "NCCL reference allreduce"));
          CUDA_RETURN_IF_ERROR(cudaMemcpy(&max_bits[r], rr.counter.as<char>() + 8, 4, cudaMemcpyDeviceToHost));
          return Status::Ok();
        }));
      }
      float max_err = 0;
      for (unsigned b : max_bits) {
        float f;
        std::memcpy(&f, &b, 4);
        max_err = std::max(max_err, f);
      }
      for (bool graph : {false, true}) {
        TimingConfig cfg = ctx.Timing(5, IterationsFor(g.bytes, 1LL << 30, 10, 50));
        cfg.gate_us = GateUsFor(cfg.iters);  // GPU time, not the host threads' phase
        ASSIGN_OR_RETURN(TimedCollective t, TimeCollective(ctx, rigs, cfg, graph, run,
                                                           std::string(iname) + " allreduce " + SizeLabel(g.bytes)));
        RETURN_IF_ERROR(check_errors());
        auto* it =
            ctx.NewItem(trace::SUITE_COLLECTIVES, trace::KIND_CUSTOM_ALLREDUCE,
                        std::string("collectives/custom/") + iname + "/" + tname + (graph ? "/graph/" : "/eager/") +
                            "n" + std::to_string(n) + "/" + SizeLabel(g.bytes));
        auto* p = FillTimedCollective(ctx, it, trace::ALLREDUCE, impl, cr.transport, g, graph, cfg, t);
        p->set_blocks(cr.base[0].blocks);
        p->set_threads_per_block(cr.base[0].threads);
        p->set_custom_barrier(trace::BARRIER_SYSTEM_FENCE);
        auto* c = it->mutable_check();
        c->set_performed(true);
        c->set_mismatches(*bad);
        c->set_max_abs_error(max_err);
        c->set_passed(*bad == 0 && max_err == 0.0f);
        c->set_against("exact expected values and NCCL allreduce");
        if (!c->passed())
          ctx.Note(trace::Note::ERROR, kSuite,
                   it->name() + ": " + std::to_string(*bad) +
                       " wrong elements, max |custom - NCCL| = " + std::to_string(max_err));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status RunCollectivesSuite(Context& ctx) {
  const int n = ctx.n();
  auto comms_or = NcclComms::Create(ctx.devices);
  if (!comms_or.ok()) return comms_or.status().Annotate("creating NCCL communicators");
  NcclComms comms = std::move(comms_or).value();
  const int64_t max_bytes = ctx.opt.max_bytes;
  const int64_t max_elems = max_bytes / 2 + 64;
  std::vector<RankRig> rigs(n);
  for (int r = 0; r < n; ++r) {
    rigs[r].device = ctx.devices[r];
    ASSIGN_OR_RETURN(rigs[r].stream, Stream::Create(rigs[r].device));
    ASSIGN_OR_RETURN(rigs[r].send, DeviceBuffer::Create(rigs[r].device, max_elems * 2));
    ASSIGN_OR_RETURN(rigs[r].recv, DeviceBuffer::Create(rigs[r].device, max_elems * 2));
    ASSIGN_OR_RETURN(rigs[r].ref, DeviceBuffer::Create(rigs[r].device, max_elems * 2));
    ASSIGN_OR_RETURN(rigs[r].counter, DeviceBuffer::Create(rigs[r].device, 16));
  }
  Status st = NcclSweep(ctx, rigs, comms);
  if (st.code() == StatusCode::kDeadlineExceeded) {
    ctx.Note(trace::Note::ERROR, kSuite, "NCCL collective hung, communicators aborted: " + st.message());
    comms.Abort();
    return Status::Ok();
  }
  RETURN_IF_ERROR(st);

  // Custom allreduce: peer memory when every pair has P2P (or one GPU), host-mapped memory always.
  const int64_t custom_max = std::min<int64_t>(max_bytes, ctx.opt.quick ? (16 << 20) : (64 << 20));
  bool all_peer = true;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j && !ctx.CanAccessPeer(i, j)) all_peer = false;
  if (all_peer && n > 1) {
    for (int i = 0; i < n; ++i) {
      CUDA_RETURN_IF_ERROR(cudaSetDevice(ctx.devices[i]));
      for (int j = 0; j < n; ++j) {
        if (i == j) continue;
        cudaError_t e = cudaDeviceEnablePeerAccess(ctx.devices[j], 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled)
          cudaGetLastError();
        else
          CUDA_RETURN_IF_ERROR(e);
      }
    }
  }
  if (!all_peer)
    ctx.Note(trace::Note::WARNING, kSuite, "P2P unavailable between some GPUs: custom allreduce over host memory only");
  std::vector<trace::Transport> transports;
  if (all_peer) transports.push_back(trace::TRANSPORT_PEER_MEMORY);
  transports.push_back(trace::TRANSPORT_HOST_MAPPED);
  for (auto tr : transports) {
    auto cr = MakeCustomRig(ctx, rigs, tr, custom_max / 2 + 64);
    if (!cr.ok()) {
      ctx.Note(trace::Note::WARNING, kSuite, "custom allreduce skipped: " + cr.status().message());
      continue;
    }
    Status cs = CustomSweep(ctx, rigs, comms, **cr, custom_max);
    if (cs.code() == StatusCode::kDeadlineExceeded) {
      ctx.Note(trace::Note::ERROR, kSuite, "custom allreduce hung: " + cs.message());
      return Status::Ok();
    }
    RETURN_IF_ERROR(cs);
  }
  return Status::Ok();
}

}  // namespace specsim::validate
