#include "validate/models.h"

#include <gtest/gtest.h>

#include <fstream>

namespace specsim::validate {
namespace {

// The repository's own models/ (the test runs from the build tree; the source dir is a root).
std::vector<std::string> Roots() { return DefaultModelRoots(); }

trace::ModelShape Load(const std::string& name) {
  auto m = LoadModel(name, Roots());
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : trace::ModelShape();
}

TEST(Models, ShortNamesAndPathsLoadTheRepositoryModels) {
  for (const char* n :
       {"llama-3.1-8b", "llama-3.1-70b", "qwen3-32b", "kimi-k2", "deepseek-v3", "qwen3-235b-a22b", "gpt-oss-120b"}) {
    auto m = LoadModel(n, Roots());
    ASSERT_TRUE(m.ok()) << n << ": " << m.status().message();
    EXPECT_EQ(m->name(), n);
    EXPECT_NE(m->file().find("models/" + std::string(n) + ".textproto"), std::string::npos);
    EXPECT_FALSE(m->config().name().empty());
    // The same file by path gives the same shape.
    auto byp = LoadModel(m->file(), {});
    ASSERT_TRUE(byp.ok()) << byp.status().message();
    EXPECT_EQ(byp->hidden(), m->hidden());
    EXPECT_EQ(byp->name(), n);
  }
  auto bad = LoadModel("gpt-5", Roots());
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
  EXPECT_NE(bad.status().message().find("models/gpt-5.textproto"), std::string::npos);
  auto nofile = LoadModel("no/such/model.textproto", Roots());
  EXPECT_FALSE(nofile.ok());
  EXPECT_NE(nofile.status().message().find("no/such/model.textproto"), std::string::npos);
  // A head is not a target.
  auto head = LoadModel("eagle3-llama-3.1-8b", Roots());
  EXPECT_FALSE(head.ok());
  EXPECT_NE(head.status().message().find("--draft-model"), std::string::npos);
}

TEST(Models, Llama8bShapesAtTp) {
  auto m = Load("llama-3.1-8b");
  EXPECT_EQ(m.layers(), 32);
  EXPECT_EQ(m.config().name(), "Llama-3.1-8B");
  auto g1 = *LayerGemms(m, 1);
  ASSERT_EQ(g1.size(), 5u);
  EXPECT_EQ(g1[0].op, "qkv");
  EXPECT_EQ(g1[0].n, (32 + 16) * 128);
  EXPECT_EQ(g1[0].k, 4096);
  EXPECT_EQ(g1[2].n, 2 * 14336);
  EXPECT_EQ(g1[4].n, 128256);
  // 8B parameters minus embeddings and norms: 32 layers * 218 M = ~7.0 B.
  EXPECT_NEAR(LayerWeightBytes(g1) / 2.0 * 32, 6.98e9, 0.05e9);
  auto g8 = *LayerGemms(m, 8);
  EXPECT_EQ(g8[0].n, (4 + 2) * 128);  // 4 q heads + 1 k + 1 v per GPU
  EXPECT_EQ(g8[3].k, 14336 / 8);
  EXPECT_EQ(g8[4].n, 128256 / 8);
  EXPECT_EQ(m.draft(), "approximation");
  EXPECT_EQ(m.draft_vocab(), 32000);
}

TEST(Models, KvHeadsReplicatedBeyondTheirCount) {
  auto m = Load("llama-3.1-70b");
  auto a = *AttentionFor(m, 8);
  EXPECT_EQ(a.q_heads, 8);
  EXPECT_EQ(a.kv_heads, 1);
  auto q = Load("qwen3-32b");
  EXPECT_EQ(q.head_dim(), 128);
  EXPECT_FALSE(LayerGemms(q, 3).ok());
}

TEST(Models, KimiMlaAndMoe) {
  auto m = Load("kimi-k2");
  EXPECT_TRUE(m.mla());
  EXPECT_EQ(m.num_experts(), 384);
  EXPECT_EQ(m.experts_per_token(), 8);
  EXPECT_EQ(m.moe_intermediate(), 2048);
  EXPECT_EQ(m.first_dense_layers(), 1);
  EXPECT_EQ(m.num_shared_experts(), 1);
  auto g = *LayerGemms(m, 8);
  EXPECT_EQ(g[0].op, "q_a");
  EXPECT_EQ(g[1].n, 8 * 192);
  EXPECT_EQ(g[2].n, 576);
  EXPECT_EQ(g[3].n, 8 * 256);
  EXPECT_EQ(g[4].k, 8 * 128);
  EXPECT_EQ(g[5].op, "gate_up");
  EXPECT_EQ(g[7].op, "router");
  EXPECT_EQ(g[7].n, 384);
  EXPECT_EQ(g[8].op, "expert_gate_up");
  EXPECT_EQ(g[8].n, 2 * 2048 / 8);
  EXPECT_EQ(g[9].k, 2048 / 8);
  EXPECT_EQ(g.back().op, "lm_head");
  auto a = *AttentionFor(m, 8);
  EXPECT_TRUE(a.kv_shared);
  EXPECT_EQ(a.head_dim, 576);
  EXPECT_EQ(a.kv_heads, 1);
  // Approximate draft for an MLA target: GQA, 8 KV heads of 128.
  EXPECT_EQ(m.draft_kv_heads(), 8);
  EXPECT_EQ(m.draft_head_dim(), 128);
}

TEST(Models, QwenMoeHasNoDenseMlp) {
  auto m = Load("qwen3-235b-a22b");
  ASSERT_GT(m.num_experts(), 0);
  auto g = *LayerGemms(m, 1);
  for (const auto& x : g) EXPECT_NE(x.op, "gate_up");
}

TEST(Models, Eagle3HeadAttachesToItsTarget) {
  std::vector<trace::ModelShape> ms{Load("llama-3.1-8b"), Load("kimi-k2")};
  ASSERT_TRUE(AttachDraftModels({"eagle3-llama-3.1-8b"}, Roots(), &ms).ok());
  EXPECT_EQ(ms[0].draft(), "eagle3");
  EXPECT_NE(ms[0].draft_file().find("eagle3-llama-3.1-8b.textproto"), std::string::npos);
  EXPECT_EQ(ms[0].draft_vocab(), 32000);
  EXPECT_EQ(ms[0].draft_config().eagle3().target(), "Llama-3.1-8B");
  EXPECT_EQ(ms[1].draft(), "approximation");
  // A head whose target is absent, and a target given as a head.
  std::vector<trace::ModelShape> only_qwen{Load("qwen3-32b")};
  auto st = AttachDraftModels({"eagle3-llama-3.1-8b"}, Roots(), &only_qwen);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("Llama-3.1-8B"), std::string::npos);
  EXPECT_FALSE(AttachDraftModels({"qwen3-32b"}, Roots(), &only_qwen).ok());
}

TEST(ModelParse, SyntaxErrorsNameFileLineAndColumn) {
  auto r = ParseModelText("name: \"x\"\nfamily: LLAMA\nnum_layerz: 3\n", "m.textproto");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("m.textproto:3:"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("num_layerz"), std::string::npos) << r.status().message();
  auto bad_enum = ParseModelText("name: \"e\"\nfamily: LLAMMA num_layers: 2\n", "e.textproto");
  ASSERT_FALSE(bad_enum.ok());
  EXPECT_NE(bad_enum.status().message().find("e.textproto:2:"), std::string::npos) << bad_enum.status().message();
  EXPECT_NE(bad_enum.status().message().find("LLAMMA"), std::string::npos);
  auto bad_value = ParseModelText("hidden_size: many\n", "v.textproto");
  ASSERT_FALSE(bad_value.ok());
  EXPECT_NE(bad_value.status().message().find("v.textproto:1:"), std::string::npos);
}

TEST(ModelParse, MissingAndInconsistentFieldsAreNamedWithTheirLine) {
  const std::string text =
      "name: \"tiny\"\n"
      "family: LLAMA\n"
      "num_layers: 2\n"
      "hidden_size: 64\n"
      "num_attention_heads: 6\n"
      "num_key_value_heads: 4\n"
      "head_dim: 16\n"
      "vocab_size: 100\n";
  auto r = ParseModelText(text, "tiny.textproto");
  ASSERT_FALSE(r.ok());
  const std::string& msg = r.status().message();
  EXPECT_NE(msg.find("tiny.textproto:5: num_attention_heads: 6 is not a multiple of num_key_value_heads 4"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("tiny.textproto: intermediate_size: missing"), std::string::npos) << msg;
  auto moe = ParseModelText(
      "family: QWEN3_MOE num_layers: 2 hidden_size: 64 num_attention_heads: 4 num_key_value_heads: 4 head_dim: 16\n"
      "vocab_size: 100\nmoe {\n  num_experts: 4\n  experts_per_token: 8\n  moe_intermediate_size: 32\n}\n",
      "moe.textproto");
  ASSERT_FALSE(moe.ok());
  EXPECT_NE(moe.status().message().find("moe.textproto:5: moe.experts_per_token: 8 exceeds num_experts 4"),
            std::string::npos)
      << moe.status().message();
  auto mla = ParseModelText(
      "family: DEEPSEEK_V3 num_layers: 1 hidden_size: 64 num_attention_heads: 4 vocab_size: 9\n"
      "intermediate_size: 8 moe { num_experts: 4 experts_per_token: 2 moe_intermediate_size: 8 }\n"
      "mla { q_lora_rank: 16 }\n",
      "mla.textproto");
  ASSERT_FALSE(mla.ok());
  EXPECT_NE(mla.status().message().find("mla.kv_lora_rank: missing"), std::string::npos) << mla.status().message();
}

TEST(ModelParse, StemAndResolution) {
  EXPECT_EQ(ModelStem("models/kimi-k2.textproto"), "kimi-k2");
  EXPECT_EQ(ModelStem("/a/b/x"), "x");
  const std::string dir = ::testing::TempDir() + "specsim_models_root";
  ASSERT_EQ(system(("mkdir -p " + dir + "/models").c_str()), 0);
  std::ofstream(dir + "/models/tiny.textproto")
      << "name: \"Tiny\" family: LLAMA num_layers: 2 hidden_size: 64 num_attention_heads: 4\n"
         "num_key_value_heads: 2 head_dim: 16 intermediate_size: 128 vocab_size: 100\n";
  auto p = ResolveModelPath("tiny", {"/nonexistent", dir});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(*p, dir + "/models/tiny.textproto");
  auto m = LoadModel("tiny", {dir});
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->name(), "tiny");
  EXPECT_EQ(m->config().name(), "Tiny");
  EXPECT_EQ(m->intermediate(), 128);
}

TEST(Models, ExpectedDistinctExperts) {
  EXPECT_EQ(ExpectedDistinctExperts(384, 8, 1), 8);
  EXPECT_EQ(ExpectedDistinctExperts(384, 8, 8), 60);  // 384 * (1 - (47/48)^8) = 59.5
  EXPECT_EQ(ExpectedDistinctExperts(384, 8, 128), 358);
  EXPECT_EQ(ExpectedDistinctExperts(4, 2, 1000), 4);
  EXPECT_EQ(ExpectedDistinctExperts(0, 2, 10), 0);
}

}  // namespace
}  // namespace specsim::validate
