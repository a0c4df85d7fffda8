#include "validate/gemm.h"

#include "validate/cuda_util.h"

namespace specsim::validate {

Status GemmBf16(cublasHandle_t h, const void* in, const void* w, void* out, int64_t m, int64_t n, int64_t k) {
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_RETURN_IF_ERROR(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                                      static_cast<int>(k), &alpha, w, CUDA_R_16BF, static_cast<int>(k), in,
                                      CUDA_R_16BF, static_cast<int>(k), &beta, out, CUDA_R_16BF,
                                      static_cast<int>(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
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
