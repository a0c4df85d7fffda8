#include "sim/llm/graph_pool.h"

#include <algorithm>

#include "sim/core/check.h"

namespace specsim::llm {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

LargestGemmBytes LargestGemmOf(const ForwardPass& pass, bool layers_only) {
  LargestGemmBytes best;
  for (const PassStep& step : pass.steps) {
    if (step.kind != PassStep::kKernel || (layers_only && step.layer < 0)) continue;
    const compute::Kernel& k = step.kernel;
    if (k.kernel_class != compute::KernelClass::kGemm && k.kernel_class != compute::KernelClass::kGroupedGemm) continue;
    if (k.n <= 0 || k.k <= 0) continue;
    const double rows = k.flops / (2 * k.n * k.k);
    if (rows * (k.n + k.k) * 2 > best.in_out) best = {rows * (k.n + k.k) * 2, rows * k.n * 2};
  }
  return best;
}

GraphPoolBytes CudaGraphPool(const ForwardPass& largest, const ModelSpec& model, const GraphPoolSpec& spec) {
  SPECSIM_CHECK(!spec.captured_tokens.empty());
  GraphPoolBytes b;
  b.workspace = spec.library_workspace_bytes;
  const double T = static_cast<double>(largest.tokens);
  const LargestGemmBytes largest_gemm = LargestGemmOf(largest, /*layers_only=*/true);
  const double gemm = largest_gemm.in_out, gemm_out = largest_gemm.out;
  const double residual = 4 * T * model.hidden_size * 2;
  b.intermediates = residual + gemm + gemm_out;
  int64_t most = 0;
  double all = 0;
  for (int64_t t : spec.captured_tokens) {
    SPECSIM_CHECK_GE(t, 1);
    most = std::max(most, t);
    all += static_cast<double>(t);
  }
  switch (spec.outputs) {
    case GraphPoolSpec::Outputs::kKeptPerSize: b.outputs = all * spec.output_bytes_per_token; break;
    case GraphPoolSpec::Outputs::kOneSharedBuffer:
      b.outputs = static_cast<double>(most) * spec.output_bytes_per_token;
      break;
    case GraphPoolSpec::Outputs::kNotKept: b.outputs = 0; break;
  }
  // One segment: 20 MiB when a tensor of the largest graph is 1-10 MiB, else 2 MiB.
  const double tensors[] = {T * model.hidden_size * 2, gemm_out, gemm_out / 2,
                            static_cast<double>(most) * spec.output_bytes_per_token};
  const bool medium = std::any_of(std::begin(tensors), std::end(tensors),
                                  [](double bytes) { return bytes > 1 * kMiB && bytes <= 10 * kMiB; });
  b.allocator_slack = (medium ? 20 : 2) * kMiB;
  return b;
}

double CublasWorkspaceBytes(const std::string& gpu_arch) {
  return gpu_arch == "sm90" ? 4096.0 * 8 * 1024 : 4096.0 * 1024 * 2 + 16.0 * 1024 * 8;
}

std::vector<int64_t> CaptureSizes(const std::vector<int>& small, int step, int largest) {
  SPECSIM_CHECK_GE(step, 1);
  SPECSIM_CHECK_GE(largest, 1);
  std::vector<int64_t> sizes;
  int last = 0;
  for (int s : small)
    if (s < largest) {
      sizes.push_back(s);
      last = std::max(last, s);
    }
  for (int s = (last / step + 1) * step; s < largest; s += step) sizes.push_back(s);
  sizes.push_back(largest);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

}  // namespace specsim::llm
