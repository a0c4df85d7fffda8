// Tests of fit_host_pacing.cc: the ranks' host costs recovered from the pacing suite's loops
// (layer loops eager and in graphs, skew loops), "measured" by the loops' predictor under known
// host parameters (test_traces.h Measure).
#include <gtest/gtest.h>

#include "sim/calib/fit_context.h"
#include "sim/calib/fitters.h"
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
    params.host.jitter_mean_us = truth.jitter_us;
    trace::Trace t = PacingSuite();
    Measure(&t, topo, params);
    CalibParams start = params;
    start.host = {};
    FitContext c = ContextOf(t, topo, start);
    ASSERT_TRUE(FitHostPacing(c).ok());
    const HostParams& h = c.result.params.host;
    ASSERT_TRUE(h.library_issue_us && h.collective_issue_us && h.graph_launch_us);
    EXPECT_NEAR(*h.library_issue_us, truth.library_us, 0.005 * truth.library_us);
    EXPECT_NEAR(*h.collective_issue_us, truth.collective_us, 0.005 * truth.collective_us);
    EXPECT_NEAR(*h.graph_launch_us, truth.graph_launch_us, 0.005 * truth.graph_launch_us);
    EXPECT_NEAR(h.jitter_mean_us, truth.jitter_us, 0.005 * truth.jitter_us);
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

}  // namespace
}  // namespace specsim::calib
