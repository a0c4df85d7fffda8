// Sweep generation: which sizes, token counts and block counts each suite measures, and how many
// iterations a point gets. Pure functions so that the sweeps are unit-tested on the CPU.
//
// Sizes grow geometrically by `factor` from `lo`, and `hi` is always the last point even when it
// is not on the geometric grid. Iterations shrink with size so that every point costs about the
// same time: iters = clamp(budget_bytes / bytes, min, max).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace specsim::validate {

// REQUIRES: 0 < lo <= hi, factor >= 2.
std::vector<int64_t> GeometricSizes(int64_t lo, int64_t hi, int64_t factor);

// Host<->device copy sizes: 4 B .. max_bytes (x4 steps, x16 with quick).
std::vector<int64_t> CopySizes(int64_t max_bytes, bool quick);
// Collective sizes: 1 KB .. max_bytes (x4 steps, x16 with quick), nccl-tests style.
std::vector<int64_t> CollectiveSizes(int64_t max_bytes, bool quick);
// Tokens for GEMM shapes: 1, 2, 4, ... 256 (quick: 1, 16, 256).
std::vector<int64_t> TokenCounts(bool quick);
// Blocks for zero-copy kernels: 1, 2, 4, ... up to sm_count, then sm_count and 2*sm_count.
std::vector<int> BlockCounts(int sm_count, bool quick);

// clamp(budget_bytes / bytes, min_iters, max_iters); bytes <= 0 gives max_iters.
int IterationsFor(int64_t bytes, int64_t budget_bytes, int min_iters, int max_iters);

// Human-readable size for names and tables: 4B, 64KiB, 256MiB (exact binary units when exact).
std::string SizeLabel(int64_t bytes);

}  // namespace specsim::validate
