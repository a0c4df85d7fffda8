// bf16 GEMM through cuBLAS in the layout the suites use: out[m, n] = in[m, k] * W[n, k]^T with
// row-major in/out/W (cuBLAS column-major: out^T = W * in^T, i.e. op(A)=T on W), fp32 accumulation.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstdint>

#include "validate/status.h"

namespace specsim::validate {

Status GemmBf16(cublasHandle_t h, const void* in, const void* w, void* out, int64_t m, int64_t n, int64_t k);

// `batch` GEMMs out_b[m, n] = in_b[m, k] * W_b[n, k]^T (cublasGemmStridedBatchedEx): W_b contiguous
// [n][k] at w + b * w_stride; row i of in_b at in + b * in_stride + i * in_ld (likewise out). Used for
// MLA's per-head absorbed projections (rows interleaved by head) and the MoE experts.
Status GemmBf16StridedBatched(cublasHandle_t h, const void* in, int64_t in_ld, int64_t in_stride, const void* w,
                              int64_t w_stride, void* out, int64_t out_ld, int64_t out_stride, int64_t m, int64_t n,
                              int64_t k, int64_t batch);

// ---- cuBLASLt ----
// One bf16 GEMM shape (same layout as GemmBf16: out[m, n] = in[m, k] * W[n, k]^T, row-major, as a
// torch.nn.functional.linear without bias) planned through cuBLASLt: the first algorithm of
// cublasLtMatmulAlgoGetHeuristic for the shape, with a 32 MiB workspace (the size cuBLAS recommends
// for Hopper), chosen once at Create and reused by every Run (graph-capturable: no allocation).
class LtGemmPlan {
 public:
  LtGemmPlan() = default;
  static StatusOr<LtGemmPlan> Create(int device, int64_t m, int64_t n, int64_t k);
  LtGemmPlan(LtGemmPlan&& o) noexcept { *this = std::move(o); }
  LtGemmPlan& operator=(LtGemmPlan&& o) noexcept;
  LtGemmPlan(const LtGemmPlan&) = delete;
  LtGemmPlan& operator=(const LtGemmPlan&) = delete;
  ~LtGemmPlan() { Reset(); }
  void Reset();
  Status Run(const void* in, const void* w, void* out, cudaStream_t stream) const;

 private:
  int device_ = -1;
  cublasLtHandle_t lt_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

}  // namespace specsim::validate
