#include "sim/scenario/eager_passes.h"

#include <gtest/gtest.h>

#include <string>

namespace specsim::scenario {
namespace {

// The hand-written trace of sim/profile/testdata: one decode pass (rms_norm 30 us, matmul 40, add
// 40, read-back 50 after the GPU) and one verify pass (40, 50, 60, read-back 40).
TEST(EagerPassesTest, EachKindIsPricedWithTheOtherKindsCosts) {
  auto t = profile::ReadKinetoTrace(std::string(SPECSIM_SOURCE_DIR) + "/sim/profile/testdata/eager_passes.kineto.json");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto r = profile::ImportProfile({*t});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::vector<EagerPassPrediction> predicted = PredictEagerPasses(*r);
  ASSERT_EQ(predicted.size(), 2u);
  for (const EagerPassPrediction& p : predicted) {
    ASSERT_TRUE(p.ok) << p.why;
    if (p.loop->kind == "decode") {
      EXPECT_EQ(p.costs_from, "verify passes (held out)");
      EXPECT_DOUBLE_EQ(p.measured_us, 200);
      // Verify's costs, the decode pass's own kernels (4, 14, 60 us): the host issues at 40, 90,
      // 150; the add's kernel starts at 150 and ends at 210; the read-back: 210 + 40.
      EXPECT_NEAR(p.predicted_us, 250, 1e-6);
    } else {
      EXPECT_EQ(p.costs_from, "decode passes (held out)");
      EXPECT_DOUBLE_EQ(p.measured_us, 300);
      // Decode's costs (30, 40, 40), verify's kernels (5, 20, 150): the add's kernel from 110 to
      // 260, then the read-back's 50.
      EXPECT_NEAR(p.predicted_us, 310, 1e-6);
    }
  }
}

TEST(EagerPassesTest, OneKindIsInSample) {
  auto t = profile::ReadKinetoTrace(std::string(SPECSIM_SOURCE_DIR) + "/sim/profile/testdata/eager_passes.kineto.json");
  ASSERT_TRUE(t.ok());
  profile::ImportOptions only_decode;
  only_decode.names = profile::ExactPassNameMap({"forward_decode_eager"});
  auto r = profile::ImportProfile({*t}, only_decode);
  ASSERT_TRUE(r.ok());
  const std::vector<EagerPassPrediction> predicted = PredictEagerPasses(*r);
  ASSERT_EQ(predicted.size(), 1u);
  ASSERT_TRUE(predicted[0].ok) << predicted[0].why;
  EXPECT_NE(predicted[0].costs_from.find("in-sample"), std::string::npos);
  // Its own costs: host 30 + 40 + 40; the add's kernel from 110 to 170; read-back 50.
  EXPECT_NEAR(predicted[0].predicted_us, 220, 1e-6);
}

}  // namespace
}  // namespace specsim::scenario
