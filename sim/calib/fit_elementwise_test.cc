// Tests of fit_elementwise.cc: the elementwise kernels' ramp and efficiency recovered from synthetic
// calls "measured" by the predictor under known parameters (test_traces.h Measure).
#include <gtest/gtest.h>

#include <string>

#include "sim/calib/fit.h"
#include "sim/calib/params.h"
#include "sim/calib/predictors.h"
#include "sim/calib/test_traces.h"

namespace specsim::calib {
namespace {

using testing::Fitted;
using testing::H200;
using testing::Measure;

trace::Trace ElementwiseCalls(const std::vector<int64_t>& sizes, bool strided = false) {
  trace::Trace t;
  for (int64_t bytes : sizes) {
    trace::Item* it = t.add_items();
    it->set_suite(trace::SUITE_KERNELS);
    it->set_kind(trace::KIND_ELEMENTWISE);
    it->set_name("elementwise/" + std::to_string(bytes) + (strided ? "/strided" : ""));
    it->mutable_elementwise()->set_strided(strided);
    trace::ElementwiseParams* e = it->mutable_elementwise();
    e->set_op("aten::mul");
    e->set_elements(bytes / 6);
    e->set_bytes(bytes);
    e->set_dtype(trace::DTYPE_BF16);
    e->set_kernel_time_only(true);
  }
  return t;
}

// A profile's elementwise calls of 4 KB to 64 MB measured under a 2 us ramp and 40% of the H200's
// bandwidth (t = 2000 + B / (4800 * 0.4) ns, above the default 1.5 us kernel floor): the fit
// recovers both within 1% and the norms' memory ramp is left as it was (the class has its own).
TEST(FitTest, ElementwiseRampAndEfficiencyFromTheirCalls) {
  const net::Topology topo = H200();
  CalibParams truth = DefaultParams(topo, 0);
  truth.compute.elementwise_memory_ramp_ns = 2000;
  truth.compute.elementwise_memory_efficiency = 0.4;
  trace::Trace t = ElementwiseCalls({4096, 65536, 1 << 20, 16 << 20, 64 << 20});
  Measure(&t, topo, truth);
  EXPECT_NEAR(t.items(0).stats().median_us(), 2.0 + 4096 / (4800.0 * 0.4) * 1e-3, 1e-6);  // the law above
  const CalibParams start = DefaultParams(topo, 0);
  auto r = Fit(t, {}, topo, start);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->params.compute.elementwise_memory_ramp_ns, 2000, 20);
  EXPECT_NEAR(r->params.compute.elementwise_memory_efficiency, 0.4, 0.004);
  EXPECT_NEAR(Fitted(*r, "compute.elementwise_memory_ramp_ns"), 2000, 20);
  EXPECT_EQ(r->params.compute.memory_ramp_ns, start.compute.memory_ramp_ns);
  const Predictor predictor(t, topo, r->params);
  for (const trace::Item& it : t.items()) {
    const Prediction p = predictor.Predict(it);
    ASSERT_TRUE(p.simulated) << p.reason;
    EXPECT_NEAR(p.predicted_us / it.stats().median_us(), 1, 0.01) << it.name();
  }
}

// Vectorized and strided calls under their own ramps (1 us and 2.2 us) and one 40% rate: the fit
// recovers both ramps and the rate; a strided kernel of the pass takes the strided ramp.
TEST(FitTest, StridedElementwiseCallsTakeTheirOwnRamp) {
  const net::Topology topo = H200();
  CalibParams truth = DefaultParams(topo, 0);
  truth.compute.kernel_floor_ns = 500;
  truth.compute.elementwise_memory_ramp_ns = 1000;
  truth.compute.strided_elementwise_memory_ramp_ns = 2200;
  truth.compute.elementwise_memory_efficiency = 0.4;
  trace::Trace t = ElementwiseCalls({4096, 1 << 20, 64 << 20});
  const trace::Trace s = ElementwiseCalls({8192, 4 << 20, 32 << 20}, /*strided=*/true);
  for (const trace::Item& it : s.items()) *t.add_items() = it;
  Measure(&t, topo, truth);
  CalibParams start = DefaultParams(topo, 0);
  start.compute.kernel_floor_ns = 500;
  auto r = Fit(t, {}, topo, start);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->params.compute.elementwise_memory_ramp_ns, 1000, 10);
  EXPECT_NEAR(r->params.compute.strided_elementwise_memory_ramp_ns, 2200, 22);
  EXPECT_NEAR(r->params.compute.elementwise_memory_efficiency, 0.4, 0.004);
  compute::Kernel k;
  k.kernel_class = compute::KernelClass::kElementwise;
  k.strided = true;
  EXPECT_NEAR(r->params.compute.KernelRampNs(k), 2200, 22);
  k.strided = false;
  EXPECT_NEAR(r->params.compute.KernelRampNs(k), 1000, 10);
}

// Calls of one size cannot separate the ramp from the efficiency: the ramp alone is fitted and the
// efficiency is listed as not fitted (the memory efficiency prices the bytes).
TEST(FitTest, ElementwiseCallsOfOneSizeFitTheRampAlone) {
  const net::Topology topo = H200();
  CalibParams truth = DefaultParams(topo, 0);
  truth.compute.elementwise_memory_ramp_ns = 1800;
  trace::Trace t = ElementwiseCalls({8192, 8192});
  t.mutable_items(1)->set_name("elementwise/8192b");
  Measure(&t, topo, truth);
  auto r = Fit(t, {}, topo, DefaultParams(topo, 0));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->params.compute.elementwise_memory_efficiency, 0);
  EXPECT_NEAR(r->params.compute.elementwise_memory_ramp_ns, 1800, 18);
  bool listed = false;
  for (const std::string& n : r->not_fitted) listed |= n.rfind("compute.elementwise_memory_efficiency", 0) == 0;
  EXPECT_TRUE(listed);
  const Predictor predictor(t, topo, r->params);
  EXPECT_NEAR(predictor.Predict(t.items(0)).predicted_us / t.items(0).stats().median_us(), 1, 0.01);
}

// Calls of 4 to 64 KB under a 2 us ramp stream for nanoseconds at any efficiency: their growth says
// nothing of a streaming rate, so the ramp alone is fitted and the efficiency is listed as not
// fitted (a slope fitted there would price a 10 MB kernel from kilobyte ones).
TEST(FitTest, FillBoundElementwiseCallsFitTheRampAlone) {
  const net::Topology topo = H200();
  CalibParams truth = DefaultParams(topo, 0);
  truth.compute.elementwise_memory_ramp_ns = 2000;
  truth.compute.elementwise_memory_efficiency = 0.4;
  trace::Trace t = ElementwiseCalls({4096, 16384, 65536});
  Measure(&t, topo, truth);
  auto r = Fit(t, {}, topo, DefaultParams(topo, 0));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->params.compute.elementwise_memory_efficiency, 0);
  EXPECT_NEAR(r->params.compute.elementwise_memory_ramp_ns, 2000, 40);
  bool listed = false;
  for (const std::string& n : r->not_fitted) listed |= n.find("fill-bound") != std::string::npos;
  EXPECT_TRUE(listed);
}

}  // namespace
}  // namespace specsim::calib
