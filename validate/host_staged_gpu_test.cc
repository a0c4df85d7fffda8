// GPU tests of the host-staged kernels (host_staged_kernels.cu) on mapped host memory from
// NumaHostBuffer: a flag round trip returns the value written (same GPU, host thread, another
// GPU), a wrong echo is counted; small reads return the bytes written and a corrupted chunk is
// caught; writers leave their values; the allreduce kernels as rank groups through host memory sum
// exactly. Every test skips when no CUDA GPU is present.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "validate/cuda_util.h"
#include "validate/gpu_test_util.h"
#include "validate/kernels.h"
#include "validate/numa_host_buffer.h"

namespace specsim::validate {
namespace {

#define ASSERT_OK(expr)                    \
  do {                                     \
    auto _s = (expr);                      \
    ASSERT_TRUE(_s.ok()) << _s.ToString(); \
  } while (0)

uint32_t* Flag(const NumaHostBuffer& b, int offset, bool device) {
  return reinterpret_cast<uint32_t*>(static_cast<char*>(device ? b.device_ptr() : b.data()) + offset);
}

// The initiator side's device buffers and what one launch left in them.
struct FlagRun {
  unsigned int status[2] = {9, 9};
  uint64_t span[2] = {0, 0};
  std::vector<uint64_t> cycles;
};

FlagRun RunFlags(int device, const NumaHostBuffer& flags, uint32_t base, int rounds, HostFlagRole role) {
  FlagRun out;
  cudaSetDevice(device);
  auto cyc = DeviceBuffer::Create(device, rounds * 8);
  auto span = DeviceBuffer::Create(device, 16);
  auto st = DeviceBuffer::Create(device, 8);
  EXPECT_TRUE(cyc.ok() && span.ok() && st.ok());
  cudaMemset(st->data(), 0, 8);
  HostFlagArgs a;
  a.ping = Flag(flags, 0, true);
  a.pong = Flag(flags, 128, true);
  a.base = base;
  a.rounds = rounds;
  a.role = role;
  a.round_cycles = cyc->as<uint64_t>();
  a.span = span->as<uint64_t>();
  a.status = st->as<unsigned int>();
  a.timeout_ns = 1000000000ULL;
  EXPECT_EQ(LaunchHostFlagKernel(a, nullptr), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaMemcpy(out.status, st->data(), 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(out.span, span->data(), 16, cudaMemcpyDeviceToHost);
  out.cycles.resize(rounds);
  cudaMemcpy(out.cycles.data(), cyc->data(), rounds * 8, cudaMemcpyDeviceToHost);
  return out;
}

TEST(GpuHostStaged, FlagRoundTripOnOneGpuEchoesTheValueWritten) {
  REQUIRE_GPUS(1);
  auto flags = NumaHostBuffer::Create(4096, -1);
  ASSERT_OK(flags.status());
  // Two launches: the second starts from the first's last value.
  for (uint32_t base : {0u, 100u}) {
    FlagRun r = RunFlags(0, *flags, base, 100, HostFlagRole::kBoth);
    EXPECT_EQ(r.status[0], 0u);
    EXPECT_EQ(r.status[1], 0u);
    EXPECT_EQ(*Flag(*flags, 0, false), base + 100);
    EXPECT_EQ(*Flag(*flags, 128, false), base + 100);
    EXPECT_GT(r.span[0], 0u);
    EXPECT_GT(r.span[1], 0u);
    for (uint64_t c : r.cycles) EXPECT_GT(c, 0u);
  }
}

TEST(GpuHostStaged, AnEchoThatIsNotTheValueWrittenIsCounted) {
  REQUIRE_GPUS(1);
  auto flags = NumaHostBuffer::Create(4096, -1);
  ASSERT_OK(flags.status());
  *Flag(*flags, 128, false) = 77;  // pong holds neither 0 (the last round's) nor 1 (the echo awaited)
  FlagRun r = RunFlags(0, *flags, 0, 10, HostFlagRole::kBoth);
  EXPECT_GE(r.status[0], 1u);
  EXPECT_EQ(r.status[1], 0u);  // the responder's echo still arrives
}

TEST(GpuHostStaged, FlagRoundTripWithAHostThreadResponder) {
  REQUIRE_GPUS(1);
  auto flags = NumaHostBuffer::Create(4096, -1);
  ASSERT_OK(flags.status());
  uint32_t* ping = Flag(*flags, 0, false);
  uint32_t* pong = Flag(*flags, 128, false);
  const int rounds = 200;
  std::thread host([&] {
    for (int i = 1; i <= rounds; ++i) {
      while (__atomic_load_n(ping, __ATOMIC_ACQUIRE) != static_cast<uint32_t>(i)) {
      }
      __atomic_store_n(pong, static_cast<uint32_t>(i), __ATOMIC_RELEASE);
    }
  });
  FlagRun r = RunFlags(0, *flags, 0, rounds, HostFlagRole::kInitiator);
  host.join();
  EXPECT_EQ(r.status[0], 0u);
  EXPECT_EQ(r.status[1], 0u);
  EXPECT_EQ(*pong, static_cast<uint32_t>(rounds));
}

TEST(GpuHostStaged, FlagRoundTripBetweenTwoGpus) {
  REQUIRE_GPUS(2);
  auto flags = NumaHostBuffer::Create(4096, -1);
  ASSERT_OK(flags.status());
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  auto rst = DeviceBuffer::Create(1, 8);
  ASSERT_OK(rst.status());
  cudaMemset(rst->data(), 0, 8);
  auto stream = Stream::Create(1);
  ASSERT_OK(stream.status());
  HostFlagArgs r;
  r.ping = Flag(*flags, 0, true);
  r.pong = Flag(*flags, 128, true);
  r.rounds = 100;
  r.role = HostFlagRole::kResponder;
  r.status = rst->as<unsigned int>();
  r.timeout_ns = 1000000000ULL;
  ASSERT_EQ(LaunchHostFlagKernel(r, stream->get()), cudaSuccess);
  FlagRun run = RunFlags(0, *flags, 0, 100, HostFlagRole::kInitiator);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream->get()), cudaSuccess);
  unsigned int rs[2] = {9, 9};
  cudaMemcpy(rs, rst->data(), 8, cudaMemcpyDeviceToHost);
  EXPECT_EQ(run.status[0] + rs[0], 0u);
  EXPECT_EQ(run.status[1] + rs[1], 0u);
  EXPECT_EQ(*Flag(*flags, 128, false), 100u);
}

// A buffer of `chunks` chase chunks and `writers` regions of 4 chunks, with the chase written.
struct ReadSetup {
  NumaHostBuffer buf;
  DeviceBuffer span, steps, status, done;
  int64_t chunks = 0;
};

ReadSetup MakeReads(int64_t chunks, int blocks) {
  ReadSetup s;
  s.chunks = chunks;
  auto b = NumaHostBuffer::Create((chunks + 4 * blocks) * 256, -1);
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  s.buf = std::move(b).value();
  auto* w = static_cast<uint32_t*>(s.buf.data());
  for (int64_t c = 0; c < chunks; ++c)
    for (int i = 0; i < 64; ++i) w[c * 64 + i] = HostChaseNext(static_cast<uint32_t>(c), static_cast<uint32_t>(chunks));
  s.span = std::move(DeviceBuffer::Create(0, 16 * blocks)).value();
  s.steps = std::move(DeviceBuffer::Create(0, 8 * blocks)).value();
  s.status = std::move(DeviceBuffer::Create(0, 8)).value();
  s.done = std::move(DeviceBuffer::Create(0, 4)).value();
  return s;
}

HostSmallReadsArgs ReadArgs(ReadSetup& s, int blocks, int readers, int bytes, int k, int steps) {
  cudaMemset(s.status.data(), 0, 8);
  cudaMemset(s.done.data(), 0, 4);
  HostSmallReadsArgs a;
  a.buffer = s.buf.device_ptr();
  a.chunks = s.chunks;
  a.write_chunks_per_block = 4;
  a.bytes_per_read = bytes;
  a.reads_in_flight = k;
  a.steps = steps;
  a.blocks = blocks;
  a.reader_blocks = readers;
  a.threads = 32;
  a.block_span = s.span.as<uint64_t>();
  a.block_steps = s.steps.as<uint64_t>();
  a.status = s.status.as<unsigned int>();
  a.readers_done = s.done.as<unsigned int>();
  a.timeout_ns = 1000000000ULL;
  return a;
}

TEST(GpuHostStaged, SmallReadsReturnTheBytesWrittenAndCatchACorruptedChunk) {
  REQUIRE_GPUS(1);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const int blocks = 4;
  ReadSetup s = MakeReads(16, blocks);
  for (int bytes : {4, 16, 64, 256}) {
    for (int k : {1, 2, 4, 8}) {
      HostSmallReadsArgs a = ReadArgs(s, blocks, blocks, bytes, k, 32);
      ASSERT_EQ(LaunchHostSmallReads(a, nullptr), cudaSuccess);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      unsigned int st[2] = {9, 9};
      uint64_t span[2 * blocks], steps[blocks];
      cudaMemcpy(st, s.status.data(), 8, cudaMemcpyDeviceToHost);
      cudaMemcpy(span, s.span.data(), sizeof(span), cudaMemcpyDeviceToHost);
      cudaMemcpy(steps, s.steps.data(), sizeof(steps), cudaMemcpyDeviceToHost);
      EXPECT_EQ(st[0], 0u) << bytes << " B, " << k << " in flight";
      EXPECT_EQ(st[1], 0u);
      for (int b = 0; b < blocks; ++b) {
        EXPECT_GT(span[2 * b + 1], span[2 * b]);
        EXPECT_EQ(steps[b], 32u);
      }
    }
  }
  // 32 steps over 16 chunks visit every chunk: one wrong word in the first 4 bytes of chunk 5 is
  // seen by every chain.
  static_cast<uint32_t*>(s.buf.data())[5 * 64] ^= 1u;
  HostSmallReadsArgs a = ReadArgs(s, blocks, blocks, 4, 1, 32);
  ASSERT_EQ(LaunchHostSmallReads(a, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  unsigned int st[2] = {0, 0};
  cudaMemcpy(st, s.status.data(), 8, cudaMemcpyDeviceToHost);
  EXPECT_GE(st[0], static_cast<unsigned int>(blocks));
}

TEST(GpuHostStaged, WritersLeaveTheirValuesWhileReadersRead) {
  REQUIRE_GPUS(1);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const int blocks = 4, readers = 2;
  ReadSetup s = MakeReads(64, blocks);
  HostSmallReadsArgs a = ReadArgs(s, blocks, readers, 256, 2, 64);
  ASSERT_EQ(LaunchHostSmallReads(a, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  unsigned int st[2] = {9, 9};
  uint64_t steps[blocks];
  cudaMemcpy(st, s.status.data(), 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(steps, s.steps.data(), sizeof(steps), cudaMemcpyDeviceToHost);
  EXPECT_EQ(st[0], 0u);
  EXPECT_EQ(st[1], 0u);
  const auto* region = static_cast<const uint32_t*>(s.buf.data()) + 64 * 64;
  for (int w = 0; w < blocks - readers; ++w) {
    EXPECT_GE(steps[readers + w], 1u);
    const int64_t reached = std::min<int64_t>(4, static_cast<int64_t>(steps[readers + w]) * 2);
    for (int64_t c = 0; c < reached; ++c)
      for (int i = 0; i < 64; ++i)
        EXPECT_EQ(region[(w * 4 + c) * 64 + i], HostWriterValue(w, static_cast<uint32_t>(c))) << w << " " << c;
  }
}

TEST(GpuHostStaged, LaunchersRefuseWhatTheKernelsCannotRun) {
  REQUIRE_GPUS(1);
  ReadSetup s = MakeReads(16, 2);
  HostSmallReadsArgs a = ReadArgs(s, 2, 2, 12, 1, 8);
  EXPECT_EQ(LaunchHostSmallReads(a, nullptr), cudaErrorInvalidValue);
  a = ReadArgs(s, 2, 2, 16, 3, 8);
  EXPECT_EQ(LaunchHostSmallReads(a, nullptr), cudaErrorInvalidValue);
  a = ReadArgs(s, 2, 2, 16, 1, 8);
  a.chunks = 12;  // not a power of two
  EXPECT_EQ(LaunchHostSmallReads(a, nullptr), cudaErrorInvalidValue);
  HostFlagArgs f;
  EXPECT_EQ(LaunchHostFlagKernel(f, nullptr), cudaErrorInvalidValue);
}

// Our allreduce kernels as 4 rank groups on one GPU through host memory: every group's output is
// the exact sum under both barrier disciplines and the three flag layouts, over repeated launches whose grid changes (the
// epochs are kept per block slot, not per grid position); a rank-group launch past nranks is refused.
TEST(GpuHostStaged, RankGroupsThroughHostMemorySumExactly) {
  REQUIRE_GPUS(1);
  constexpr int kRanks = 4;
  constexpr int64_t kMaxCount = 8192;  // 16 KiB of bf16
  // Signal areas for packed flags and for a line per flag (separate: their slots would alias).
  std::vector<NumaHostBuffer> ex, sig, sig_line, sig_vllm;
  for (int r = 0; r < kRanks; ++r) {
    auto e = NumaHostBuffer::Create(2 * kMaxCount * 2, -1);
    auto g = NumaHostBuffer::Create(kMaxRanks * kMaxArBlocks * 4, -1);
    auto gl = NumaHostBuffer::Create(kMaxRanks * kMaxArBlocks * kMaxFlagStride * 4, -1);
    ASSERT_OK(e.status());
    ASSERT_OK(g.status());
    ASSERT_OK(gl.status());
    std::memset(g->data(), 0, g->bytes());
    std::memset(gl->data(), 0, gl->bytes());
    auto gv = NumaHostBuffer::Create(kMaxRanks * kMaxArBlocks * 4, -1);
    ASSERT_OK(gv.status());
    std::memset(gv->data(), 0, gv->bytes());
    sig_vllm.push_back(std::move(gv).value());
    ex.push_back(std::move(e).value());
    sig.push_back(std::move(g).value());
    sig_line.push_back(std::move(gl).value());
  }
  auto in = DeviceBuffer::Create(0, kRanks * kMaxCount * 2);
  auto out = DeviceBuffer::Create(0, kRanks * kMaxCount * 2);
  auto epochs = DeviceBuffer::Create(0, kMaxRanks * kMaxArBlocks * 4);
  auto err = DeviceBuffer::Create(0, 4);
  ASSERT_TRUE(in.ok() && out.ok() && epochs.ok() && err.ok());
  ASSERT_EQ(cudaMemset(epochs->data(), 0, epochs->bytes()), cudaSuccess);
  ASSERT_EQ(cudaMemset(err->data(), 0, 4), cudaSuccess);
  // Rank r's element i: (i + 3r) % 5 - 2 as bf16 (exact), so the sum is exact too.
  auto value = [](int r, int64_t i) { return static_cast<float>((i + 3 * r) % 5 - 2); };
  auto bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return static_cast<uint16_t>(u >> 16);
  };
  std::vector<uint16_t> host(kRanks * kMaxCount);
  for (int r = 0; r < kRanks; ++r)
    for (int64_t i = 0; i < kMaxCount; ++i) host[r * kMaxCount + i] = bits(value(r, i));
  for (int r = 0; r < kRanks; ++r) std::memcpy(ex[r].data(), host.data() + r * kMaxCount, kMaxCount * 2);
  // Layouts: 0 packed rank-major, 1 a line per flag, 2 block-major (vLLM's Signal).
  for (int layout : {0, 1, 2})
    for (CustomBarrierKind barrier : {CustomBarrierKind::kFramework, CustomBarrierKind::kSystemFence}) {
      const int stride = layout == 1 ? kMaxFlagStride : 1;
      for (bool two : {false, true}) {
        for (int64_t count : {int64_t{512}, kMaxCount, int64_t{512}}) {  // 1, then 2 blocks, then 1 again
          for (int r = 0; r < kRanks; ++r)
            ASSERT_EQ(cudaMemcpy(in->as<char>() + r * count * 2, host.data() + r * kMaxCount, count * 2,
                                 cudaMemcpyHostToDevice),
                      cudaSuccess);
          ASSERT_EQ(cudaMemset(out->data(), 0, kRanks * count * 2), cudaSuccess);
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          CustomAllreduceArgs a;
          a.nranks = kRanks;
          a.rank_groups = kRanks;
          a.count = count;
          a.input = in->data();
          a.output = out->data();
          for (int r = 0; r < kRanks; ++r) {
            a.exchange[r] = ex[r].device_ptr();
            a.signals[r] = static_cast<uint32_t*>((layout == 1   ? sig_line[r]
                                                   : layout == 2 ? sig_vllm[r]
                                                                 : sig[r])
                                                      .device_ptr());
          }
          a.epochs = epochs->as<uint32_t>();
          a.error = err->as<int>();
          a.timeout_ns = 1000000000ULL;
          a.blocks = static_cast<int>((count / 8 + 511) / 512);
          a.barrier = barrier;
          a.reduced_offset = kMaxCount;
          a.flag_stride = stride;
          a.flag_block_major = layout == 2;
          for (int launch = 0; launch < 3; ++launch)
            ASSERT_EQ(two ? LaunchTwoShotAllreduce(a, nullptr) : LaunchOneShotAllreduce(a, nullptr), cudaSuccess);
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          int e = 0;
          ASSERT_EQ(cudaMemcpy(&e, err->data(), 4, cudaMemcpyDeviceToHost), cudaSuccess);
          ASSERT_EQ(e, 0) << "a barrier timed out";
          std::vector<uint16_t> got(kRanks * count);
          ASSERT_EQ(cudaMemcpy(got.data(), out->data(), got.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
          int wrong = 0;
          for (int r = 0; r < kRanks; ++r)
            for (int64_t i = 0; i < count; ++i) {
              float sum = 0;
              for (int p = 0; p < kRanks; ++p) sum += value(p, i);
              wrong += got[r * count + i] != bits(sum);
            }
          EXPECT_EQ(wrong, 0) << (two ? "two-shot" : "one-shot") << " count " << count << " barrier "
                              << static_cast<int>(barrier) << " flag layout " << layout;
        }
      }
    }
  CustomAllreduceArgs bad;
  bad.nranks = 2;
  bad.rank = 1;
  bad.rank_groups = 2;  // ranks 1 and 2 of 2
  bad.count = 8;
  EXPECT_EQ(LaunchOneShotAllreduce(bad, nullptr), cudaErrorInvalidValue);
  bad.rank = 0;
  bad.flag_stride = kMaxFlagStride + 1;
  EXPECT_EQ(LaunchOneShotAllreduce(bad, nullptr), cudaErrorInvalidValue);
  bad.flag_stride = 2;
  bad.flag_block_major = true;  // block-major slots are packed
  EXPECT_EQ(LaunchOneShotAllreduce(bad, nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace specsim::validate
