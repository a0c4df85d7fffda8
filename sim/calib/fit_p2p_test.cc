// Tests of fit_p2p.cc: GPU-to-GPU transfers per path class and mechanism, and the custom
// allreduce kernels' flag trip and per-block read rate, each recovered from synthetic traces
// "measured" by the predictor under known parameters (test_traces.h Measure).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "sim/calib/fit_context.h"
#include "sim/calib/fitters.h"
#include "sim/calib/params.h"
#include "sim/calib/predictors.h"
#include "sim/calib/test_traces.h"

namespace specsim::calib {
namespace {

using testing::AddCustomAllreduce;
using testing::AddP2p;
using testing::ContextOf;
using testing::Fitted;
using testing::H200x2;
using testing::Measure;
using testing::NotFitted;
using testing::SetAllreduceBusBandwidth;

void ExpectClass(const TransferClass& fitted, const TransferClass& truth, const std::string& what) {
  EXPECT_NEAR(fitted.latency_ns, truth.latency_ns, 1e-6 * truth.latency_ns) << what;
  EXPECT_NEAR(fitted.bandwidth_gbps, truth.bandwidth_gbps, 1e-6 * truth.bandwidth_gbps) << what;
}

// Per path class and mechanism t = L + B / BW (kernel reads of no recorded block count: no per-SM
// cap). Two classes with different truths come back apart, each mechanism from its own items; a
// mechanism a class did not measure keeps the routed path's default (P2pDefaults).
TEST(FitP2pTest, RecoversEachPathClassAndMechanismApart) {
  const net::Topology topo = H200x2();
  CalibParams params = DefaultParams(topo, 0);
  const P2pParams nv{{4860, 386.0}, {5300, 360.0}, {5900, 351.0}};
  const P2pParams sys{{9000, 40.0}, {7000, 25.0}, {8000, 20.0}};
  params.fabric.p2p["NV"] = nv;
  params.fabric.p2p["SYS"] = sys;
  trace::Trace t;
  for (int64_t bytes : {4LL, 65536LL, 1LL << 20, 1LL << 24, 1LL << 26}) {
    for (trace::Kind kind : {trace::KIND_P2P_COPY, trace::KIND_P2P_KERNEL_WRITE, trace::KIND_P2P_KERNEL_READ})
      AddP2p(&t, kind, trace::PATH_NVLINK, 0, 1, bytes);
    AddP2p(&t, trace::KIND_P2P_COPY, trace::PATH_SYS, 1, 0, bytes);
    AddP2p(&t, trace::KIND_P2P_KERNEL_WRITE, trace::PATH_SYS, 1, 0, bytes);
  }
  Measure(&t, topo, params);
  // Cross-check on the NV copy of 1 MiB: L + B / BW.
  EXPECT_NEAR(t.items(10).stats().median_us() * 1e3, 4860 + (1 << 20) / 386.0, 1e-6);
  CalibParams start = DefaultParams(topo, 0);
  FitContext c = ContextOf(t, topo, start);
  ASSERT_TRUE(FitP2p(c).ok());
  const std::map<std::string, P2pParams>& p2p = c.result.params.fabric.p2p;
  ASSERT_EQ(p2p.size(), 2u);
  ExpectClass(p2p.at("NV").copy, nv.copy, "NV copy");
  ExpectClass(p2p.at("NV").kernel_write, nv.kernel_write, "NV kernel write");
  ExpectClass(p2p.at("NV").kernel_read, nv.kernel_read, "NV kernel read");
  ExpectClass(p2p.at("SYS").copy, sys.copy, "SYS copy");
  ExpectClass(p2p.at("SYS").kernel_write, sys.kernel_write, "SYS kernel write");
  const TransferClass routed = P2pDefaults(topo, 1, 0, start.compute).kernel_read;
  EXPECT_EQ(p2p.at("SYS").kernel_read.latency_ns, routed.latency_ns);
  EXPECT_EQ(p2p.at("SYS").kernel_read.bandwidth_gbps, routed.bandwidth_gbps);
  EXPECT_NEAR(Fitted(c.result, "fabric.p2p.SYS.copy.bandwidth_gbps"), 40.0, 40e-6);
}

// One GPU: nothing to fit, the routed-path defaults kept and named.
TEST(FitP2pTest, NoGpuToGpuItemsKeepTheRoutedDefaults) {
  const net::Topology topo = H200x2();
  trace::Trace t;
  FitContext c = ContextOf(t, topo, DefaultParams(topo, 0));
  ASSERT_TRUE(FitP2p(c).ok());
  EXPECT_TRUE(c.result.params.fabric.p2p.empty());
  EXPECT_TRUE(NotFitted(c.result, "fabric.p2p"));
}

// Custom allreduce per transport (peer memory, host-mapped memory): one-shot and two-shot kernels of
// 1 KiB .. 64 MiB on two H200s, simulated by the planner and executor with a known flag trip
// (a floor on each exchange: the small sizes) and per-block read rate (the large sizes). Two
// truths come back within 0.5% each (the Gauss-Newton stops
// when a round moves an unknown by < 0.1%).
TEST(FitP2pTest, CustomAllreduceRecoversFlagLatencyAndBlockReadRatePerTransport) {
  const net::Topology topo = H200x2();
  for (const CustomAllreduceParams& truth :
       {CustomAllreduceParams{4.8, 23.0, 5.3, 1.4}, CustomAllreduceParams{8.0, 15.0, 3.0, 2.5}}) {
    CalibParams params = DefaultParams(topo, 0);
    params.custom = truth;
    trace::Trace t;
    for (trace::Transport transport : {trace::TRANSPORT_PEER_MEMORY, trace::TRANSPORT_HOST_MAPPED})
      for (trace::Implementation impl : {trace::IMPL_ONE_SHOT, trace::IMPL_TWO_SHOT})
        for (int64_t bytes : {1LL << 10, 1LL << 14, 1LL << 18, 1LL << 22, 1LL << 26})
          AddCustomAllreduce(&t, impl, transport, 2, bytes, 36);
    Measure(&t, topo, params);
    SetAllreduceBusBandwidth(&t);
    CalibParams start = params;
    start.custom = {};
    FitContext c = ContextOf(t, topo, start);
    ASSERT_TRUE(FitCustomAllreduce(c).ok());
    const CustomAllreduceParams& f = c.result.params.custom;
    EXPECT_NEAR(f.peer_flag_latency_us, truth.peer_flag_latency_us, 0.005 * truth.peer_flag_latency_us);
    EXPECT_NEAR(f.host_flag_latency_us, truth.host_flag_latency_us, 0.005 * truth.host_flag_latency_us);
    EXPECT_NEAR(f.peer_read_gbps_per_block, truth.peer_read_gbps_per_block, 0.005 * truth.peer_read_gbps_per_block);
    EXPECT_NEAR(f.host_read_gbps_per_block, truth.host_read_gbps_per_block, 0.005 * truth.host_read_gbps_per_block);
    EXPECT_NEAR(Fitted(c.result, "custom_allreduce.peer.flag_latency_us"), truth.peer_flag_latency_us,
                0.005 * truth.peer_flag_latency_us);
  }
}

}  // namespace
}  // namespace specsim::calib
