#include "validate/models.h"

#include <gtest/gtest.h>

namespace specsim::validate {
namespace {

TEST(Models, EveryBuiltinLoads) {
  for (const auto& n : BuiltinModelNames()) {
    auto m = BuiltinModel(n);
    ASSERT_TRUE(m.ok()) << n;
    EXPECT_EQ(m->name(), n);
    EXPECT_EQ(m->source(), "builtin");
  }
  auto bad = BuiltinModel("gpt-5");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("llama-3.1-8b"), std::string::npos);
}

TEST(Models, Llama8bShapesAtTp) {
  auto m = *BuiltinModel("llama-3.1-8b");
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
}

TEST(Models, KvHeadsReplicatedBeyondTheirCount) {
  auto m = *BuiltinModel("llama-3.1-70b");
  auto a = *AttentionFor(m, 8);
  EXPECT_EQ(a.q_heads, 8);
  EXPECT_EQ(a.kv_heads, 1);
  auto q = *BuiltinModel("qwen3-32b");
  EXPECT_FALSE(LayerGemms(q, 3).ok());
}

TEST(Models, KimiMla) {
  auto m = *BuiltinModel("kimi-k2");
  auto g = *LayerGemms(m, 8);
  EXPECT_EQ(g[0].op, "q_a");
  EXPECT_EQ(g[1].n, 8 * 192);
  EXPECT_EQ(g[2].n, 576);
  EXPECT_EQ(g[3].n, 8 * 256);
  EXPECT_EQ(g[4].k, 8 * 128);
  auto a = *AttentionFor(m, 8);
  EXPECT_TRUE(a.kv_shared);
  EXPECT_EQ(a.head_dim, 576);
  EXPECT_EQ(a.kv_heads, 1);
}

}  // namespace
}  // namespace specsim::validate
