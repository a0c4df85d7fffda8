#include "sim/coll/schedule.h"

#include <gtest/gtest.h>

namespace specsim::coll {
namespace {

TEST(ScheduleTest, AddReturnsIndicesInOrder) {
  Schedule s;
  ScheduleOp a;
  EXPECT_EQ(s.Add(a), 0);
  ScheduleOp b;
  b.deps = {0};
  EXPECT_EQ(s.Add(b), 1);
  EXPECT_EQ(s.ops.size(), 2u);
  EXPECT_EQ(s.ops[1].deps, std::vector<int32_t>{0});
}

TEST(ScheduleDeathTest, AddRejectsForwardDependency) {
  Schedule s;
  ScheduleOp op;
  op.deps = {0};  // would depend on itself
  EXPECT_DEATH(s.Add(op), "depends on 0");
}

TEST(ScheduleTest, CollectiveNames) {
  EXPECT_STREQ(CollectiveName(Collective::kAllReduce), "allreduce");
  EXPECT_STREQ(CollectiveName(Collective::kAllGather), "allgather");
  EXPECT_STREQ(CollectiveName(Collective::kReduceScatter), "reducescatter");
  EXPECT_STREQ(CollectiveName(Collective::kAllToAll), "alltoall");
}

TEST(ScheduleTest, EvenShareBytesSumsToTotal) {
  // 10 bytes in 4 parts: 3, 3, 2, 2.
  EXPECT_EQ(EvenShareBytes(10, 4, 0), 3);
  EXPECT_EQ(EvenShareBytes(10, 4, 1), 3);
  EXPECT_EQ(EvenShareBytes(10, 4, 2), 2);
  EXPECT_EQ(EvenShareBytes(10, 4, 3), 2);
  for (int parts : {1, 3, 7, 64}) {
    int64_t sum = 0;
    for (int i = 0; i < parts; ++i) sum += EvenShareBytes(1000003, parts, i);
    EXPECT_EQ(sum, 1000003) << parts;
  }
}

TEST(ScheduleTest, MechanismAtFallsBackWhenEmpty) {
  EXPECT_EQ(MechanismAt({}, 0, 1), net::Mechanism::kKernelWrite);
  MechanismMatrix m(2, std::vector<net::Mechanism>(2, net::Mechanism::kHostStaged));
  EXPECT_EQ(MechanismAt(m, 0, 1), net::Mechanism::kHostStaged);
}

}  // namespace
}  // namespace specsim::coll
