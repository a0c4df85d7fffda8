// Tests of fit_kernels.cc: launch overheads and kernel efficiencies, the timed call's gap from
// graph loops, GEMM costs per library, and a profile's device-time GEMMs, each recovered from
// synthetic traces "measured" by the predictor under known parameters (test_traces.h Measure).
#include <gtest/gtest.h>

#include <string>

#include "sim/calib/calibration_loader.h"
#include "sim/calib/fit.h"
#include "sim/calib/params.h"
#include "sim/calib/predictors.h"
#include "sim/calib/test_traces.h"
#include "sim/compute/kernel_cost.h"

namespace specsim::calib {
namespace {

using testing::AddGemm;
using testing::AddKernelItems;
using testing::AddLaunchItems;
using testing::ComputeTruth;
using testing::Fitted;
using testing::H200;
using testing::Measure;

TEST(FitTest, RecoversLaunchOverheadsAndKernelEfficiencies) {
  const net::Topology topo = H200();
  const CalibParams truth = ComputeTruth(topo);
  trace::Trace t;
  AddKernelItems(&t);
  Measure(&t, topo, truth);
  auto r = Fit(t, {}, topo, DefaultParams(topo, 0));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->params.compute.launch_overhead_eager_ns, 3500, 1);
  EXPECT_NEAR(r->params.compute.kernel_floor_ns, 600, 1);
  EXPECT_NEAR(r->params.compute.graph_launch_ns, 2500, 1);
  EXPECT_NEAR(r->params.compute.launch_overhead_graph_ns, 100, 1);
  EXPECT_NEAR(r->params.compute.gemm_memory_ramp_ns, 4000, 5);
  EXPECT_NEAR(r->params.compute.skinny_gemm_memory_efficiency, 0.9, 1e-3);
  EXPECT_NEAR(r->params.compute.gemm_compute_efficiency, 0.75, 1e-3);
  EXPECT_NEAR(r->params.compute.memory_efficiency, 0.8, 1e-3);
  EXPECT_NEAR(r->params.compute.memory_ramp_ns, 900, 5);
}

// validate's timed kernel calls add a gap to each kernel (timed_call_gap_ns) that the kernel items
// alone cannot tell from the kernels' fill times; GEMM loops captured in a CUDA graph (no events
// between the kernels) can: the fit recovers the gap and, with it, the true ramps. Without such
// loops the gap is named as not fitted (and the ramps absorb it).
trace::Item* AddGraphGemmLoop(trace::Trace* t, int64_t m, int64_t n, int64_t k) {
  trace::Item* it = testing::AddLayerLoop(t, 1, /*gemm=*/true, m, /*allreduce_bytes=*/0, "graph");
  trace::LayerLoopParams* l = it->mutable_layer_loop();
  l->set_gemm_n(n);
  l->set_gemm_k(k);
  l->clear_host_cost();
  return it;
}

TEST(FitTest, TimedCallGapFromGraphLoops) {
  const net::Topology topo = H200();
  CalibParams truth = ComputeTruth(topo);
  truth.bench.timed_call_gap_ns = 2000;  // on the fit's grid (0.5 us steps, then +- 0.25 us)
  trace::Trace t;
  AddKernelItems(&t);
  trace::Trace without = t;
  for (int64_t m : {1, 32}) AddGraphGemmLoop(&t, m, 4096, 4096);
  AddGraphGemmLoop(&t, 1, 14336, 4096);
  Measure(&t, topo, truth);
  auto r = Fit(t, {}, topo, DefaultParams(topo, 0));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(Fitted(*r, "compute.timed_call_gap_ns"), 2000, 1);
  EXPECT_NEAR(r->params.compute.gemm_memory_ramp_ns, 4000, 5);
  EXPECT_NEAR(r->params.compute.memory_ramp_ns, 900, 5);
  // The written calibration carries it.
  auto written = CalibrationFromProto(ToCalibrationProto(r->params), "the fitted calibration");
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_NEAR(CalibParamsOf(*written, DefaultParams(topo, 0)).bench.timed_call_gap_ns, 2000, 1);

  Measure(&without, topo, truth);
  auto w = Fit(without, {}, topo, DefaultParams(topo, 0));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->params.bench.timed_call_gap_ns, 0);
  bool named = false;
  for (const std::string& s : w->not_fitted) named = named || s.find("compute.timed_call_gap_ns") == 0;
  EXPECT_TRUE(named);
  // The ramps absorb the gap beyond the eager device gap (900 ns by default).
  EXPECT_NEAR(w->params.compute.gemm_memory_ramp_ns, 4000 + 2000 - 900, 5);
}

// GEMM costs are fitted per library: the same shapes measured under two libraries with different
// efficiencies come back apart, and each library's items are predicted with its own costs.
TEST(FitTest, GemmCostsArePerLibrary) {
  const net::Topology topo = H200();
  CalibParams truth = ComputeTruth(topo);
  compute::ComputeParams& c = truth.compute;
  c.gemm_library = "cublasGemmEx";
  compute::ComputeParams::GemmLibraryCosts lt;
  lt.library = "cublasLt";
  lt.skinny_gemm_memory_efficiency = 0.8;
  lt.gemm_compute_efficiency = 0.6;
  lt.gemm_memory_ramp_ns = 3000;
  c.gemm_libraries.push_back(lt);
  trace::Trace t;
  AddLaunchItems(&t);
  for (const char* library : {"cublasGemmEx", "cublasLt"})
    for (int64_t n : {4096, 14336, 28672, 128256})
      for (int64_t m : {1, 16, 4096}) AddGemm(&t, m, n, 4096)->mutable_gemm()->set_library(library);
  Measure(&t, topo, truth);
  auto r = Fit(t, {}, topo, DefaultParams(topo, 0));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const compute::ComputeParams& f = r->params.compute;
  EXPECT_EQ(f.gemm_library, "cublasGemmEx");  // no decode items, equal counts: the first by name
  EXPECT_NEAR(f.skinny_gemm_memory_efficiency, 0.9, 1e-3);
  EXPECT_NEAR(f.gemm_compute_efficiency, 0.75, 1e-3);
  ASSERT_EQ(f.gemm_libraries.size(), 1u);
  EXPECT_EQ(f.gemm_libraries[0].library, "cublasLt");
  EXPECT_NEAR(f.gemm_libraries[0].skinny_gemm_memory_efficiency, 0.8, 1e-3);
  EXPECT_NEAR(f.gemm_libraries[0].gemm_compute_efficiency, 0.6, 1e-3);
  EXPECT_NEAR(f.gemm_libraries[0].gemm_memory_ramp_ns, 3000, 5);
  const compute::ComputeParams as_lt = f.WithGemmLibrary("cublasLt");
  EXPECT_NEAR(as_lt.gemm_compute_efficiency, 0.6, 1e-3);
  EXPECT_NEAR(f.WithGemmLibrary("cublasGemmEx").gemm_compute_efficiency, 0.75, 1e-3);
  EXPECT_NEAR(f.WithGemmLibrary("unknown").gemm_compute_efficiency, 0.75, 1e-3);
  // The written calibration round-trips both.
  const compute::ComputeParams back = compute::ApplyCalibration({}, ToCalibrationProto(r->params).compute());
  EXPECT_EQ(back.gemm_library, "cublasGemmEx");
  ASSERT_EQ(back.gemm_libraries.size(), 1u);
  EXPECT_NEAR(back.gemm_libraries[0].gemm_compute_efficiency, 0.6, 1e-3);
}

// A profile's GEMM items (import-profile: GemmParams.kernel_time_only) measure the kernels' device
// time: the predictor adds no timed call's gap and no launch floor (a 1-token GEMM of a few us is
// not host-bound under a profiler), and the fit takes the measurement as device time. Without
// launch items or any other kind, the GEMM efficiencies and ramp of the profile's library are
// recovered.
TEST(FitTest, ProfileGemmItemsAreDeviceTimeAndFitAlone) {
  const net::Topology topo = H200();
  CalibParams truth = ComputeTruth(topo);
  truth.bench.timed_call_gap_ns = 2500;  // would be added to a timed call's measurement
  truth.compute.gemm_library = "aten";
  trace::Trace t;
  for (int64_t n : {3072, 4096, 14336, 64128})
    for (int64_t m : {1, 8, 64, 4096}) {
      trace::GemmParams* g = AddGemm(&t, m, n, 4096)->mutable_gemm();
      g->set_library("aten");
      g->set_kernel_time_only(true);
    }
  Measure(&t, topo, truth);
  // Predicted = the cost model's device time (ns -> us), for a small and a large GEMM.
  const compute::KernelCostModel cost(topo.gpu_spec(0), truth.compute);
  for (int i : {0, t.items_size() - 1}) {
    const ItemKernel k = KernelOfItem(t.items(i));
    ASSERT_TRUE(k.ok);
    EXPECT_NEAR(t.items(i).stats().median_us(), NanosFromPicos(cost.KernelTime(k.kernel)) * 1e-3, 1e-6)
        << t.items(i).name();
  }
  auto r = Fit(t, {}, topo, DefaultParams(topo, 0));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const compute::ComputeParams& f = r->params.compute;
  EXPECT_EQ(f.gemm_library, "aten");
  EXPECT_NEAR(f.skinny_gemm_memory_efficiency, 0.9, 5e-3);
  EXPECT_NEAR(f.gemm_compute_efficiency, 0.75, 5e-3);
  EXPECT_NEAR(f.RampNs(compute::KernelClass::kGemm), 4000, 40);
}

}  // namespace
}  // namespace specsim::calib
