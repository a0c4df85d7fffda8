#include "sim/net/maxmin.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
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

// The reference: progressive filling exactly as first written (every resource and every flow
// looked at in every round, fresh vectors per solve). The solver keeps scratch between solves and
// looks only at resources in use and capped flows; its rates must be bit-identical.
std::vector<double> ReferenceProgressiveFilling(const MaxMinProblem& problem) {
  const int num_resources = static_cast<int>(problem.capacity.size());
  const int num_flows = static_cast<int>(problem.flows.size());
  std::vector<double> rate(num_flows, 0.0);
  std::vector<double> remaining(problem.capacity);
  std::vector<int> unfrozen_on(num_resources, 0);
  std::vector<bool> frozen(num_flows, false);
  std::vector<std::vector<int>> flows_on(num_resources);
  int active = 0;
  for (int i = 0; i < num_flows; ++i) {
    const MaxMinFlow& f = problem.flows[i];
    if (f.resources.empty() && std::isinf(f.cap)) {
      rate[i] = f.cap;
      frozen[i] = true;
      continue;
    }
    for (int r : f.resources) {
      ++unfrozen_on[r];
      flows_on[r].push_back(i);
    }
    ++active;
  }
  double level = 0.0;
  while (active > 0) {
    double delta = std::numeric_limits<double>::infinity();
    for (int r = 0; r < num_resources; ++r)
      if (unfrozen_on[r] > 0) delta = std::min(delta, std::max(0.0, remaining[r]) / unfrozen_on[r]);
    for (int i = 0; i < num_flows; ++i)
      if (!frozen[i]) delta = std::min(delta, problem.flows[i].cap - level);
    level += delta;
    for (int r = 0; r < num_resources; ++r) remaining[r] -= delta * unfrozen_on[r];
    auto freeze = [&](int i) {
      if (frozen[i]) return;
      frozen[i] = true;
      rate[i] = level;
      --active;
      for (int r : problem.flows[i].resources) --unfrozen_on[r];
    };
    for (int i = 0; i < num_flows; ++i)
      if (!frozen[i] && problem.flows[i].cap - level <= 1e-12 * std::max(1.0, level)) freeze(i);
    for (int r = 0; r < num_resources; ++r)
      if (unfrozen_on[r] > 0 && remaining[r] <= 1e-12 * std::max(1.0, problem.capacity[r]))
        for (int i : flows_on[r]) freeze(i);
  }
  return rate;
}

TEST(MaxMin, ReusedSolverGivesTheReferenceRatesBitForBit) {
  std::mt19937 rng(5);
  MaxMinSolver solver;  // one solver over problems of changing size, as the fabric uses it
  for (int trial = 0; trial < 500; ++trial) {
    MaxMinProblem p;
    const int resources = 1 + static_cast<int>(rng() % 60);
    const int flows = static_cast<int>(rng() % 120);
    for (int r = 0; r < resources; ++r) p.capacity.push_back(rng() % 7 == 0 ? 0.0 : 1.0 + rng() % 100 / 7.0);
    for (int i = 0; i < flows; ++i) {
      MaxMinFlow f;
      const int hops = static_cast<int>(rng() % 5);  // 0: no resources (then a cap, or +inf)
      for (int k = 0; k < hops; ++k) f.resources.push_back(static_cast<int>(rng() % resources));
      if (rng() % 3 == 0) f.cap = (rng() % 50) / 3.0;
      p.flows.push_back(f);
    }
    std::vector<MaxMinFlowView> views;
    for (const MaxMinFlow& f : p.flows)
      views.push_back({f.resources.data(), static_cast<int>(f.resources.size()), f.cap});
    std::vector<double> rates;
    solver.Solve(p.capacity, views, &rates);
    const std::vector<double> want = ReferenceProgressiveFilling(p);
    ASSERT_EQ(rates.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(rates[i], want[i]) << "trial " << trial << " flow " << i;
    EXPECT_EQ(SolveMaxMin(p), want);
  }
}

// Identical flows given as one view with a count get, bit for bit, the rate each of them gets as
// separate views (the fabric solves its flows grouped by route and cap).
TEST(MaxMin, AViewWithACountGivesEachOfItsFlowsTheirSeparateRate) {
  std::mt19937 rng(11);
  MaxMinSolver grouped_solver, separate_solver;
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<double> capacity;
    const int resources = 1 + static_cast<int>(rng() % 30);
    for (int r = 0; r < resources; ++r) capacity.push_back(rng() % 9 == 0 ? 0.0 : 1.0 + rng() % 100 / 7.0);
    std::vector<MaxMinFlow> kinds(static_cast<size_t>(rng() % 40));
    std::vector<MaxMinFlowView> grouped, separate;
    std::vector<int> kind_of_separate;
    for (size_t k = 0; k < kinds.size(); ++k) {
      const int hops = static_cast<int>(rng() % 5);
      for (int h = 0; h < hops; ++h) kinds[k].resources.push_back(static_cast<int>(rng() % resources));
      if (rng() % 3 == 0) kinds[k].cap = (rng() % 50) / 3.0;
      const int count = 1 + static_cast<int>(rng() % 6);
      const MaxMinFlowView view{kinds[k].resources.data(), hops, kinds[k].cap};
      grouped.push_back(view);
      grouped.back().count = count;
      for (int c = 0; c < count; ++c) {
        separate.push_back(view);
        kind_of_separate.push_back(static_cast<int>(k));
      }
    }
    std::shuffle(separate.begin(), separate.end(), std::mt19937(trial));
    std::shuffle(kind_of_separate.begin(), kind_of_separate.end(), std::mt19937(trial));
    std::vector<double> grouped_rates, separate_rates;
    grouped_solver.Solve(capacity, grouped, &grouped_rates);
    separate_solver.Solve(capacity, separate, &separate_rates);
    for (size_t i = 0; i < separate.size(); ++i)
      ASSERT_EQ(separate_rates[i], grouped_rates[kind_of_separate[i]]) << "trial " << trial << " flow " << i;
  }
}

TEST(MaxMinDeathTest, AViewCountsAtLeastOneFlow) {
  const std::vector<double> capacity = {1.0};
  const int resource = 0;
  std::vector<double> rates;
  EXPECT_DEATH(MaxMinSolver().Solve(capacity, {{&resource, 1, 1.0, 0}}, &rates), "count 0");
}

}  // namespace
}  // namespace specsim::net
