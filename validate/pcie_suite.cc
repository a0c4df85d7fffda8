// pcie: host<->device copies (pinned and pageable, each direction, both at once, k concurrent
// streams), kernel zero-copy reads and writes of mapped host memory over 1..2*SM blocks, small
// copies under a bulk transfer; with 2+ GPUs host copies of several GPUs started together, and the
// same per GPU pair (copy engine, kernel reads, kernel writes) for a representative pair of every
// path class present, with size sweeps in both directions.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <set>

#include "validate/kernels.h"
#include "validate/pacing.h"
#include "validate/suite.h"
#include "validate/sweep.h"

namespace specsim::validate {
namespace {

constexpr const char* kSuite = "pcie";
constexpr int kThreads = 512;

const char* DirName(trace::Direction d) {
  switch (d) {
    case trace::DIRECTION_H2D: return "h2d";
    case trace::DIRECTION_D2H: return "d2h";
    case trace::DIRECTION_BIDIR: return "bidir";
    case trace::DIRECTION_P2P: return "p2p";
    default: return "?";
  }
}

// Per-GPU resources reused by every measurement on that GPU.
struct GpuRig {
  int device = 0;
  int rank = 0;
  int sm_count = 1;
  std::vector<Stream> streams;     // 8
  std::vector<Event> fork_events;  // 8
  DeviceBuffer dev;                // max_bytes * 8 (concurrent copies use slices)
  DeviceBuffer sink;
  HostBuffer pinned, pageable, mapped;  // pinned: max_bytes * 8
};

StatusOr<GpuRig> MakeRig(const Context& ctx, int rank, int64_t max_bytes) {
  GpuRig r;
  r.rank = rank;
  r.device = ctx.devices[rank];
  r.sm_count = ctx.props[rank].multiProcessorCount;
  for (int i = 0; i < 8; ++i) {
    ASSIGN_OR_RETURN(Stream s, Stream::Create(r.device));
    r.streams.push_back(std::move(s));
    ASSIGN_OR_RETURN(Event e, Event::Create(r.device));
    r.fork_events.push_back(std::move(e));
  }
  ASSIGN_OR_RETURN(r.dev, DeviceBuffer::Create(r.device, max_bytes * 2));
  ASSIGN_OR_RETURN(r.sink, DeviceBuffer::Create(r.device, 4096 * sizeof(uint64_t)));
  ASSIGN_OR_RETURN(r.pinned, HostBuffer::Create(max_bytes * 2, HostKind::kPinned));
  ASSIGN_OR_RETURN(r.pageable, HostBuffer::Create(max_bytes, HostKind::kPageable));
  ASSIGN_OR_RETURN(r.mapped, HostBuffer::Create(max_bytes, HostKind::kMapped));
  std::memset(r.pinned.data(), 1, r.pinned.bytes());
  std::memset(r.pageable.data(), 2, r.pageable.bytes());
  std::memset(r.mapped.data(), 3, r.mapped.bytes());
  CUDA_RETURN_IF_ERROR(cudaMemset(r.dev.data(), 0, r.dev.bytes()));
  return r;
}

// Enqueues `k` copies of `bytes` on streams 1..k after stream 0, joined back into stream 0.
Status ForkJoin(GpuRig& r, int k, const std::function<Status(int i, cudaStream_t s)>& body) {
  cudaStream_t main = r.streams[0].get();
  CUDA_RETURN_IF_ERROR(cudaEventRecord(r.fork_events[0].get(), main));
  for (int i = 0; i < k; ++i) {
    cudaStream_t s = r.streams[i + 1].get();
    CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(s, r.fork_events[0].get(), 0));
    RETURN_IF_ERROR(body(i, s));
    CUDA_RETURN_IF_ERROR(cudaEventRecord(r.fork_events[i + 1].get(), s));
  }
  for (int i = 0; i < k; ++i) CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(main, r.fork_events[i + 1].get(), 0));
  return Status::Ok();
}

trace::TransferParams* Transfer(trace::Item* it, int64_t bytes, trace::Direction dir, trace::HostMemory mem,
                                trace::Mechanism mech, int device) {
  auto* t = it->mutable_transfer();
  t->set_bytes(bytes);
  t->set_direction(dir);
  t->set_host_memory(mem);
  t->set_mechanism(mech);
  t->set_streams(1);
  t->set_gpu(device);
  t->set_total_bytes(bytes);
  return t;
}

Status HostDeviceCopies(Context& ctx, GpuRig& r) {
  const auto sizes = CopySizes(ctx.opt.max_bytes, ctx.opt.quick);
  const std::string g = "gpu" + std::to_string(r.device);
  cudaStream_t s = r.streams[0].get();
  for (bool pinned : {true, false}) {
    for (trace::Direction dir : {trace::DIRECTION_H2D, trace::DIRECTION_D2H}) {
      for (int64_t bytes : sizes) {
        TimingConfig cfg = ctx.Timing(3, IterationsFor(bytes, 1LL << 30, 5, 60));
        const bool h2d = dir == trace::DIRECTION_H2D;
        std::vector<double> us;
        if (pinned) {
          void* host = r.pinned.data();
          auto t = TimeOp(
              r.device, s, cfg,
              [&]() -> Status {
                CUDA_RETURN_IF_ERROR(h2d ? cudaMemcpyAsync(r.dev.data(), host, bytes, cudaMemcpyHostToDevice, s)
                                         : cudaMemcpyAsync(host, r.dev.data(), bytes, cudaMemcpyDeviceToHost, s));
                return Status::Ok();
              },
              "pinned copy");
          if (!t.ok()) return t.status();
          us = *t;
        } else {
          // Pageable copies stage through the driver on the host: time the synchronous call.
          void* host = r.pageable.data();
          auto once = [&]() -> Status {
            CUDA_RETURN_IF_ERROR(h2d ? cudaMemcpy(r.dev.data(), host, bytes, cudaMemcpyHostToDevice)
                                     : cudaMemcpy(host, r.dev.data(), bytes, cudaMemcpyDeviceToHost));
            return Status::Ok();
          };
          for (int i = 0; i < cfg.warmup; ++i) RETURN_IF_ERROR(once());
          for (int i = 0; i < cfg.iters; ++i) {
            auto a = std::chrono::steady_clock::now();
            RETURN_IF_ERROR(once());
            us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
          }
        }
        auto* it = ctx.NewItem(
            trace::SUITE_PCIE, h2d ? trace::KIND_H2D_COPY : trace::KIND_D2H_COPY,
            std::string("pcie/") + DirName(dir) + (pinned ? "/pinned/" : "/pageable/") + g + "/" + SizeLabel(bytes));
        Transfer(it, bytes, dir, pinned ? trace::HOST_PINNED : trace::HOST_PAGEABLE, trace::MECHANISM_COPY_ENGINE,
                 r.device);
        FillStats(us, cfg, pinned ? "cuda_events" : "host_wall_clock", it);
        it->set_gbps(GBps(bytes, it->stats().median_us()));
      }
    }
  }
  // Both directions at once (pinned).
  for (int64_t bytes : sizes) {
    TimingConfig cfg = ctx.Timing(3, IterationsFor(bytes, 1LL << 30, 5, 60));
    auto t = TimeOp(
        r.device, s, cfg,
        [&]() -> Status {
          return ForkJoin(r, 2, [&](int i, cudaStream_t cs) -> Status {
            char* dev = r.dev.as<char>() + i * bytes;
            char* host = static_cast<char*>(r.pinned.data()) + i * bytes;
            CUDA_RETURN_IF_ERROR(i == 0 ? cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, cs)
                                        : cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, cs));
            return Status::Ok();
          });
        },
        "bidirectional copy");
    if (!t.ok()) return t.status();
    auto* it =
        ctx.NewItem(trace::SUITE_PCIE, trace::KIND_BIDIR_COPY, "pcie/bidir/pinned/" + g + "/" + SizeLabel(bytes));
    auto* tp = Transfer(it, bytes, trace::DIRECTION_BIDIR, trace::HOST_PINNED, trace::MECHANISM_COPY_ENGINE, r.device);
    tp->set_streams(2);
    tp->set_total_bytes(2 * bytes);
    FillStats(*t, cfg, "cuda_events", it);
    it->set_gbps(GBps(2.0 * bytes, it->stats().median_us()));
  }
  // k concurrent copies of one direction on k streams.
  std::vector<int64_t> csizes =
      ctx.opt.quick ? std::vector<int64_t>{1 << 20} : std::vector<int64_t>{64 << 10, 1 << 20, 16 << 20};
  for (trace::Direction dir : {trace::DIRECTION_H2D, trace::DIRECTION_D2H}) {
    for (int k : {2, 4, 7}) {
      for (int64_t bytes : csizes) {
        if (bytes * k > 2 * ctx.opt.max_bytes) continue;
        TimingConfig cfg = ctx.Timing(3, IterationsFor(bytes * k, 1LL << 30, 5, 60));
        auto t = TimeOp(
            r.device, s, cfg,
            [&]() -> Status {
              return ForkJoin(r, k, [&](int i, cudaStream_t cs) -> Status {
                char* dev = r.dev.as<char>() + i * bytes;
                char* host = static_cast<char*>(r.pinned.data()) + i * bytes;
                CUDA_RETURN_IF_ERROR(dir == trace::DIRECTION_H2D
                                         ? cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, cs)
                                         : cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, cs));
                return Status::Ok();
              });
            },
            "concurrent copies");
        if (!t.ok()) return t.status();
        auto* it = ctx.NewItem(trace::SUITE_PCIE, trace::KIND_CONCURRENT_COPIES,
                               std::string("pcie/concurrent/") + DirName(dir) + "/x" + std::to_string(k) + "/" + g +
                                   "/" + SizeLabel(bytes));
        auto* tp = Transfer(it, bytes, dir, trace::HOST_PINNED, trace::MECHANISM_COPY_ENGINE, r.device);
        tp->set_streams(k);
        tp->set_total_bytes(k * bytes);
        FillStats(*t, cfg, "cuda_events", it);
        it->set_gbps(GBps(static_cast<double>(k) * bytes, it->stats().median_us()));
      }
    }
  }
  return Status::Ok();
}

Status ZeroCopy(Context& ctx, GpuRig& r) {
  const std::string g = "gpu" + std::to_string(r.device);
  cudaStream_t s = r.streams[0].get();
  const int64_t big = std::min<int64_t>(ctx.opt.max_bytes, ctx.opt.quick ? (16 << 20) : (64 << 20));
  struct Point {
    int64_t bytes;
    int blocks;
  };
  std::vector<Point> pts;
  for (int b : BlockCounts(r.sm_count, ctx.opt.quick)) pts.push_back({big, b});
  for (int64_t small : {int64_t{16}, int64_t{4096}, int64_t{65536}}) pts.push_back({small, 1});
  for (bool write : {false, true}) {
    for (const Point& p : pts) {
      // A single block moves little per microsecond: keep its transfers short.
      int64_t bytes = p.blocks < 8 && p.bytes == big ? std::min<int64_t>(big, 4 << 20) : p.bytes;
      TimingConfig cfg = ctx.Timing(2, IterationsFor(bytes, 512LL << 20, 5, 50));
      auto t = TimeOp(
          r.device, s, cfg,
          [&]() -> Status {
            CUDA_RETURN_IF_ERROR(
                write ? LaunchWriteKernel(r.mapped.device_ptr(), bytes, 7u, p.blocks, kThreads, s)
                      : LaunchReadKernel(r.mapped.device_ptr(), bytes, r.sink.as<uint64_t>(), p.blocks, kThreads, s));
            return Status::Ok();
          },
          "zero-copy kernel");
      if (!t.ok()) return t.status();
      auto* it = ctx.NewItem(trace::SUITE_PCIE, write ? trace::KIND_ZERO_COPY_WRITE : trace::KIND_ZERO_COPY_READ,
                             std::string("pcie/zerocopy/") + (write ? "write/" : "read/") + g + "/b" +
                                 std::to_string(p.blocks) + "/" + SizeLabel(bytes));
      auto* tp = Transfer(it, bytes, write ? trace::DIRECTION_D2H : trace::DIRECTION_H2D, trace::HOST_MAPPED,
                          write ? trace::MECHANISM_KERNEL_WRITE : trace::MECHANISM_KERNEL_READ, r.device);
      tp->set_blocks(p.blocks);
      tp->set_threads_per_block(kThreads);
      tp->set_bytes_per_access(16);
      FillStats(*t, cfg, "cuda_events", it);
      it->set_gbps(GBps(bytes, it->stats().median_us()));
    }
  }
  return Status::Ok();
}

// Small-copy sizes under load: from 4 B, which slips past a running bulk H2D copy, to 256 KiB, which
// queues behind it (first 2-GPU run: 4 B H2D 14.9 us, 64 KiB H2D 4.8 ms): where the switch happens.
constexpr int64_t kUnderLoadSizes[] = {4, 1 << 10, 4 << 10, 16 << 10, 32 << 10, 64 << 10, 256 << 10};

// Small copies on stream 2 while a bulk copy runs on stream 1; the small copies that started before
// the bulk copy ended are kept. Per GPU: 2 load directions x 2 directions x 7 sizes x 3 repetitions
// of the 256 MiB bulk copy (~5 ms each on Gen5 x16): about 0.5 s.
Status LatencyUnderLoad(Context& ctx, GpuRig& r) {
  const std::string g = "gpu" + std::to_string(r.device);
  const int64_t bulk = std::min<int64_t>(ctx.opt.max_bytes, 256LL << 20);
  const int smalls = ctx.opt.quick ? 50 : 200;
  cudaStream_t s1 = r.streams[1].get(), s2 = r.streams[2].get();
  char* dev = r.dev.as<char>();
  char* host = static_cast<char*>(r.pinned.data());
  std::vector<Event> a, b;
  for (int i = 0; i < smalls; ++i) {
    ASSIGN_OR_RETURN(Event x, Event::Create(r.device));
    ASSIGN_OR_RETURN(Event y, Event::Create(r.device));
    a.push_back(std::move(x));
    b.push_back(std::move(y));
  }
  ASSIGN_OR_RETURN(Event bulk_start, Event::Create(r.device));
  ASSIGN_OR_RETURN(Event bulk_end, Event::Create(r.device));
  for (trace::Direction load_dir : {trace::DIRECTION_H2D, trace::DIRECTION_D2H}) {
    for (trace::Direction dir : {trace::DIRECTION_H2D, trace::DIRECTION_D2H}) {
      for (int64_t small : kUnderLoadSizes) {
        // The small copies live past the bulk copy's bytes (tiny --max-bytes: skip what does not fit).
        if (bulk + 4096 + small > r.dev.bytes() || bulk + 4096 + small > r.pinned.bytes()) continue;
        const int reps = ctx.opt.quick ? 1 : 3;
        std::vector<double> us;
        int queued_behind = 0;
        for (int rep = 0; rep < reps; ++rep) {
          CUDA_RETURN_IF_ERROR(cudaEventRecord(bulk_start.get(), s1));
          CUDA_RETURN_IF_ERROR(load_dir == trace::DIRECTION_H2D
                                   ? cudaMemcpyAsync(dev, host, bulk, cudaMemcpyHostToDevice, s1)
                                   : cudaMemcpyAsync(host, dev, bulk, cudaMemcpyDeviceToHost, s1));
          CUDA_RETURN_IF_ERROR(cudaEventRecord(bulk_end.get(), s1));
          CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(s2, bulk_start.get(), 0));
          char* sd = dev + bulk + 4096;
          char* sh = host + bulk + 4096;
          for (int i = 0; i < smalls; ++i) {
            CUDA_RETURN_IF_ERROR(cudaEventRecord(a[i].get(), s2));
            CUDA_RETURN_IF_ERROR(dir == trace::DIRECTION_H2D
                                     ? cudaMemcpyAsync(sd, sh, small, cudaMemcpyHostToDevice, s2)
                                     : cudaMemcpyAsync(sh, sd, small, cudaMemcpyDeviceToHost, s2));
            CUDA_RETURN_IF_ERROR(cudaEventRecord(b[i].get(), s2));
          }
          RETURN_IF_ERROR(SyncStream(r.device, s2, ctx.opt.collective_timeout_s, "latency under load"));
          RETURN_IF_ERROR(SyncStream(r.device, s1, ctx.opt.collective_timeout_s, "bulk copy"));
          float bulk_ms = 0;
          CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&bulk_ms, bulk_start.get(), bulk_end.get()));
          // Keep the small copies issued while the bulk copy ran (one queued behind the bulk copy on
          // the same engine then shows the wait).
          size_t kept = us.size();
          for (int i = 0; i < smalls; ++i) {
            float start_ms = 0, ms = 0;
            CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&start_ms, bulk_start.get(), a[i].get()));
            CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, a[i].get(), b[i].get()));
            if (start_ms < bulk_ms) us.push_back(ms * 1000.0);
          }
          if (us.size() == kept) {
            // Even the first small copy's start was queued behind the bulk copy (same hardware queue):
            // its latency is the time from the bulk copy's start to the small copy's end.
            float ms = 0;
            CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, bulk_start.get(), b[0].get()));
            us.push_back(ms * 1000.0);
            ++queued_behind;
          }
        }
        auto* it = ctx.NewItem(trace::SUITE_PCIE, trace::KIND_LATENCY_UNDER_LOAD,
                               std::string("pcie/latency_under_load/") + DirName(dir) + "/under_" + DirName(load_dir) +
                                   "/" + g + "/" + SizeLabel(small));
        auto* tp = Transfer(it, small, dir, trace::HOST_PINNED, trace::MECHANISM_COPY_ENGINE, r.device);
        tp->set_load_bytes(bulk);
        tp->set_load_direction(load_dir);
        tp->set_streams(2);
        TimingConfig cfg;
        cfg.warmup = 0;
        cfg.iters = static_cast<int>(us.size());
        cfg.timeout_s = 0;
        FillStats(us, cfg, "cuda_events", it);
        it->set_gbps(GBps(small, it->stats().median_us()));
        if (queued_behind > 0)
          ctx.Note(trace::Note::INFO, kSuite,
                   it->name() + ": in " + std::to_string(queued_behind) + " of " + std::to_string(reps) +
                       " repetitions the small copies queued behind the bulk copy "
                       "(one sample each: bulk start to small copy end)");
      }
    }
  }
  return Status::Ok();
}

// KIND_HOST_COPIES_MULTI: pinned host copies on several GPUs and/or in both directions started
// together. Each GPU involved has a host thread; per iteration the threads meet at a barrier, then
// each records its copies (one stream each: stream 1 + its index on that GPU) between their own
// event pairs and waits for them. Per iteration the item takes the longest copy; every copy's own
// median is kept in TransferParams.copies.
struct MultiCopy {
  int rank = 0;
  trace::Direction dir = trace::DIRECTION_H2D;
};

StatusOr<std::vector<std::vector<double>>> CopiesTogether(Context& ctx, std::vector<GpuRig>& rigs,
                                                          const std::vector<MultiCopy>& copies, int64_t bytes,
                                                          const TimingConfig& cfg) {
  std::vector<int> ranks;
  for (const auto& c : copies)
    if (std::find(ranks.begin(), ranks.end(), c.rank) == ranks.end()) ranks.push_back(c.rank);
  std::vector<std::vector<double>> us(copies.size(), std::vector<double>(cfg.iters, 0.0));
  TimedBarrier barrier(static_cast<int>(ranks.size()));
  const std::vector<int> cpus = ctx.CpusOfRanks(ranks);
  RETURN_IF_ERROR(ParallelForWithBarrier(static_cast<int>(ranks.size()), &barrier, cpus, [&](int k) -> Status {
    const int r = ranks[k];
    GpuRig& g = rigs[r];
    CUDA_RETURN_IF_ERROR(cudaSetDevice(g.device));
    std::vector<size_t> mine;
    for (size_t c = 0; c < copies.size(); ++c)
      if (copies[c].rank == r) mine.push_back(c);
    if (mine.size() + 1 > g.streams.size() || static_cast<int64_t>(mine.size()) * bytes > g.dev.bytes() ||
        static_cast<int64_t>(mine.size()) * bytes > g.pinned.bytes())
      return InvalidArgument("too many concurrent copies for the GPU's buffers");
    std::vector<Event> start, end;
    for (size_t q = 0; q < mine.size(); ++q) {
      ASSIGN_OR_RETURN(Event a, Event::Create(g.device));
      ASSIGN_OR_RETURN(Event b, Event::Create(g.device));
      start.push_back(std::move(a));
      end.push_back(std::move(b));
    }
    for (int it = 0; it < cfg.warmup + cfg.iters; ++it) {
      RETURN_IF_ERROR(barrier.ArriveAndWait(cfg.timeout_s));
      for (size_t q = 0; q < mine.size(); ++q) {
        cudaStream_t cs = g.streams[1 + q].get();
        char* dev = g.dev.as<char>() + q * bytes;
        char* host = static_cast<char*>(g.pinned.data()) + q * bytes;
        CUDA_RETURN_IF_ERROR(cudaEventRecord(start[q].get(), cs));
        CUDA_RETURN_IF_ERROR(copies[mine[q]].dir == trace::DIRECTION_H2D
                                 ? cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, cs)
                                 : cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, cs));
        CUDA_RETURN_IF_ERROR(cudaEventRecord(end[q].get(), cs));
      }
      for (size_t q = 0; q < mine.size(); ++q) {
        RETURN_IF_ERROR(WaitEvent(end[q].get(), cfg.timeout_s, "simultaneous host copies"));
        if (it < cfg.warmup) continue;
        float ms = 0;
        CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start[q].get(), end[q].get()));
        us[mine[q]][it - cfg.warmup] = ms * 1000.0;
      }
    }
    return Status::Ok();
  }));
  return us;
}

Status HostCopiesMulti(Context& ctx, std::vector<GpuRig>& rigs) {
  if (ctx.n() < 2) {
    ctx.Note(trace::Note::INFO, kSuite, "one GPU: simultaneous host copies of several GPUs not measured");
    return Status::Ok();
  }
  struct Case {
    std::string label;
    trace::Direction dir;  // the item's direction: H2D, D2H, or BIDIR for a mix
    std::vector<MultiCopy> copies;
  };
  std::vector<Case> cases(3);
  cases[0] = {"h2d/all", trace::DIRECTION_H2D, {}};
  cases[1] = {"d2h/all", trace::DIRECTION_D2H, {}};
  cases[2] = {"bidir/all", trace::DIRECTION_BIDIR, {}};
  for (int r = 0; r < ctx.n(); ++r) {
    cases[0].copies.push_back({r, trace::DIRECTION_H2D});
    cases[1].copies.push_back({r, trace::DIRECTION_D2H});
    cases[2].copies.push_back({r, trace::DIRECTION_H2D});
    cases[2].copies.push_back({r, trace::DIRECTION_D2H});
  }
  cases.push_back({"h2d" + std::to_string(ctx.devices[0]) + "-d2h" + std::to_string(ctx.devices[1]),
                   trace::DIRECTION_BIDIR,
                   {{0, trace::DIRECTION_H2D}, {1, trace::DIRECTION_D2H}}});
  const int64_t big = std::min<int64_t>(ctx.opt.max_bytes, 64 << 20);
  std::vector<int64_t> sizes{big};
  if ((int64_t{1} << 20) < big) sizes.push_back(int64_t{1} << 20);
  for (const Case& c : cases) {
    for (int64_t bytes : sizes) {
      const int64_t total = bytes * static_cast<int64_t>(c.copies.size());
      TimingConfig cfg = ctx.Timing(3, IterationsFor(total, 2LL << 30, 10, 50));
      ASSIGN_OR_RETURN(auto per_copy, CopiesTogether(ctx, rigs, c.copies, bytes, cfg));
      std::vector<double> longest(cfg.iters, 0.0);
      for (const auto& v : per_copy)
        for (int i = 0; i < cfg.iters; ++i) longest[i] = std::max(longest[i], v[i]);
      auto* it = ctx.NewItem(trace::SUITE_PCIE, trace::KIND_HOST_COPIES_MULTI,
                             "pcie/multi/" + c.label + "/" + SizeLabel(bytes));
      // gpu -1: several GPUs, see copies.
      auto* tp = Transfer(it, bytes, c.dir, trace::HOST_PINNED, trace::MECHANISM_COPY_ENGINE, -1);
      tp->set_streams(static_cast<int>(c.copies.size()));
      tp->set_total_bytes(total);
      for (size_t k = 0; k < c.copies.size(); ++k) {
        auto* cc = tp->add_copies();
        cc->set_gpu(ctx.devices[c.copies[k].rank]);
        cc->set_direction(c.copies[k].dir);
        cc->set_bytes(bytes);
        cc->set_host_memory(trace::HOST_PINNED);
        cc->set_median_us(Percentile(per_copy[k], 50));
      }
      FillStats(longest, cfg, "cuda_events", it);
      it->set_gbps(GBps(static_cast<double>(total), it->stats().median_us()));
    }
  }
  return Status::Ok();
}

// GPU-to-GPU transfers. Every ordered pair: one 64 MiB copy-engine transfer. One representative
// pair (i, j) per path class: kernel reads and writes of 64 MiB over block counts, then in both
// directions (i -> j and j -> i) size sweeps 4 B..64 MiB (x4 steps) of the copy engine and of kernel
// reads and writes at 2 x SMs blocks. A point met twice (the sweeps end on the 64 MiB points above)
// is measured once.
Status PeerPairs(Context& ctx, std::vector<GpuRig>& rigs) {
  if (ctx.n() < 2) {
    ctx.Note(trace::Note::INFO, kSuite, "one GPU: GPU-to-GPU transfers not measured");
    return Status::Ok();
  }
  // One representative pair per path class (every pair for the single large copy).
  std::map<trace::PathClass, std::pair<int, int>> rep;
  for (int i = 0; i < ctx.n(); ++i)
    for (int j = 0; j < ctx.n(); ++j)
      if (i != j && !rep.count(ctx.Path(i, j))) rep[ctx.Path(i, j)] = {i, j};
  const int64_t big = std::min<int64_t>(ctx.opt.max_bytes, 64 << 20);
  std::set<std::string> measured;
  // Kernel reads run on dst and load src's memory; kernel writes run on src and store into dst's.
  auto measure = [&](int i, int j, trace::Mechanism mech, int64_t bytes, int blocks) -> Status {
    GpuRig& src = rigs[i];
    GpuRig& dst = rigs[j];
    const bool kernel = mech != trace::MECHANISM_COPY_ENGINE;
    if (kernel &&
        !ctx.CanAccessPeer(mech == trace::MECHANISM_KERNEL_READ ? j : i, mech == trace::MECHANISM_KERNEL_READ ? i : j))
      return Status::Ok();
    const char* mname = mech == trace::MECHANISM_COPY_ENGINE   ? "copy"
                        : mech == trace::MECHANISM_KERNEL_READ ? "read"
                                                               : "write";
    const std::string name = std::string("pcie/p2p/") + mname + "/gpu" + std::to_string(src.device) + "-gpu" +
                             std::to_string(dst.device) + (kernel ? "/b" + std::to_string(blocks) : "") + "/" +
                             SizeLabel(bytes);
    if (!measured.insert(name).second) return Status::Ok();
    GpuRig& runner = mech == trace::MECHANISM_KERNEL_READ ? dst : src;
    cudaStream_t s = runner.streams[0].get();
    TimingConfig cfg = ctx.Timing(3, IterationsFor(bytes, 1LL << 30, 5, 50));
    auto t = TimeOp(
        runner.device, s, cfg,
        [&]() -> Status {
          if (mech == trace::MECHANISM_COPY_ENGINE)
            CUDA_RETURN_IF_ERROR(cudaMemcpyPeerAsync(dst.dev.data(), dst.device, src.dev.data(), src.device, bytes, s));
          else if (mech == trace::MECHANISM_KERNEL_READ)
            CUDA_RETURN_IF_ERROR(LaunchReadKernel(src.dev.data(), bytes, dst.sink.as<uint64_t>(), blocks, kThreads, s));
          else
            CUDA_RETURN_IF_ERROR(LaunchWriteKernel(dst.dev.data(), bytes, 5u, blocks, kThreads, s));
          return Status::Ok();
        },
        "peer transfer");
    if (!t.ok()) return t.status();
    trace::Kind kind = mech == trace::MECHANISM_COPY_ENGINE   ? trace::KIND_P2P_COPY
                       : mech == trace::MECHANISM_KERNEL_READ ? trace::KIND_P2P_KERNEL_READ
                                                              : trace::KIND_P2P_KERNEL_WRITE;
    auto* it = ctx.NewItem(trace::SUITE_PCIE, kind, name);
    auto* tp = Transfer(it, bytes, trace::DIRECTION_P2P, trace::HOST_NONE, mech, runner.device);
    tp->set_src_gpu(src.device);
    tp->set_dst_gpu(dst.device);
    tp->set_path_class(ctx.Path(i, j));
    if (kernel) {
      tp->set_blocks(blocks);
      tp->set_threads_per_block(kThreads);
      tp->set_bytes_per_access(16);
    }
    FillStats(*t, cfg, "cuda_events", it);
    it->set_gbps(GBps(bytes, it->stats().median_us()));
    return Status::Ok();
  };
  for (int i = 0; i < ctx.n(); ++i)
    for (int j = 0; j < ctx.n(); ++j)
      if (i != j) RETURN_IF_ERROR(measure(i, j, trace::MECHANISM_COPY_ENGINE, big, 0));
  const auto sizes = CopySizes(big, ctx.opt.quick);
  for (const auto& [pc, pair] : rep) {
    auto [i, j] = pair;
    for (auto mech : {trace::MECHANISM_KERNEL_READ, trace::MECHANISM_KERNEL_WRITE}) {
      for (int blocks : BlockCounts(rigs[i].sm_count, true)) RETURN_IF_ERROR(measure(i, j, mech, big, blocks));
    }
    for (auto [a, b] : {std::pair<int, int>{i, j}, std::pair<int, int>{j, i}}) {
      for (auto mech : {trace::MECHANISM_COPY_ENGINE, trace::MECHANISM_KERNEL_READ, trace::MECHANISM_KERNEL_WRITE}) {
        const int runner_sms = rigs[mech == trace::MECHANISM_KERNEL_READ ? b : a].sm_count;
        const int blocks = mech == trace::MECHANISM_COPY_ENGINE ? 0 : 2 * runner_sms;
        for (int64_t bytes : sizes) RETURN_IF_ERROR(measure(a, b, mech, bytes, blocks));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status RunPcieSuite(Context& ctx) {
  const int64_t max_bytes = ctx.opt.max_bytes;
  std::vector<GpuRig> rigs;
  for (int r = 0; r < ctx.n(); ++r) {
    auto rig = MakeRig(ctx, r, max_bytes);
    if (!rig.ok()) return rig.status().Annotate("pcie: allocating buffers on GPU " + std::to_string(ctx.devices[r]));
    rigs.push_back(std::move(rig).value());
  }
  // Host links are measured one GPU at a time (GPUs sharing a switch uplink would disturb each other).
  for (auto& r : rigs) {
    RETURN_IF_ERROR(HostDeviceCopies(ctx, r).Annotate("pcie copies, GPU " + std::to_string(r.device)));
    RETURN_IF_ERROR(ZeroCopy(ctx, r).Annotate("pcie zero-copy, GPU " + std::to_string(r.device)));
    RETURN_IF_ERROR(LatencyUnderLoad(ctx, r).Annotate("pcie latency under load, GPU " + std::to_string(r.device)));
  }
  // Then the host links of several GPUs at once.
  RETURN_IF_ERROR(HostCopiesMulti(ctx, rigs).Annotate("pcie simultaneous host copies"));
  if (ctx.n() >= 2) {
    for (int i = 0; i < ctx.n(); ++i) {
      CUDA_RETURN_IF_ERROR(cudaSetDevice(ctx.devices[i]));
      for (int j = 0; j < ctx.n(); ++j) {
        if (i == j || !ctx.CanAccessPeer(i, j)) continue;
        cudaError_t e = cudaDeviceEnablePeerAccess(ctx.devices[j], 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled)
          cudaGetLastError();
        else
          CUDA_RETURN_IF_ERROR(e);
      }
    }
    bool any_missing = false;
    for (int i = 0; i < ctx.n(); ++i)
      for (int j = 0; j < ctx.n(); ++j)
        if (i != j && !ctx.CanAccessPeer(i, j)) any_missing = true;
    if (any_missing)
      ctx.Note(trace::Note::WARNING, kSuite,
               "P2P access unavailable for some GPU pairs: kernel reads/writes skipped there, copies staged by CUDA");
  }
  return PeerPairs(ctx, rigs).Annotate("pcie peer transfers");
}

}  // namespace specsim::validate
