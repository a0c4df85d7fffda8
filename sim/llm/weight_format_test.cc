// Weight bytes with their scales: the formats a scenario's dtype stands for and a checkpoint's own.
#include "sim/llm/weight_format.h"

#include <gtest/gtest.h>

#include "sim/llm/forward_pass.h"
#include "sim/llm/test_models.h"

namespace specsim::llm {
namespace {

using compute::DType;

TEST(WeightFormatTest, Fp8BlocksCountOneFp32ScalePer128x128) {
  const WeightFormat f = ConventionalFormat(DType::kFp8);
  // DeepSeek-V3's q_a_proj [1536, 7168]: 12 x 56 blocks of 4 B on top of 1 B per value.
  EXPECT_DOUBLE_EQ(WeightBytes(f, 1536, 7168), 1536.0 * 7168 + 12 * 56 * 4);
  // A ragged edge rounds up: [200, 130] -> 2 x 2 blocks.
  EXPECT_DOUBLE_EQ(WeightBytes(f, 200, 130), 200.0 * 130 + 4 * 4);
}

TEST(WeightFormatTest, Int4GroupsOf32AddHalfABitPerValue) {
  // 4 bits + a 16-bit scale per 32 values = 4.5 bits: the Kimi scenario's "0.5625 B per weight".
  const WeightFormat f = ConventionalFormat(DType::kInt4);
  EXPECT_DOUBLE_EQ(BytesPerWeight(f, 4096, 7168), 0.5625);
  // Asymmetric AWQ group 128: 4 bits + (16 + 4) bits / 128.
  const WeightFormat awq{
      .dtype = DType::kInt4, .block_rows = 1, .block_cols = 128, .scale_bytes = 2, .zero_point_bytes = 0.5};
  EXPECT_DOUBLE_EQ(BytesPerWeight(awq, 4096, 4096), 0.5 + 2.5 / 128);
}

TEST(WeightFormatTest, Mxfp4IsFourBitsPlusOneBytePer32) {
  EXPECT_DOUBLE_EQ(BytesPerWeight(ConventionalFormat(DType::kFp4), 2880, 2880), 0.5 + 1.0 / 32);
  EXPECT_EQ(WeightFormatName(ConventionalFormat(DType::kFp4)), "fp4 g32 +8-bit scales");
}

TEST(WeightFormatTest, Bf16HasNoScalesAndPerTensorIsOneScale) {
  EXPECT_DOUBLE_EQ(WeightBytes(WeightFormat{}, 10, 10), 200);
  const WeightFormat per_tensor{.dtype = DType::kFp8, .scale_bytes = 4};
  EXPECT_DOUBLE_EQ(WeightBytes(per_tensor, 10, 10), 104);
  const WeightFormat per_channel{.dtype = DType::kFp8, .block_rows = 1, .scale_bytes = 4};
  EXPECT_DOUBLE_EQ(WeightBytes(per_channel, 10, 10), 140);
}

TEST(WeightFormatTest, CheckpointKeepsUnconvertedClassesInBf16) {
  CheckpointQuantization q;
  q.quantized = true;
  q.format = ConventionalFormat(DType::kFp4);
  q.attention = false;
  const WeightFormats f = FormatsFromCheckpoint(q);
  EXPECT_EQ(f.attention, WeightFormat{});
  EXPECT_EQ(f.routed_experts, q.format);
  EXPECT_EQ(f.lm_head, WeightFormat{});
  EXPECT_EQ(FormatsFromCheckpoint(CheckpointQuantization{}).routed_experts, WeightFormat{});
}

// The pass's resident weights use the formats: int4 experts with group scales weigh 4.5/4 of the
// scale-free int4 count, and the explicit checkpoint formats replace the dtypes.
TEST(WeightFormatTest, ForwardPassCountsScalesPerTensorClass) {
  const ModelSpec m = testing::Qwen3_235B();
  PassShape bf16;
  PassShape int4 = bf16;
  int4.expert_weight_dtype = DType::kInt4;
  StatusOr<ForwardPass> a = BuildForwardPass(m, ParallelSpec{}, bf16);
  StatusOr<ForwardPass> b = BuildForwardPass(m, ParallelSpec{}, int4);
  ASSERT_TRUE(a.ok() && b.ok());
  const double expert_values = 1.0 * m.num_layers * m.moe.num_experts * 3 * m.hidden_size * m.moe.moe_intermediate_size;
  EXPECT_NEAR(a->weight_bytes_per_gpu - b->weight_bytes_per_gpu, expert_values * (2 - 0.5625), 1e-6 * expert_values);

  PassShape ckpt = bf16;
  ckpt.weight_dtype = DType::kFp8;  // ignored: weight_formats is set
  CheckpointQuantization q;
  q.quantized = true;
  q.format = ConventionalFormat(DType::kInt4);
  q.attention = q.dense_mlp = q.shared_experts = false;
  ckpt.weight_formats = FormatsFromCheckpoint(q);
  StatusOr<ForwardPass> c = BuildForwardPass(m, ParallelSpec{}, ckpt);
  ASSERT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ(c->weight_bytes_per_gpu, b->weight_bytes_per_gpu);
}

}  // namespace
}  // namespace specsim::llm
