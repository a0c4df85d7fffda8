// Hugging Face config.json import: field mapping, defaults, text_config nesting, and errors that
// name the file, the field and what is allowed.
#include "sim/io/hf_config.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/io/test_matchers.h"

namespace specsim::io {
namespace {

using testing::Contains;

std::string ErrorOf(const std::string& json) {
  StatusOr<config::Model> m = ImportHfConfig(json, "cfg.json");
  EXPECT_FALSE(m.ok());
  if (m.ok()) return "";
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  return m.status().message();
}

TEST(HfConfigTest, LlamaDefaultsHeadDimAndKvHeads) {
  StatusOr<config::Model> m = ImportHfConfig(R"({
      "model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256,
      "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 1000})",
                                             "dir/tiny.config.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->family(), config::Model::LLAMA);
  EXPECT_EQ(m->name(), "tiny");
  EXPECT_EQ(m->num_key_value_heads(), 4);  // absent: = num_attention_heads
  EXPECT_EQ(m->head_dim(), 64);            // absent: hidden / heads
  EXPECT_FALSE(m->tie_word_embeddings());
  EXPECT_FALSE(m->has_moe());
  EXPECT_FALSE(m->has_mla());
  // Absent fields with a transformers default are named in the source (never silent).
  EXPECT_EQ(m->source(),
            "Hugging Face config.json dir/tiny.config.json; transformers' llama defaults for "
            "tie_word_embeddings");
}

TEST(HfConfigTest, UnknownModelTypeNamesFileValueAndSupportedTypes) {
  const std::string e = ErrorOf(R"({"model_type": "falcon", "hidden_size": 4096})");
  EXPECT_TRUE(Contains(e, "cfg.json"));
  EXPECT_TRUE(Contains(e, "model_type = \"falcon\""));
  EXPECT_TRUE(Contains(e,
                       "llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, deepseek_v2, deepseek_v3, "
                       "kimi_k2, gpt_oss, glm4_moe"));
}

TEST(HfConfigTest, MissingModelType) {
  EXPECT_TRUE(Contains(ErrorOf(R"({"hidden_size": 4096})"), "cfg.json: model_type: missing"));
}

// Absent or null fields take transformers' Qwen3Config defaults (hidden_size 4096, vocab_size
// 151936, head_dim 128, num_key_value_heads 32), named in the source.
TEST(HfConfigTest, AbsentOrNullFieldsTakeTheFamilyDefaults) {
  StatusOr<config::Model> m = ImportHfConfig(R"({"model_type": "qwen3", "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 512, "hidden_size": null})",
                                             "cfg.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->hidden_size(), 4096);
  EXPECT_EQ(m->vocab_size(), 151936);
  EXPECT_EQ(m->head_dim(), 128);
  EXPECT_EQ(m->num_key_value_heads(), 32);
  EXPECT_TRUE(Contains(m->source(), "transformers' qwen3 defaults for hidden_size, num_key_value_heads, vocab_size"));
  // A field without a default is still an error naming it: DeepseekV2Config's n_routed_experts is
  // None (a dense model specsim does not model).
  const std::string e = ErrorOf(R"({"model_type": "deepseek_v2", "num_hidden_layers": 2})");
  EXPECT_TRUE(Contains(e, "cfg.json: n_routed_experts: missing (required for model_type \"deepseek_v2\""));
  EXPECT_TRUE(Contains(e, "cfg.json: num_experts_per_tok: missing"));
}

TEST(HfConfigTest, MistypedFieldNamesValue) {
  const std::string e = ErrorOf(R"({"model_type": "llama", "num_hidden_layers": "32",
      "hidden_size": 4096.5, "num_attention_heads": 32, "intermediate_size": 1, "vocab_size": 1})");
  EXPECT_TRUE(Contains(e, "num_hidden_layers = \"32\": must be an integer"));
  EXPECT_TRUE(Contains(e, "hidden_size = 4096.5: must be an integer"));
}

TEST(HfConfigTest, InvalidJsonNamesFile) {
  EXPECT_TRUE(Contains(ErrorOf("{\"model_type\": \"llama\",}"), "cfg.json: not valid JSON"));
  EXPECT_TRUE(Contains(ErrorOf("[1, 2]"), "cfg.json: not a Hugging Face config.json"));
  // A number past a double is nlohmann's out_of_range, not a parse_error: caught as bad JSON too.
  EXPECT_TRUE(Contains(ErrorOf(R"({"model_type": "llama", "rms_norm_eps": 1e6666})"), "cfg.json: not valid JSON"));
}

TEST(HfConfigTest, TextConfigNestingIsRead) {
  StatusOr<config::Model> m = ImportHfConfig(R"({
      "model_type": "some_vlm", "architectures": ["SomeVlmForConditionalGeneration"],
      "vision_config": {"hidden_size": 1152},
      "text_config": {"model_type": "qwen3", "num_hidden_layers": 4, "hidden_size": 1024,
                      "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128,
                      "intermediate_size": 3072},
      "vocab_size": 151936, "tie_word_embeddings": true})",
                                             "vlm.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->family(), config::Model::QWEN3);
  EXPECT_EQ(m->hidden_size(), 1024);  // text_config's, not vision_config's
  EXPECT_EQ(m->num_key_value_heads(), 2);
  EXPECT_EQ(m->head_dim(), 128);
  EXPECT_EQ(m->vocab_size(), 151936);  // top level when text_config lacks it
  EXPECT_TRUE(m->tie_word_embeddings());

  const std::string e = ErrorOf(R"({"model_type": "x", "text_config": {"model_type": "llama",
      "num_hidden_layers": 4, "num_attention_heads": "8", "intermediate_size": 1,
      "vocab_size": 1}})");
  EXPECT_TRUE(Contains(e, "text_config.num_attention_heads = \"8\": must be an integer"));
}

TEST(HfConfigTest, GptOssLayerTypesAndPerExpertIntermediate) {
  StatusOr<config::Model> m = ImportHfConfig(R"({
      "model_type": "gpt_oss", "num_hidden_layers": 4, "hidden_size": 2880,
      "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
      "intermediate_size": 2880, "vocab_size": 201088, "num_local_experts": 32,
      "experts_per_token": 4, "sliding_window": 128,
      "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]})",
                                             "oss.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->family(), config::Model::GPT_OSS);
  EXPECT_EQ(m->intermediate_size(), 0);
  EXPECT_EQ(m->moe().moe_intermediate_size(), 2880);
  EXPECT_EQ(m->moe().num_experts(), 32);
  EXPECT_EQ(m->moe().experts_per_token(), 4);
  EXPECT_EQ(m->sliding_window(), 128);
  EXPECT_EQ(m->sliding_window_every(), 2);

  const std::string e = ErrorOf(R"({
      "model_type": "gpt_oss", "num_hidden_layers": 3, "hidden_size": 2880,
      "num_attention_heads": 64, "intermediate_size": 2880, "vocab_size": 1,
      "num_local_experts": 32, "experts_per_token": 4, "sliding_window": 128,
      "layer_types": ["full_attention", "sliding_attention", "local"]})");
  EXPECT_TRUE(Contains(e,
                       "layer_types[2] = \"local\": allowed values: \"sliding_attention\", "
                       "\"full_attention\""));
}

TEST(HfConfigTest, KimiK2MapsToDeepseekV3WithMlaHeadDim) {
  StatusOr<config::Model> m = ImportHfConfig(R"({
      "model_type": "kimi_k2", "num_hidden_layers": 61, "hidden_size": 7168,
      "num_attention_heads": 64, "num_key_value_heads": 64, "intermediate_size": 18432,
      "vocab_size": 163840, "n_routed_experts": 384, "n_shared_experts": 1,
      "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "first_k_dense_replace": 1,
      "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
      "qk_rope_head_dim": 64, "v_head_dim": 128, "head_dim": 64})",
                                             "kimi.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->family(), config::Model::DEEPSEEK_V3);
  EXPECT_EQ(m->head_dim(), 192);  // qk_nope + qk_rope, whatever head_dim says
  EXPECT_EQ(m->mla().kv_lora_rank(), 512);
  EXPECT_EQ(m->moe().first_dense_layers(), 1);
  EXPECT_EQ(m->num_nextn_predict_layers(), 0);

  // q_lora_rank null: no query compression (q_proj straight from the hidden state), not the
  // default 1536; absent: the default.
  StatusOr<config::Model> v3 = ImportHfConfig(R"({"model_type": "deepseek_v3", "num_hidden_layers": 61,
      "hidden_size": 7168, "num_attention_heads": 128, "intermediate_size": 18432,
      "vocab_size": 129280, "n_routed_experts": 256, "num_experts_per_tok": 8,
      "moe_intermediate_size": 2048, "q_lora_rank": null, "kv_lora_rank": 512,
      "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128})",
                                              "v3.json");
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  EXPECT_EQ(v3->mla().q_lora_rank(), 0);
  StatusOr<config::Model> absent = ImportHfConfig(R"({"model_type": "deepseek_v3"})", "v3.json");
  ASSERT_TRUE(absent.ok()) << absent.status().ToString();
  EXPECT_EQ(absent->mla().q_lora_rank(), 1536);
  EXPECT_EQ(absent->moe().first_dense_layers(), 3);
}

TEST(HfConfigTest, UnrepresentableLayoutsAreErrors) {
  const std::string moe = R"({"model_type": "qwen3_moe", "num_hidden_layers": 4,
      "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "num_experts": 8,
      "num_experts_per_tok": 2, "moe_intermediate_size": 32, "mlp_only_layers": [0]})";
  EXPECT_TRUE(Contains(ErrorOf(moe), "mlp_only_layers = [0]: not supported"));
  const std::string sliding = R"({"model_type": "qwen3", "num_hidden_layers": 4,
      "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 32,
      "use_sliding_window": true, "sliding_window": 4096})";
  EXPECT_TRUE(Contains(ErrorOf(sliding), "use_sliding_window = true: not supported"));
}

TEST(HfConfigTest, Eagle3HeadIsRecognised) {
  // yuhuili/EAGLE3-LLaMA3.1-Instruct-8B's config.json (shape fields).
  StatusOr<config::Model> m = ImportHfConfig(R"({
      "architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama",
      "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
      "num_key_value_heads": 8, "num_hidden_layers": 1, "tie_word_embeddings": false,
      "vocab_size": 128256, "draft_vocab_size": 32000})",
                                             "eagle3.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->family(), config::Model::EAGLE3);
  EXPECT_EQ(m->eagle3().draft_vocab_size(), 32000);
  EXPECT_EQ(m->eagle3().fused_hidden_states(), 3);
  EXPECT_EQ(m->num_layers(), 1);
  EXPECT_EQ(m->head_dim(), 128);
}

// SpecForge's LlamaForCausalLMEagle3 (specforge/modeling/draft/llama3_eagle.py): fc maps
// 3 x target_hidden_size (absent: hidden_size) to hidden_size. specsim's head runs at the target's
// hidden size with its embedding shared, and is one decoder layer: anything else is refused.
TEST(HfConfigTest, Eagle3HeadShapesSpecsimCannotModelAreErrors) {
  const std::string head = R"({
      "architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": 4096,
      "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
      "vocab_size": 128256, "draft_vocab_size": 32000, )";
  StatusOr<config::Model> same =
      ImportHfConfig(head + R"("num_hidden_layers": 1, "target_hidden_size": 4096})", "e.json");
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(same->hidden_size(), 4096);
  EXPECT_TRUE(Contains(ErrorOf(head + R"("num_hidden_layers": 1, "target_hidden_size": 5120})"),
                       "cfg.json: target_hidden_size = 5120: not supported: must equal hidden_size = 4096"));
  EXPECT_TRUE(Contains(ErrorOf(head + R"("num_hidden_layers": 2})"),
                       "cfg.json: num_hidden_layers = 2: not supported for an EAGLE-3 head"));
  // A draft_vocab_size alone marks a head too (and then needs model_type llama).
  EXPECT_TRUE(Contains(ErrorOf(R"({"model_type": "qwen3", "draft_vocab_size": 32000})"),
                       "only llama-style EAGLE-3 heads are supported"));
}

TEST(HfConfigTest, NewFamiliesMapTheirOwnFieldNames) {
  // Mixtral: intermediate_size is the per-expert size; sliding_window null: none.
  StatusOr<config::Model> mixtral = ImportHfConfig(R"({"model_type": "mixtral", "num_hidden_layers": 32,
      "hidden_size": 4096, "intermediate_size": 14336, "num_local_experts": 8, "num_experts_per_tok": 2,
      "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000, "sliding_window": null})",
                                                   "mixtral.json");
  ASSERT_TRUE(mixtral.ok()) << mixtral.status().ToString();
  EXPECT_EQ(mixtral->family(), config::Model::MIXTRAL);
  EXPECT_EQ(mixtral->intermediate_size(), 0);
  EXPECT_EQ(mixtral->moe().moe_intermediate_size(), 14336);
  EXPECT_EQ(mixtral->moe().num_experts(), 8);
  EXPECT_EQ(mixtral->sliding_window(), 0);
  // Mistral with a window: every layer slides; absent: MistralConfig's 4096.
  StatusOr<config::Model> mistral = ImportHfConfig(R"({"model_type": "mistral", "num_hidden_layers": 2})", "m.json");
  ASSERT_TRUE(mistral.ok()) << mistral.status().ToString();
  EXPECT_EQ(mistral->sliding_window(), 4096);
  EXPECT_EQ(mistral->sliding_window_every(), 1);
  // qwen2_moe: the shared expert of shared_expert_intermediate_size counts as 4 routed-size experts.
  StatusOr<config::Model> q2 = ImportHfConfig(R"({"model_type": "qwen2_moe", "moe_intermediate_size": 1408,
      "shared_expert_intermediate_size": 5632})",
                                              "q.json");
  ASSERT_TRUE(q2.ok()) << q2.status().ToString();
  EXPECT_EQ(q2->moe().num_shared_experts(), 4);
  EXPECT_TRUE(Contains(ErrorOf(R"({"model_type": "qwen2_moe", "moe_intermediate_size": 1408,
      "shared_expert_intermediate_size": 5000})"),
                       "shared_expert_intermediate_size = 5000: not supported: must be a multiple of "
                       "moe_intermediate_size = 1408"));
  // glm4_moe: DeepSeek-style expert fields, GQA attention with head_dim 128.
  StatusOr<config::Model> glm = ImportHfConfig(R"({"model_type": "glm4_moe"})", "g.json");
  ASSERT_TRUE(glm.ok()) << glm.status().ToString();
  EXPECT_EQ(glm->family(), config::Model::GLM4_MOE);
  EXPECT_EQ(glm->moe().num_experts(), 128);
  EXPECT_EQ(glm->moe().first_dense_layers(), 1);
  EXPECT_EQ(glm->head_dim(), 128);
  EXPECT_FALSE(glm->has_mla());
}

TEST(HfConfigTest, QuantizationConfigFormats) {
  const std::string base = R"("model_type": "deepseek_v3", "quantization_config": )";
  StatusOr<config::Model> fp8 = ImportHfConfig(
      "{" + base + R"({"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 64]}})", "q.json");
  ASSERT_TRUE(fp8.ok()) << fp8.status().ToString();
  EXPECT_EQ(fp8->quantization().format(), config::Quantization::FP8);
  EXPECT_EQ(fp8->quantization().block_cols(), 64);
  EXPECT_EQ(fp8->quantization().scale_bits(), 32);
  EXPECT_FALSE(fp8->quantization().attention_unquantized());
  EXPECT_FALSE(fp8->quantization().lm_head_quantized());

  // Kimi-K2-Thinking's compressed-tensors: int4 groups of 32, attention / shared experts / dense
  // MLP ignored (regex entries), only the routed experts quantized.
  StatusOr<config::Model> ct = ImportHfConfig("{" + base + R"({"quant_method": "compressed-tensors",
      "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
      "strategy": "group", "group_size": 32, "symmetric": true}}},
      "ignore": ["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*",
                 "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"]}})",
                                              "q.json");
  ASSERT_TRUE(ct.ok()) << ct.status().ToString();
  const config::Quantization& q = ct->quantization();
  EXPECT_EQ(q.format(), config::Quantization::INT4);
  EXPECT_EQ(q.block_rows(), 1);
  EXPECT_EQ(q.block_cols(), 32);
  EXPECT_EQ(q.scale_bits(), 16);
  EXPECT_EQ(q.zero_point_bits(), 0);
  EXPECT_TRUE(q.attention_unquantized());
  EXPECT_TRUE(q.shared_experts_unquantized());
  EXPECT_TRUE(q.dense_mlp_unquantized());
  EXPECT_FALSE(q.routed_experts_unquantized());

  // AWQ: fp16 scale and 4-bit zero point per group of 128; a glob entry leaves attention bf16.
  StatusOr<config::Model> awq = ImportHfConfig(R"({"model_type": "qwen2", "quantization_config":
      {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true, "version": "gemm",
       "modules_to_not_convert": ["model.layers.*.self_attn"]}})",
                                               "q.json");
  ASSERT_TRUE(awq.ok()) << awq.status().ToString();
  EXPECT_EQ(awq->quantization().zero_point_bits(), 4);
  EXPECT_EQ(awq->quantization().block_cols(), 128);
  EXPECT_TRUE(awq->quantization().attention_unquantized());
  EXPECT_FALSE(awq->quantization().dense_mlp_unquantized());
  // Globs match a prefix of the module name, '*' any run of characters (many stars in a row are one,
  // matched in linear time: regressions/hf_config_fuzz/glob-many-stars.json); a glob that matches
  // nothing leaves it.
  for (const auto& [glob, unquantized] :
       std::vector<std::pair<std::string, bool>>{{"model.layer*******************************s.*.self_attn", true},
                                                 {"model.layers.*.self_attn.o_proj", true},
                                                 {"model.*s.*.self_*", true},
                                                 {"layers.*.self_attn", false},
                                                 {"model.layers.*.self_attnX", false}}) {
    StatusOr<config::Model> m = ImportHfConfig(
        R"({"model_type": "qwen2", "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128,
            "zero_point": true, "version": "gemm", "modules_to_not_convert": [")" +
            glob + R"("]}})",
        "q.json");
    ASSERT_TRUE(m.ok()) << glob << ": " << m.status().ToString();
    EXPECT_EQ(m->quantization().attention_unquantized(), unquantized) << glob;
  }

  const std::string unknown =
      ErrorOf(R"({"model_type": "llama", "quantization_config": {"quant_method": "bitsandbytes"}})");
  EXPECT_TRUE(Contains(unknown,
                       "cfg.json: quantization_config.quant_method = \"bitsandbytes\": not supported; "
                       "supported quant_method values: fp8, mxfp4, awq, gptq, compressed-tensors"));
  EXPECT_TRUE(
      Contains(ErrorOf(R"({"model_type": "llama", "quantization_config": {"quant_method": "gptq", "bits": 8}})"),
               "quantization_config.bits = 8: not supported"));
  EXPECT_TRUE(Contains(ErrorOf(R"({"model_type": "llama", "quantization_config": {"quant_method": "fp8",
      "weight_block_size": [128]}})"),
                       "quantization_config.weight_block_size = [128]: must be [rows, cols]"));
  EXPECT_TRUE(Contains(ErrorOf(R"({"model_type": "llama", "quantization_config": {"quant_method": "compressed-tensors",
      "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "int"}}}}})"),
                       "quantization_config.config_groups.g.weights.type = \"int\" with num_bits 8: not supported"));
}

}  // namespace
}  // namespace specsim::io
