// Every bundled model loads; importing each models/hf/*.config.json reproduces the bundled
// textproto field by field; bad models fail with the file, the field and what is allowed.
#include "sim/io/model_loader.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/io/hf_config.h"
#include "sim/io/test_matchers.h"

namespace specsim::io {
namespace {

namespace pb = google::protobuf;
using testing::Contains;

std::string SourcePath(const std::string& relative) { return std::string(SPECSIM_SOURCE_DIR) + "/" + relative; }

std::string ReadSource(const std::string& relative) {
  std::ifstream in(SourcePath(relative));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct BundledModel {
  const char* file;  // under models/
  llm::ModelFamily family;
  int num_layers;
  int hidden_size;
  bool has_hf_config;  // models/hf/<stem>.config.json exists
};

constexpr BundledModel kModels[] = {
    {"llama-3.1-8b", llm::ModelFamily::kLlama, 32, 4096, true},
    {"llama-3.2-1b", llm::ModelFamily::kLlama, 16, 2048, true},
    {"llama-3.1-70b", llm::ModelFamily::kLlama, 80, 8192, true},
    {"qwen3-32b", llm::ModelFamily::kQwen3, 64, 5120, true},
    {"qwen3-235b-a22b", llm::ModelFamily::kQwen3Moe, 94, 4096, true},
    {"gpt-oss-120b", llm::ModelFamily::kGptOss, 36, 2880, true},
    {"deepseek-v3", llm::ModelFamily::kDeepseekV3, 61, 7168, true},
    {"kimi-k2", llm::ModelFamily::kDeepseekV3, 61, 7168, true},
    {"kimi-k2-mtp", llm::ModelFamily::kDeepseekV3, 61, 7168, false},
    {"eagle3-llama-3.1-8b", llm::ModelFamily::kEagle3, 1, 4096, true},
    {"eagle3-kimi-k2", llm::ModelFamily::kEagle3, 1, 7168, false},
};

class BundledModelTest : public ::testing::TestWithParam<BundledModel> {};

TEST_P(BundledModelTest, LoadsFromDiskAndEmbeddedCopy) {
  const BundledModel& b = GetParam();
  const std::string relative = std::string("models/") + b.file + ".textproto";
  StatusOr<llm::ModelSpec> m = LoadModelFile(SourcePath(relative));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->family, b.family);
  EXPECT_EQ(m->num_layers, b.num_layers);
  EXPECT_EQ(m->hidden_size, b.hidden_size);
  EXPECT_FALSE(m->name.empty());

  // The relative path works from any directory through the embedded copy.
  StatusOr<llm::ModelSpec> embedded = LoadModelFile(relative);
  ASSERT_TRUE(embedded.ok()) << embedded.status().ToString();
  EXPECT_EQ(embedded->num_layers, b.num_layers);

  const std::string text = ReadSource(relative);
  EXPECT_TRUE(Contains(text, "# proto-file: proto/specsim/model.proto\n"));
  EXPECT_TRUE(Contains(text, "# proto-message: specsim.config.Model\n"));
  EXPECT_TRUE(Contains(text, "source: "));
}

// Compares every field except name, source, hf_id (a config.json does not name its repository) and
// published_acceptance (nor does it carry a draft's published acceptance),
// recursing into sub-messages, so a field added to model.proto later is compared too
// (trust_remote_code included: the import reads it from config.json's auto_map).
void ExpectSameShape(const pb::Message& want, const pb::Message& got, const std::string& prefix) {
  const pb::Descriptor* d = want.GetDescriptor();
  const pb::Reflection* rw = want.GetReflection();
  const pb::Reflection* rg = got.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    const std::string path = prefix + std::string(f->name());
    if (prefix.empty() &&
        (f->name() == "name" || f->name() == "source" || f->name() == "hf_id" || f->name() == "published_acceptance"))
      continue;
    if (path == "eagle3.target") continue;  // an EAGLE-3 head's config.json does not name its target
    if (f->is_repeated()) {
      EXPECT_EQ(rw->FieldSize(want, f), rg->FieldSize(got, f)) << path;
      continue;
    }
    switch (f->cpp_type()) {
      case pb::FieldDescriptor::CPPTYPE_MESSAGE:
        ExpectSameShape(rw->GetMessage(want, f), rg->GetMessage(got, f), path + ".");
        break;
      case pb::FieldDescriptor::CPPTYPE_INT32: EXPECT_EQ(rw->GetInt32(want, f), rg->GetInt32(got, f)) << path; break;
      case pb::FieldDescriptor::CPPTYPE_BOOL: EXPECT_EQ(rw->GetBool(want, f), rg->GetBool(got, f)) << path; break;
      case pb::FieldDescriptor::CPPTYPE_ENUM:
        EXPECT_EQ(rw->GetEnumValue(want, f), rg->GetEnumValue(got, f)) << path;
        break;
      case pb::FieldDescriptor::CPPTYPE_STRING: EXPECT_EQ(rw->GetString(want, f), rg->GetString(got, f)) << path; break;
      default: ADD_FAILURE() << path << ": compare not implemented for " << f->cpp_type_name();
    }
  }
}

std::vector<BundledModel> WithHfConfig() {
  std::vector<BundledModel> out;
  for (const BundledModel& b : kModels) {
    if (b.has_hf_config) out.push_back(b);
  }
  return out;
}

std::string TestName(const ::testing::TestParamInfo<BundledModel>& info) {
  std::string name = info.param.file;
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
  return name;
}

class HfImportTest : public ::testing::TestWithParam<BundledModel> {};

TEST_P(HfImportTest, ReproducesTheBundledTextproto) {
  const BundledModel& b = GetParam();
  StatusOr<config::Model> want = LoadModelProto(SourcePath(std::string("models/") + b.file + ".textproto"));
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  const std::string json = std::string("models/hf/") + b.file + ".config.json";
  StatusOr<config::Model> got = LoadModelProto(SourcePath(json));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ExpectSameShape(*want, *got, "");
  // And the import passes validation (through LoadModelFile's .json route).
  StatusOr<llm::ModelSpec> spec = LoadModelFile(SourcePath(json));
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->num_layers, b.num_layers);
}

INSTANTIATE_TEST_SUITE_P(AllBundled, BundledModelTest, ::testing::ValuesIn(kModels), TestName);
INSTANTIATE_TEST_SUITE_P(AllHfConfigs, HfImportTest, ::testing::ValuesIn(WithHfConfig()), TestName);

// models/hf/ configs without a bundled textproto: each is imported and checked against its
// published parameter count and checkpoint size in hf_families_test.cc.
constexpr const char* kHfOnly[] = {"mistral-7b-v0.3", "mixtral-8x7b", "qwen2.5-72b", "qwen1.5-moe-a2.7b",
                                   "deepseek-v2-lite", "gpt-oss-20b", "glm-4.5-air", "kimi-k2-thinking",
                                   // EAGLE-3 heads (SpecForge's configs): hf_families_test.cc
                                   "eagle3-deepseek-v3", "eagle3-gpt-oss-20b", "eagle3-qwen3-235b-a22b"};

// Every models/*.textproto and models/hf/*.json is in a table (so each one is tested).
TEST(BundledModelsTest, TableCoversTheDirectories) {
  auto in_table = [](const std::string& stem, bool hf) {
    return std::any_of(std::begin(kModels), std::end(kModels),
                       [&](const BundledModel& b) { return stem == b.file && (!hf || b.has_hf_config); }) ||
           (hf && std::any_of(std::begin(kHfOnly), std::end(kHfOnly), [&](const char* f) { return stem == f; }));
  };
  for (const auto& entry : std::filesystem::directory_iterator(SourcePath("models"))) {
    if (entry.path().extension() != ".textproto") continue;
    EXPECT_TRUE(in_table(entry.path().stem().string(), false)) << entry.path();
  }
  for (const auto& entry : std::filesystem::directory_iterator(SourcePath("models/hf"))) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".json") continue;
    ASSERT_TRUE(name.size() > 12 && name.substr(name.size() - 12) == ".config.json") << name;
    EXPECT_TRUE(in_table(name.substr(0, name.size() - 12), true)) << entry.path();
  }
}

TEST(ModelLoaderTest, ConvertsEveryField) {
  StatusOr<llm::ModelSpec> m = LoadModelFile(SourcePath("models/deepseek-v3.textproto"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->name, "DeepSeek-V3");
  EXPECT_EQ(m->num_attention_heads, 128);
  EXPECT_EQ(m->head_dim, 192);
  EXPECT_EQ(m->intermediate_size, 18432);
  EXPECT_EQ(m->vocab_size, 129280);
  EXPECT_EQ(m->moe.num_experts, 256);
  EXPECT_EQ(m->moe.num_shared_experts, 1);
  EXPECT_EQ(m->moe.experts_per_token, 8);
  EXPECT_EQ(m->moe.moe_intermediate_size, 2048);
  EXPECT_EQ(m->moe.first_dense_layers, 3);
  EXPECT_EQ(m->mla.q_lora_rank, 1536);
  EXPECT_EQ(m->mla.kv_lora_rank, 512);
  EXPECT_EQ(m->mla.qk_nope_head_dim, 128);
  EXPECT_EQ(m->mla.qk_rope_head_dim, 64);
  EXPECT_EQ(m->mla.v_head_dim, 128);
  EXPECT_EQ(m->num_nextn_predict_layers, 1);
  EXPECT_TRUE(m->is_moe());
  EXPECT_TRUE(m->is_mla());
  EXPECT_FALSE(m->is_moe_layer(2));
  EXPECT_TRUE(m->is_moe_layer(3));
  EXPECT_STREQ(llm::ModelFamilyName(m->family), "deepseek_v3");

  StatusOr<llm::ModelSpec> oss = LoadModelFile(SourcePath("models/gpt-oss-120b.textproto"));
  ASSERT_TRUE(oss.ok()) << oss.status().ToString();
  EXPECT_EQ(oss->sliding_window, 128);
  EXPECT_EQ(oss->sliding_window_every, 2);

  StatusOr<llm::ModelSpec> eagle = LoadModelFile(SourcePath("models/eagle3-kimi-k2.textproto"));
  ASSERT_TRUE(eagle.ok()) << eagle.status().ToString();
  EXPECT_TRUE(eagle->is_eagle3());
  EXPECT_EQ(eagle->eagle3.draft_vocab_size, 32000);
  EXPECT_EQ(eagle->eagle3.fused_hidden_states, 3);
  EXPECT_EQ(eagle->eagle3.target, "Kimi-K2");
}

// The EAGLE-3 Kimi-K2 head's comment derives ~1.8B parameters from its shape; check the sum.
TEST(ModelLoaderTest, Eagle3KimiHeadCountsToAboutOnePointEightBillion) {
  StatusOr<llm::ModelSpec> m = LoadModelFile(SourcePath("models/eagle3-kimi-k2.textproto"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const double h = m->hidden_size;
  const double q = double(m->num_attention_heads) * m->head_dim;
  const double kv = double(m->num_key_value_heads) * m->head_dim;
  const double own = 3 * h * h                                  // fc 3h -> h
                     + 2 * h * q + 2 * (2 * h * kv)             // q, k, v over 2h
                     + q * h                                    // o
                     + 3 * h * m->intermediate_size             // SwiGLU MLP
                     + double(m->eagle3.draft_vocab_size) * h;  // draft LM head
  EXPECT_DOUBLE_EQ(own, 633077760.0);
  EXPECT_NEAR(own + double(m->vocab_size) * h, 1.8e9, 0.05e9);  // + the embedding copy
}

TEST(ModelLoaderTest, FamilyNames) {
  EXPECT_STREQ(llm::ModelFamilyName(llm::ModelFamily::kLlama), "llama");
  EXPECT_STREQ(llm::ModelFamilyName(llm::ModelFamily::kQwen3Moe), "qwen3_moe");
  EXPECT_STREQ(llm::ModelFamilyName(llm::ModelFamily::kGptOss), "gpt_oss");
  EXPECT_STREQ(llm::ModelFamilyName(llm::ModelFamily::kEagle3), "eagle3");
}

constexpr const char* kGood = R"txt(
  name: "tiny" family: QWEN3_MOE num_layers: 4 hidden_size: 64 num_attention_heads: 8
  num_key_value_heads: 2 head_dim: 8 vocab_size: 100
  moe { num_experts: 8 experts_per_token: 2 moe_intermediate_size: 32 }
)txt";

std::string ErrorOf(const std::string& text) {
  StatusOr<llm::ModelSpec> m = ParseModel(text, "m.textproto");
  EXPECT_FALSE(m.ok());
  if (m.ok()) return "";
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  return m.status().message();
}

// Issue 12 item 4: a draft's published acceptance: loaded with its shape and source; a mean the
// shape cannot reach, a bad shape or a missing source name the field.
TEST(ModelLoaderTest, PublishedAcceptanceLoadsAndItsFieldsAreChecked) {
  StatusOr<llm::ModelSpec> kimi = LoadModelFile("models/eagle3-kimi-k2.textproto");
  ASSERT_TRUE(kimi.ok()) << kimi.status().ToString();
  EXPECT_EQ(kimi->published_acceptance.mean_accept_length, 2.9);
  EXPECT_EQ(kimi->published_acceptance.num_steps, 3);
  EXPECT_EQ(kimi->published_acceptance.topk, 1);
  EXPECT_EQ(kimi->published_acceptance.num_draft_tokens, 4);
  EXPECT_TRUE(Contains(kimi->published_acceptance.source, "[UNVERIFIED]"));
  StatusOr<llm::ModelSpec> target = LoadModelFile("models/kimi-k2.textproto");
  ASSERT_TRUE(target.ok());
  EXPECT_EQ(target->published_acceptance.mean_accept_length, 0);  // none
  const std::string good = std::string(kGood) +
                           "published_acceptance { mean_accept_length: 2 num_steps: 3 topk: 1 num_draft_tokens: 4 "
                           "source: \"paper\" }";
  ASSERT_TRUE(ParseModel(good, "m.textproto").ok()) << ParseModel(good, "m.textproto").status().ToString();
  auto error = [&](const std::string& from, const std::string& to) {
    StatusOr<llm::ModelSpec> m = ParseModel(testing::ReplaceFirst(good, from, to), "m.textproto");
    return m.ok() ? std::string() : m.status().message();
  };
  EXPECT_TRUE(Contains(error("mean_accept_length: 2", "mean_accept_length: 4.5"),
                       "m.textproto: published_acceptance.mean_accept_length = 4.5: must be in [1, 4]"));
  EXPECT_TRUE(Contains(error("num_draft_tokens: 4", "num_draft_tokens: 1"),
                       "published_acceptance.num_draft_tokens = 1: must be in [2, 4096] tokens"));
  EXPECT_TRUE(Contains(error("source: \"paper\"", ""), "published_acceptance.source = \"\": required"));
  // Fuzz finding (regressions/model_config_fuzz/published-num-draft-tokens-int-min.textproto): the
  // reachable bound min(num_steps, num_draft_tokens - 1) overflowed at INT_MIN; the range names it.
  EXPECT_TRUE(Contains(error("num_draft_tokens: 4", "num_draft_tokens: -2147483648"),
                       "published_acceptance.num_draft_tokens = -2147483648: must be in [2, 4096] tokens"));
}

TEST(ModelLoaderTest, GoodTinyModel) {
  StatusOr<llm::ModelSpec> m = ParseModel(kGood, "m.textproto");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->eagle3.draft_vocab_size, 0);
}

// kGood with `from` replaced by `to` (the text format rejects a singular field given twice).
std::string Edit(const std::string& from, const std::string& to) {
  std::string text = kGood;
  const size_t at = text.find(from);
  SPECSIM_CHECK(at != std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(ModelLoaderTest, BadModelsNameFileFieldAndRule) {
  EXPECT_TRUE(Contains(ErrorOf(Edit("family: QWEN3_MOE", "")),
                       "m.textproto: family = FAMILY_UNSPECIFIED: must be set, one of LLAMA, "
                       "QWEN3, QWEN3_MOE, DEEPSEEK_V3, GPT_OSS, EAGLE3"));
  const std::string kv = ErrorOf(Edit("hidden_size: 64 num_attention_heads: 8\n  num_key_value_heads: 2",
                                      "hidden_size: 0 num_attention_heads: 8\n  num_key_value_heads: 3"));
  EXPECT_TRUE(Contains(kv, "m.textproto: num_key_value_heads = 3: must divide num_attention_heads = 8"));
  EXPECT_TRUE(Contains(kv, "m.textproto: hidden_size = 0: must be in [1, 1e+06] elements"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("experts_per_token: 2", "experts_per_token: 9")),
                       "moe.experts_per_token = 9: must be in [1, moe.num_experts = 8]"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("moe_intermediate_size: 32", "moe_intermediate_size: 32 first_dense_layers: 4")),
                       "moe.first_dense_layers = 4: must be in [0, num_layers = 4)"));
  EXPECT_TRUE(Contains(ErrorOf(std::string(kGood) + " mla { kv_lora_rank: 512 }"),
                       "mla = { kv_lora_rank: 512 ... }: must be empty for family QWEN3_MOE"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("family: QWEN3_MOE", "family: LLAMA intermediate_size: 128")),
                       "moe = { num_experts: 8 ... }: must be empty for family LLAMA"));
  EXPECT_TRUE(Contains(ErrorOf(std::string(kGood) + " sliding_window: 128"),
                       "sliding_window_every = 0: sliding_window = 128: both must be 0"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("moe { num_experts: 8", "moe { num_experts: 0")),
                       "m.textproto: moe.num_experts = 0: must be > 0"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("  moe { num_experts: 8 experts_per_token: 2 moe_intermediate_size: 32 }", "")),
                       "m.textproto: moe = (absent): required for family QWEN3_MOE"));
}

TEST(ModelLoaderTest, MlaIsAllOrNothing) {
  const std::string ds = R"txt(
    family: DEEPSEEK_V3 num_layers: 4 hidden_size: 64 num_attention_heads: 8
    num_key_value_heads: 8 head_dim: 24 vocab_size: 100 intermediate_size: 128
    moe { num_experts: 8 experts_per_token: 2 moe_intermediate_size: 32 first_dense_layers: 1 }
    mla { q_lora_rank: 16 kv_lora_rank: 16 qk_nope_head_dim: 16 qk_rope_head_dim: 8 }
  )txt";
  EXPECT_TRUE(Contains(ErrorOf(ds),
                       "m.textproto: mla.v_head_dim = 0: must be > 0 (family "
                       "DEEPSEEK_V3 uses multi-head latent attention"));
  std::string full = ds;
  full.replace(full.find("qk_rope_head_dim: 8"), 19, "qk_rope_head_dim: 8 v_head_dim: 16");
  StatusOr<llm::ModelSpec> ok = ParseModel(full, "m.textproto");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  full.replace(full.find("intermediate_size: 128"), 22, "intermediate_size: 0");
  EXPECT_TRUE(Contains(ErrorOf(full), "intermediate_size = 0: must be > 0 (moe.first_dense_layers > 0"));
}

TEST(ModelLoaderTest, Eagle3NeedsDraftVocab) {
  const std::string head = R"txt(
    family: EAGLE3 num_layers: 1 hidden_size: 64 num_attention_heads: 8 num_key_value_heads: 2
    head_dim: 8 vocab_size: 1000 intermediate_size: 128
  )txt";
  EXPECT_TRUE(Contains(ErrorOf(head),
                       "m.textproto: eagle3.draft_vocab_size = 0: required for "
                       "family EAGLE3: must be in [1, vocab_size = 1000]"));
  EXPECT_TRUE(ParseModel(head + " eagle3 { draft_vocab_size: 100 }", "m.textproto").ok());
}

TEST(ModelLoaderTest, MissingFileAndSyntaxErrors) {
  StatusOr<llm::ModelSpec> m = LoadModelFile("models/none.textproto");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(m.status().message(), "models/kimi-k2.textproto"));  // lists embedded
  EXPECT_TRUE(Contains(ErrorOf("hiden_size: 4"), "Did you mean \"hidden_size\"?"));
}

TEST(ModelLoaderTest, HfJsonErrorsNameTheEmbeddedFile) {
  // A bundled .json path from a directory without the file: the embedded copy is imported.
  StatusOr<llm::ModelSpec> m = LoadModelFile("models/hf/kimi-k2.config.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->moe.num_experts, 384);
}

}  // namespace
}  // namespace specsim::io
