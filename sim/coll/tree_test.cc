#include "sim/coll/tree.h"

#include <gtest/gtest.h>

#include "sim/coll/schedule_check.h"

namespace specsim::coll {
namespace {

TEST(TreeTest, ChainInvariants) {
  for (int n = 2; n <= 8; ++n) {
    for (int channels : {1, 2}) {
      for (bool ll : {false, true}) {
        TreeOptions o;
        o.channels = channels;
        o.protocol = ll ? NcclProtocolModel(NcclProto::kLl, NcclAlgo::kTree) : IdealProtocol();
        const int64_t S = int64_t{1} << 20;
        const Schedule s = BuildTreeAllReduce(n, S, o);
        SCOPED_TRACE("n=" + std::to_string(n) + " channels=" + std::to_string(channels));
        ASSERT_TRUE(CheckSchedule(s).ok()) << CheckSchedule(s).ToString();
        // The root (rank 0) and the leaf (rank n-1) send S; middle ranks send 2S (up and down).
        const std::vector<int64_t> sent = BytesSentPerRank(s);
        for (int r = 0; r < n; ++r) EXPECT_EQ(sent[r], (r == 0 || r == n - 1) ? S : 2 * S) << r;
        const std::vector<int64_t> got = BytesReceivedPerRank(s);
        for (int r = 0; r < n; ++r) EXPECT_EQ(got[r], (r == 0 || r == n - 1) ? S : 2 * S) << r;
      }
    }
  }
}

TEST(TreeTest, IdealChainIsTwoNMinusOneSteps) {
  for (int n = 2; n <= 8; ++n) {
    const Schedule s = BuildTreeAllReduce(n, 1 << 20, TreeOptions{});
    EXPECT_EQ(s.num_segments, 1);
    EXPECT_EQ(LongestTransferChain(s), 2 * (n - 1));
  }
}

TEST(TreeTest, ChunksPipelineTheChain) {
  TreeOptions o;
  o.protocol = NcclProtocolModel(NcclProto::kSimple, NcclAlgo::kTree);
  // 4 MiB: 8 Simple slots of 512 KiB -> 8 chunks. Chunks follow each other on every link, so
  // the chain is 2(n-1) + (K-1) transfers: the pipeline fill plus one chunk per extra chunk.
  const int n = 6;
  const Schedule s = BuildTreeAllReduce(n, int64_t{4} << 20, o);
  ASSERT_TRUE(CheckSchedule(s).ok()) << CheckSchedule(s).ToString();
  EXPECT_EQ(s.num_segments, 8);
  EXPECT_EQ(LongestTransferChain(s), 2 * (n - 1) + 7);
  for (const ScheduleOp& op : s.ops) {
    if (op.kind == OpKind::kDelay) {
      EXPECT_EQ(op.duration_ps, 8'400'000);  // tree Simple base 8.4 us
    }
    if (op.kind == OpKind::kTransfer) {
      EXPECT_EQ(op.latency_floor_ps, 4'000'000);  // PCI tree hop 4 us
    }
  }
}

TEST(TreeTest, OrderSetsRootAndLeaf) {
  TreeOptions o;
  o.order = {3, 1, 0, 2};
  const Schedule s = BuildTreeAllReduce(4, 4096, o);
  ASSERT_TRUE(CheckSchedule(s).ok()) << CheckSchedule(s).ToString();
  const std::vector<int64_t> sent = BytesSentPerRank(s);
  EXPECT_EQ(sent[3], 4096);  // root
  EXPECT_EQ(sent[2], 4096);  // leaf
  EXPECT_EQ(sent[1], 8192);
  EXPECT_EQ(sent[0], 8192);
  o.order = {3, 1, 0};
  EXPECT_FALSE(ValidateTreeOptions(4, 4096, o).ok());
}

}  // namespace
}  // namespace specsim::coll
