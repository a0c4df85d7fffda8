#include "sim/coll/custom_allreduce.h"

#include <gtest/gtest.h>

#include "sim/coll/schedule_check.h"

namespace specsim::coll {
namespace {

constexpr int64_t kS = int64_t{840} * 1000;  // divisible by every n in 2..8

TEST(CustomAllReduceTest, OneShotInvariants) {
  for (int n = 2; n <= 8; ++n) {
    const Schedule s = BuildOneShotAllReduce(n, kS, CustomAllReduceOptions{});
    ASSERT_TRUE(CheckSchedule(s).ok()) << "n=" << n << ": " << CheckSchedule(s).ToString();
    // Every rank pulls all n-1 peers' full input: ingress (n-1) * S.
    for (int64_t got : BytesReceivedPerRank(s)) EXPECT_EQ(got, (n - 1) * kS) << n;
    for (int64_t sent : BytesSentPerRank(s)) EXPECT_EQ(sent, (n - 1) * kS) << n;
    int pulls = 0;
    for (const ScheduleOp& op : s.ops) {
      if (op.kind != OpKind::kTransfer || op.effect == DataEffect::kNone) continue;
      ++pulls;
      EXPECT_EQ(op.mechanism, net::Mechanism::kKernelRead);
      EXPECT_EQ(op.src_buffer, Buffer::kIn);
      EXPECT_DOUBLE_EQ(op.read_sms, 36.0 / (n - 1));  // 36 blocks shared by n-1 pulls
      EXPECT_TRUE(op.unordered_reduce);
    }
    EXPECT_EQ(pulls, n * (n - 1));
    // Chain: start flag -> pull -> end flag.
    EXPECT_EQ(LongestTransferChain(s), 3);
  }
}

TEST(CustomAllReduceTest, TwoShotInvariants) {
  for (int n = 2; n <= 8; ++n) {
    const Schedule s = BuildTwoShotAllReduce(n, kS, CustomAllReduceOptions{});
    ASSERT_TRUE(CheckSchedule(s).ok()) << "n=" << n << ": " << CheckSchedule(s).ToString();
    // Reduce-scatter pulls (n-1) blocks of S/n, all-gather pulls (n-1) more: 2(n-1)/n * S.
    for (int64_t got : BytesReceivedPerRank(s)) EXPECT_EQ(got, 2 * (n - 1) * kS / n) << n;
    for (int64_t sent : BytesSentPerRank(s)) EXPECT_EQ(sent, 2 * (n - 1) * kS / n) << n;
    // Chain: start flag -> RS pull -> middle flag -> AG pull (vLLM's kernel returns after its
    // gather); with validate's fence kernel's third barrier, -> end flag.
    EXPECT_EQ(LongestTransferChain(s), 4);
    CustomAllReduceOptions fence;
    fence.two_shot_end_barrier = true;
    EXPECT_EQ(LongestTransferChain(BuildTwoShotAllReduce(n, kS, fence)), 5);
  }
}

TEST(CustomAllReduceTest, BarrierFlagsAndDependencies) {
  CustomAllReduceOptions o;
  o.blocks = 16;
  o.flag_bytes_per_block = 8;
  o.launch_delay_ps = 4'000'000;
  const int n = 4;
  const Schedule s = BuildOneShotAllReduce(n, kS, o);
  int flags = 0, joins = 0;
  for (const ScheduleOp& op : s.ops) {
    // Delays: the launch, or the zero-length join of a rank's n - 1 pulls before its end flags.
    if (op.kind == OpKind::kDelay && op.duration_ps == 0) {
      ++joins;
      EXPECT_EQ(op.deps.size(), static_cast<size_t>(n - 1));
    } else if (op.kind == OpKind::kDelay) {
      EXPECT_EQ(op.duration_ps, 4'000'000);
    }
    if (op.kind == OpKind::kTransfer && op.effect == DataEffect::kNone) {
      ++flags;
      EXPECT_EQ(op.bytes, 16 * 8);
      EXPECT_EQ(op.mechanism, net::Mechanism::kKernelWrite);
    }
  }
  EXPECT_EQ(flags, 2 * n * (n - 1));  // start and end barriers
  EXPECT_EQ(joins, n);                // one per rank, before its end flags
  // Each pull from peer p into r waits for p's start flag to r.
  for (const ScheduleOp& op : s.ops) {
    if (op.effect != DataEffect::kReduce) continue;
    bool waits_for_flag = false;
    for (int32_t d : op.deps) {
      const ScheduleOp& dep = s.ops[d];
      waits_for_flag |= dep.kind == OpKind::kTransfer && dep.effect == DataEffect::kNone &&
                        dep.src_rank == op.src_rank && dep.dst_rank == op.dst_rank;
    }
    EXPECT_TRUE(waits_for_flag);
  }
  // Flag bytes count only as control traffic.
  EXPECT_EQ(BytesReceivedPerRank(s, TrafficFilter::kAll)[0], (n - 1) * kS + 2 * (n - 1) * 16 * 8);
}

TEST(CustomAllReduceTest, CrossingBytesOnAFourPlusFourSplit) {
  const int n = 8;
  const std::vector<int> side = {0, 0, 0, 0, 1, 1, 1, 1};
  // One-shot: each of the k = 4 ranks on a side reads S from each of the n-k = 4 on the other:
  // k(n-k) S = 16 S per direction.
  const CrossingTraffic one = CrossingBytes(BuildOneShotAllReduce(n, kS, {}), side);
  EXPECT_EQ(one.a_to_b_bytes, 16 * kS);
  EXPECT_EQ(one.b_to_a_bytes, 16 * kS);
  // Two-shot: twice k(n-k) pulls of S/n: 2k(n-k) S / n = 4 S.
  const CrossingTraffic two = CrossingBytes(BuildTwoShotAllReduce(n, kS, {}), side);
  EXPECT_EQ(two.a_to_b_bytes, 4 * kS);
  EXPECT_EQ(two.b_to_a_bytes, 4 * kS);
}

TEST(CustomAllReduceTest, UnevenBytesStillSumExactly) {
  const Schedule s = BuildTwoShotAllReduce(3, 1000, {});  // blocks of 334, 333, 333
  ASSERT_TRUE(CheckSchedule(s).ok()) << CheckSchedule(s).ToString();
  // Rank 0 pulls block 0 (334) from 2 peers, then blocks 1 and 2 (333 each).
  EXPECT_EQ(BytesReceivedPerRank(s)[0], 2 * 334 + 333 + 333);
}

TEST(CustomAllReduceTest, Validate) {
  CustomAllReduceOptions o;
  o.blocks = 0;
  EXPECT_NE(ValidateCustomAllReduceOptions(4, 100, o).message().find("blocks = 0"), std::string::npos);
  o.blocks = 36;
  EXPECT_FALSE(ValidateCustomAllReduceOptions(0, 100, o).ok());
  EXPECT_TRUE(ValidateCustomAllReduceOptions(4, 100, o).ok());
}

// validate's kernels (and vLLM's eager path) stage the input first; through mapped host memory
// every byte crosses the GPU's host link: one-shot writes S to host and reads n * S back (its own
// copy included); two-shot writes S, reads S (n blocks of S/n) while writing its reduced S/n back,
// then reads S again. The data checker still sees a correct allreduce with no races.
TEST(CustomAllReduceTest, StagedThroughHostMemory) {
  for (int n = 2; n <= 8; ++n) {
    CustomAllReduceOptions o;
    o.stage_input = true;
    o.host_mapped = true;
    for (bool two : {false, true}) {
      const Schedule s = two ? BuildTwoShotAllReduce(n, kS, o) : BuildOneShotAllReduce(n, kS, o);
      ASSERT_TRUE(CheckSchedule(s).ok()) << "n=" << n << " two=" << two << ": " << CheckSchedule(s).ToString();
      int64_t to_host = 0, from_host = 0;
      for (const ScheduleOp& op : s.ops) {
        if (op.kind != OpKind::kTransfer || op.host_end == HostEnd::kNone) continue;
        if (op.host_end == HostEnd::kDst) {
          EXPECT_EQ(op.mechanism, net::Mechanism::kKernelWrite);
          if (op.dst_rank == 0) to_host += op.bytes;
        } else {
          EXPECT_EQ(op.mechanism, net::Mechanism::kKernelRead);
          if (op.dst_rank == 0) from_host += op.bytes;
        }
      }
      const int64_t block = EvenShareBytes(kS, n, 0);
      EXPECT_EQ(to_host, two ? kS + block : kS) << n;
      EXPECT_EQ(from_host, two ? 2 * kS : n * kS) << n;
      // Flags live in host memory too.
      for (const ScheduleOp& op : s.ops) {
        if (op.kind == OpKind::kTransfer && op.effect == DataEffect::kNone && op.host_end == HostEnd::kNone &&
            op.src_rank != op.dst_rank) {
          EXPECT_EQ(op.mechanism, net::Mechanism::kHostStaged);
        }
      }
    }
  }
}

// Registered host buffers (vLLM's registered path where the buffers are mapped host memory, our
// framework-barrier kernels as rank groups): the input is read where it lies, no staging write;
// one-shot reads n * S from host memory per rank (its own input included), two-shot S, then its
// reduced block goes back to host memory for the gather's S.
TEST(CustomAllReduceTest, RegisteredInHostMemoryReadsInPlace) {
  for (int n = 2; n <= 8; ++n) {
    CustomAllReduceOptions o;
    o.host_mapped = true;
    ASSERT_TRUE(ValidateCustomAllReduceOptions(n, kS, o).ok());
    for (bool two : {false, true}) {
      const Schedule s = two ? BuildTwoShotAllReduce(n, kS, o) : BuildOneShotAllReduce(n, kS, o);
      ASSERT_TRUE(CheckSchedule(s).ok()) << "n=" << n << " two=" << two << ": " << CheckSchedule(s).ToString();
      int64_t to_host = 0, from_host = 0;
      for (const ScheduleOp& op : s.ops) {
        if (op.kind != OpKind::kTransfer || op.host_end == HostEnd::kNone || op.dst_rank != 0) continue;
        (op.host_end == HostEnd::kDst ? to_host : from_host) += op.bytes;
      }
      const int64_t block = EvenShareBytes(kS, n, 0);
      EXPECT_EQ(to_host, two ? block : 0) << n;
      EXPECT_EQ(from_host, two ? 2 * kS : n * kS) << n;
    }
  }
}

TEST(CustomAllReduceTest, StagedOverPeerMemoryReadsPeersOnly) {
  CustomAllReduceOptions o;
  o.stage_input = true;
  for (int n = 2; n <= 8; ++n) {
    const Schedule one = BuildOneShotAllReduce(n, kS, o);
    ASSERT_TRUE(CheckSchedule(one).ok()) << CheckSchedule(one).ToString();
    for (int64_t got : BytesReceivedPerRank(one)) EXPECT_EQ(got, (n - 1) * kS) << n;
    const Schedule two = BuildTwoShotAllReduce(n, kS, o);
    ASSERT_TRUE(CheckSchedule(two).ok()) << CheckSchedule(two).ToString();
    for (int64_t got : BytesReceivedPerRank(two)) EXPECT_EQ(got, 2 * (n - 1) * kS / n) << n;
  }
}

}  // namespace
}  // namespace specsim::coll
