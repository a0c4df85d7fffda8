#include "sim/llm/memory_plan.h"

#include <gtest/gtest.h>

#include "sim/llm/test_models.h"

namespace specsim::llm {
namespace {

using compute::DType;
using namespace specsim::llm::testing;  // NOLINT

// The RTX PRO 6000 Blackwell of configs/hardware/rtxpro6000-8x-*.textproto (96 GB).
net::GpuSpec RtxPro6000() {
  net::GpuSpec g;
  g.name = "RTX PRO 6000";
  g.memory_gib = 96;
  g.memory_bandwidth_gbps = 1597;
  g.bf16_dense_tflops = 500;
  g.fp8_dense_tflops = 1000;
  g.fp4_dense_tflops = 2000;
  return g;
}

constexpr double kGiB = 1024.0 * 1024 * 1024;

double Line(const MemoryPlan& p, const std::string& name) {
  for (const MemoryLine& l : p.lines) {
    if (l.name == name) return l.bytes;
  }
  return -1;
}

TEST(MemoryPlanTest, KimiK2Bf16AtTp8DoesNotFitOn96GB) {
  ServingShape s;
  s.batch = 8;
  s.max_context = 32768;
  s.max_tokens_per_sequence = 4;
  auto plan = PlanMemory(KimiK2(), std::nullopt, {8, 1}, s, RtxPro6000());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_FALSE(plan->fits) << FormatMemoryPlan(*plan);
  // ~1.03e12 * 2 / 8 = 257 GB of weights alone.
  EXPECT_GT(Line(*plan, "weights"), 250e9);
}

TEST(MemoryPlanTest, KimiK2Int4AtTp8FitsOn96GB) {
  ServingShape s;
  s.batch = 8;
  s.max_context = 32768;
  s.max_tokens_per_sequence = 4;
  s.weight_dtype = DType::kInt4;
  auto plan = PlanMemory(KimiK2(), std::nullopt, {8, 1}, s, RtxPro6000());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(plan->fits) << FormatMemoryPlan(*plan);
  // MLA latent cache: 8 * 32768 tokens * 576 values * 2 B * 61 layers, on every GPU.
  EXPECT_DOUBLE_EQ(Line(*plan, "KV cache"), 8.0 * 32768 * 576 * 2 * 61);
  // The sum of the lines is the total.
  double sum = 0;
  for (const MemoryLine& l : plan->lines) sum += l.bytes;
  EXPECT_DOUBLE_EQ(sum, plan->total_bytes);
  EXPECT_DOUBLE_EQ(plan->capacity_bytes, 96 * kGiB);
}

TEST(MemoryPlanTest, Llama8BFitsOnOneGpuWithEagle3Draft) {
  ServingShape s;
  s.batch = 16;
  s.max_context = 8192;
  s.max_tokens_per_sequence = 8;
  auto plan = PlanMemory(Llama31_8B(), Eagle3Llama31_8B(), {1, 1}, s, RtxPro6000());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(plan->fits) << FormatMemoryPlan(*plan);
  EXPECT_EQ(Line(*plan, "communication buffers"), 0);  // TP1: no NCCL
  EXPECT_NEAR(Line(*plan, "weights") / 16.06e9, 1.0, 0.01);
  // EAGLE-3 head without the shared embedding: fc + one layer (2h qkv input) + 32000-row head.
  EXPECT_GT(Line(*plan, "draft weights"), 0.8e9);
  EXPECT_LT(Line(*plan, "draft weights"), 0.9e9);
  // Draft KV: one layer of the target's KV per token (4096 B bf16).
  EXPECT_DOUBLE_EQ(Line(*plan, "draft KV cache"), 16.0 * 8192 * 4096);
  const std::string table = FormatMemoryPlan(*plan);
  EXPECT_NE(table.find("weights"), std::string::npos);
  EXPECT_NE(table.find("fits"), std::string::npos);
}

// A standalone draft (DRAFT_MODEL) holds its whole weights split over the TP group and a KV cache
// for every one of its layers with the target's token slots. Llama-3.2-1B at TP2: 1.24e9 parameters
// (tied embedding: 128256 x 2048 once; 16 layers of 2048 x (2048 + 2 x 512 + 2048) attention and
// 3 x 2048 x 8192 MLP) x 2 B / 2 ~ 1.24 GB per GPU; KV 16 layers x 2 (K, V) x 4 KV heads x 64 x 2 B
// = 16 KiB per token per GPU.
TEST(MemoryPlanTest, AStandaloneDraftHoldsItsWeightsAndAFullKvCache) {
  ServingShape s;
  s.batch = 8;
  s.max_context = 4096;
  s.max_tokens_per_sequence = 5;
  s.standalone_draft = true;
  auto plan = PlanMemory(Llama31_8B(), Llama32_1B(), {2, 1}, s, RtxPro6000());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_NEAR(Line(*plan, "draft weights") / 1.24e9, 1.0, 0.03) << FormatMemoryPlan(*plan);
  EXPECT_DOUBLE_EQ(Line(*plan, "draft KV cache"), 8.0 * 4096 * 16 * 2 * 4 * 64 * 2);
  EXPECT_NE(FormatMemoryPlan(*plan).find("all its layers"), std::string::npos);
}

TEST(MemoryPlanTest, NcclBuffersFollowChannelsAndConnections) {
  ServingShape s;
  s.weight_dtype = DType::kInt4;
  CommBufferSpec comm;
  comm.nccl_communicators = 1;
  comm.nccl_channels = 4;
  comm.nccl_connections_per_channel = 2;
  auto plan = PlanMemory(KimiK2(), std::nullopt, {8, 1}, s, RtxPro6000(), comm);
  ASSERT_TRUE(plan.ok());
  // 4 channels * 2 connections * (4 MiB Simple + 0.5 MiB LL).
  EXPECT_DOUBLE_EQ(Line(*plan, "communication buffers"), 4 * 2 * 4.5 * 1024 * 1024);
  // EP adds (ep - 1) peers * 4 MiB for the all-to-all.
  auto ep = PlanMemory(KimiK2(), std::nullopt, {8, 8}, s, RtxPro6000(), comm);
  ASSERT_TRUE(ep.ok());
  EXPECT_DOUBLE_EQ(Line(*ep, "communication buffers"), (4 * 2 * 4.5 + 7 * 4) * 1024 * 1024);
}

TEST(MemoryPlanTest, MtpDraftAddsOneLayer) {
  ServingShape s;
  s.weight_dtype = DType::kFp8;
  s.mtp_draft = true;
  auto plan = PlanMemory(DeepseekV3(), std::nullopt, {8, 1}, s, RtxPro6000());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_GT(Line(*plan, "draft weights"), 1e9);
  EXPECT_GT(Line(*plan, "draft KV cache"), 0);
}

TEST(MemoryPlanTest, BadInputsAreErrors) {
  ServingShape s;
  net::GpuSpec g = RtxPro6000();
  g.memory_gib = 0;
  EXPECT_FALSE(PlanMemory(Llama31_8B(), std::nullopt, {1, 1}, s, g).ok());
  EXPECT_FALSE(PlanMemory(Llama31_8B(), std::nullopt, {3, 1}, s, RtxPro6000()).ok());
}

}  // namespace
}  // namespace specsim::llm
