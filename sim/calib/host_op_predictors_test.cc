#include "sim/calib/host_op_predictors.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/calib/calibration_loader.h"
#include "sim/calib/fitters.h"
#include "sim/calib/test_traces.h"

namespace specsim::calib {
namespace {

using testing::ContextOf;
using testing::H200;

// A probe single-op item: host time per call `host_us` at every quantile but the last (`slow_us`),
// on `rank`, shape of `tokens` tokens.
trace::Item* AddOp(trace::Trace* t, const std::string& op, const std::string& cls, int kernels, double host_us,
                   double device_us, double graph_device_us, int rank = 0, int tokens = 1, double slow_us = -1) {
  trace::Item* it = t->add_items();
  it->set_suite(trace::SUITE_PACING);
  it->set_kind(trace::KIND_HOST_OP);
  it->set_name("host_op/" + op + "/q" + std::to_string(tokens) + "/rank" + std::to_string(rank));
  trace::HostOpParams* p = it->mutable_host_op();
  p->set_op(op);
  p->set_op_class(cls);
  p->set_kernels(kernels);
  p->set_device_us(device_us);
  p->set_graph_device_us(graph_device_us);
  p->set_rank(rank);
  p->set_tokens(tokens);
  for (int q = 0; q < 21; ++q) p->add_host_quantiles_us(q == 20 && slow_us >= 0 ? slow_us : host_us);
  it->mutable_stats()->set_median_us(host_us);
  it->mutable_stats()->set_iterations(640);
  return it;
}

trace::Item* AddLoop(trace::Trace* t, const std::string& capture, const std::vector<std::string>& ops, int rank = 0) {
  trace::Item* it = t->add_items();
  it->set_suite(trace::SUITE_PACING);
  it->set_kind(trace::KIND_HOST_LOOP);
  it->set_name("host_loop/" + capture + "/rank" + std::to_string(rank));
  trace::HostLoopParams* l = it->mutable_host_loop();
  l->set_capture(capture);
  l->set_what("layers");
  l->set_tokens(1);
  l->set_rank(rank);
  for (const std::string& op : ops) l->add_ops(op);
  it->mutable_stats()->set_median_us(100);
  it->mutable_stats()->set_iterations(60);
  return it;
}

// Two ops and a read-back with fixed host costs: the recurrences of host_op_predictors.h by hand.
//   eager: a: host 0..10, GPU from 10 (its one kernel launched at the end of its call) to 14;
//          b: host 10..20, GPU from max(14, 20) = 20 to 50; then the host waits for the GPU (50)
//          and reads back for 5: 55 us.
//   graph: one replay of 8 us, then the ops' in-graph times 3 + 25 from there: 36; read-back: 41.
TEST(HostOpPredictors, LoopsOfFixedCostsFollowTheRecurrences) {
  trace::Trace t;
  AddOp(&t, "a", "kernel", 1, 10, 4, 3);
  AddOp(&t, "b", "library", 1, 10, 30, 25);
  AddOp(&t, "sync", "sync", 1, 5, 0, 0);
  AddOp(&t, "graph_replay", "graph_launch", 1, 8, 0, 0);
  const trace::Item* eager = AddLoop(&t, "eager", {"a", "b", "sync"});
  const trace::Item* graph = AddLoop(&t, "graph", {"a", "b", "sync"});
  FitContext c = ContextOf(t, H200(), DefaultParams(H200(), 0));
  ASSERT_TRUE(FitHostOps(c).ok());
  const CalibParams& p = c.result.params;
  EXPECT_DOUBLE_EQ(PredictHostLoop(t, *eager, p).predicted_us, 55);
  EXPECT_DOUBLE_EQ(PredictHostLoop(t, *graph, p).predicted_us, 41);
  // A multi-kernel op's GPU work starts after its first launch: with 4 kernels, op a's GPU runs
  // from 10 / 4 = 2.5 and ends no earlier than its last launch (10) plus a quarter of 4 us: 11.
  t.mutable_items(0)->mutable_host_op()->set_kernels(4);
  FitContext c4 = ContextOf(t, H200(), DefaultParams(H200(), 0));
  ASSERT_TRUE(FitHostOps(c4).ok());
  EXPECT_DOUBLE_EQ(PredictHostLoop(t, *eager, c4.result.params).predicted_us, 55);  // b still bounds it
}

// The fit reads every op's distribution off its items (the median of the ranks, quantile by
// quantile) and sets the host model's per-class costs from them.
TEST(HostOpPredictors, TheFitTakesEachOpsDistributionAndTheClassCosts) {
  trace::Trace t;
  AddOp(&t, "linear_qkv", "library", 1, 12, 20, 18, 0, 1, 40);
  AddOp(&t, "linear_qkv", "library", 1, 14, 20, 18, 1, 1, 60);
  AddOp(&t, "linear_qkv", "library", 1, 13, 20, 18, 2, 1, 50);
  AddOp(&t, "rms_norm", "kernel", 1, 6, 3, 2);
  AddOp(&t, "rotary", "kernel", 7, 40, 9, 6);  // several kernels: not a per-kernel cost
  AddOp(&t, "allreduce", "collective", 1, 30, 5, 4);
  AddOp(&t, "graph_replay", "graph_launch", 1, 9, 0, 0);
  AddOp(&t, "sync", "sync", 1, 15, 0, 0);
  FitContext c = ContextOf(t, H200(), DefaultParams(H200(), 0));
  ASSERT_TRUE(FitHostOps(c).ok());
  const llm::HostCosts& h = c.result.params.host;
  ASSERT_EQ(h.ops.size(), 6u);
  const llm::HostOpCost& qkv = h.ops.at("linear_qkv/q1");
  EXPECT_EQ(qkv.quantiles_us.size(), 21u);
  EXPECT_DOUBLE_EQ(qkv.Median(), 13);             // the ranks' 12, 14, 13
  EXPECT_DOUBLE_EQ(qkv.quantiles_us.back(), 50);  // their slowest calls' median
  EXPECT_EQ(*h.library_issue_us, 13);
  EXPECT_EQ(*h.kernel_issue_us, 6);  // one-kernel ops only
  EXPECT_EQ(*h.collective_issue_us, 30);
  EXPECT_EQ(*h.graph_launch_us, 9);
  EXPECT_EQ(*h.sync_wake_us, 15);
  // Single ops are predicted by their medians; the calibration file keeps the distributions.
  EXPECT_DOUBLE_EQ(PredictHostOp(t.items(0), c.result.params).predicted_us, 13);
  auto written = CalibrationFromProto(ToCalibrationProto(c.result.params), "fitted");
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_EQ(written->host.ops.at("linear_qkv/q1").quantiles_us, qkv.quantiles_us);
  EXPECT_EQ(written->host.ops.at("rotary/q1").kernels, 7);
}

// Without a fitted distribution an op costs its class's host cost: the simulator's own model of a
// framework's host before the probe (the compute model's eager launch per kernel by default).
TEST(HostOpPredictors, UnfittedOpsCostTheirClass) {
  trace::Trace t;
  const trace::Item* rotary = AddOp(&t, "rotary", "kernel", 7, 40, 9, 6);
  const trace::Item* view = AddOp(&t, "split", "metadata", 0, 3, 0, 0);
  const CalibParams p = DefaultParams(H200(), 0);
  EXPECT_DOUBLE_EQ(PredictHostOp(*rotary, p).predicted_us, 7 * p.compute.launch_overhead_eager_ns * 1e-3);
  EXPECT_DOUBLE_EQ(PredictHostOp(*view, p).predicted_us, 0);
}

// A heavy tail moves the loop: one call in twenty at 10x the median raises the median iteration of
// a long eager loop well above the loop of medians (each iteration has a few slow calls).
// A fitted eager loop of 100 calls of op "a" (10 us at every quantile but the slowest call,
// `slow_us`; `mean_us` its measured mean, 0: none) and a read-back of 5 us: its predicted time.
double LoopOfHundredUs(double slow_us, double mean_us, double call_correlation = 0) {
  trace::Trace t;
  trace::Item* a = AddOp(&t, "a", "kernel", 1, 10, 1, 1, 0, 1, slow_us);
  a->mutable_stats()->set_mean_us(mean_us);
  a->mutable_host_op()->set_call_correlation(call_correlation);
  AddOp(&t, "sync", "sync", 1, 5, 0, 0);
  std::vector<std::string> ops(100, "a");
  ops.push_back("sync");
  const trace::Item* loop = AddLoop(&t, "eager", ops);
  FitContext c = ContextOf(t, H200(), DefaultParams(H200(), 0));
  EXPECT_TRUE(FitHostOps(c).ok());
  return PredictHostLoop(t, *loop, c.result.params).predicted_us;
}

TEST(HostOpPredictors, AHeavyTailRaisesAHostBoundLoop) {
  const double us = LoopOfHundredUs(100, 0);
  // Medians alone: 100 x 10 + 1 + 5 = 1006. The top 5% of calls (u in [0.95, 1]) average
  // 10 + 0.5 x 90 = 55 us: about 5 of 100 calls add ~45 us each.
  EXPECT_GT(us, 1100);
  EXPECT_LT(us, 1500);
}

// One outlier in the slowest call does not make the tail: with the measured mean, the top quantile
// is set so the distribution's mean is that mean. Quantiles 10 (p0..p95) and 1000 (max), mean
// 10.5: the last segment must average 20 * 10.5 - 19 * 10 = 20, so it ends at 30.
// When a pass's calls share the host's speed of the moment (call_correlation near 1), the tail
// comes in whole slow iterations rather than a few slow calls in each: the median iteration is
// near the loop of medians, 1006 us, instead of the ~1230 us of independent calls (above). With
// rho = 0.95 a call's normal score is 0.97 z + 0.22 e; in the median iteration (z near 0) a call
// reaches the top 5% (score > 1.64) with probability 1 - Phi(1.64 / 0.22), nil.
TEST(HostOpPredictors, CorrelatedCallsPutTheTailInWholeIterations) {
  const double independent = LoopOfHundredUs(100, 0);
  const double correlated = LoopOfHundredUs(100, 0, 0.95);
  EXPECT_GT(independent, 1100);
  EXPECT_LT(correlated, 1030);
  EXPECT_GE(correlated, 1006);
}

// The fit takes the run's call correlation off the items (their median), and the calibration
// file keeps it.
TEST(HostOpPredictors, TheFitReadsTheCallCorrelation) {
  trace::Trace t;
  AddOp(&t, "a", "kernel", 1, 10, 1, 1)->mutable_host_op()->set_call_correlation(0.6);
  AddOp(&t, "b", "kernel", 1, 10, 1, 1)->mutable_host_op()->set_call_correlation(0.7);
  AddOp(&t, "c", "kernel", 1, 10, 1, 1)->mutable_host_op()->set_call_correlation(0.65);
  AddOp(&t, "d", "kernel", 1, 10, 1, 1);  // an older probe's item: none
  FitContext c = ContextOf(t, H200(), DefaultParams(H200(), 0));
  ASSERT_TRUE(FitHostOps(c).ok());
  EXPECT_DOUBLE_EQ(c.result.params.host.call_correlation, 0.65);
  auto written = CalibrationFromProto(ToCalibrationProto(c.result.params), "fitted");
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_DOUBLE_EQ(written->host.call_correlation, 0.65);

  trace::Trace old;
  AddOp(&old, "a", "kernel", 1, 10, 1, 1);
  FitContext o = ContextOf(old, H200(), DefaultParams(H200(), 0));
  ASSERT_TRUE(FitHostOps(o).ok());
  EXPECT_EQ(o.result.params.host.call_correlation, 0);
  bool noted = false;
  for (const std::string& n : o.result.not_fitted) noted = noted || n.find("host.call_correlation") == 0;
  EXPECT_TRUE(noted);
}

TEST(HostOpPredictors, TheTopQuantileKeepsTheMeasuredMean) {
  std::vector<double> q(21, 10.0);
  q.back() = 1000;
  std::vector<double> fitted = QuantilesWithMean(q, 10.5);
  EXPECT_DOUBLE_EQ(fitted.back(), 30);
  EXPECT_DOUBLE_EQ(fitted[19], 10);
  EXPECT_DOUBLE_EQ(QuantilesWithMean(q, 0).back(), 1000);    // no mean: unchanged
  EXPECT_DOUBLE_EQ(QuantilesWithMean(q, 9).back(), 10);      // bounded by p95
  EXPECT_DOUBLE_EQ(QuantilesWithMean(q, 1e6).back(), 1000);  // and by the slowest call

  // A loop of 100 such calls then costs about 100 x 10.5, not 100 x (10 + 0.05 x 495) = 3475.
  const double us = LoopOfHundredUs(1000, 10.5);
  EXPECT_GT(us, 1030);
  EXPECT_LT(us, 1090);
}

TEST(HostOpPredictors, ALoopWithoutItsOpsIsNotSimulatedNamingTheOp) {
  trace::Trace t;
  AddOp(&t, "sync", "sync", 1, 5, 0, 0);
  const trace::Item* loop = AddLoop(&t, "eager", {"mystery", "sync"});
  const Prediction p = PredictHostLoop(t, *loop, DefaultParams(H200(), 0));
  EXPECT_FALSE(p.simulated);
  EXPECT_NE(p.reason.find("\"mystery\""), std::string::npos) << p.reason;
}

}  // namespace
}  // namespace specsim::calib
