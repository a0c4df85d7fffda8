#include "sim/net/maxmin.h"

#include <gtest/gtest.h>

#include <random>

namespace specsim::net {
namespace {

TEST(MaxMin, TwoFlowsOnOneLinkGetHalfEach) {
  // B = 10: each of 2 flows gets B/2.
  MaxMinProblem p{{10.0}, {{{0}}, {{0}}}};
  auto r = SolveMaxMin(p);
  EXPECT_DOUBLE_EQ(r[0], 5.0);
  EXPECT_DOUBLE_EQ(r[1], 5.0);
}

TEST(MaxMin, BottleneckElsewhereFreesCapacity) {
  // link0 (10) carries A and B; link1 (4) carries B and C.
  // link1 saturates first at level 4/2 = 2: B = C = 2. A takes the rest of link0: 10 - 2 = 8.
  MaxMinProblem p{{10.0, 4.0}, {{{0}}, {{0, 1}}, {{1}}}};
  auto r = SolveMaxMin(p);
  EXPECT_DOUBLE_EQ(r[0], 8.0);
  EXPECT_DOUBLE_EQ(r[1], 2.0);
  EXPECT_DOUBLE_EQ(r[2], 2.0);
}

TEST(MaxMin, PrivateCapFreezesOneFlow) {
  // Flow 0 capped at 3 on a link of 10: the other flow gets 7.
  MaxMinProblem p{{10.0}, {{{0}, 3.0}, {{0}}}};
  auto r = SolveMaxMin(p);
  EXPECT_DOUBLE_EQ(r[0], 3.0);
  EXPECT_DOUBLE_EQ(r[1], 7.0);
}

TEST(MaxMin, ParkingLot) {
  // Three links of capacity 1 in a row; one long flow over all three and one short flow per link.
  // Every link has 2 flows: all rates 1/2.
  MaxMinProblem p{{1.0, 1.0, 1.0}, {{{0, 1, 2}}, {{0}}, {{1}}, {{2}}}};
  for (double x : SolveMaxMin(p)) EXPECT_DOUBLE_EQ(x, 0.5);
}

TEST(MaxMin, ResourceCrossedTwiceCountsTwice) {
  // A flow that crosses the same resource twice (e.g. through host memory and back) uses 2x its
  // rate there: capacity 10 -> rate 5.
  MaxMinProblem p{{10.0}, {{{0, 0}}}};
  EXPECT_DOUBLE_EQ(SolveMaxMin(p)[0], 5.0);
}

TEST(MaxMin, NoResourcesMeansUnlimitedOrCap) {
  MaxMinProblem p{{}, {{{}, 2.5}, {{}}}};
  auto r = SolveMaxMin(p);
  EXPECT_DOUBLE_EQ(r[0], 2.5);
  EXPECT_TRUE(std::isinf(r[1]));
}

// Reference check on random problems: the allocation is feasible and every flow has a bottleneck
// (it is at its cap, or it crosses a saturated resource on which no flow gets more than it). That
// is the definition of max-min fairness, independent of how the solver gets there.
TEST(MaxMin, RandomProblemsAreFeasibleAndEveryFlowHasABottleneck) {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 300; ++trial) {
    MaxMinProblem p;
    int nr = 1 + rng() % 8, nf = 1 + rng() % 12;
    for (int j = 0; j < nr; ++j) p.capacity.push_back(1.0 + rng() % 100);
    for (int i = 0; i < nf; ++i) {
      MaxMinFlow f;
      int k = 1 + rng() % 3;
      for (int x = 0; x < k; ++x) f.resources.push_back(rng() % nr);
      if (rng() % 3 == 0) f.cap = 0.5 + rng() % 40;
      p.flows.push_back(f);
    }
    auto rate = SolveMaxMin(p);
    std::vector<double> used(nr, 0.0);
    for (int i = 0; i < nf; ++i)
      for (int j : p.flows[i].resources) used[j] += rate[i];
    for (int j = 0; j < nr; ++j) ASSERT_LE(used[j], p.capacity[j] * (1 + 1e-9)) << "trial " << trial;
    for (int i = 0; i < nf; ++i) {
      bool bottleneck = rate[i] >= p.flows[i].cap * (1 - 1e-9);
      for (int j : p.flows[i].resources) {
        if (used[j] < p.capacity[j] * (1 - 1e-9)) continue;
        bool is_max = true;
        for (int o = 0; o < nf; ++o)
          for (int jj : p.flows[o].resources)
            if (jj == j && rate[o] > rate[i] * (1 + 1e-9)) is_max = false;
        bottleneck = bottleneck || is_max;
      }
      ASSERT_TRUE(bottleneck) << "trial " << trial << " flow " << i << " rate " << rate[i];
    }
  }
}

}  // namespace
}  // namespace specsim::net
