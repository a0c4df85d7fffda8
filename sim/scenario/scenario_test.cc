#include "sim/scenario/scenario.h"

#include <gtest/gtest.h>

#include "sim/compute/attention_cost.h"

namespace specsim::scenario {
namespace {

compute::ComputeParams WithTwoKernels() {
  compute::ComputeParams p;
  p.attention_implementations.push_back(compute::SpecsimValidateKernel("flash_mma").value());
  p.attention_implementations.push_back(compute::SpecsimValidateKernel("simt_reference").value());
  return p;
}

llm::FrameworkProfile Sglang() {
  llm::FrameworkProfile f;
  f.name = "sglang";
  f.attention_decode = "flashinfer_decode";
  f.attention_verify = "flashinfer_prefill";
  return f;
}

TEST(ChooseAttentionCosts, CalibratedKernelsOfAnotherImplementationAreNotApplied) {
  compute::ComputeParams p = WithTwoKernels();
  std::vector<std::string> warnings;
  ASSERT_TRUE(ChooseAttentionCosts({}, Sglang(), "calib.textproto", &p, &warnings).ok());
  EXPECT_EQ(p.attention_regimes.For(1), nullptr);
  EXPECT_EQ(p.attention_regimes.For(8), nullptr);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("flash_mma, simt_reference"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("flashinfer_decode"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("attention_costs.decode"), std::string::npos) << warnings[0];
}

TEST(ChooseAttentionCosts, AnExplicitChoicePerRegimeModelsThePathSwitch) {
  compute::ComputeParams p = WithTwoKernels();
  config::AttentionCosts choice;
  choice.set_decode("simt_reference");
  choice.set_verify("flash_mma");
  std::vector<std::string> warnings;
  ASSERT_TRUE(ChooseAttentionCosts(choice, Sglang(), "calib.textproto", &p, &warnings).ok());
  ASSERT_NE(p.attention_regimes.For(1), nullptr);
  EXPECT_EQ(p.attention_regimes.For(1)->name, "simt_reference");
  EXPECT_EQ(p.attention_regimes.For(2)->name, "flash_mma");
  EXPECT_TRUE(warnings.empty());
  // Verify empty: decode's kernel for both.
  choice.clear_verify();
  ASSERT_TRUE(ChooseAttentionCosts(choice, Sglang(), "calib.textproto", &p, &warnings).ok());
  EXPECT_EQ(p.attention_regimes.For(4)->name, "simt_reference");
}

TEST(ChooseAttentionCosts, AFrameworkRunningACalibratedKernelGetsItsCosts) {
  compute::ComputeParams p = WithTwoKernels();
  llm::FrameworkProfile f;
  f.attention_decode = f.attention_verify = "flash_mma";
  std::vector<std::string> warnings;
  ASSERT_TRUE(ChooseAttentionCosts({}, f, "calib.textproto", &p, &warnings).ok());
  EXPECT_EQ(p.attention_regimes.For(1)->name, "flash_mma");
  EXPECT_TRUE(warnings.empty());
}

TEST(ChooseAttentionCosts, ErrorsNameTheFieldAndWhatTheCalibrationHas) {
  compute::ComputeParams p = WithTwoKernels();
  config::AttentionCosts choice;
  choice.set_decode("flashinfer_decode");
  std::vector<std::string> warnings;
  Status s = ChooseAttentionCosts(choice, Sglang(), "calib.textproto", &p, &warnings);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("attention_costs.decode"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("flash_mma, simt_reference"), std::string::npos) << s.message();
  // Without a calibration there is nothing to choose from.
  compute::ComputeParams none;
  choice.set_decode("flash_mma");
  s = ChooseAttentionCosts(choice, Sglang(), "", &none, &warnings);
  EXPECT_NE(s.message().find("none is given"), std::string::npos) << s.message();
  // No calibration and no choice: nothing to say.
  warnings.clear();
  EXPECT_TRUE(ChooseAttentionCosts({}, Sglang(), "", &none, &warnings).ok());
  EXPECT_TRUE(warnings.empty());
}

}  // namespace
}  // namespace specsim::scenario
