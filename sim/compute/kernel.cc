#include "sim/compute/kernel.h"

namespace specsim::compute {

const char* DTypeName(DType d) {
  switch (d) {
    case DType::kBf16: return "bf16";
    case DType::kFp8: return "fp8";
    case DType::kFp4: return "fp4";
    case DType::kInt4: return "int4";
  }
  return "?";
}

double DTypeBytes(DType d) {
  switch (d) {
    case DType::kBf16: return 2.0;
    case DType::kFp8: return 1.0;
    case DType::kFp4: return 0.5;
    case DType::kInt4: return 0.5;
  }
  return 2.0;
}

const char* KernelClassName(KernelClass c) {
  switch (c) {
    case KernelClass::kGemm: return "gemm";
    case KernelClass::kGroupedGemm: return "grouped_gemm";
    case KernelClass::kAttention: return "attention";
    case KernelClass::kNorm: return "norm";
    case KernelClass::kElementwise: return "elementwise";
    case KernelClass::kRouter: return "router";
    case KernelClass::kEmbedding: return "embedding";
    case KernelClass::kSampling: return "sampling";
  }
  return "?";
}

}  // namespace specsim::compute
