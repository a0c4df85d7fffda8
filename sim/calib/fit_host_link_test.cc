// Tests of fit_host_link.cc: host copies, copy engines and duplex, zero copy, small copies under a
// bulk copy and the shared host memory limit, each recovered from synthetic traces "measured" by
// the predictor under known parameters (test_traces.h Measure), and the refusal of a trace that
// cannot separate a copy class's latency from its bandwidth.
#include <gtest/gtest.h>

#include "sim/calib/fit.h"
#include "sim/calib/fit_context.h"
#include "sim/calib/fitters.h"
#include "sim/calib/params.h"
#include "sim/calib/predictors.h"
#include "sim/calib/test_traces.h"

namespace specsim::calib {
namespace {

using testing::AddCopy;
using testing::AddHostCopiesTogether;
using testing::AddUnderLoad;
using testing::AddZeroCopy;
using testing::ContextOf;
using testing::Fitted;
using testing::H200;
using testing::H200x2;
using testing::Measure;
using testing::NotFitted;

TEST(FitTest, RecoversHostCopyEngineAndDuplexParameters) {
  const net::Topology topo = H200();
  CalibParams truth = DefaultParams(topo, 0);
  truth.fabric.h2d_pinned = {4300, 55.0};
  truth.fabric.d2h_pinned = {3500, 56.5};
  truth.fabric.duplex_factor = 0.9;
  truth.fabric.multi_stream_overhead_ns = 10000;
  truth.fabric.copy_engines_per_direction = 2;
  trace::Trace t;
  t.mutable_environment()->add_gpus()->set_async_engine_count(3);
  for (int64_t b : {4LL, 65536LL, 1LL << 20, 1LL << 24, 1LL << 28}) {
    AddCopy(&t, trace::KIND_H2D_COPY, trace::DIRECTION_H2D, b);
    AddCopy(&t, trace::KIND_D2H_COPY, trace::DIRECTION_D2H, b);
    AddCopy(&t, trace::KIND_BIDIR_COPY, trace::DIRECTION_BIDIR, b, 2);
  }
  for (int k : {2, 3, 4, 7}) AddCopy(&t, trace::KIND_CONCURRENT_COPIES, trace::DIRECTION_H2D, 1 << 20, k);
  Measure(&t, topo, truth);
  auto r = Fit(t, {}, topo, DefaultParams(topo, 0));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(Fitted(*r, "fabric.h2d_pinned.latency_ns"), 4300, 1e-3);
  EXPECT_NEAR(Fitted(*r, "fabric.h2d_pinned.bandwidth_gbps"), 55.0, 1e-6);
  EXPECT_NEAR(Fitted(*r, "fabric.d2h_pinned.bandwidth_gbps"), 56.5, 1e-6);
  EXPECT_EQ(r->params.fabric.copy_engines_per_direction, 2);
  EXPECT_NEAR(r->params.fabric.duplex_factor, 0.9, 1e-6);
  EXPECT_NEAR(r->params.fabric.multi_stream_overhead_ns, 10000, 1e-3);
}

// Regression for issue 5's refusal rule: a trace whose copies all have one size cannot separate
// latency from bandwidth, and calibrate must say so instead of writing a number.
TEST(FitTest, RefusesATraceThatCannotDetermineAParameter) {
  const net::Topology topo = H200();
  trace::Trace t;
  for (int i = 0; i < 3; ++i)
    AddCopy(&t, trace::KIND_H2D_COPY, trace::DIRECTION_H2D, 1 << 20)->mutable_stats()->set_median_us(20 + i);
  auto r = Fit(t, {}, topo, DefaultParams(topo, 0));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("fabric.h2d_pinned.latency_ns"), std::string::npos) << r.status().message();
}

// Zero copy: writes t = L_w + B / BW_w; reads t = L_r + B / min(BW_r, min(blocks, SMs) * per-SM),
// so 1- and 2-block reads are per-SM-bound and wide ones link-bound. Two truths (the per-SM cap
// binding up to 2 and up to 4 blocks) come back exact, each read on its own side.
TEST(FitHostLinkTest, ZeroCopyRecoversWriteReadAndPerSmRateForTwoTruths) {
  const net::Topology topo = H200();  // 132 SMs
  struct Truth {
    TransferClass write, read;
    double per_sm_gbps;
  };
  for (const Truth& truth : {Truth{{6300, 53.0}, {5800, 51.0}, 20.0}, Truth{{5000, 30.0}, {7000, 40.0}, 12.0}}) {
    CalibParams params = DefaultParams(topo, 0);
    params.fabric.zero_copy_write = truth.write;
    params.fabric.zero_copy_read = truth.read;
    params.fabric.kernel_read_per_sm_gbps = truth.per_sm_gbps;
    trace::Trace t;
    for (int64_t bytes : {1LL << 16, 1LL << 20, 1LL << 24, 1LL << 26}) {
      AddZeroCopy(&t, trace::KIND_ZERO_COPY_WRITE, bytes, 132);
      for (int blocks : {1, 2, 4, 8, 132}) AddZeroCopy(&t, trace::KIND_ZERO_COPY_READ, bytes, blocks);
    }
    Measure(&t, topo, params);
    // Cross-check of the law on a one-block 16 MiB read: L_r + B / per-SM.
    EXPECT_NEAR(t.items(13).stats().median_us() * 1e3, truth.read.latency_ns + (1 << 24) / truth.per_sm_gbps, 1e-3);
    CalibParams start = params;
    start.fabric.zero_copy_write = {1000, 10.0};
    start.fabric.zero_copy_read = {1000, 10.0};
    start.fabric.kernel_read_per_sm_gbps = 1;
    FitContext c = ContextOf(t, topo, start);
    ASSERT_TRUE(FitZeroCopy(c).ok());
    const FabricParams& f = c.result.params.fabric;
    EXPECT_NEAR(f.zero_copy_write.latency_ns, truth.write.latency_ns, 1e-6 * truth.write.latency_ns);
    EXPECT_NEAR(f.zero_copy_write.bandwidth_gbps, truth.write.bandwidth_gbps, 1e-6 * truth.write.bandwidth_gbps);
    EXPECT_NEAR(f.zero_copy_read.latency_ns, truth.read.latency_ns, 1e-6 * truth.read.latency_ns);
    EXPECT_NEAR(f.zero_copy_read.bandwidth_gbps, truth.read.bandwidth_gbps, 1e-6 * truth.read.bandwidth_gbps);
    EXPECT_NEAR(f.kernel_read_per_sm_gbps, truth.per_sm_gbps, 1e-6 * truth.per_sm_gbps);
    EXPECT_NEAR(Fitted(c.result, "fabric.kernel_read_per_sm_gbps"), truth.per_sm_gbps, 1e-6 * truth.per_sm_gbps);
  }
}

// Reads that are all link-bound say nothing of the per-SM rate: named, the start kept.
TEST(FitHostLinkTest, ZeroCopyReadsAllLinkBoundLeaveThePerSmRate) {
  const net::Topology topo = H200();
  CalibParams params = DefaultParams(topo, 0);
  params.fabric.zero_copy_read = {5800, 51.0};
  params.fabric.kernel_read_per_sm_gbps = 20;
  trace::Trace t;
  for (int64_t bytes : {1LL << 16, 1LL << 20, 1LL << 24}) AddZeroCopy(&t, trace::KIND_ZERO_COPY_READ, bytes, 132);
  Measure(&t, topo, params);
  FitContext c = ContextOf(t, topo, params);
  ASSERT_TRUE(FitZeroCopy(c).ok());
  EXPECT_NEAR(c.result.params.fabric.zero_copy_read.bandwidth_gbps, 51.0, 1e-6);
  EXPECT_TRUE(NotFitted(c.result, "fabric.kernel_read_per_sm_gbps"));
  EXPECT_TRUE(NotFitted(c.result, "fabric.zero_copy_write"));  // no write items
}

// Small copies under a 256 MiB bulk copy (one copy engine per direction): an H2D copy of at most
// the bypass size, or any copy against the other direction, runs at once and measures
// L + X + B / rate (rate: half the link, same direction; duplex x the link, other direction); the
// others queue. Two truths: the bypass size and the three extras come back exact, and D2H under
// D2H (always queued) has no extra.
TEST(FitHostLinkTest, UnderLoadRecoversBypassSizeAndExtraPerDirectionPairForTwoTruths) {
  const net::Topology topo = H200();
  struct Truth {
    double bypass_bytes, h2d_h2d_ns, d2h_h2d_ns, h2d_d2h_ns;
  };
  for (const Truth& truth : {Truth{4096, 9000, 6500, 2700}, Truth{65536, 3000, 1200, 500}}) {
    CalibParams params = DefaultParams(topo, 0);
    params.fabric.h2d_pinned = {4300, 55.0};
    params.fabric.d2h_pinned = {3500, 56.5};
    params.fabric.duplex_factor = 0.9;
    params.fabric.copy_engines_per_direction = 1;
    params.fabric.h2d_bypass_max_bytes = truth.bypass_bytes;
    params.fabric.under_load_extra_ns = {
        {"h2d/h2d", truth.h2d_h2d_ns}, {"d2h/h2d", truth.d2h_h2d_ns}, {"h2d/d2h", truth.h2d_d2h_ns}};
    trace::Trace t;
    for (trace::Direction small : {trace::DIRECTION_H2D, trace::DIRECTION_D2H})
      for (trace::Direction bulk : {trace::DIRECTION_H2D, trace::DIRECTION_D2H})
        for (int64_t bytes : {4LL, 1024LL, 4096LL, 65536LL, 1LL << 20}) AddUnderLoad(&t, small, bytes, bulk, 1LL << 28);
    Measure(&t, topo, params);
    // Cross-check on H2D 1 KiB under H2D (bypassing): L + X + B / (BW / 2).
    EXPECT_NEAR(t.items(1).stats().median_us() * 1e3, 4300 + truth.h2d_h2d_ns + 1024 / 27.5, 1e-6);
    CalibParams start = params;
    start.fabric.h2d_bypass_max_bytes = 0;
    start.fabric.under_load_extra_ns.clear();
    FitContext c = ContextOf(t, topo, start);
    ASSERT_TRUE(FitUnderLoad(c).ok());
    const FabricParams& f = c.result.params.fabric;
    EXPECT_EQ(f.h2d_bypass_max_bytes, truth.bypass_bytes);
    EXPECT_NEAR(f.under_load_extra_ns.at("h2d/h2d"), truth.h2d_h2d_ns, 1e-6);
    EXPECT_NEAR(f.under_load_extra_ns.at("d2h/h2d"), truth.d2h_h2d_ns, 1e-6);
    EXPECT_NEAR(f.under_load_extra_ns.at("h2d/d2h"), truth.h2d_d2h_ns, 1e-6);
    EXPECT_EQ(f.under_load_extra_ns.count("d2h/d2h"), 0u);
    EXPECT_NEAR(Fitted(c.result, "fabric.under_load_extra_ns.h2d/h2d"), truth.h2d_h2d_ns, 1e-6);
  }
}

// Host copies on several GPUs at once share the host's limit H: each copy runs at its class rate
// scaled by H / (sum of the rates) when that sum exceeds H. The fit takes the median aggregate
// rate sum(B) / t of the items that ran below 90% of their unlimited time; with two H2D copies of
// B each that is 2B / (L + B / (H / 2)), just under H (the latency), here the 64 MiB item's. Two
// truths; a box without a limit leaves it unfitted; a lone copy never binds.
TEST(FitHostLinkTest, HostMemoryLimitIsTheMedianAggregateRateOfTheItemsItSlowed) {
  const net::Topology topo = H200x2();
  const trace::Direction h2d = trace::DIRECTION_H2D, d2h = trace::DIRECTION_D2H;
  for (double limit_gbps : {80.0, 95.0, 0.0}) {
    CalibParams params = DefaultParams(topo, 0);
    params.fabric.h2d_pinned = {4300, 55.0};
    params.fabric.d2h_pinned = {3500, 56.5};
    params.fabric.duplex_factor = 0.9;
    params.fabric.host_memory_gbps = limit_gbps;
    trace::Trace t;
    for (int64_t bytes : {16LL << 20, 64LL << 20, 256LL << 20}) AddHostCopiesTogether(&t, {{0, h2d}, {1, h2d}}, bytes);
    AddHostCopiesTogether(&t, {{0, h2d}, {0, d2h}, {1, h2d}, {1, d2h}}, 64LL << 20);
    AddHostCopiesTogether(&t, {{0, h2d}}, 64LL << 20);  // 55 GB/s alone: below either limit
    Measure(&t, topo, params);
    CalibParams start = params;
    start.fabric.host_memory_gbps = 0;
    FitContext c = ContextOf(t, topo, start);
    ASSERT_TRUE(FitHostMemory(c).ok());
    if (limit_gbps == 0) {
      EXPECT_TRUE(NotFitted(c.result, "fabric.host_memory_gbps"));
      EXPECT_EQ(c.result.params.fabric.host_memory_gbps, 0);
      continue;
    }
    const double b = 64 << 20;
    const double expected = 2 * b / (4300 + b / (limit_gbps / 2));
    EXPECT_NEAR(c.result.params.fabric.host_memory_gbps, expected, 1e-9 * expected) << limit_gbps;
    EXPECT_NEAR(c.result.params.fabric.host_memory_gbps, limit_gbps, 0.005 * limit_gbps);
    ASSERT_EQ(c.result.fitted.size(), 1u);
    EXPECT_EQ(c.result.fitted[0].points, 4);  // not the lone copy
  }
}

}  // namespace
}  // namespace specsim::calib
