#include "validate/rank_threads.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

namespace specsim::validate {
namespace {

TEST(RankThreads, CpuListsParseAsSysfsWritesThem) {
  auto l = ParseCpuList("0-3,8,10-11\n");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(*l, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  auto overlap = ParseCpuList("4,2-4");  // sorted, each CPU once
  ASSERT_TRUE(overlap.ok());
  EXPECT_EQ(*overlap, (std::vector<int>{2, 3, 4}));
  auto empty = ParseCpuList("\n");  // a GPU without a NUMA description
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  for (const char* bad : {"3-1", "a", "1,,2", "0-", "70000"}) {
    auto b = ParseCpuList(bad);
    EXPECT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.status().message().find(bad), std::string::npos) << b.status().message();
  }
}

// 2 sockets x 4 cores x 2 threads: CPUs 0-3 and 8-11 on socket 0, 4-7 and 12-15 on socket 1;
// CPU c and c+8 are hyperthread siblings.
CpuTopology TwoSocketsWithSiblings() {
  CpuTopology t;
  for (int c = 0; c < 16; ++c) {
    t.allowed.push_back(c);
    t.core_of.push_back(c % 8);
  }
  return t;
}

TEST(RankThreads, EachRankGetsAPhysicalCoreOfItsOwnNearItsGpu) {
  const CpuTopology t = TwoSocketsWithSiblings();
  const std::vector<int> socket0{0, 1, 2, 3, 8, 9, 10, 11}, socket1{4, 5, 6, 7, 12, 13, 14, 15};
  auto two = ChooseRankCpus({socket0, socket1}, t);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(*two, (std::vector<int>{0, 4}));
  // Four GPUs on socket 0: four cores there, never two siblings (0 and 8 share a core).
  auto four = ChooseRankCpus({socket0, socket0, socket0, socket0}, t);
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(*four, (std::vector<int>{0, 1, 2, 3}));
  // A fifth rank on socket 0 finds its cores taken and runs on socket 1 rather than on a sibling.
  auto five = ChooseRankCpus({socket0, socket0, socket0, socket0, socket0}, t);
  ASSERT_TRUE(five.ok());
  EXPECT_EQ(five->back(), 4);
}

TEST(RankThreads, UnknownLocalityAndARestrictedProcessStillGetDistinctCores) {
  CpuTopology t = TwoSocketsWithSiblings();
  auto unknown = ChooseRankCpus({{}, {}}, t);  // a VM without local_cpulist
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(*unknown, (std::vector<int>{0, 1}));
  t.allowed = {9, 10, 11, 1};  // taskset: CPU 1 and its sibling 9 are one core
  std::sort(t.allowed.begin(), t.allowed.end());
  auto restricted = ChooseRankCpus({{0, 1, 2, 3, 8, 9, 10, 11}, {0, 1, 2, 3, 8, 9, 10, 11}}, t);
  ASSERT_TRUE(restricted.ok());
  EXPECT_EQ(*restricted, (std::vector<int>{1, 10}));
  auto too_many = ChooseRankCpus({{}, {}, {}, {}}, t);  // three cores for four ranks
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("4 ranks need a physical core each"), std::string::npos)
      << too_many.status().message();
}

TEST(RankThreads, ScopedPinRunsTheThreadOnItsCpuAndRestoresTheMask) {
  auto t = ReadCpuTopology();
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const int cpu = t->allowed.back();
  std::thread([&] {
    cpu_set_t before;
    ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
    {
      ScopedCpuPin pin(cpu);
      ASSERT_TRUE(pin.status().ok()) << pin.status().ToString();
      EXPECT_EQ(sched_getcpu(), cpu);
      cpu_set_t now;
      ASSERT_EQ(sched_getaffinity(0, sizeof(now), &now), 0);
      EXPECT_EQ(CPU_COUNT(&now), 1);
    }
    cpu_set_t after;
    ASSERT_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
    EXPECT_TRUE(CPU_EQUAL(&before, &after));
  }).join();
  ScopedCpuPin none(-1);  // free threads: nothing happens
  EXPECT_TRUE(none.status().ok());
}

}  // namespace
}  // namespace specsim::validate
