#include "validate/gemm.h"

#include <string>
#include <utility>

#include "validate/cuda_util.h"

namespace specsim::validate {

Status GemmBf16(cublasHandle_t h, const void* in, const void* w, void* out, int64_t m, int64_t n, int64_t k) {
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_RETURN_IF_ERROR(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                                      static_cast<int>(k), &alpha, w, CUDA_R_16BF, static_cast<int>(k), in, CUDA_R_16BF,
                                      static_cast<int>(k), &beta, out, CUDA_R_16BF, static_cast<int>(n),
                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  return Status::Ok();
}

Status GemmBf16StridedBatched(cublasHandle_t h, const void* in, int64_t in_ld, int64_t in_stride, const void* w,
                              int64_t w_stride, void* out, int64_t out_ld, int64_t out_stride, int64_t m, int64_t n,
                              int64_t k, int64_t batch) {
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_RETURN_IF_ERROR(cublasGemmStridedBatchedEx(
      h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha, w,
      CUDA_R_16BF, static_cast<int>(k), w_stride, in, CUDA_R_16BF, static_cast<int>(in_ld), in_stride, &beta, out,
      CUDA_R_16BF, static_cast<int>(out_ld), out_stride, static_cast<int>(batch), CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT));
  return Status::Ok();
}

}  // namespace specsim::validate

namespace specsim::validate {

StatusOr<LtGemmPlan> LtGemmPlan::Create(int device, int64_t m, int64_t n, int64_t k) {
  LtGemmPlan p;
  p.device_ = device;
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  CUBLAS_RETURN_IF_ERROR(cublasLtCreate(&p.lt_));
  CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescCreate(&p.op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t trans = CUBLAS_OP_T, no = CUBLAS_OP_N;
  CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(p.op_, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans)));
  CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(p.op_, CUBLASLT_MATMUL_DESC_TRANSB, &no, sizeof(no)));
  // Column-major view: A = W as k x n (ld k, transposed to n x k), B = in as k x m, C = out as n x m.
  CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(&p.a_, CUDA_R_16BF, k, n, k));
  CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(&p.b_, CUDA_R_16BF, k, m, k));
  CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(&p.c_, CUDA_R_16BF, n, m, n));
  p.workspace_bytes_ = 32u << 20;
  CUDA_RETURN_IF_ERROR(cudaMalloc(&p.workspace_, p.workspace_bytes_));
  cublasLtMatmulPreference_t pref = nullptr;
  CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceCreate(&pref));
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                           &p.workspace_bytes_, sizeof(p.workspace_bytes_));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(p.lt_, p.op_, p.a_, p.b_, p.c_, p.c_, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  CUBLAS_RETURN_IF_ERROR(st);
  if (found < 1) {
    return Unavailable("cublasLtMatmulAlgoGetHeuristic found no algorithm for m=" + std::to_string(m) +
                       " n=" + std::to_string(n) + " k=" + std::to_string(k));
  }
  p.algo_ = result.algo;
  return p;
}

LtGemmPlan& LtGemmPlan::operator=(LtGemmPlan&& o) noexcept {
  if (this != &o) {
    Reset();
    std::swap(device_, o.device_);
    std::swap(lt_, o.lt_);
    std::swap(op_, o.op_);
    std::swap(a_, o.a_);
    std::swap(b_, o.b_);
    std::swap(c_, o.c_);
    std::swap(algo_, o.algo_);
    std::swap(workspace_, o.workspace_);
    std::swap(workspace_bytes_, o.workspace_bytes_);
  }
  return *this;
}

void LtGemmPlan::Reset() {
  if (device_ >= 0) cudaSetDevice(device_);
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (c_) cublasLtMatrixLayoutDestroy(c_);
  if (op_) cublasLtMatmulDescDestroy(op_);
  if (lt_) cublasLtDestroy(lt_);
  if (workspace_) cudaFree(workspace_);
  a_ = b_ = c_ = nullptr;
  op_ = nullptr;
  lt_ = nullptr;
  workspace_ = nullptr;
  device_ = -1;
}

Status LtGemmPlan::Run(const void* in, const void* w, void* out, cudaStream_t stream) const {
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_RETURN_IF_ERROR(cublasLtMatmul(lt_, op_, &alpha, w, a_, in, b_, &beta, out, c_, out, c_, &algo_, workspace_,
                                        workspace_bytes_, stream));
  return Status::Ok();
}

}  // namespace specsim::validate
