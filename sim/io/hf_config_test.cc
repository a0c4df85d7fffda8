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
  EXPECT_EQ(m->source(), "Hugging Face config.json dir/tiny.config.json");
}

TEST(HfConfigTest, UnknownModelTypeNamesFileValueAndSupportedTypes) {
  const std::string e = ErrorOf(R"({"model_type": "mistral", "hidden_size": 4096})");
  EXPECT_TRUE(Contains(e, "cfg.json"));
  EXPECT_TRUE(Contains(e, "model_type = \"mistral\""));
  EXPECT_TRUE(Contains(e, "llama, qwen3, qwen3_moe, deepseek_v3, kimi_k2, gpt_oss"));
}

TEST(HfConfigTest, MissingModelType) {
  EXPECT_TRUE(Contains(ErrorOf(R"({"hidden_size": 4096})"), "cfg.json: model_type: missing"));
}

TEST(HfConfigTest, MissingHiddenSizeIsNamedWithEveryOtherMissingField) {
  const std::string e = ErrorOf(R"({"model_type": "qwen3", "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 512})");
  EXPECT_TRUE(Contains(e, "cfg.json: hidden_size: missing (required for model_type \"qwen3\")"));
  EXPECT_TRUE(Contains(e, "cfg.json: vocab_size: missing"));
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
  // A number past a double is nlohmann's out_of_range, not a parse_error (found by hf_config_fuzz:
  // it escaped uncaught and aborted).
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
  EXPECT_TRUE(Contains(e, "hidden_size: missing"));
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

  const std::string e = ErrorOf(R"({"model_type": "deepseek_v3", "num_hidden_layers": 61,
      "hidden_size": 7168, "num_attention_heads": 128, "intermediate_size": 18432,
      "vocab_size": 129280, "n_routed_experts": 256, "num_experts_per_tok": 8,
      "moe_intermediate_size": 2048, "q_lora_rank": null, "kv_lora_rank": 512,
      "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128})");
  EXPECT_TRUE(Contains(e, "q_lora_rank: missing (required for model_type \"deepseek_v3\")"));
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

}  // namespace
}  // namespace specsim::io
