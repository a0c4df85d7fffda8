// A GPU kernel as the cost model sees it: its class, the work it does and the bytes it moves.
#pragma once

#include <string>

#include "sim/compute/attention_cost.h"

namespace specsim::compute {

enum class DType { kBf16, kFp8, kFp4, kInt4 };

const char* DTypeName(DType d);
double DTypeBytes(DType d);  // 2, 1, 0.5, 0.5

enum class KernelClass {
  kGemm,         // dense GEMM (projections, dense MLP, LM head, shared experts)
  kGroupedGemm,  // routed experts (MoE grouped GEMM)
  kAttention,    // attention over the KV cache (decode / verify)
  kNorm,         // RMSNorm (+ residual)
  kElementwise,  // activation, rotary, residual, copies
  kRouter,       // MoE gating + top-k
  kEmbedding,    // embedding lookup
  kSampling,     // softmax / argmax / top-k sampling over logits
};

const char* KernelClassName(KernelClass c);

struct Kernel {
  std::string name;  // e.g. "layer3.qkv_proj"
  KernelClass kernel_class = KernelClass::kGemm;
  double flops = 0;                 // per GPU
  double bytes = 0;                 // device-memory bytes read + written, per GPU
  DType math_dtype = DType::kBf16;  // selects the tensor-core peak
  // GEMM shape per GPU (m = tokens, n, k), 0 for other classes; used for efficiency by shape.
  double m = 0, n = 0, k = 0;
  // GEMM weight bytes (n * k * bytes per weight) within `bytes`; 0 = unknown (then all of `bytes`).
  // The GEMM column limit (kernel_cost.h) streams only the weights at its per-column rate.
  double weight_bytes = 0;
  // Attention kernels: the call's shape, when known, for an implementation's cost model
  // (attention_cost.h; ComputeParams::attention_regimes).
  bool has_attention_call = false;
  AttentionCall attention;
  // Elementwise kernels: operands are views or broadcasts (a strided kernel; ComputeParams::KernelRampNs).
  bool strided = false;
};

}  // namespace specsim::compute
