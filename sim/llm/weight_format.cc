#include "sim/llm/weight_format.h"

#include <fmt/format.h>

#include <cmath>

namespace specsim::llm {

using compute::DType;

double WeightBytes(const WeightFormat& f, double n, double k) {
  const double values = n * k * compute::DTypeBytes(f.dtype);
  const double per_block = f.scale_bytes + f.zero_point_bytes;
  if (per_block <= 0 || n <= 0 || k <= 0) return values;
  const double row_blocks = f.block_rows > 0 ? std::ceil(n / f.block_rows) : 1;
  const double col_blocks = f.block_cols > 0 ? std::ceil(k / f.block_cols) : 1;
  return values + row_blocks * col_blocks * per_block;
}

double BytesPerWeight(const WeightFormat& f, double n, double k) {
  return n * k > 0 ? WeightBytes(f, n, k) / (n * k) : 0;
}

std::string WeightFormatName(const WeightFormat& f) {
  std::string name = compute::DTypeName(f.dtype);
  if (f.scale_bytes <= 0) return name;
  if (f.block_rows == 0 && f.block_cols == 0) {
    name += " per-tensor";
  } else if (f.block_rows == 1 && f.block_cols == 0) {
    name += " per-channel";
  } else if (f.block_rows == 1) {
    name += fmt::format(" g{}", f.block_cols);
  } else {
    name += fmt::format(" {}x{}", f.block_rows, f.block_cols);
  }
  name += fmt::format(" +{}-bit scales", static_cast<int>(std::lround(f.scale_bytes * 8)));
  if (f.zero_point_bytes > 0)
    name += fmt::format(" +{}-bit zeros", static_cast<int>(std::lround(f.zero_point_bytes * 8)));
  return name;
}

WeightFormat ConventionalFormat(DType dtype) {
  switch (dtype) {
    case DType::kBf16: return WeightFormat{};
    case DType::kFp8: return WeightFormat{.dtype = dtype, .block_rows = 128, .block_cols = 128, .scale_bytes = 4};
    case DType::kInt4: return WeightFormat{.dtype = dtype, .block_rows = 1, .block_cols = 32, .scale_bytes = 2};
    case DType::kFp4: return WeightFormat{.dtype = dtype, .block_rows = 1, .block_cols = 32, .scale_bytes = 1};
  }
  return WeightFormat{};
}

WeightFormats FormatsFromDtypes(DType weight, std::optional<DType> expert) {
  const WeightFormat w = ConventionalFormat(weight);
  return WeightFormats{.attention = w,
                       .dense_mlp = w,
                       .shared_experts = w,
                       .routed_experts = expert ? ConventionalFormat(*expert) : w,
                       .lm_head = w};
}

WeightFormats FormatsFromCheckpoint(const CheckpointQuantization& q) {
  const WeightFormat bf16{};
  if (!q.quantized) return WeightFormats{};
  auto pick = [&](bool quantized) { return quantized ? q.format : bf16; };
  return WeightFormats{.attention = pick(q.attention),
                       .dense_mlp = pick(q.dense_mlp),
                       .shared_experts = pick(q.shared_experts),
                       .routed_experts = pick(q.routed_experts),
                       .lm_head = pick(q.lm_head)};
}

}  // namespace specsim::llm
