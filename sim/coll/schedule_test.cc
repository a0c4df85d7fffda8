#include "sim/coll/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace specsim::coll {
namespace {

// DepList holds up to kInline dependencies in the op and spills to the heap beyond: the same
// sequence either way, through copies and moves, and back inline when a tail erase shrinks it.
TEST(DepListTest, ASequenceWhetherInlineOrSpilled) {
  std::vector<int32_t> want;
  DepList d;
  EXPECT_TRUE(d.empty());
  for (int32_t i = 0; i < 3 * DepList::kInline; ++i) {
    d.push_back(10 * i);
    want.push_back(10 * i);
    ASSERT_EQ(d, want) << "after " << i + 1;
    const DepList copy = d;
    EXPECT_EQ(copy, want);
    DepList source = d;
    const DepList moved = std::move(source);
    EXPECT_EQ(moved, want);
  }
  // A tail erase back below kInline returns to the inline storage with the right values.
  d.erase(d.begin() + 2, d.end());
  EXPECT_EQ(d, (std::vector<int32_t>{0, 10}));
  d.push_back(7);
  EXPECT_EQ(d, (std::vector<int32_t>{0, 10, 7}));
  // erase-unique after a sort, as NormalizeDeps does, with a spilled list.
  DepList dup = {5, 3, 5, 1, 3, 9, 1};
  std::sort(dup.begin(), dup.end());
  dup.erase(std::unique(dup.begin(), dup.end()), dup.end());
  EXPECT_EQ(dup, (std::vector<int32_t>{1, 3, 5, 9}));
  EXPECT_EQ(DepList(std::vector<int32_t>{4, 5, 6, 7, 8}), (DepList{4, 5, 6, 7, 8}));
  EXPECT_FALSE((DepList{1, 2}) == (DepList{1, 3}));
  d.clear();
  EXPECT_TRUE(d.empty());
}

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
