#include "sim/coll/ring.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>

#include "sim/coll/pipeline.h"
#include "sim/coll/schedule_check.h"

namespace specsim::coll {
namespace {

// 840 = lcm(1..8): with one chunk, S = 840 * C * 1000 splits exactly into n * C blocks.
int64_t DivisibleBytes(int channels) { return int64_t{840} * channels * 1000; }

ProtocolModel Protocol(const std::string& name) {
  if (name == "ll") return NcclProtocolModel(NcclProto::kLl);
  if (name == "simple") return NcclProtocolModel(NcclProto::kSimple);
  return IdealProtocol();
}

TEST(RingTest, IdealAllReduceIsTwoNMinusOneStepsOfSOverN) {
  for (int n = 2; n <= 8; ++n) {
    const int64_t S = DivisibleBytes(1);
    const Schedule s = BuildRingAllReduce(n, S, RingOptions{});
    ASSERT_TRUE(CheckSchedule(s).ok()) << "n=" << n << ": " << CheckSchedule(s).ToString();
    EXPECT_EQ(s.num_segments, n);
    // T = 2(n-1) alpha + 2(n-1)/n S/B needs exactly 2(n-1) dependent steps of S/n bytes.
    EXPECT_EQ(LongestTransferChain(s), 2 * (n - 1)) << n;
    int transfers = 0;
    for (const ScheduleOp& op : s.ops) {
      if (op.kind == OpKind::kDelay) {
        EXPECT_EQ(op.duration_ps, 0);
        continue;
      }
      ++transfers;
      EXPECT_EQ(op.bytes, S / n);
      EXPECT_EQ(op.latency_floor_ps, 0);
      EXPECT_EQ(op.wire_efficiency, 1.0);
      EXPECT_EQ(op.mechanism, net::Mechanism::kKernelWrite);
      EXPECT_EQ(op.dst_rank, (op.src_rank + 1) % n);
    }
    EXPECT_EQ(transfers, 2 * (n - 1) * n);
  }
}

TEST(RingTest, AllReduceInvariantsOverRanksChannelsProtocols) {
  for (int n = 2; n <= 8; ++n) {
    for (int channels : {1, 2, 4}) {
      for (const std::string proto : {"ideal", "ll", "simple"}) {
        for (int64_t S : {DivisibleBytes(channels), int64_t{3} << 20, int64_t{64} << 20}) {
          RingOptions o;
          o.channels = channels;
          o.protocol = Protocol(proto);
          const Schedule s = BuildRingAllReduce(n, S, o);
          SCOPED_TRACE("n=" + std::to_string(n) + " channels=" + std::to_string(channels) + " " + proto +
                       " S=" + std::to_string(S));
          ASSERT_TRUE(CheckSchedule(s).ok()) << CheckSchedule(s).ToString();
          // Bytes sent per rank = 2(n-1)/n * S: n-1 blocks in each phase. Blocks differ by at most
          // one byte per segment when S does not split evenly.
          const double want = 2.0 * (n - 1) / n * S;
          const int slack = s.num_segments;  // one byte per segment
          for (int64_t sent : BytesSentPerRank(s)) EXPECT_NEAR(sent, want, slack);
          for (int64_t got : BytesReceivedPerRank(s)) EXPECT_NEAR(got, want, slack);
          EXPECT_EQ(s.channels, channels);
        }
      }
    }
  }
}

TEST(RingTest, ExactBytesWhenDivisible) {
  const int64_t S = DivisibleBytes(2);
  RingOptions o;
  o.channels = 2;
  const Schedule s = BuildRingAllReduce(7, S, o);
  for (int64_t sent : BytesSentPerRank(s)) EXPECT_EQ(sent, 2 * 6 * S / 7);
}

TEST(RingTest, AllGatherAndReduceScatter) {
  for (int n = 2; n <= 8; ++n) {
    for (int channels : {1, 3}) {
      for (const std::string proto : {"ideal", "ll"}) {
        RingOptions o;
        o.channels = channels;
        o.protocol = Protocol(proto);
        o.order = {};
        for (int r = n - 1; r >= 0; --r) o.order.push_back(r);  // a reversed ring
        const int64_t S = DivisibleBytes(channels) * 4;
        for (const Schedule& s : {BuildRingAllGather(n, S, o), BuildRingReduceScatter(n, S, o)}) {
          SCOPED_TRACE(std::string(CollectiveName(s.collective)) + " n=" + std::to_string(n) +
                       " channels=" + std::to_string(channels) + " " + proto);
          ASSERT_TRUE(CheckSchedule(s).ok()) << CheckSchedule(s).ToString();
          // (n-1)/n * S per rank: n-1 steps of one block.
          for (int64_t sent : BytesSentPerRank(s)) EXPECT_NEAR(sent, (n - 1.0) / n * S, s.num_segments);
          if (proto == "ideal" && channels == 1) {
            EXPECT_EQ(LongestTransferChain(s), n - 1);
          }
        }
      }
    }
  }
}

TEST(RingTest, ProtocolSetsFloorsEfficiencyAndBaseDelay) {
  RingOptions o;
  o.protocol = NcclProtocolModel(NcclProto::kLl);
  // Block per (channel, step) = S / (n * C) = 100 KiB with S = 4 * 2 * 100 KiB: LL slots hold
  // 32 KiB of payload, so ceil(100 / 32) = 4 chunks.
  o.channels = 2;
  const int n = 4;
  const int64_t S = int64_t{n} * 2 * 100 * 1024;
  const Schedule s = BuildRingAllReduce(n, S, o);
  ASSERT_TRUE(CheckSchedule(s).ok()) << CheckSchedule(s).ToString();
  EXPECT_EQ(s.num_segments, n * 2 * 4);
  EXPECT_EQ(s.protocol, "ll");
  int transfers = 0;
  for (const ScheduleOp& op : s.ops) {
    if (op.kind == OpKind::kDelay) {
      EXPECT_EQ(op.duration_ps, 6'600'000);  // NCCL Ring LL base 6.6 us
      continue;
    }
    ++transfers;
    EXPECT_EQ(op.latency_floor_ps, 1'000'000);  // PCI Ring LL hop 1.0 us
    EXPECT_EQ(op.wire_efficiency, 0.5);
    EXPECT_EQ(op.bytes, 25 * 1024);
  }
  EXPECT_EQ(transfers, 2 * (n - 1) * n * 2 * 4);
  // A connection carries its chunks in order (step-major), so the longest chain is every transfer
  // of one connection: 2(n-1) steps x 4 chunks. (Each link is busy all the time either way: a
  // ring's bandwidth term 2(n-1)/n S/B does not depend on the chunk count.)
  o.channels = 1;
  EXPECT_EQ(LongestTransferChain(BuildRingAllReduce(n, S / 2, o)), 2 * (n - 1) * 4);
}

TEST(RingTest, ChunksAreCappedAndEnlarged) {
  RingOptions o;
  o.protocol = NcclProtocolModel(NcclProto::kSimple);
  // 1 GiB over 8 ranks: 128 MiB blocks would be 256 Simple slots; capped at 16 chunks of 8 MiB.
  const Schedule s = BuildRingAllReduce(8, int64_t{1} << 30, o);
  EXPECT_EQ(s.num_segments, 8 * 16);
  EXPECT_EQ(s.ops.back().bytes, int64_t{8} << 20);
  o.max_chunks_per_step = 3;
  EXPECT_EQ(BuildRingAllReduce(8, int64_t{1} << 30, o).num_segments, 8 * 3);
}

// Connection key: (src, dst, channel) -> transfer ops in issue order.
std::map<std::tuple<int, int, int>, std::vector<int>> Connections(const Schedule& s) {
  std::map<std::tuple<int, int, int>, std::vector<int>> conns;
  for (int i = 0; i < static_cast<int>(s.ops.size()); ++i) {
    const ScheduleOp& op = s.ops[i];
    if (op.kind == OpKind::kTransfer) conns[{op.src_rank, op.dst_rank, op.channel}].push_back(i);
  }
  return conns;
}

bool HasDep(const ScheduleOp& op, int dep) { return std::find(op.deps.begin(), op.deps.end(), dep) != op.deps.end(); }

TEST(RingTest, ConnectionOrderAndSlots) {
  for (bool in_order : {true, false}) {
    RingOptions o;
    o.protocol = NcclProtocolModel(NcclProto::kLl);
    o.connection_in_order = in_order;
    // 16 chunks of 32 KiB per step at n = 3: 48 transfers per connection, more than 8 slots.
    const Schedule s = BuildRingAllReduce(3, int64_t{3} * 16 * 32 * 1024, o);
    ASSERT_TRUE(CheckSchedule(s).ok()) << CheckSchedule(s).ToString();
    const auto conns = Connections(s);
    EXPECT_EQ(conns.size(), 3u);
    for (const auto& [key, ops] : conns) {
      ASSERT_EQ(ops.size(), 4u * 16);  // 2(n-1) steps x 16 chunks
      for (size_t j = 0; j < ops.size(); ++j) {
        const ScheduleOp& op = s.ops[ops[j]];
        if (j >= 8) {
          EXPECT_TRUE(HasDep(op, ops[j - 8])) << "slot reuse " << j;
        }
        if (j >= 1) {
          EXPECT_EQ(HasDep(op, ops[j - 1]), in_order) << j;
        }
      }
    }
  }
}

// ConnectionOrder keeps only the last `slots` transfers: it names exactly the transfers a full
// history would (j-1 when in order, j-slots once the slots are used), for every slot count and
// well past the ring buffer's wrap; NormalizeDeps equals sort + unique for short and long lists.
TEST(PipelineTest, ConnectionOrderAndNormalizeDepsMatchTheirDefinitions) {
  for (int slots = 1; slots <= 5; ++slots) {
    for (bool in_order : {true, false}) {
      ConnectionOrder conn(slots, in_order);
      std::vector<int> history;
      for (int j = 0; j < 23; ++j) {
        DepList got;
        conn.AddDeps(got);
        std::vector<int32_t> want;
        if (in_order && j >= 1) want.push_back(history[j - 1]);
        if (j >= slots) want.push_back(history[j - slots]);
        EXPECT_TRUE(got == want) << "slots " << slots << " transfer " << j;
        const int op = 1000 + 7 * j;  // any op indices
        conn.Record(op);
        history.push_back(op);
      }
    }
  }
  std::mt19937 rng(7);
  for (int size : {0, 1, 2, 3, 4, 5, 16, 17, 40}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<int32_t> values(size);
      for (int32_t& v : values) v = static_cast<int32_t>(rng() % 12);
      DepList deps(values);
      NormalizeDeps(deps);
      std::sort(values.begin(), values.end());
      values.erase(std::unique(values.begin(), values.end()), values.end());
      EXPECT_TRUE(deps == values) << "size " << size;
    }
  }
}

TEST(RingTest, MechanismMatrixAndOrder) {
  const int n = 8;
  RingOptions o;
  o.mechanism.assign(n, std::vector<net::Mechanism>(n, net::Mechanism::kKernelWrite));
  o.mechanism[3][4] = net::Mechanism::kHostStaged;
  o.mechanism[7][0] = net::Mechanism::kHostStaged;
  const Schedule s = BuildRingAllReduce(n, DivisibleBytes(1), o);
  for (const ScheduleOp& op : s.ops) {
    if (op.kind != OpKind::kTransfer) continue;
    const bool staged = (op.src_rank == 3 && op.dst_rank == 4) || (op.src_rank == 7 && op.dst_rank == 0);
    EXPECT_EQ(op.mechanism, staged ? net::Mechanism::kHostStaged : net::Mechanism::kKernelWrite);
  }
  o.mechanism.clear();
  o.order = {0, 2, 4, 6, 1, 3, 5, 7};
  const Schedule odd = BuildRingAllReduce(n, DivisibleBytes(1), o);
  ASSERT_TRUE(CheckSchedule(odd).ok()) << CheckSchedule(odd).ToString();
  for (const ScheduleOp& op : odd.ops) {
    if (op.kind != OpKind::kTransfer) continue;
    const int pos = static_cast<int>(std::find(o.order.begin(), o.order.end(), op.src_rank) - o.order.begin());
    EXPECT_EQ(op.dst_rank, o.order[(pos + 1) % n]);
  }
}

TEST(RingTest, CrossingBytesOnAFourPlusFourSplit) {
  const int n = 8;
  const int64_t S = DivisibleBytes(1);
  const std::vector<int> side = {0, 0, 0, 0, 1, 1, 1, 1};
  // Ring 0..7 crosses the cut on 3->4 and 7->0 only: each carries 2(n-1)/n * S = 1.75 S.
  const CrossingTraffic ring = CrossingBytes(BuildRingAllReduce(n, S, RingOptions{}), side);
  EXPECT_EQ(ring.a_to_b_bytes, S * 7 / 4);
  EXPECT_EQ(ring.b_to_a_bytes, S * 7 / 4);
  // Ring 0,4,1,5,2,6,3,7 crosses on every edge: 4 edges per direction = 7 S.
  RingOptions o;
  o.order = {0, 4, 1, 5, 2, 6, 3, 7};
  const CrossingTraffic zigzag = CrossingBytes(BuildRingAllReduce(n, S, o), side);
  EXPECT_EQ(zigzag.a_to_b_bytes, 7 * S);
  EXPECT_EQ(zigzag.b_to_a_bytes, 7 * S);
}

TEST(RingTest, SingleRankIsJustTheDelay) {
  const Schedule s = BuildRingAllReduce(1, 1000, RingOptions{});
  EXPECT_EQ(s.ops.size(), 1u);
  EXPECT_TRUE(CheckSchedule(s).ok());
}

TEST(RingTest, ValidateOptions) {
  RingOptions o;
  o.order = {0, 1, 1};
  EXPECT_NE(ValidateRingOptions(3, 100, o).message().find("order[2] = 1: rank listed twice"), std::string::npos)
      << ValidateRingOptions(3, 100, o).message();
  o.order = {0, 1};
  EXPECT_NE(ValidateRingOptions(3, 100, o).message().find("must list all 3"), std::string::npos);
  o.order = {};
  o.channels = 0;
  EXPECT_NE(ValidateRingOptions(3, 100, o).message().find("channels = 0"), std::string::npos);
  o.channels = 1;
  o.mechanism.assign(2, {});
  EXPECT_FALSE(ValidateRingOptions(3, 100, o).ok());
  o.mechanism.clear();
  EXPECT_FALSE(ValidateRingOptions(3, -1, o).ok());
  EXPECT_TRUE(ValidateRingOptions(3, 100, o).ok());
}

}  // namespace
}  // namespace specsim::coll
