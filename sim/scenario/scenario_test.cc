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
  ASSERT_TRUE(ChooseAttentionCosts({}, Sglang(), /*mla=*/false, "calib.textproto", &p, &warnings).ok());
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
  ASSERT_TRUE(ChooseAttentionCosts(choice, Sglang(), /*mla=*/false, "calib.textproto", &p, &warnings).ok());
  ASSERT_NE(p.attention_regimes.For(1), nullptr);
  EXPECT_EQ(p.attention_regimes.For(1)->name, "simt_reference");
  EXPECT_EQ(p.attention_regimes.For(2)->name, "flash_mma");
  EXPECT_TRUE(warnings.empty());
  // Verify empty: decode's kernel for both.
  choice.clear_verify();
  ASSERT_TRUE(ChooseAttentionCosts(choice, Sglang(), /*mla=*/false, "calib.textproto", &p, &warnings).ok());
  EXPECT_EQ(p.attention_regimes.For(4)->name, "simt_reference");
}

TEST(ChooseAttentionCosts, AFrameworkRunningACalibratedKernelGetsItsCosts) {
  compute::ComputeParams p = WithTwoKernels();
  llm::FrameworkProfile f;
  f.attention_decode = f.attention_verify = "flash_mma";
  std::vector<std::string> warnings;
  ASSERT_TRUE(ChooseAttentionCosts({}, f, /*mla=*/false, "calib.textproto", &p, &warnings).ok());
  EXPECT_EQ(p.attention_regimes.For(1)->name, "flash_mma");
  EXPECT_TRUE(warnings.empty());
}

// GQA and MLA kernels price only their own cache kind: a framework naming flash_mma for GQA and
// flash_mla for MLA gives an MLA target the MLA kernel and its GQA draft head the GQA one; a GQA
// kernel's costs never reach an MLA call (the roofline stays when the framework names no MLA kernel).
TEST(ChooseAttentionCosts, GqaAndMlaKernelsPriceTheirOwnCacheKind) {
  compute::ComputeParams p = WithTwoKernels();
  p.attention_implementations.push_back(compute::SpecsimValidateKernel("flash_mla").value());
  llm::FrameworkProfile f;
  f.name = "cpp-graph";
  f.attention_decode = f.attention_verify = "flash_mma";
  f.attention_mla_decode = f.attention_mla_verify = "flash_mla";
  std::vector<std::string> warnings;
  ASSERT_TRUE(ChooseAttentionCosts({}, f, /*mla=*/true, "calib.textproto", &p, &warnings).ok());
  EXPECT_EQ(p.attention_regimes.For(1, /*latent=*/true)->name, "flash_mla");
  EXPECT_EQ(p.attention_regimes.For(4, /*latent=*/true)->name, "flash_mla");
  EXPECT_EQ(p.attention_regimes.For(1, /*latent=*/false)->name, "flash_mma");  // the draft head
  EXPECT_TRUE(warnings.empty());
  // A framework that names only GQA kernels: the MLA target keeps the roofline, with a warning.
  f.attention_mla_decode = f.attention_mla_verify = "";
  ASSERT_TRUE(ChooseAttentionCosts({}, f, /*mla=*/true, "calib.textproto", &p, &warnings).ok());
  EXPECT_EQ(p.attention_regimes.For(1, /*latent=*/true), nullptr);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("MLA attention"), std::string::npos) << warnings[0];
  // An explicit choice fills the target's kind only.
  config::AttentionCosts choice;
  choice.set_decode("flash_mla");
  ASSERT_TRUE(ChooseAttentionCosts(choice, f, /*mla=*/true, "calib.textproto", &p, &warnings).ok());
  EXPECT_EQ(p.attention_regimes.For(2, /*latent=*/true)->name, "flash_mla");
  EXPECT_EQ(p.attention_regimes.For(2, /*latent=*/false), nullptr);
}

TEST(ChooseAttentionCosts, ErrorsNameTheFieldAndWhatTheCalibrationHas) {
  compute::ComputeParams p = WithTwoKernels();
  config::AttentionCosts choice;
  choice.set_decode("flashinfer_decode");
  std::vector<std::string> warnings;
  Status s = ChooseAttentionCosts(choice, Sglang(), /*mla=*/false, "calib.textproto", &p, &warnings);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("attention_costs.decode"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("flash_mma, simt_reference"), std::string::npos) << s.message();
  // Without a calibration there is nothing to choose from.
  compute::ComputeParams none;
  choice.set_decode("flash_mma");
  s = ChooseAttentionCosts(choice, Sglang(), /*mla=*/false, "", &none, &warnings);
  EXPECT_NE(s.message().find("none is given"), std::string::npos) << s.message();
  // No calibration and no choice: nothing to say.
  warnings.clear();
  EXPECT_TRUE(ChooseAttentionCosts({}, Sglang(), /*mla=*/false, "", &none, &warnings).ok());
  EXPECT_TRUE(warnings.empty());
}

}  // namespace
}  // namespace specsim::scenario
