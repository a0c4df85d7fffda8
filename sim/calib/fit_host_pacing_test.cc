// Tests of fit_host_pacing.cc: the ranks' host costs recovered from the pacing suite's loops
// (layer loops eager and in graphs, skew loops), "measured" by the loops' predictor under known
// host parameters (test_traces.h Measure).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim/calib/fit_context.h"
#include "sim/calib/fitters.h"
#include "sim/calib/injected_host_cost.h"
#include "sim/calib/loop_predictors.h"
#include "sim/calib/params.h"
#include "sim/calib/predictors.h"
#include "sim/calib/test_traces.h"

namespace specsim::calib {
namespace {

using testing::AddLayerLoop;
using testing::AddSkewLoop;
using testing::ContextOf;
using testing::Fitted;
using testing::H200x2;
using testing::Measure;
using testing::NotFitted;

// The pacing suite on two H200s: eager layer loops of GEMMs alone (one rank: a library call per
// layer), of allreduces alone (a collective call per layer) and of both; the same in graphs (one
// launch per iteration); and skew loops of small allreduces with no injected cost (the longest
// rank's wait: the natural jitter).
trace::Trace PacingSuite() {
  trace::Trace t;
  for (const char* capture : {"eager", "graph"}) {
    AddLayerLoop(&t, 1, true, 1, 0, capture);
    AddLayerLoop(&t, 2, false, 1, 8192, capture);
    AddLayerLoop(&t, 2, true, 1, 8192, capture);
    AddLayerLoop(&t, 2, true, 64, 65536, capture);
  }
  for (int64_t bytes : {8192LL, 65536LL}) {
    AddSkewLoop(&t, 2, bytes, trace::HostCost::NONE, 0, true);
    AddSkewLoop(&t, 2, bytes, trace::HostCost::NONE, 0, false);
  }
  return t;
}

// Two truths, each unknown within 0.5% (the Gauss-Newton stops when a round moves it by < 0.1%).
TEST(FitHostPacingTest, RecoversIssueCostsGraphLaunchAndJitterForTwoTruths) {
  const net::Topology topo = H200x2();
  struct Truth {
    double library_us, collective_us, graph_launch_us, jitter_us;
  };
  for (const Truth& truth : {Truth{18.0, 14.0, 6.0, 1.5}, Truth{9.0, 25.0, 12.0, 4.0}}) {
    CalibParams params = DefaultParams(topo, 0);
    params.host.library_issue_us = truth.library_us;
    params.host.collective_issue_us = truth.collective_us;
    params.host.graph_launch_us = truth.graph_launch_us;
    params.host.jitter = llm::ExponentialJitter(truth.jitter_us);
    trace::Trace t = PacingSuite();
    Measure(&t, topo, params);
    CalibParams start = params;
    start.host = {};
    FitContext c = ContextOf(t, topo, start);
    ASSERT_TRUE(FitHostPacing(c).ok());
    const llm::HostCosts& h = c.result.params.host;
    ASSERT_TRUE(h.library_issue_us && h.collective_issue_us && h.graph_launch_us);
    EXPECT_NEAR(*h.library_issue_us, truth.library_us, 0.005 * truth.library_us);
    EXPECT_NEAR(*h.collective_issue_us, truth.collective_us, 0.005 * truth.collective_us);
    EXPECT_NEAR(*h.graph_launch_us, truth.graph_launch_us, 0.005 * truth.graph_launch_us);
    EXPECT_NEAR(h.jitter.mean_us, truth.jitter_us, 0.005 * truth.jitter_us);
    EXPECT_NEAR(Fitted(c.result, "host.library_issue_us"), truth.library_us, 0.005 * truth.library_us);
    // No loop's time depends on the sync wake: a skew loop is timed stamp to stamp, a layer loop
    // from each iteration's start, and the wake delays every rank's next start alike.
    EXPECT_TRUE(NotFitted(c.result, "host.sync_wake_us"));
  }
}

TEST(FitHostPacingTest, NoPacingLoopsKeepTheDefaults) {
  const net::Topology topo = H200x2();
  trace::Trace t;
  FitContext c = ContextOf(t, topo, DefaultParams(topo, 0));
  ASSERT_TRUE(FitHostPacing(c).ok());
  EXPECT_FALSE(c.result.params.host.library_issue_us.has_value());
  EXPECT_TRUE(NotFitted(c.result, "host.library_issue_us"));
}

// Layer loops alone (one GPU: no skew loops): the issue costs are fitted, the natural jitter is not
// (an Exp(m) per op adds about m per op in a layer loop, as an issue cost does).
TEST(FitHostPacingTest, WithoutSkewLoopsTheJitterIsNotFitted) {
  const net::Topology topo = H200x2();
  CalibParams params = DefaultParams(topo, 0);
  params.host.library_issue_us = 12.0;
  params.host.graph_launch_us = 3.0;
  trace::Trace t;
  for (const char* capture : {"eager", "graph"}) {
    AddLayerLoop(&t, 1, true, 1, 0, capture);
    AddLayerLoop(&t, 1, true, 32, 0, capture);
  }
  for (auto d : {trace::HostCost::FIXED, trace::HostCost::EXPONENTIAL}) {
    trace::Item* it = AddLayerLoop(&t, 1, true, 1, 0, "eager");
    it->mutable_layer_loop()->mutable_host_cost()->set_distribution(d);
    it->mutable_layer_loop()->mutable_host_cost()->set_mean_us(10);
  }
  Measure(&t, topo, params);
  CalibParams start = params;
  start.host = {};
  FitContext c = ContextOf(t, topo, start);
  ASSERT_TRUE(FitHostPacing(c).ok());
  ASSERT_TRUE(c.result.params.host.library_issue_us.has_value());
  EXPECT_NEAR(*c.result.params.host.library_issue_us, 12.0, 0.06);
  EXPECT_EQ(c.result.params.host.jitter.kind, llm::Jitter::Kind::kNone);
  EXPECT_TRUE(NotFitted(c.result, "host.jitter_mean_us"));
}

// An eager loop with exponential injected costs waits exactly the draws its measurement waited
// (validate's per-rank streams, warm-ups and rounds included): host-bound with no natural jitter,
// each iteration is a constant plus its draws' sum, so the prediction is the loop without injected
// cost plus the median of those sums over the timed iterations.
TEST(PredictLayerLoopTest, ExponentialInjectedCostsAreTheMeasurementsOwnDraws) {
  const net::Topology topo = H200x2();
  CalibParams params = DefaultParams(topo, 0);
  params.host.library_issue_us = 40.0;  // far above the GEMM's GPU time: host-bound
  for (int rounds : {0, 4}) {
    trace::Trace t;
    trace::Item* none = AddLayerLoop(&t, 1, true, 1, 0, "eager");
    trace::Item* exp = AddLayerLoop(&t, 1, true, 1, 0, "eager");
    trace::HostCost* cost = exp->mutable_layer_loop()->mutable_host_cost();
    cost->set_distribution(trace::HostCost::EXPONENTIAL);
    cost->set_mean_us(10);
    cost->set_seed(1234);
    exp->mutable_layer_loop()->set_rounds(rounds);
    exp->mutable_stats()->set_iterations(rounds == 0 ? 30 : 60);
    exp->mutable_stats()->set_warmup(5);
    const Prediction base = PredictLayerLoop(*none, topo, params);
    const Prediction with_cost = PredictLayerLoop(*exp, topo, params);
    ASSERT_TRUE(base.simulated && with_cost.simulated);
    InjectedHostCost draws(*cost, 0);
    std::vector<double> sums;
    for (bool timed : LoopIterationsAsRun(exp->stats().iterations(), 5, rounds)) {
      double sum = 0;
      for (int layer = 0; layer < 32; ++layer) sum += draws.NextUs();
      if (timed) sums.push_back(sum);
    }
    std::sort(sums.begin(), sums.end());
    const double median = 0.5 * (sums[sums.size() / 2 - 1] + sums[sums.size() / 2]);
    EXPECT_NEAR(with_cost.predicted_us - base.predicted_us, median, 1e-3) << "rounds " << rounds;
  }
}

}  // namespace
}  // namespace specsim::calib
