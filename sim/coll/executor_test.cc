#include "sim/coll/executor.h"
#include "sim/coll/ring.h"

#include <gtest/gtest.h>

#include <numeric>

#include "sim/net/test_topologies.h"

namespace specsim::coll {
namespace {

// A schedule timed alone on a fresh fabric of `t`.
CollectiveTiming TimeOnce(const Schedule& schedule, const net::Topology& t, const std::vector<int>& rank_gpus,
                          FabricTrace* trace = nullptr) {
  const net::Router router(t);
  return CollectiveTimer(router).Time(schedule, rank_gpus, trace);
}

std::vector<int> Identity(int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

ScheduleOp Transfer(int src, int dst, int64_t bytes, std::vector<int32_t> deps = {}) {
  ScheduleOp op;
  op.kind = OpKind::kTransfer;
  op.src_rank = src;
  op.dst_rank = dst;
  op.bytes = bytes;
  op.deps = std::move(deps);
  return op;
}

// A plain ring allreduce written out by hand (one channel, one chunk per step): at step k rank r
// sends its running block to r+1; step k on r waits for step k-1 into r and for its own step k-1.
Schedule HandRing(int n, int64_t total_bytes) {
  Schedule s;
  s.num_ranks = n;
  s.algorithm = "ring";
  std::vector<int> last_into(n, -1), last_from(n, -1);
  for (int k = 0; k < 2 * (n - 1); ++k) {
    std::vector<int> into = last_into, from = last_from;
    for (int r = 0; r < n; ++r) {
      std::vector<int32_t> deps;
      if (last_into[r] >= 0) deps.push_back(last_into[r]);
      if (last_from[r] >= 0) deps.push_back(last_from[r]);
      int op = s.Add(Transfer(r, (r + 1) % n, total_bytes / n, deps));
      from[r] = op;
      into[(r + 1) % n] = op;
    }
    last_into = into;
    last_from = from;
  }
  return s;
}

TEST(Executor, RingOnUniformLinksMatchesTheClosedForm) {
  // T = 2(n-1) a + 2(n-1)/n S/B. With a = 500 ns and B = 50 GB/s = 0.05 B/ps, S = n * 1e6 B:
  // each step moves 1e6 B in 2e7 ps exactly, so integer time gives the formula exactly.
  for (int n = 3; n <= 8; ++n) {
    net::Topology t = net::testing::RingOfGpus(n, 50, 500);
    const double a_ps = 500'000, B = 0.05, S = n * 1e6;
    double expected = 2 * (n - 1) * a_ps + 2.0 * (n - 1) / n * S / B;
    CollectiveTiming timing = TimeOnce(HandRing(n, static_cast<int64_t>(S)), t, Identity(n));
    EXPECT_NEAR(static_cast<double>(timing.duration_ps), expected, expected * 1e-9) << "n=" << n;
    // Every link direction used carries 2(n-1)/n * S bytes over T.
    EXPECT_NEAR(timing.busiest_bytes, 2.0 * (n - 1) / n * S, 1e-3);
  }
}

TEST(Executor, LatencyFloorHoldsAStepBack) {
  net::Topology t = net::testing::RingOfGpus(3, 50, 500);
  Schedule s;
  s.num_ranks = 3;
  ScheduleOp op = Transfer(0, 1, 1000);  // 500 ns + 20 ns on the wire
  op.latency_floor_ps = 5'000'000;       // a 5 us protocol step
  int first = s.Add(op);
  s.Add(Transfer(1, 2, 1'000'000, {first}));
  CollectiveTiming timing = TimeOnce(s, t, Identity(3));
  EXPECT_EQ(timing.duration_ps, 5'000'000 + 500'000 + 20'000'000);
}

TEST(Executor, DelaysAndLocalOpsTakeTheirTime) {
  net::Topology t = net::testing::RingOfGpus(3, 50, 500);  // memory bandwidth 3000 GB/s
  Schedule s;
  s.num_ranks = 3;
  ScheduleOp delay;
  delay.kind = OpKind::kDelay;
  delay.dst_rank = 0;
  delay.duration_ps = 7'000'000;
  int d = s.Add(delay);
  ScheduleOp local;
  local.kind = OpKind::kLocal;
  local.dst_rank = 0;
  local.bytes = 3'000'000;  // 3e6 B / 3 B/ps = 1e6 ps
  local.deps = {d};
  s.Add(local);
  EXPECT_EQ(TimeOnce(s, t, Identity(3)).duration_ps, 8'000'000);
}

// A transfer so slow its time saturates (time.h) ends after kMaxDurationPs, at most at the clock's
// horizon: the run stays ordered and the caller sees a saturated duration, not an overflow.
TEST(Executor, ATransferPastTheClocksRangeEndsAtTheHorizon) {
  net::Topology t = net::testing::RingOfGpus(3, 50, 500);
  Schedule s;
  s.num_ranks = 3;
  ScheduleOp op = Transfer(0, 1, int64_t{1} << 40);
  op.wire_efficiency = 1e-300;  // wire bytes = payload / efficiency: 1e312, an infinite time
  int first = s.Add(op);
  s.Add(Transfer(1, 2, 1000, {first}));  // and an op after it, from the horizon
  const CollectiveTiming timing = TimeOnce(s, t, Identity(3));
  EXPECT_GE(timing.duration_ps, kMaxDurationPs);  // what callers check
  EXPECT_LE(timing.duration_ps, kClockHorizonPs);
}

TEST(Executor, RanksMapToTheGivenGpus) {
  // Ranks 0,1 on GPUs 2,0 of a 3-ring: 2->0 is one hop (link 2<->0).
  net::Topology t = net::testing::RingOfGpus(3, 50, 500);
  Schedule s;
  s.num_ranks = 2;
  s.Add(Transfer(0, 1, 1'000'000));
  FabricTrace trace;
  CollectiveTiming timing = TimeOnce(s, t, {2, 0}, &trace);
  EXPECT_EQ(timing.duration_ps, 500'000 + 20'000'000);
  ASSERT_EQ(trace.flows.size(), 1u);
  EXPECT_EQ(trace.flows[0].src_node, t.gpus[2]);
  EXPECT_EQ(trace.flows[0].dst_node, t.gpus[0]);
  EXPECT_EQ(timing.busiest_resource, "gpu2->gpu0");
}

}  // namespace
}  // namespace specsim::coll

namespace specsim::coll {
namespace {

TEST(Executor, RingBuilderOnUniformLinksMatchesTheClosedForm) {
  // The NCCL-style builder with an ideal protocol, one channel and one chunk per step must give
  // T = 2(n-1) a + 2(n-1)/n S/B exactly as the hand-written ring above.
  for (int n = 3; n <= 8; ++n) {
    net::Topology t = net::testing::RingOfGpus(n, 50, 500);
    const double a_ps = 500'000, B = 0.05, S = n * 1e6;
    RingOptions options;
    options.max_chunks_per_step = 1;
    Schedule s = BuildRingAllReduce(n, static_cast<int64_t>(S), options);
    double expected = 2 * (n - 1) * a_ps + 2.0 * (n - 1) / n * S / B;
    CollectiveTiming timing = TimeOnce(s, t, Identity(n));
    EXPECT_NEAR(static_cast<double>(timing.duration_ps), expected, expected * 1e-9) << "n=" << n;
  }
}

}  // namespace
}  // namespace specsim::coll
