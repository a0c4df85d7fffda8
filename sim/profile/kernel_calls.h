// Eager operator calls of a profile and the kernels they launched, as kernels-suite items: the
// measurements `specsim calibrate` fits a box's kernel costs on when all it has is a serving
// engine's profile (GEMMs: profile_import.h; attention and RMSNorm here).
//
// A call is an operator kept with its shapes (kineto_trace.h IsShapeOp) and every kernel that
// carries its External id (the innermost operator that launched it; eager launches only: kernels
// replayed from a CUDA graph carry the graph launch's id). Its time is the sum of its kernels'
// durations: device time, no launch and no gap (items are written kernel_time_only).
//
// Attention (aten::_cudnn_attention_forward, inputs query [b, hq, q, d], key / value [b, hkv, s,
// d]; aten::_flash_attention_forward and aten::_efficient_attention_forward, [b, s, h, d]): one
// group per (implementation, b, hq, hkv, q, s, d, dv, dtype). The implementation is named after the
// call's longest kernel (compute/profiled_attention.h ProfiledAttentionName; "+split" when the call
// launched a second, reduction kernel); that kernel alone is the item's main kernel time. s is the
// key length: the cached tokens plus the new ones, what every query row attends at most.
//
// RMSNorm (operators named rms_norm / rmsnorm; torch.compile's Triton norm kernels, whose
// arguments are the tensors they read and write): tokens and hidden from the first 2-d input
// [tokens, hidden]; with a residual add when the call moves at least three [tokens, hidden]
// tensors (x, residual, output) or its name says "add" (vLLM's fused_add_rms_norm). Simplified: a
// Triton kernel that updates the residual in place names it once, so such a fused norm is taken
// as a plain one (its bytes undercounted by a third).
//
// Sampling (aten::argmax over the last dimension of [rows, vocab] logits: greedy sampling): one
// group per (rows, vocab, dtype).
//
// Elementwise (kineto_trace.h IsElementwiseOp: aten's pointwise and copy operators): one group per
// (operator, output elements, bytes, output dtype, whether its kernel is a strided one: not
// vectorized_elementwise_kernel). Inputs with a shape are tensors (a scalar and a
// 0-dim tensor both record no dimensions and are not counted: at most a few bytes; a call whose only
// input is such, aten::scalar_tensor's fill_, is one element of its first input's dtype). Output
// elements: the broadcast shape of the tensor inputs (aten::cat: the sum of its list's tensors);
// output dtype: that of the largest tensor input (copy_ and fill_: their destination, input 0;
// where: its values', not its boolean condition's).
// Bytes, as a kernel that reads each input once and writes its output once:
//   pointwise     sum_i numel_i * size_i + out_elements * out_size
//   copy_         numel(src) * size(src) + numel(dst) * size(dst)
//   fill_         numel(dst) * size(dst)                              (writes only)
//   cat           2 * sum of the list's elements * size(out)   (a TensorList records no dtype: bf16 assumed)
// Simplified: a broadcast input is counted at its own size (read once, from L2 thereafter), and a
// strided (non-contiguous) input at its elements, not at the lines it spans.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/profile/kineto_trace.h"
#include "specsim/trace.pb.h"

namespace specsim::profile {

// One eager call of a kept operator.
struct OperatorCall {
  const KinetoOp* op = nullptr;
  double ns = 0;  // its kernels' summed durations
  int kernels = 0;
  const KinetoKernel* longest = nullptr;
};
// Every call of `t` that launched a kernel, in External id order. The pointers are into `t`.
std::vector<OperatorCall> OperatorCalls(const KinetoTrace& t);

struct AttentionGroup {
  std::string name;            // the trace item's, e.g. "profile/attention/cudnn_sdpa_sm90/64x128/b8/q2/s4098"
  std::string implementation;  // compute/profiled_attention.h ProfiledAttentionName
  std::string op, main_kernel, dtype;
  int64_t batch = 0, query_tokens = 0, q_heads = 0, kv_heads = 0, keys = 0, head_dim = 0, v_head_dim = 0;
  int calls = 0;
  int kernels_per_call = 0;
  double median_us = 0;       // per call, all its kernels
  double main_median_us = 0;  // per call, its longest kernel (0 with one kernel per call)
};

struct SamplingGroup {
  std::string name;  // e.g. "profile/sampling/argmax/r8/v128256"
  std::string op, dtype, main_kernel;
  int64_t rows = 0, vocab = 0;
  int calls = 0;
  double median_us = 0;
};

struct ElementwiseGroup {
  std::string name;  // e.g. "profile/elementwise/aten::mul/e131072/b786432"
  std::string op, dtype, main_kernel;
  int64_t elements = 0, bytes = 0;
  bool strided = false;  // PyTorch's strided kernel, not vectorized_elementwise_kernel (ElementwiseParams)
  int calls = 0;
  double median_us = 0;
};

struct NormGroup {
  std::string name;  // e.g. "profile/rmsnorm/t8/h4096"
  std::string op, dtype;
  int64_t tokens = 0, hidden = 0;
  bool fused_residual = false;
  int calls = 0;
  double median_us = 0;
};

// Samples of the calls of all ranks, by group.
struct KernelCallSamples {
  struct Samples {
    std::vector<double> us, main_us;
    int kernels_per_call = 0;
    std::string op, main_kernel;
  };
  std::map<std::tuple<std::string, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, std::string>,
           Samples>
      attention;  // (implementation, b, hq, hkv, q, s, d, dv, dtype)
  std::map<std::tuple<int64_t, int64_t, bool, std::string>, Samples> norms;  // (tokens, hidden, fused, dtype)
  std::map<std::tuple<int64_t, int64_t, std::string>, Samples> sampling;     // (rows, vocab, dtype)
  std::map<std::tuple<std::string, int64_t, int64_t, std::string, bool>, Samples>
      elementwise;  // (op, output elements, bytes, output dtype, strided kernel)
};

// One rank's attention and norm calls into `samples`; calls that cannot be read are counted in
// `skipped` by reason (no shapes, an unknown layout or kernel, another dtype).
void CollectKernelCalls(const std::vector<OperatorCall>& calls, KernelCallSamples* samples,
                        std::map<std::string, int64_t>* skipped);

// The groups of every kind.
struct KernelCallGroups {
  std::vector<AttentionGroup> attention;
  std::vector<NormGroup> norms;
  std::vector<SamplingGroup> sampling;
  std::vector<ElementwiseGroup> elementwise;
};

// The groups, each also written to `tr` as a kernels-suite item (KIND_ATTENTION / KIND_RMSNORM /
// KIND_SAMPLING / KIND_ELEMENTWISE, kernel_time_only, priced on GPU 0). Attention groups whose kernel
// is not recognised are kept in `attention` with an empty implementation and written with the
// implementation "profile" (the roofline model prices them; calibrate does not fit them).
void AddKernelCallItems(const KernelCallSamples& samples, KernelCallGroups* groups, trace::Trace* tr);

}  // namespace specsim::profile
