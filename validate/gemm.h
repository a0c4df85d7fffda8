// bf16 GEMM through cuBLAS in the layout the suites use: out[m, n] = in[m, k] * W[n, k]^T with
// row-major in/out/W (cuBLAS column-major: out^T = W * in^T, i.e. op(A)=T on W), fp32 accumulation.
#pragma once

#include <cublas_v2.h>

#include <cstdint>

#include "validate/status.h"

namespace specsim::validate {

Status GemmBf16(cublasHandle_t h, const void* in, const void* w, void* out, int64_t m, int64_t n, int64_t k);

}  // namespace specsim::validate
