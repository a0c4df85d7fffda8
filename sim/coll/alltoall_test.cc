#include "sim/coll/alltoall.h"

#include <gtest/gtest.h>

#include "sim/coll/schedule_check.h"

namespace specsim::coll {
namespace {

TEST(AllToAllTest, Invariants) {
  for (int n = 2; n <= 8; ++n) {
    for (int channels : {1, 2, 4}) {
      const int64_t S = int64_t{840} * 4 * 100;  // divisible by n * channels
      AllToAllOptions o;
      o.channels = channels;
      const Schedule s = BuildDirectAllToAll(n, S, o);
      SCOPED_TRACE("n=" + std::to_string(n) + " channels=" + std::to_string(channels));
      ASSERT_TRUE(CheckSchedule(s).ok()) << CheckSchedule(s).ToString();
      // Each rank keeps its own block and sends S/n to each of n-1 peers: (n-1)/n * S.
      for (int64_t sent : BytesSentPerRank(s)) EXPECT_EQ(sent, (n - 1) * S / n);
      for (int64_t got : BytesReceivedPerRank(s)) EXPECT_EQ(got, (n - 1) * S / n);
      EXPECT_EQ(LongestTransferChain(s), 1);  // all transfers at once
    }
  }
}

TEST(AllToAllTest, CrossingAndMechanism) {
  const int n = 8;
  const int64_t S = 8000;
  AllToAllOptions o;
  o.mechanism.assign(n, std::vector<net::Mechanism>(n, net::Mechanism::kHostStaged));
  o.protocol = NcclProtocolModel(NcclProto::kSimple);
  const Schedule s = BuildDirectAllToAll(n, S, o);
  // k(n-k) pairs cross each way, S/n each: 4 * 4 * 1000.
  const CrossingTraffic x = CrossingBytes(s, {0, 0, 0, 0, 1, 1, 1, 1});
  EXPECT_EQ(x.a_to_b_bytes, 16 * S / n);
  EXPECT_EQ(x.b_to_a_bytes, 16 * S / n);
  for (const ScheduleOp& op : s.ops) {
    if (op.kind == OpKind::kTransfer) {
      EXPECT_EQ(op.mechanism, net::Mechanism::kHostStaged);
    }
  }
}

}  // namespace
}  // namespace specsim::coll
