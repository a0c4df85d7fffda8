// host_staged: what a custom allreduce between GPUs that meet only at a CPU pays beyond bandwidth
// when its buffers and barrier flags live in mapped host memory (NCCL's SHM path and vLLM's custom allreduce on PCIe).
//   flag round trips   a kernel thread writes a flag and spins until the responder echoes it: the
//                      responder is another block of the same kernel, a host thread, and with 2+
//                      GPUs a kernel on another GPU (one per path class from GPU 0).
//   small reads        blocks of one warp read 4..256 bytes per read with 1..8 independent reads in
//                      flight per thread over 1..2*SM blocks: latency per read and throughput; then
//                      half the blocks writing while the other half read.
// Each is measured with the mapped buffer on the GPU's NUMA node and on another node where the
// machine has two or more (host_placement.h); every item records the node its buffer was found
// on and the GPU's. GPU 0 (the first GPU used) is the one timed.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>

#include "validate/host_placement.h"
#include "validate/kernels.h"
#include "validate/numa_host_buffer.h"
#include "validate/suite.h"
#include "validate/sweep.h"

namespace specsim::validate {
namespace {

constexpr const char* kSuite = "host_staged";
constexpr int kThreads = 32;                       // one warp per block
constexpr int64_t kChunkBytes = 256;               // host_staged_kernels.cu
constexpr int64_t kReadChunks = int64_t{1} << 16;  // 16 MiB chased by the readers
constexpr int64_t kWriteChunksPerBlock = 64;       // 16 KiB per writing block
constexpr int64_t kPingOffset = 0, kPongOffset = 128;
constexpr uint64_t kKernelTimeoutNs = 2000000000ULL;

struct Placement {
  trace::HostPlacement kind = trace::PLACEMENT_DEFAULT;
  int node = -1;  // the node asked for; -1: none
  std::string label;
};

// The mapped buffers of one placement: the two flags (one page) and the small-read chunks followed
// by the writers' regions.
struct HostSide {
  Placement placement;
  NumaHostBuffer flags, reads;
};

uint32_t* FlagAt(const NumaHostBuffer& b, int64_t offset, bool device) {
  return reinterpret_cast<uint32_t*>(static_cast<char*>(device ? b.device_ptr() : b.data()) + offset);
}

std::string PlacementName(const Placement& p, int found_node) {
  return p.label + (found_node >= 0 ? "-node" + std::to_string(found_node) : "");
}

// ---- flag round trips ----

struct FlagResult {
  std::vector<double> round_us;
  double sm_clock_mhz = 0;
  unsigned int mismatches = 0;
};

// Runs `warmup + launches` launches of `rounds` round trips from rank `init` with the responder
// given; resp_rank is the other GPU's rank (RESPONDER_OTHER_GPU).
StatusOr<FlagResult> RunFlagRounds(Context& ctx, const NumaHostBuffer& flags, int init, trace::FlagResponder responder,
                                   int resp_rank, int rounds, const TimingConfig& cfg) {
  const int dev = ctx.devices[init];
  ASSIGN_OR_RETURN(Stream s, Stream::Create(dev));
  ASSIGN_OR_RETURN(DeviceBuffer cycles, DeviceBuffer::Create(dev, rounds * sizeof(uint64_t)));
  ASSIGN_OR_RETURN(DeviceBuffer span, DeviceBuffer::Create(dev, 2 * sizeof(uint64_t)));
  ASSIGN_OR_RETURN(DeviceBuffer status, DeviceBuffer::Create(dev, 2 * sizeof(unsigned int)));
  Stream rs;
  DeviceBuffer rstatus;
  if (responder == trace::RESPONDER_OTHER_GPU) {
    ASSIGN_OR_RETURN(rs, Stream::Create(ctx.devices[resp_rank]));
    ASSIGN_OR_RETURN(rstatus, DeviceBuffer::Create(ctx.devices[resp_rank], 2 * sizeof(unsigned int)));
  }
  uint32_t* ping_host = FlagAt(flags, kPingOffset, false);
  uint32_t* pong_host = FlagAt(flags, kPongOffset, false);
  __atomic_store_n(ping_host, 0u, __ATOMIC_SEQ_CST);
  __atomic_store_n(pong_host, 0u, __ATOMIC_SEQ_CST);
  FlagResult out;
  double total_ns = 0, total_cycles = 0;
  std::vector<uint64_t> c(rounds);
  uint32_t base = 0;
  for (int l = 0; l < cfg.warmup + cfg.iters; ++l, base += static_cast<uint32_t>(rounds)) {
    HostFlagArgs a;
    a.ping = FlagAt(flags, kPingOffset, true);
    a.pong = FlagAt(flags, kPongOffset, true);
    a.base = base;
    a.rounds = rounds;
    a.round_cycles = cycles.as<uint64_t>();
    a.span = span.as<uint64_t>();
    a.status = status.as<unsigned int>();
    a.timeout_ns = kKernelTimeoutNs;
    a.role = responder == trace::RESPONDER_SAME_GPU ? HostFlagRole::kBoth : HostFlagRole::kInitiator;
    CUDA_RETURN_IF_ERROR(cudaSetDevice(dev));
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(status.data(), 0, status.bytes(), s.get()));
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s.get()));
    std::atomic<int> host_timeouts{0};
    std::thread host_responder;
    if (responder == trace::RESPONDER_HOST_THREAD) {
      host_responder = std::thread([&, base] {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(kKernelTimeoutNs);
        for (int i = 0; i < rounds; ++i) {
          const uint32_t v = base + static_cast<uint32_t>(i) + 1;
          while (__atomic_load_n(ping_host, __ATOMIC_ACQUIRE) != v) {
            if (std::chrono::steady_clock::now() > deadline) {
              host_timeouts = 1;
              return;
            }
          }
          __atomic_store_n(pong_host, v, __ATOMIC_RELEASE);
        }
      });
    } else if (responder == trace::RESPONDER_OTHER_GPU) {
      HostFlagArgs r = a;
      r.role = HostFlagRole::kResponder;
      r.status = rstatus.as<unsigned int>();
      CUDA_RETURN_IF_ERROR(cudaSetDevice(ctx.devices[resp_rank]));
      CUDA_RETURN_IF_ERROR(cudaMemsetAsync(rstatus.data(), 0, rstatus.bytes(), rs.get()));
      CUDA_RETURN_IF_ERROR(LaunchHostFlagKernel(r, rs.get()));
      CUDA_RETURN_IF_ERROR(cudaSetDevice(dev));
    }
    Status launched = [&]() -> Status {
      CUDA_RETURN_IF_ERROR(LaunchHostFlagKernel(a, s.get()));
      RETURN_IF_ERROR(SyncStream(dev, s.get(), cfg.timeout_s, "flag round trips"));
      if (responder == trace::RESPONDER_OTHER_GPU)
        RETURN_IF_ERROR(SyncStream(ctx.devices[resp_rank], rs.get(), cfg.timeout_s, "flag responder"));
      return Status::Ok();
    }();
    if (host_responder.joinable()) host_responder.join();
    RETURN_IF_ERROR(launched);
    unsigned int st[2] = {0, 0}, rst[2] = {0, 0};
    uint64_t sp[2] = {0, 0};
    CUDA_RETURN_IF_ERROR(cudaSetDevice(dev));
    CUDA_RETURN_IF_ERROR(cudaMemcpy(st, status.data(), sizeof(st), cudaMemcpyDeviceToHost));
    CUDA_RETURN_IF_ERROR(cudaMemcpy(sp, span.data(), sizeof(sp), cudaMemcpyDeviceToHost));
    CUDA_RETURN_IF_ERROR(cudaMemcpy(c.data(), cycles.data(), rounds * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    if (responder == trace::RESPONDER_OTHER_GPU)
      CUDA_RETURN_IF_ERROR(cudaMemcpy(rst, rstatus.data(), sizeof(rst), cudaMemcpyDeviceToHost));
    if (st[1] + rst[1] > 0 || host_timeouts > 0)
      return DeadlineExceeded("a flag wait gave up after 2 s (the responder never answered: is it resident?)");
    // The last echo is the value written last: the flags hold base + rounds.
    if (__atomic_load_n(pong_host, __ATOMIC_ACQUIRE) != base + static_cast<uint32_t>(rounds)) ++out.mismatches;
    out.mismatches += st[0] + rst[0];
    if (l < cfg.warmup) continue;
    if (sp[1] == 0) return Internal("the initiator's clock64 did not advance");
    const double ns_per_cycle = static_cast<double>(sp[0]) / static_cast<double>(sp[1]);
    total_ns += static_cast<double>(sp[0]);
    total_cycles += static_cast<double>(sp[1]);
    for (int i = 0; i < rounds; ++i) out.round_us.push_back(static_cast<double>(c[i]) * ns_per_cycle / 1000.0);
  }
  if (total_ns > 0) out.sm_clock_mhz = total_cycles / total_ns * 1000.0;
  return out;
}

void FillCheck(unsigned int mismatches, const std::string& against, trace::Item* it) {
  auto* ck = it->mutable_check();
  ck->set_performed(true);
  ck->set_passed(mismatches == 0);
  ck->set_mismatches(mismatches);
  ck->set_against(against);
}

Status FlagRoundTrips(Context& ctx, const HostSide& h, int gpu_node) {
  const int rounds = ctx.opt.quick ? 500 : 2000;
  TimingConfig cfg = ctx.Timing(1, 5);
  struct Case {
    trace::FlagResponder responder;
    int resp_rank;
    std::string label;
  };
  std::vector<Case> cases{{trace::RESPONDER_SAME_GPU, -1, "same_gpu"}, {trace::RESPONDER_HOST_THREAD, -1, "host"}};
  // One responder GPU per path class from GPU 0.
  std::map<trace::PathClass, int> rep;
  for (int j = 1; j < ctx.n(); ++j)
    if (!rep.count(ctx.Path(0, j))) rep[ctx.Path(0, j)] = j;
  for (const auto& [pc, j] : rep)
    cases.push_back({trace::RESPONDER_OTHER_GPU, j, "gpu" + std::to_string(ctx.devices[j])});
  if (ctx.n() < 2) ctx.Note(trace::Note::INFO, kSuite, "one GPU: flag round trips between two GPUs not measured");
  const int found = h.flags.numa_node();
  for (const Case& k : cases) {
    ASSIGN_OR_RETURN(FlagResult r, RunFlagRounds(ctx, h.flags, 0, k.responder, k.resp_rank, rounds, cfg));
    auto* it = ctx.NewItem(trace::SUITE_HOST_STAGED, trace::KIND_HOST_FLAG_ROUNDTRIP,
                           "host_staged/flag/gpu" + std::to_string(ctx.devices[0]) + "/" + k.label + "/" +
                               PlacementName(h.placement, found));
    auto* p = it->mutable_host_flag();
    p->set_gpu(ctx.devices[0]);
    p->set_responder(k.responder);
    p->set_responder_gpu(k.resp_rank >= 0 ? ctx.devices[k.resp_rank] : -1);
    p->set_path_class(k.resp_rank >= 0 ? ctx.Path(0, k.resp_rank) : trace::PATH_SELF);
    p->set_rounds(rounds);
    p->set_launches(cfg.iters);
    p->set_placement(h.placement.kind);
    p->set_buffer_numa_node(found);
    p->set_gpu_numa_node(gpu_node);
    p->set_responder_numa_node(k.resp_rank >= 0 ? ctx.trace->environment().gpus(k.resp_rank).numa_node() : -1);
    p->set_sm_clock_mhz(r.sm_clock_mhz);
    TimingConfig samples = cfg;
    samples.iters = static_cast<int>(r.round_us.size());
    FillStats(r.round_us, samples, "clock64_per_round", it);
    FillCheck(r.mismatches, "the value written, echoed", it);
    if (r.mismatches > 0)
      ctx.Note(trace::Note::WARNING, kSuite,
               it->name() + ": " + std::to_string(r.mismatches) + " echoes were not the value written");
    std::fprintf(stderr, "[%s] %s: median %.2f us, p10 %.2f, p90 %.2f\n", kSuite, it->name().c_str(),
                 it->stats().median_us(), it->stats().p10_us(), it->stats().p90_us());
  }
  return Status::Ok();
}

// ---- small reads ----

struct ReadRig {
  int device = 0;
  Stream stream;
  DeviceBuffer span, steps, status, done;
};

// Writes the chase into the readers' chunks (every word of chunk c = HostChaseNext(c)).
void FillChase(const NumaHostBuffer& b) {
  auto* w = static_cast<uint32_t*>(b.data());
  const int64_t words = kChunkBytes / 4;
  for (int64_t c = 0; c < kReadChunks; ++c) {
    const uint32_t next = HostChaseNext(static_cast<uint32_t>(c), static_cast<uint32_t>(kReadChunks));
    for (int64_t i = 0; i < words; ++i) w[c * words + i] = next;
  }
}

// Counts the words of the writers' regions that do not hold what the kernel stored: every chunk a
// writer reached, its first bytes_per_read bytes.
int64_t WriterMismatches(const NumaHostBuffer& b, int writers, int bytes_per_read, int k,
                         const std::vector<uint64_t>& steps, int readers) {
  const auto* base = reinterpret_cast<const uint32_t*>(static_cast<const char*>(b.data()) + kReadChunks * kChunkBytes);
  int64_t bad = 0;
  for (int w = 0; w < writers; ++w) {
    const int64_t reached = std::min<int64_t>(kWriteChunksPerBlock, static_cast<int64_t>(steps[readers + w]) * k);
    for (int64_t c = 0; c < reached; ++c) {
      const uint32_t want = HostWriterValue(static_cast<uint32_t>(w), static_cast<uint32_t>(c));
      const uint32_t* chunk = base + (w * kWriteChunksPerBlock + c) * (kChunkBytes / 4);
      for (int i = 0; i < bytes_per_read / 4; ++i) bad += chunk[i] != want;
    }
  }
  return bad;
}

double Median(std::vector<double> v) { return v.empty() ? 0.0 : Percentile(v, 50); }

Status SmallReadsPoint(Context& ctx, ReadRig& rig, const HostSide& h, int gpu_node, int blocks, int bytes, int k,
                       bool mixed) {
  const int readers = mixed ? blocks / 2 : blocks;
  const int writers = blocks - readers;
  const int steps = ctx.opt.quick ? 48 : 128;
  TimingConfig cfg = ctx.Timing(2, 10);
  std::vector<double> step_us, read_gbps, write_gbps;
  std::vector<uint64_t> span(2 * blocks), nsteps(blocks);
  int64_t mismatches = 0;
  char* writer_regions = static_cast<char*>(h.reads.data()) + kReadChunks * kChunkBytes;
  for (int l = 0; l < cfg.warmup + cfg.iters; ++l) {
    if (writers > 0) std::memset(writer_regions, 0, writers * kWriteChunksPerBlock * kChunkBytes);
    HostSmallReadsArgs a;
    a.buffer = h.reads.device_ptr();
    a.chunks = kReadChunks;
    a.write_chunks_per_block = kWriteChunksPerBlock;
    a.bytes_per_read = bytes;
    a.reads_in_flight = k;
    a.steps = steps;
    a.blocks = blocks;
    a.reader_blocks = readers;
    a.threads = kThreads;
    a.seed = static_cast<uint32_t>(l * 7919);
    a.block_span = rig.span.as<uint64_t>();
    a.block_steps = rig.steps.as<uint64_t>();
    a.status = rig.status.as<unsigned int>();
    a.readers_done = rig.done.as<unsigned int>();
    a.timeout_ns = kKernelTimeoutNs;
    cudaStream_t s = rig.stream.get();
    CUDA_RETURN_IF_ERROR(cudaSetDevice(rig.device));
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(rig.status.data(), 0, rig.status.bytes(), s));
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(rig.done.data(), 0, rig.done.bytes(), s));
    CUDA_RETURN_IF_ERROR(LaunchHostSmallReads(a, s));
    RETURN_IF_ERROR(SyncStream(rig.device, s, cfg.timeout_s, "small reads"));
    unsigned int st[2] = {0, 0};
    CUDA_RETURN_IF_ERROR(cudaMemcpy(st, rig.status.data(), sizeof(st), cudaMemcpyDeviceToHost));
    CUDA_RETURN_IF_ERROR(cudaMemcpy(span.data(), rig.span.data(), span.size() * 8, cudaMemcpyDeviceToHost));
    CUDA_RETURN_IF_ERROR(cudaMemcpy(nsteps.data(), rig.steps.data(), nsteps.size() * 8, cudaMemcpyDeviceToHost));
    if (st[1] > 0) return DeadlineExceeded("writing blocks gave up after 2 s waiting for the readers");
    mismatches += st[0] + WriterMismatches(h.reads, writers, bytes, k, nsteps, readers);
    if (l < cfg.warmup) continue;
    uint64_t r0 = UINT64_MAX, r1 = 0, w0 = UINT64_MAX, w1 = 0;
    double wbytes = 0;
    for (int b = 0; b < blocks; ++b) {
      const uint64_t a0 = span[2 * b], a1 = span[2 * b + 1];
      if (b < readers) {
        step_us.push_back(static_cast<double>(a1 - a0) / 1000.0 / steps);
        r0 = std::min(r0, a0);
        r1 = std::max(r1, a1);
      } else {
        w0 = std::min(w0, a0);
        w1 = std::max(w1, a1);
        wbytes += static_cast<double>(nsteps[b]) * k * bytes;
      }
    }
    const double rbytes = static_cast<double>(readers) * k * bytes * steps;
    if (r1 > r0) read_gbps.push_back(rbytes / static_cast<double>(r1 - r0));
    if (writers > 0 && w1 > w0) write_gbps.push_back(wbytes / static_cast<double>(w1 - w0));
  }
  const int found = h.reads.numa_node();
  auto* it = ctx.NewItem(trace::SUITE_HOST_STAGED, trace::KIND_HOST_SMALL_READS,
                         std::string("host_staged/") + (mixed ? "mixed" : "reads") + "/gpu" +
                             std::to_string(rig.device) + "/b" + std::to_string(blocks) + "/r" + std::to_string(bytes) +
                             "/f" + std::to_string(k) + "/" + PlacementName(h.placement, found));
  auto* p = it->mutable_host_small_reads();
  p->set_gpu(rig.device);
  p->set_blocks(blocks);
  p->set_threads_per_block(kThreads);
  p->set_bytes_per_read(bytes);
  p->set_reads_in_flight(k);
  p->set_writer_share(static_cast<double>(writers) / blocks);
  p->set_steps(steps);
  p->set_launches(cfg.iters);
  p->set_buffer_bytes(h.reads.bytes());
  p->set_placement(h.placement.kind);
  p->set_buffer_numa_node(found);
  p->set_gpu_numa_node(gpu_node);
  p->set_read_gbps(Median(read_gbps));
  p->set_write_gbps(Median(write_gbps));
  TimingConfig samples = cfg;
  samples.iters = static_cast<int>(step_us.size());
  FillStats(step_us, samples, "globaltimer_per_step", it);
  it->set_gbps(p->read_gbps());
  FillCheck(static_cast<unsigned int>(std::min<int64_t>(mismatches, UINT32_MAX)),
            "the chase's next chunk in every word read; the writers' bytes read back on the host", it);
  if (mismatches > 0)
    ctx.Note(trace::Note::ERROR, kSuite, it->name() + ": " + std::to_string(mismatches) + " words not as written");
  return Status::Ok();
}

Status SmallReads(Context& ctx, const HostSide& h, int gpu_node) {
  ReadRig rig;
  rig.device = ctx.devices[0];
  const int sm = ctx.props[0].multiProcessorCount;
  const int max_blocks = 2 * sm;
  ASSIGN_OR_RETURN(rig.stream, Stream::Create(rig.device));
  ASSIGN_OR_RETURN(rig.span, DeviceBuffer::Create(rig.device, 2 * max_blocks * sizeof(uint64_t)));
  ASSIGN_OR_RETURN(rig.steps, DeviceBuffer::Create(rig.device, max_blocks * sizeof(uint64_t)));
  ASSIGN_OR_RETURN(rig.status, DeviceBuffer::Create(rig.device, 2 * sizeof(unsigned int)));
  ASSIGN_OR_RETURN(rig.done, DeviceBuffer::Create(rig.device, sizeof(unsigned int)));
  const std::vector<int> sizes = ctx.opt.quick ? std::vector<int>{16, 256} : std::vector<int>{4, 16, 64, 256};
  const std::vector<int> flights = ctx.opt.quick ? std::vector<int>{1, 8} : std::vector<int>{1, 2, 4, 8};
  const std::vector<int> block_counts = BlockCounts(sm, ctx.opt.quick);
  for (int bytes : sizes) {
    for (int k : flights) {
      for (int blocks : block_counts) RETURN_IF_ERROR(SmallReadsPoint(ctx, rig, h, gpu_node, blocks, bytes, k, false));
      std::fprintf(stderr, "[%s] small reads of %d B, %d in flight, gpu%d %s: %zu block counts\n", kSuite, bytes, k,
                   rig.device, h.placement.label.c_str(), block_counts.size());
    }
  }
  // Reads beside posted writes: half the blocks write.
  for (int bytes : {16, 256})
    for (int k : {1, 8})
      for (int blocks : {2, sm, 2 * sm})
        RETURN_IF_ERROR(SmallReadsPoint(ctx, rig, h, gpu_node, blocks, bytes, k, true));
  std::fprintf(stderr, "[%s] reads beside writes, gpu%d %s: done\n", kSuite, rig.device, h.placement.label.c_str());
  return Status::Ok();
}

// ---- custom allreduce through host memory, as rank groups on GPU 0 ----

// bf16 bits of a small integer (exact: the top half of its float).
uint16_t Bf16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}
// Rank r's element i: an integer in [-8, 7], so every sum over 8 ranks is exact in bf16.
float RankValue(int r, int64_t i) { return static_cast<float>(((i * 7 + r * 3) % 16) - 8); }

// Our one-shot and two-shot kernels for n = 1, 2, 4, 8 ranks as groups of blocks in one launch on
// GPU 0, every exchange buffer and flag in mapped host memory of the placement, under both barrier
// disciplines (allreduce_kernels.cu): what n GPUs' custom allreduce through host memory costs when
// their traffic shares one link. Framework barriers run the frameworks' grid, min(36, ceil(16-byte
// vectors / 512)) blocks; system-fence barriers run 36, as the collectives suite does. Each size is
// checked exactly once, then timed gated (GPU time).
Status CustomRankGroups(Context& ctx, const Placement& placement) {
  const int dev = ctx.devices[0];
  constexpr int kThreadsAr = 512;
  const std::vector<int64_t> sizes = !ctx.opt.custom_sizes.empty() ? ctx.opt.custom_sizes
                                     : ctx.opt.quick               ? std::vector<int64_t>{1024, 16384}
                                                                   : std::vector<int64_t>{1024, 16384, 65536, 262144};
  const int64_t max_count = sizes.back() / 2;
  CUDA_RETURN_IF_ERROR(cudaSetDevice(dev));
  ASSIGN_OR_RETURN(Stream s, Stream::Create(dev));
  ASSIGN_OR_RETURN(DeviceBuffer input, DeviceBuffer::Create(dev, kMaxRanks * max_count * 2));
  ASSIGN_OR_RETURN(DeviceBuffer output, DeviceBuffer::Create(dev, kMaxRanks * max_count * 2));
  ASSIGN_OR_RETURN(DeviceBuffer epochs, DeviceBuffer::Create(dev, kMaxRanks * kMaxArBlocks * sizeof(uint32_t)));
  ASSIGN_OR_RETURN(DeviceBuffer error, DeviceBuffer::Create(dev, sizeof(int)));
  ASSIGN_OR_RETURN(DeviceBuffer phase_stamps,
                   DeviceBuffer::Create(dev, kMaxRanks * kMaxArBlocks * kCustomPhases * sizeof(uint64_t)));
  std::vector<uint16_t> host_out(kMaxRanks * max_count);
  // One set of buffers for the whole sweep: each exchange buffer holds the input region
  // [0, max_count), written only by the host, and the reduced slices from max_count on, written
  // only by kernels.
  // The frameworks' kernel also runs with its exchange buffers on transparent huge pages, where the
  // kernel gives them: what the GPU pays per 4 KiB page of host memory it touches.
  std::vector<NumaHostBuffer> exchange, exchange_huge, signals, signals_line, signals_vllm;
  std::vector<HostBuffer> exchange_alloc;  // cudaHostAlloc'd: the driver's own pinned allocation
  for (int r = 0; r < kMaxRanks; ++r) {
    ASSIGN_OR_RETURN(HostBuffer ha, HostBuffer::Create(2 * max_count * 2, HostKind::kMapped));
    exchange_alloc.push_back(std::move(ha));
    ASSIGN_OR_RETURN(NumaHostBuffer e, NumaHostBuffer::Create(2 * max_count * 2, placement.node));
    ASSIGN_OR_RETURN(NumaHostBuffer h,
                     NumaHostBuffer::Create(2 * max_count * 2, placement.node, HostPages::kTransparentHuge));
    ASSIGN_OR_RETURN(NumaHostBuffer g,
                     NumaHostBuffer::Create(kMaxRanks * kMaxArBlocks * sizeof(uint32_t), placement.node));
    // A flag per 128-byte line: its own areas, so that no slot of one layout aliases the other's.
    ASSIGN_OR_RETURN(
        NumaHostBuffer gl,
        NumaHostBuffer::Create(kMaxRanks * kMaxArBlocks * kMaxFlagStride * sizeof(uint32_t), placement.node));
    std::memset(g.data(), 0, g.bytes());
    std::memset(gl.data(), 0, gl.bytes());
    signals_line.push_back(std::move(gl));
    ASSIGN_OR_RETURN(NumaHostBuffer gv,
                     NumaHostBuffer::Create(kMaxRanks * kMaxArBlocks * sizeof(uint32_t), placement.node));
    std::memset(gv.data(), 0, gv.bytes());
    signals_vllm.push_back(std::move(gv));
    exchange.push_back(std::move(e));
    exchange_huge.push_back(std::move(h));
    signals.push_back(std::move(g));
  }
  int64_t huge_bytes = 0;
  for (const NumaHostBuffer& h : exchange_huge) huge_bytes += std::max<int64_t>(0, h.huge_page_bytes());
  const bool have_huge = huge_bytes == static_cast<int64_t>(exchange_huge.size()) * exchange_huge[0].bytes();
  std::fprintf(stderr, "[%s] transparent huge pages: %lld of %lld exchange bytes\n", kSuite,
               static_cast<long long>(huge_bytes),
               static_cast<long long>(exchange_huge.size() * exchange_huge[0].bytes()));
  if (!have_huge)
    ctx.Note(trace::Note::INFO, kSuite,
             "transparent huge pages not given for every exchange buffer (" + std::to_string(huge_bytes) +
                 " bytes huge): the huge-page items not measured");
  const int found = exchange[0].numa_node();
  CUDA_RETURN_IF_ERROR(cudaMemsetAsync(epochs.data(), 0, epochs.bytes(), s.get()));
  RETURN_IF_ERROR(SyncStream(dev, s.get(), 60, "rank-group epochs"));
  std::vector<uint32_t> epoch_host(kMaxRanks * kMaxArBlocks);
  for (int n : {1, 2, 4, 8}) {
    // Barriers wait for a slot to reach the epoch, so every (group, block) counter starts this rank
    // count at the highest epoch any reached: no slot then holds a value a barrier of this count
    // waits for, and the signal slots need no reset.
    CUDA_RETURN_IF_ERROR(cudaMemcpy(epoch_host.data(), epochs.data(), epochs.bytes(), cudaMemcpyDeviceToHost));
    const uint32_t top = *std::max_element(epoch_host.begin(), epoch_host.end());
    std::fill(epoch_host.begin(), epoch_host.end(), top);
    CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(epochs.data(), epoch_host.data(), epochs.bytes(), cudaMemcpyHostToDevice, s.get()));
    RETURN_IF_ERROR(SyncStream(dev, s.get(), 60, "rank-group epochs"));
    // Buffers: registered mmap'd pages (bound to the placement), the same on transparent huge
    // pages, or cudaHostAlloc'd (unbound); loads: plain or read-only (nc).
    enum class Buffers { kRegistered, kRegisteredHuge, kHostAlloc };
    // Flags: packed (32 slots per 128-byte line) or one line per slot.
    struct Variant {
      const char* name;  // as --custom-variants names it (CustomVariantNames)
      CustomBarrierKind barrier;
      Buffers buffers;
      bool nc;
      int flag_stride;
      bool block_major = false;
    };
    for (Variant v :
         {Variant{"packed", CustomBarrierKind::kFramework, Buffers::kRegistered, false, 1},
          Variant{"flagline", CustomBarrierKind::kFramework, Buffers::kRegistered, false, kMaxFlagStride},
          Variant{"vllmflags", CustomBarrierKind::kFramework, Buffers::kRegistered, false, 1, true},
          Variant{"thp", CustomBarrierKind::kFramework, Buffers::kRegisteredHuge, false, 1},
          Variant{"hostalloc", CustomBarrierKind::kFramework, Buffers::kHostAlloc, false, 1},
          Variant{"nc", CustomBarrierKind::kFramework, Buffers::kRegistered, true, 1},
          Variant{"hostalloc-nc", CustomBarrierKind::kFramework, Buffers::kHostAlloc, true, 1},
          Variant{"fence", CustomBarrierKind::kSystemFence, Buffers::kRegistered, false, 1},
          Variant{"fence-flagline", CustomBarrierKind::kSystemFence, Buffers::kRegistered, false, kMaxFlagStride}}) {
      const std::vector<std::string>& only = ctx.opt.custom_variants;
      if (!only.empty() && std::find(only.begin(), only.end(), v.name) == only.end()) continue;
      if (v.buffers == Buffers::kRegisteredHuge && !have_huge) continue;
      // cudaHostAlloc'd buffers are not bound: measured once, with the first placement.
      if (v.buffers == Buffers::kHostAlloc && placement.kind == trace::PLACEMENT_FAR_NODE) continue;
      const CustomBarrierKind barrier = v.barrier;
      const bool framework = barrier == CustomBarrierKind::kFramework;
      const bool huge = v.buffers == Buffers::kRegisteredHuge;
      // Host and device addresses of rank r's exchange buffer, and its huge-page bytes.
      auto ex_host = [&](int r) -> void* {
        return v.buffers == Buffers::kHostAlloc ? exchange_alloc[r].data()
               : huge                           ? exchange_huge[r].data()
                                                : exchange[r].data();
      };
      auto ex_dev = [&](int r) -> void* {
        return v.buffers == Buffers::kHostAlloc ? exchange_alloc[r].device_ptr()
               : huge                           ? exchange_huge[r].device_ptr()
                                                : exchange[r].device_ptr();
      };
      const int64_t huge_page_bytes = v.buffers == Buffers::kHostAlloc ? -1
                                      : huge                           ? exchange_huge[0].huge_page_bytes()
                                                                       : exchange[0].huge_page_bytes();
      const std::string suffix = std::string(v.buffers == Buffers::kHostAlloc ? "-hostalloc"
                                             : huge                           ? "-thp"
                                                                              : "") +
                                 (v.nc ? "-nc" : "") + (v.flag_stride > 1 ? "-flagline" : "") +
                                 (v.block_major ? "-vllmflags" : "");
      for (trace::Implementation impl : {trace::IMPL_ONE_SHOT, trace::IMPL_TWO_SHOT}) {
        const bool two = impl == trace::IMPL_TWO_SHOT;
        for (int64_t bytes : sizes) {
          const int64_t count = bytes / 2, vecs = count / 8;
          const int blocks =
              framework ? static_cast<int>(std::min<int64_t>(36, (vecs + kThreadsAr - 1) / kThreadsAr)) : 36;
          const int fit = CustomAllreduceMaxCoresidentBlocks(two, kThreadsAr, dev);
          const std::string name =
              std::string("host_staged/custom/") + (two ? "twoshot" : "oneshot") + "/" +
              (framework ? "framework" : "fence") + "/gpu" + std::to_string(dev) + "/g" + std::to_string(n) + "/" +
              SizeLabel(bytes) + "/" +
              (v.buffers == Buffers::kHostAlloc ? std::string("unbound") : PlacementName(placement, found)) + suffix;
          if (fit > 0 && blocks * n > fit) {
            ctx.Note(trace::Note::INFO, kSuite,
                     name + ": " + std::to_string(blocks * n) + " blocks do not fit on the GPU at once (" +
                         std::to_string(fit) + "): not measured");
            continue;
          }
          // Inputs: framework kernels read them from the exchange buffers (registered inputs), the
          // fenced ones stage them from device memory.
          std::vector<uint16_t> in(n * count);
          for (int r = 0; r < n; ++r)
            for (int64_t i = 0; i < count; ++i) in[r * count + i] = Bf16Bits(RankValue(r, i));
          for (int r = 0; r < n; ++r) std::memcpy(ex_host(r), in.data() + r * count, count * 2);
          // On the kernels' own stream: a cudaMemset on the legacy stream is not ordered before a
          // launch on a non-blocking stream (it zeroed outputs after the kernel had written them).
          CUDA_RETURN_IF_ERROR(
              cudaMemcpyAsync(input.data(), in.data(), in.size() * 2, cudaMemcpyHostToDevice, s.get()));
          CUDA_RETURN_IF_ERROR(cudaMemsetAsync(output.data(), 0, n * count * 2, s.get()));
          CUDA_RETURN_IF_ERROR(cudaMemsetAsync(error.data(), 0, sizeof(int), s.get()));
          RETURN_IF_ERROR(SyncStream(dev, s.get(), 60, name + " set-up"));
          CustomAllreduceArgs a;
          a.rank = 0;
          a.nranks = n;
          a.rank_groups = n;
          a.count = count;
          a.input = input.data();
          a.output = output.data();
          for (int r = 0; r < n; ++r) {
            a.exchange[r] = ex_dev(r);
            a.signals[r] = static_cast<uint32_t*>((v.flag_stride > 1 ? signals_line[r]
                                                   : v.block_major   ? signals_vllm[r]
                                                                     : signals[r])
                                                      .device_ptr());
          }
          a.epochs = epochs.as<uint32_t>();
          a.error = error.as<int>();
          a.timeout_ns = kKernelTimeoutNs;
          a.blocks = blocks;
          a.threads = kThreadsAr;
          a.barrier = barrier;
          a.load_nc = v.nc;
          a.flag_stride = v.flag_stride;
          a.flag_block_major = v.block_major;
          a.reduced_offset = max_count;  // the inputs' region is only ever written by the host
          auto launch = [&]() -> Status {
            CUDA_RETURN_IF_ERROR(two ? LaunchTwoShotAllreduce(a, s.get()) : LaunchOneShotAllreduce(a, s.get()));
            return Status::Ok();
          };
          auto hung = [&]() -> Status {
            int err = 0;
            CUDA_RETURN_IF_ERROR(cudaMemcpy(&err, error.data(), sizeof(int), cudaMemcpyDeviceToHost));
            if (err) return DeadlineExceeded(name + ": a barrier waited over 2 s");
            return Status::Ok();
          };
          RETURN_IF_ERROR(launch());
          RETURN_IF_ERROR(SyncStream(dev, s.get(), 60, name));
          RETURN_IF_ERROR(hung());
          CUDA_RETURN_IF_ERROR(cudaMemcpy(host_out.data(), output.data(), n * count * 2, cudaMemcpyDeviceToHost));
          unsigned int mismatches = 0;
          std::string first_wrong;
          for (int r = 0; r < n; ++r)
            for (int64_t i = 0; i < count; ++i) {
              float sum = 0;
              for (int p = 0; p < n; ++p) sum += RankValue(p, i);
              if (host_out[r * count + i] == Bf16Bits(sum)) continue;
              if (mismatches++ == 0)
                first_wrong = "; first: rank " + std::to_string(r) + " element " + std::to_string(i) + " bits " +
                              std::to_string(host_out[r * count + i]) + ", want " + std::to_string(Bf16Bits(sum));
            }
          TimingConfig cfg = ctx.Timing(5, ctx.opt.quick ? 20 : 50);
          cfg.gate_us = GateUsFor(cfg.iters);
          ASSIGN_OR_RETURN(std::vector<double> us, TimeOp(dev, s.get(), cfg, launch, name));
          RETURN_IF_ERROR(hung());
          // Phases: separate launches with the kernel's own stamps, each read back.
          std::vector<std::vector<double>> phase(kCustomPhases);
          {
            const int nblocks = blocks * n;
            a.phase_ns = phase_stamps.as<uint64_t>();
            std::vector<uint64_t> st(static_cast<size_t>(nblocks) * kCustomPhases);
            for (int l = 0; l < (ctx.opt.quick ? 5 : 20); ++l) {
              RETURN_IF_ERROR(launch());
              RETURN_IF_ERROR(SyncStream(dev, s.get(), 60, name + " phases"));
              CUDA_RETURN_IF_ERROR(cudaMemcpy(st.data(), phase_stamps.data(), st.size() * 8, cudaMemcpyDeviceToHost));
              uint64_t t0 = UINT64_MAX;
              for (int b = 0; b < nblocks; ++b) t0 = std::min(t0, st[b * kCustomPhases]);
              for (int k = 0; k < kCustomPhases; ++k) {
                uint64_t last = 0;
                for (int b = 0; b < nblocks; ++b) last = std::max(last, st[b * kCustomPhases + k]);
                phase[k].push_back(static_cast<double>(last - t0) / 1000.0);
              }
            }
            a.phase_ns = nullptr;
            RETURN_IF_ERROR(hung());
          }
          auto* it = ctx.NewItem(trace::SUITE_HOST_STAGED, trace::KIND_CUSTOM_ALLREDUCE, name);
          auto* p = it->mutable_collective();
          p->set_op(trace::ALLREDUCE);
          p->set_implementation(impl);
          p->set_transport(trace::TRANSPORT_HOST_MAPPED);
          p->set_bytes(bytes);
          p->set_count(count);
          p->set_dtype(trace::DTYPE_BF16);
          p->set_nranks(n);
          p->add_gpus(dev);
          p->set_blocks(blocks);
          p->set_threads_per_block(kThreadsAr);
          p->set_rank_groups_on_one_gpu(n);
          p->set_custom_barrier(framework ? trace::BARRIER_FRAMEWORK : trace::BARRIER_SYSTEM_FENCE);
          p->set_host_placement(placement.kind);
          p->set_host_huge_page_bytes(huge_page_bytes);
          p->set_host_memory(v.buffers == Buffers::kHostAlloc ? trace::HOST_MAPPED : trace::HOST_PINNED);
          p->set_custom_load_nc(v.nc);
          p->set_custom_flag_stride_bytes(4 * v.flag_stride);
          p->set_custom_flags_block_major(v.block_major);
          for (auto& ph : phase) p->add_phase_us(Median(ph));
          if (v.buffers == Buffers::kHostAlloc) p->set_host_placement(trace::PLACEMENT_DEFAULT);
          FillStats(us, cfg, cfg.gate_us > 0 ? "cuda_events_gated" : "cuda_events", it);
          FillCheck(mismatches, "exact sums of every rank group's output", it);
          if (mismatches > 0)
            ctx.Note(trace::Note::ERROR, kSuite,
                     name + ": " + std::to_string(mismatches) + " wrong elements" + first_wrong);
          std::fprintf(stderr, "[%s] %s: median %.2f us (%d blocks per rank); phases %.2f / %.2f / %.2f / %.2f us\n",
                       kSuite, name.c_str(), it->stats().median_us(), blocks, p->phase_us(0), p->phase_us(1),
                       p->phase_us(2), p->phase_us(3));
        }
      }
    }
  }
  return Status::Ok();
}

// The placements for GPU 0: its own node and another where the machine has 2+ nodes; else one
// unbound placement (and a note that the cross-socket cost was not measured).
std::vector<Placement> Placements(Context& ctx, int gpu_node, const std::vector<int>& nodes) {
  if (nodes.size() < 2) {
    ctx.Note(trace::Note::INFO, kSuite,
             "one NUMA node (" + std::to_string(nodes.size()) +
                 " in /sys/devices/system/node/online): host memory on another socket, the cross-socket cost, "
                 "not measured");
    return {{trace::PLACEMENT_DEFAULT, -1, "default"}};
  }
  const int near = gpu_node >= 0 ? gpu_node : nodes[0];
  if (gpu_node < 0)
    ctx.Note(trace::Note::WARNING, kSuite,
             "GPU " + std::to_string(ctx.devices[0]) + "'s NUMA node is not known: node " + std::to_string(near) +
                 " plays its own node");
  return {{trace::PLACEMENT_GPU_NODE, near, "near"}, {trace::PLACEMENT_FAR_NODE, FarNumaNode(gpu_node, nodes), "far"}};
}

// The buffers of a placement; a refused binding is reported: the near placement then falls back to
// an unbound buffer, the far one is skipped (nullopt-like: ok() with an empty `flags`).
StatusOr<HostSide> MakeHostSide(Context& ctx, const Placement& p) {
  HostSide h;
  h.placement = p;
  const int64_t read_bytes =
      (kReadChunks + 2LL * ctx.props[0].multiProcessorCount * kWriteChunksPerBlock) * kChunkBytes;
  auto flags = NumaHostBuffer::Create(4096, p.node);
  if (!flags.ok() && flags.status().code() == StatusCode::kUnavailable) {
    if (p.kind == trace::PLACEMENT_FAR_NODE) {
      ctx.Note(trace::Note::WARNING, kSuite,
               "cannot place host memory on NUMA node " + std::to_string(p.node) + " (" + flags.status().message() +
                   "): the far-node (cross-socket) items not measured");
      return h;
    }
    ctx.Note(trace::Note::WARNING, kSuite,
             "cannot bind host memory to the GPU's NUMA node " + std::to_string(p.node) + " (" +
                 flags.status().message() + "): measured unbound (first-touch placement) instead");
    h.placement = {trace::PLACEMENT_DEFAULT, -1, "default"};
    flags = NumaHostBuffer::Create(4096, -1);
  }
  if (!flags.ok()) return flags.status();
  h.flags = std::move(flags).value();
  ASSIGN_OR_RETURN(h.reads, NumaHostBuffer::Create(read_bytes, h.placement.node));
  FillChase(h.reads);
  const int asked = h.placement.node;
  if (asked >= 0 && (h.flags.numa_node() != asked || h.reads.numa_node() != asked))
    ctx.Note(trace::Note::WARNING, kSuite,
             "host memory bound to NUMA node " + std::to_string(asked) + " was found on node " +
                 std::to_string(h.flags.numa_node()) + " / " + std::to_string(h.reads.numa_node()) +
                 ": the items record the node found");
  return h;
}

}  // namespace

Status RunHostStagedSuite(Context& ctx) {
  if (!ctx.props[0].canMapHostMemory) {
    ctx.Note(trace::Note::WARNING, kSuite,
             "GPU " + std::to_string(ctx.devices[0]) + " cannot map host memory: suite skipped");
    return Status::Ok();
  }
  const int gpu_node = ctx.trace->environment().gpus(0).numa_node();
  const std::vector<int> nodes = ReadOnlineNumaNodes();
  for (const Placement& p : Placements(ctx, gpu_node, nodes)) {
    ASSIGN_OR_RETURN(HostSide h, MakeHostSide(ctx, p));
    if (h.flags.data() == nullptr) continue;
    std::fprintf(stderr, "[%s] placement %s: buffers on NUMA node %d, GPU %d on node %d\n", kSuite,
                 h.placement.label.c_str(), h.reads.numa_node(), ctx.devices[0], gpu_node);
    RETURN_IF_ERROR(FlagRoundTrips(ctx, h, gpu_node).Annotate("host_staged flag round trips, " + h.placement.label));
    RETURN_IF_ERROR(SmallReads(ctx, h, gpu_node).Annotate("host_staged small reads, " + h.placement.label));
    RETURN_IF_ERROR(CustomRankGroups(ctx, h.placement)
                        .Annotate("host_staged custom allreduce as rank groups, " + h.placement.label));
  }
  return Status::Ok();
}

}  // namespace specsim::validate
