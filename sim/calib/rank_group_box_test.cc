#include "sim/calib/rank_group_box.h"

#include <gtest/gtest.h>

#include "sim/calib/params.h"
#include "sim/calib/predictors.h"
#include "sim/calib/test_traces.h"
#include "sim/coll/collective_planner.h"
#include "sim/net/routing.h"

namespace specsim::calib {
namespace {

TEST(RankGroupBox, RanksShareTheGpusOneLinkToHostMemory) {
  const net::Topology h200 = testing::H200();
  auto box = RankGroupBox(h200, 0, 4);
  ASSERT_TRUE(box.ok()) << box.status().ToString();
  ASSERT_EQ(box->num_gpus(), 4);
  const net::Router router(*box);
  const net::Router real(h200);
  const int memory = h200.HostMemoryOfSocket(0);
  ASSERT_GE(memory, 0);
  // Every rank reaches host memory through the real GPU's link, with its latency and no more.
  const net::Path& original = real.Route(memory, h200.gpus[0]);
  for (int r = 0; r < 4; ++r) {
    const net::Path& p = router.Route(memory, box->gpus[r]);
    EXPECT_DOUBLE_EQ(p.latency_ns, original.latency_ns);
    bool crosses_gpu_link = false;
    for (const net::Hop& h : p.hops) crosses_gpu_link = crosses_gpu_link || h.link == original.hops.back().link;
    EXPECT_TRUE(crosses_gpu_link) << "rank " << r;
  }
  EXPECT_FALSE(RankGroupBox(h200, 1, 4).ok());  // the 1x box has one GPU
  EXPECT_FALSE(RankGroupBox(h200, 0, 1).ok());
}

trace::Item RankGroupItem(int ranks, int64_t bytes, bool vllm_flags, trace::CustomBarrier barrier) {
  trace::Item it;
  it.set_name("host_staged/custom/oneshot/test");
  it.set_suite(trace::SUITE_HOST_STAGED);
  it.set_kind(trace::KIND_COLLECTIVE);
  trace::CollectiveParams& c = *it.mutable_collective();
  c.set_op(trace::ALLREDUCE);
  c.set_implementation(trace::IMPL_ONE_SHOT);
  c.set_transport(trace::TRANSPORT_HOST_MAPPED);
  c.set_bytes(bytes);
  c.set_nranks(ranks);
  c.add_gpus(0);
  c.set_blocks(coll::FrameworkCustomBlocks(bytes));
  c.set_rank_groups_on_one_gpu(ranks);
  c.set_custom_barrier(barrier);
  c.set_custom_flags_block_major(vllm_flags);
  it.mutable_stats()->set_median_us(10);
  return it;
}

TEST(RankGroupBox, PredictorPricesVllmsLayoutAndNamesWhatItDoesNot) {
  const net::Topology h200 = testing::H200();
  trace::Trace t;
  const Predictor predictor(t, h200, DefaultParams(h200, 0));
  const Prediction small = predictor.Predict(RankGroupItem(8, 1024, true, trace::BARRIER_FRAMEWORK));
  const Prediction large = predictor.Predict(RankGroupItem(8, 256 * 1024, true, trace::BARRIER_FRAMEWORK));
  ASSERT_TRUE(small.simulated) << small.reason;
  ASSERT_TRUE(large.simulated) << large.reason;
  // 8 ranks' reads of 256 KiB each from every rank share one link: far slower than 1 KiB, whose
  // two barriers of at least the flag trip (2.34 us one way + 7 other flags of its line) floor it.
  EXPECT_GT(large.predicted_us, 5 * small.predicted_us);
  EXPECT_GT(small.predicted_us, 2 * coll::HostFlagFloorUs(8, 1));
  // A trace's own flag round trip sets the trip: a slower host, a slower small allreduce.
  trace::Trace slow;
  trace::Item& flag = *slow.add_items();
  flag.set_name("host_staged/flag/gpu0/same_gpu/default-node0");
  flag.set_kind(trace::KIND_HOST_FLAG_ROUNDTRIP);
  flag.mutable_stats()->set_median_us(4.67 + 2);
  const Predictor on_slow(slow, h200, DefaultParams(h200, 0));
  const Prediction small_slow = on_slow.Predict(RankGroupItem(8, 1024, true, trace::BARRIER_FRAMEWORK));
  ASSERT_TRUE(small_slow.simulated);
  EXPECT_NEAR(small_slow.predicted_us - small.predicted_us, 2 * 1.0, 0.2);  // two barriers, +1 us each
  // Our own layouts are measured, not modelled: not simulated, and the reason says which.
  const Prediction packed = predictor.Predict(RankGroupItem(8, 1024, false, trace::BARRIER_FRAMEWORK));
  EXPECT_FALSE(packed.simulated);
  EXPECT_NE(packed.reason.find("rank-major"), std::string::npos) << packed.reason;
  const Prediction fence = predictor.Predict(RankGroupItem(8, 1024, true, trace::BARRIER_SYSTEM_FENCE));
  EXPECT_FALSE(fence.simulated);
  EXPECT_NE(fence.reason.find("system-fence"), std::string::npos) << fence.reason;
}

}  // namespace
}  // namespace specsim::calib
