// How linear-layer weights are stored, scales included: the bytes of each weight matrix.
//
// A WeightFormat is a value dtype plus one scale (and, for asymmetric int4, one zero point) per
// block of block_rows x block_cols values of an [n outputs, k inputs] matrix; an extent of 0 is the
// whole dimension (0 x 0: one scale per tensor; 1 x 0: one per output channel; 1 x G: groups of G
// inputs; 128 x 128: DeepSeek-V3's fp8 blocks). Bytes of a matrix:
//   n * k * DTypeBytes(dtype) + ceil(n / rows) * ceil(k / cols) * (scale_bytes + zero_point_bytes)
// computed on each GPU's shard (a tensor-parallel shard of a 128-aligned matrix has the same
// scales per value as the whole).
//
// Two sources of formats:
//   - a scenario's serving.weight_dtype / expert_weight_dtype: ConventionalFormat gives each dtype
//     the scale layout its common checkpoints use (below, each with its source);
//   - the checkpoint's own quantization_config (CheckpointQuantization, read by the Hugging Face
//     importer): one format for the quantized tensor classes, bf16 for the ones left unconverted.
// Norms, the embedding table and the MoE router stay bf16 in both (forward_pass.h).
#pragma once

#include <optional>
#include <string>

#include "sim/compute/kernel.h"

namespace specsim::llm {

struct WeightFormat {
  compute::DType dtype = compute::DType::kBf16;
  int block_rows = 0;           // values of n per scale; 0: all of n
  int block_cols = 0;           // values of k per scale; 0: all of k
  double scale_bytes = 0;       // per block; 0: no scales (bf16)
  double zero_point_bytes = 0;  // per block; 0: symmetric

  bool operator==(const WeightFormat&) const = default;
};

// Bytes of an [n, k] weight matrix in `f` (formula above). n, k >= 0.
double WeightBytes(const WeightFormat& f, double n, double k);

// Bytes per value, scales included, of an [n, k] matrix (WeightBytes / (n * k)); 0 for n*k == 0.
double BytesPerWeight(const WeightFormat& f, double n, double k);

// "int4 g32 +bf16 scales", "fp8 128x128 +fp32 scales", "bf16".
std::string WeightFormatName(const WeightFormat& f);

// The scale layout a scenario's dtype stands for:
//   BF16: no scales.
//   FP8: 128 x 128 blocks, fp32 scale each (DeepSeek-V3 / Kimi-K2 checkpoints: config.json
//        quantization_config weight_block_size [128, 128], weight_scale_inv tensors in fp32; DeepSeek-V3
//        technical report arXiv:2412.19437 section 3.3.2 "128x128 block").
//   INT4: groups of 32 inputs, one bf16 scale each, symmetric (Kimi-K2-Thinking's
//        compressed-tensors config: num_bits 4, group_size 32, symmetric; the default Kimi scenario's
//        "INT4 with a BF16 scale per 32 weights").
//   FP4: MXFP4, groups of 32 inputs with one 8-bit (E8M0) scale each (OCP Microscaling Formats v1.0
//        section 5; gpt-oss's checkpoints, model card arXiv:2508.10925).
WeightFormat ConventionalFormat(compute::DType dtype);

// The checkpoint's quantization as its config.json states it (model.proto Quantization): `format`
// for the tensor classes marked quantized, bf16 for the others.
struct CheckpointQuantization {
  bool quantized = false;  // false: every weight bf16
  WeightFormat format;
  std::string method;  // quant_method as published ("fp8", "compressed-tensors", ...)
  bool attention = true;
  bool dense_mlp = true;
  bool shared_experts = true;
  bool routed_experts = true;
  bool lm_head = false;  // transformers keeps the output embedding unquantized by default
};

// The format of each class of linear layer in one pass.
struct WeightFormats {
  WeightFormat attention;       // q/k/v/o projections, MLA projections
  WeightFormat dense_mlp;       // dense MLP (and MTP eh_proj / EAGLE-3 fc)
  WeightFormat shared_experts;  // MoE shared experts
  WeightFormat routed_experts;  // MoE routed experts
  WeightFormat lm_head;
};

// A scenario's dtypes: ConventionalFormat(weight) for every class, ConventionalFormat(expert) for
// routed experts when set.
WeightFormats FormatsFromDtypes(compute::DType weight, std::optional<compute::DType> expert);

// The checkpoint's own formats (bf16 everywhere when !q.quantized).
WeightFormats FormatsFromCheckpoint(const CheckpointQuantization& q);

}  // namespace specsim::llm
