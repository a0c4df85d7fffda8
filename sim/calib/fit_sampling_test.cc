// Tests of fit_sampling.cc: the sampling kernels' row limit recovered from synthetic argmax calls
// "measured" by the predictor under known parameters (test_traces.h Measure).
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

// A profile's argmax calls (kernel_time_only) measured under a row rate of 4 Glogit/s with 1..64
// rows of 128256 logits (row-bound) and 4096 rows (bandwidth-bound): the fit recovers the rate
// within 1% and reproduces every call within 2%. Measured under no row limit, it keeps none.
TEST(FitTest, SamplingRowRateFromArgmaxCalls) {
  const net::Topology topo = H200();
  for (double truth_rate : {4.0, 0.0}) {
    CalibParams truth = DefaultParams(topo, 0);
    truth.compute.sampling_row_rate_glogits = truth_rate;
    trace::Trace t;
    for (int64_t rows : {1, 8, 64, 4096}) {
      trace::Item* it = t.add_items();
      it->set_suite(trace::SUITE_KERNELS);
      it->set_kind(trace::KIND_SAMPLING);
      it->set_name("sampling/" + std::to_string(rows));
      trace::SamplingParams* s = it->mutable_sampling();
      s->set_rows(rows);
      s->set_vocab(128256);
      s->set_dtype(trace::DTYPE_BF16);
      s->set_kernel_time_only(true);
    }
    Measure(&t, topo, truth);
    auto r = Fit(t, {}, topo, DefaultParams(topo, 0));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (truth_rate > 0) {
      EXPECT_NEAR(r->params.compute.sampling_row_rate_glogits, truth_rate, 0.01 * truth_rate);
      EXPECT_NEAR(Fitted(*r, "compute.sampling_row_rate_glogits"), truth_rate, 0.01 * truth_rate);
    } else {
      EXPECT_EQ(r->params.compute.sampling_row_rate_glogits, 0);
    }
    const Predictor predictor(t, topo, r->params);
    for (const trace::Item& it : t.items()) {
      const Prediction p = predictor.Predict(it);
      ASSERT_TRUE(p.simulated) << p.reason;
      EXPECT_NEAR(p.predicted_us / it.stats().median_us(), 1, 0.02) << it.name() << " rate " << truth_rate;
    }
  }
}

}  // namespace
}  // namespace specsim::calib
