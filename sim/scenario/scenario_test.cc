#include "sim/scenario/scenario.h"

#include <gtest/gtest.h>

#include "sim/compute/attention_cost.h"
#include "sim/compute/profiled_attention.h"
#include "sim/io/framework_loader.h"
#include "sim/llm/framework_decisions.h"
#include "sim/llm/weight_format.h"

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

// A framework kernel with launch geometry (SGLang's Triton MLA kernels) that the scenario's
// calibration lacks takes the bundled H200 fit's costs and says so; the scenario's own fit of the
// same name wins.
TEST(ChooseAttentionCosts, TheFrameworksKernelTakesABundledFitWhereTheScenarioHasNone) {
  llm::FrameworkProfile f;
  f.name = "sglang";
  f.attention_mla_decode = "triton_decode_mla/16x32";
  f.attention_mla_verify = "triton_extend_mla/32x32";
  compute::ComputeParams p;
  std::vector<std::string> warnings;
  ASSERT_TRUE(ChooseAttentionCosts({}, f, /*mla=*/true, "", &p, &warnings).ok());
  const compute::AttentionImplementation* verify = p.attention_regimes.For(4, /*latent=*/true);
  ASSERT_NE(verify, nullptr);
  EXPECT_EQ(verify->name, "triton_extend_mla/32x32");
  EXPECT_TRUE(verify->per_head_blocks);
  EXPECT_NE(verify->costs_source.find("NVIDIA H200"), std::string::npos) << verify->costs_source;
  EXPECT_NE(verify->costs_source.find("configs/calibration/h200-triton-attention.textproto"), std::string::npos);
  // The fitted per-step latency, not the name's default costs.
  EXPECT_NE(verify->tile_latency_ns, compute::ProfiledAttentionKernel("triton_extend_mla/32x32")->tile_latency_ns);
  ASSERT_NE(p.attention_regimes.For(1, true), nullptr);
  EXPECT_EQ(p.attention_regimes.For(1, true)->split_policy, compute::SplitPolicy::kSglangTriton);
  EXPECT_TRUE(warnings.empty());
  // Every bundled fit loads: a broken file would silently leave the roofline.
  for (const char* name :
       {"triton_decode/16x32", "triton_decode_mla/16x32", "triton_extend/64x128", "triton_extend/128x64",
        "triton_extend_mla/32x32", "triton_extend_mla/32x64", "cudnn_sdpa_sm90/64x128"})
    EXPECT_TRUE(TransferredAttentionKernel(name).has_value()) << name;
  EXPECT_FALSE(TransferredAttentionKernel("flashinfer_prefill").has_value());
  // vLLM's launch of the same decode kernel: its own geometry (4 fixed splits), SGLang's launch's
  // fitted costs, and the output says whose.
  const std::optional<compute::AttentionImplementation> vllm =
      TransferredAttentionKernel("vllm_triton_decode_mla/16x32");
  const std::optional<compute::AttentionImplementation> sglang = TransferredAttentionKernel("triton_decode_mla/16x32");
  ASSERT_TRUE(vllm.has_value() && sglang.has_value());
  EXPECT_EQ(vllm->split_policy, compute::SplitPolicy::kFixed);
  EXPECT_EQ(vllm->max_splits, 4);
  EXPECT_DOUBLE_EQ(vllm->tile_latency_ns, sglang->tile_latency_ns);
  EXPECT_DOUBLE_EQ(vllm->combine_split_ns, sglang->combine_split_ns);
  EXPECT_NE(vllm->costs_source.find("of triton_decode_mla/16x32, the same kernel body"), std::string::npos)
      << vllm->costs_source;

  compute::ComputeParams own;
  compute::AttentionImplementation fitted = compute::ProfiledAttentionKernel("triton_extend_mla/32x32").value();
  fitted.tile_latency_ns = 123;
  own.attention_implementations.push_back(fitted);
  ASSERT_TRUE(ChooseAttentionCosts({}, f, true, "mine.textproto", &own, &warnings).ok());
  ASSERT_NE(own.attention_regimes.For(4, true), nullptr);
  EXPECT_EQ(own.attention_regimes.For(4, true)->tile_latency_ns, 123);
  EXPECT_TRUE(own.attention_regimes.For(4, true)->costs_source.empty());
}

// FlashInfer's FA2 kernels take their own fit (configs/calibration/h200-flashinfer.textproto, the
// probe's calls on the H200) with the scenario's geometry; FlashAttention-3's, not measured, take
// FlashAttention-2's split kernel's fitted per-step costs with their own geometry, and say so.
TEST(ChooseAttentionCosts, FlashInferTakesItsOwnFitAndFlashAttention3ItsClasss) {
  const std::optional<compute::AttentionImplementation> fi = TransferredAttentionKernel("flashinfer_fa2_graph/sm120");
  const std::optional<compute::AttentionImplementation> fa2 =
      TransferredAttentionKernel("torch_flash_fwd_splitkv/64x128+split");
  const std::optional<compute::AttentionImplementation> fa3 = TransferredAttentionKernel("vllm_fa3_graph/sm90");
  ASSERT_TRUE(fi.has_value() && fa2.has_value() && fa3.has_value());
  EXPECT_EQ(fi->split_policy, compute::SplitPolicy::kFlashInfer);
  EXPECT_TRUE(fi->planned_for_graph);
  EXPECT_NE(fi->costs_source.find("configs/calibration/h200-flashinfer.textproto"), std::string::npos)
      << fi->costs_source;
  EXPECT_EQ(fi->costs_source.find("another kernel of its class"), std::string::npos) << fi->costs_source;
  EXPECT_NE(fi->tile_ns, fa2->tile_ns);  // its own costs, not FlashAttention-2's
  EXPECT_EQ(fa3->split_policy, compute::SplitPolicy::kFlashAttention3);
  EXPECT_DOUBLE_EQ(fa3->tile_ns, fa2->tile_ns);
  EXPECT_DOUBLE_EQ(fa3->combine_split_ns, fa2->combine_split_ns);
  EXPECT_NE(fa3->costs_source.find("of torch_flash_fwd_splitkv/64x128+split, another kernel of its class"),
            std::string::npos)
      << fa3->costs_source;
  EXPECT_NE(fa3->costs_source.find("own not measured"), std::string::npos) << fa3->costs_source;
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

// --- serving.weight_source: the checkpoint's formats or the scenario's dtypes (issue 16 item 1) ---

constexpr double kGiB = 1024.0 * 1024 * 1024;
const std::string kH200 = "configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto";

// The weights line of a scenario's memory plan (bytes per GPU).
double PlannedWeightBytes(const LoadedScenario& loaded) {
  StatusOr<llm::MemoryPlan> plan = PlanScenarioMemory(loaded);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return plan.ok() ? plan->lines.at(0).bytes : 0;
}

// Every attention backend rule of the bundled SGLang and vLLM profiles, applied to a box of its
// architecture and a target of its cache kind: the framework's decode kernel prices q = 1 and its
// prefill-style (verify) kernel q >= 2, once a calibration has kernels of those names.
TEST(ChooseAttentionCosts, EveryBackendOfTheBundledProfilesTakesItsDecodeKernelAtQ1AndItsVerifyKernelAbove) {
  int rules = 0;
  for (const char* path : {"configs/frameworks/sglang.textproto", "configs/frameworks/sglang-v1.textproto",
                           "configs/frameworks/vllm.textproto", "configs/frameworks/vllm-sync.textproto"}) {
    auto profile = io::LoadFrameworkFile(path);
    ASSERT_TRUE(profile.ok()) << profile.status().ToString();
    ASSERT_FALSE(profile->attention_backends.empty()) << path;
    for (const llm::AttentionBackendRule& rule : profile->attention_backends) {
      for (const std::string& arch : rule.gpu_archs) {
        llm::FrameworkScenario fs;
        fs.gpu_arch = arch;
        fs.mla = rule.mla;
        fs.speculative = true;
        fs.topk = rule.topk == llm::AttentionBackendRule::Topk::kAboveOne ? 4 : 1;
        fs.num_steps = 3;
        fs.num_draft_tokens = fs.topk == 1 ? 4 : 8;
        llm::FrameworkProfile f = *profile;
        llm::ApplyFrameworkDecisions(fs, {}, &f);
        const std::string where = std::string(path) + " " + rule.backend + " on " + arch;
        compute::ComputeParams p;
        for (const std::string& name : {rule.decode_kernel, rule.verify_kernel}) {
          compute::AttentionImplementation impl = compute::SpecsimValidateKernel("flash_mma").value();
          impl.name = name;
          p.attention_implementations.push_back(impl);
        }
        std::vector<std::string> warnings;
        ASSERT_TRUE(ChooseAttentionCosts({}, f, rule.mla, "calib.textproto", &p, &warnings).ok()) << where;
        ASSERT_NE(p.attention_regimes.For(1, rule.mla), nullptr) << where;
        EXPECT_EQ(p.attention_regimes.For(1, rule.mla)->name, rule.decode_kernel) << where;
        for (int q : {2, 4, 8}) EXPECT_EQ(p.attention_regimes.For(q, rule.mla)->name, rule.verify_kernel) << where;
        EXPECT_TRUE(warnings.empty()) << where;
        ++rules;
      }
    }
  }
  EXPECT_GE(rules, 4 * 8);  // every profile covers sm80-sm120, GQA and MLA
}

TEST(WeightSource, AnExplicitDtypeIsTheScenariosChoice) {
  // The default Kimi scenario says weight_dtype INT4 (the model file states FP8): INT4 it is.
  StatusOr<LoadedScenario> kimi = LoadScenario("", {}, "");
  ASSERT_TRUE(kimi.ok()) << kimi.status().ToString();
  EXPECT_FALSE(kimi->weights.from_checkpoint);
  EXPECT_FALSE(kimi->setup.weight_formats.has_value());
  EXPECT_EQ(kimi->weights.source, "serving.weight_dtype");
  EXPECT_NE(kimi->weights.formats.find("int4 g32 +16-bit scales"), std::string::npos) << kimi->weights.formats;
  // CHECKPOINT explicitly: the model's FP8 128x128 blocks, ~1 TB over 8 GPUs (INT4: ~68 GiB).
  StatusOr<LoadedScenario> fp8 = LoadScenario("", {"serving.weight_source=CHECKPOINT"}, "");
  ASSERT_TRUE(fp8.ok()) << fp8.status().ToString();
  EXPECT_TRUE(fp8->weights.from_checkpoint);
  EXPECT_EQ(fp8->weights.source, "checkpoint (quantization fp8)");
  ASSERT_TRUE(fp8->setup.weight_formats.has_value());
  EXPECT_EQ(fp8->setup.weight_formats->routed_experts,
            llm::FormatsFromCheckpoint(fp8->setup.target.quantization).routed_experts);
  EXPECT_EQ(fp8->setup.weight_formats->routed_experts.dtype, compute::DType::kFp8);
  EXPECT_EQ(fp8->setup.weight_formats->lm_head.dtype, compute::DType::kBf16);
  EXPECT_NEAR(PlannedWeightBytes(*kimi) / kGiB, 68.1, 0.5);
  EXPECT_GT(PlannedWeightBytes(*fp8) / kGiB, 115);
}

TEST(WeightSource, NoDtypeMeansTheCheckpointsFormats) {
  // gpt-oss-20b's config.json (MXFP4 experts) in a scenario without a weight dtype, at TP1:
  // the checkpoint's 12.8 GiB (arXiv:2508.10925 table 1: gpt-oss-20b checkpoint 12.8 GiB).
  const std::vector<std::string> oss = {"model=models/hf/gpt-oss-20b.config.json",
                                        "serving.weight_dtype=DTYPE_UNSPECIFIED", "parallelism.tensor_parallel=1",
                                        "speculation.method=NONE"};
  StatusOr<LoadedScenario> ckpt = LoadScenario(kH200, oss, "");
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_TRUE(ckpt->weights.from_checkpoint);
  EXPECT_EQ(ckpt->weights.source, "checkpoint (quantization mxfp4)");
  EXPECT_EQ(ckpt->weights.formats, "attention, LM head bf16; routed experts fp4 g32 +8-bit scales");
  EXPECT_NEAR(PlannedWeightBytes(*ckpt) / kGiB, 12.8, 0.3);
  // The forward pass reads the same formats (the decode loop's passes, not only the plan).
  StatusOr<Evaluation> e = Evaluate(*ckpt);
  ASSERT_TRUE(e.ok() && e->result.has_value());
  // An explicit dtype wins: BF16 everywhere is ~3x the bytes (20.9B x 2 B = 38.9 GiB).
  std::vector<std::string> bf16 = oss;
  bf16.push_back("serving.weight_dtype=BF16");
  StatusOr<LoadedScenario> dtype = LoadScenario(kH200, bf16, "");
  ASSERT_TRUE(dtype.ok()) << dtype.status().ToString();
  EXPECT_FALSE(dtype->weights.from_checkpoint);
  EXPECT_NEAR(PlannedWeightBytes(*dtype) / kGiB, 38.9, 1.0);
  StatusOr<Evaluation> slower = Evaluate(*dtype);
  ASSERT_TRUE(slower.ok() && slower->result.has_value());
  // (2.5 vs 3.7 ms per step at batch 1: the routed experts' bytes are read each step.)
  EXPECT_GT(e->result->baseline_tokens_per_s, 1.3 * slower->result->baseline_tokens_per_s);
  // weight_source DTYPE without a dtype is an error naming the field.
  std::vector<std::string> missing = oss;
  missing.push_back("serving.weight_source=DTYPE");
  StatusOr<LoadedScenario> bad = LoadScenario(kH200, missing, "");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("serving.weight_dtype"), std::string::npos) << bad.status().message();
  // An expert dtype without a weight dtype would be dropped by the checkpoint's formats: refused.
  std::vector<std::string> experts_only = oss;
  experts_only.push_back("serving.expert_weight_dtype=INT4");
  StatusOr<LoadedScenario> dropped = LoadScenario(kH200, experts_only, "");
  ASSERT_FALSE(dropped.ok());
  EXPECT_NE(dropped.status().message().find("serving.expert_weight_dtype = INT4: needs serving.weight_dtype"),
            std::string::npos)
      << dropped.status().message();
  // Issue 43: on a dense model (the scenario's Llama) an expert dtype would be ignored: refused.
  StatusOr<LoadedScenario> dense =
      LoadScenario(kH200, {"serving.weight_dtype=BF16", "serving.expert_weight_dtype=INT4"}, "");
  ASSERT_FALSE(dense.ok());
  EXPECT_NE(dense.status().message().find("serving.expert_weight_dtype: model"), std::string::npos)
      << dense.status().message();
  EXPECT_NE(dense.status().message().find("is dense"), std::string::npos) << dense.status().message();
}

TEST(WeightSource, AnUnquantizedCheckpointIsBf16AndSaysSo) {
  StatusOr<LoadedScenario> l =
      LoadScenario(kH200, {"serving.weight_dtype=DTYPE_UNSPECIFIED", "speculation.method=NONE"}, "");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_TRUE(l->weights.from_checkpoint);
  EXPECT_EQ(l->weights.source, "checkpoint (no quantization stated: bf16)");
  EXPECT_EQ(l->weights.formats, "attention, dense MLP, LM head bf16");
}

// MTP drafting from a config.json's num_nextn_predict_layers (GLM-4.5-Air ships one layer): the
// plan carries the MTP layer; Kimi-K2's config states none, and MTP is refused naming the field.
TEST(WeightSource, MtpLayerOfAnImportedConfig) {
  const std::string mtp = "configs/scenarios/kimi-k2-mtp-rtxpro6000-8x.textproto";
  StatusOr<LoadedScenario> glm = LoadScenario(mtp, {"model=models/hf/glm-4.5-air.config.json"}, "");
  ASSERT_TRUE(glm.ok()) << glm.status().ToString();
  EXPECT_EQ(glm->setup.target.num_nextn_predict_layers, 1);
  StatusOr<Evaluation> e = Evaluate(*glm);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ASSERT_TRUE(e->result.has_value());
  EXPECT_TRUE(e->result->speculative);
  bool mtp_line = false;
  for (const llm::MemoryLine& line : e->memory.lines) mtp_line |= line.note.rfind("MTP layer", 0) == 0;
  EXPECT_TRUE(mtp_line);
  StatusOr<LoadedScenario> kimi = LoadScenario(mtp, {"model=models/hf/kimi-k2.config.json"}, "");
  ASSERT_TRUE(kimi.ok()) << kimi.status().ToString();
  StatusOr<Evaluation> refused = Evaluate(*kimi);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("num_nextn_predict_layers = 0"), std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace specsim::scenario

namespace specsim::scenario {
namespace {

// Issue 41 item 4: memory as the frameworks allocate it. NCCL's buffers follow the channels a
// scenario forces (fewer channels, less memory); the CUDA-graph pool follows the framework's capture
// list and what it keeps: SGLang's older runner one fp32 logits buffer per captured size, its
// current runner one shared buffer, vLLM none (its graphs end at the hidden states); no graphs, no
// pool.
TEST(PlanScenarioMemory, ChannelsAndTheGraphPoolFollowTheFramework) {
  const std::string kimi = "configs/scenarios/kimi-k2-eagle3-rtxpro6000-8x.textproto";
  auto line = [&](const std::vector<std::string>& set, const std::string& name) {
    auto loaded = LoadScenario(kimi, set, "");
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    auto plan = PlanScenarioMemory(*loaded);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    for (const llm::MemoryLine& l : plan->lines)
      if (l.name == name) return l.bytes;
    ADD_FAILURE() << name;
    return 0.0;
  };
  const double one = line({"communication.channels=1"}, "communication buffers");
  const double eight = line({"communication.channels=8"}, "communication buffers");
  EXPECT_DOUBLE_EQ(eight, 8 * one);
  const double current = line({}, "CUDA graph pool");
  const double v1 = line({"framework=configs/frameworks/sglang-v1.textproto"}, "CUDA graph pool");
  const double vllm = line({"framework=configs/frameworks/vllm.textproto"}, "CUDA graph pool");
  EXPECT_GT(v1, current);    // every size's logits vs one shared buffer
  EXPECT_GT(current, vllm);  // logits kept vs none
  // SGLang's shared buffer at batch 1 under speculation: the request cap (48) x 4 draft tokens rows
  // of Kimi-K2's 163840 fp32 logits = 120 MiB of the pool.
  EXPECT_GT(current, 120.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(line({"serving.cuda_graphs=false"}, "CUDA graph pool"), 0);
}

}  // namespace
}  // namespace specsim::scenario
