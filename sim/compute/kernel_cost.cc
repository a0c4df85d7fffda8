#include "sim/compute/kernel_cost.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace specsim::compute {
namespace {

// An efficiency: a fraction of a datasheet peak, at least 1e-4 (a kernel 10,000x below its peak is
// no measurement of this hardware).
Status CheckFraction(const char* field, double v) {
  if (!(v >= 1e-4 && v <= 1)) {
    return InvalidArgumentError(std::string("ComputeParams.") + field + " = " + std::to_string(v) +
                                ": must be in [0.0001, 1]");
  }
  return OkStatus();
}

Status CheckNonNegative(const char* prefix, const char* field, double v) {
  if (!(v >= 0) || !std::isfinite(v)) {
    return InvalidArgumentError(std::string(prefix) + field + " = " + std::to_string(v) + ": must be >= 0");
  }
  return OkStatus();
}

bool IsTensorClass(KernelClass c) {
  return c == KernelClass::kGemm || c == KernelClass::kGroupedGemm || c == KernelClass::kRouter ||
         c == KernelClass::kAttention;
}

}  // namespace

ComputeParams ApplyCalibration(ComputeParams p, const config::ComputeCalibration& c) {
  auto set = [](double& field, double value) {
    if (value != 0) field = value;
  };
  set(p.gemm_compute_efficiency, c.gemm_compute_efficiency());
  set(p.memory_efficiency, c.memory_efficiency());
  set(p.skinny_gemm_memory_efficiency, c.skinny_gemm_memory_efficiency());
  set(p.attention_memory_efficiency, c.attention_memory_efficiency());
  set(p.kernel_floor_ns, c.kernel_floor_ns());
  set(p.launch_overhead_eager_ns, c.launch_overhead_eager_ns());
  set(p.launch_overhead_graph_ns, c.launch_overhead_graph_ns());
  set(p.graph_launch_ns, c.graph_launch_ns());
  set(p.memory_ramp_ns, c.memory_ramp_ns());
  set(p.gemm_m_half, c.gemm_m_half());
  set(p.eager_device_gap_ns, c.eager_device_gap_ns());
  set(p.gemm_memory_ramp_ns, c.gemm_memory_ramp_ns());
  set(p.attention_memory_ramp_ns, c.attention_memory_ramp_ns());
  set(p.attention_compute_efficiency, c.attention_compute_efficiency());
  set(p.gemm_column_rate_gbps, c.gemm_column_rate_gbps());
  set(p.sampling_row_rate_glogits, c.sampling_row_rate_glogits());
  set(p.elementwise_memory_ramp_ns, c.elementwise_memory_ramp_ns());
  set(p.elementwise_memory_efficiency, c.elementwise_memory_efficiency());
  set(p.strided_elementwise_memory_ramp_ns, c.strided_elementwise_memory_ramp_ns());
  set(p.gemm_overlap, c.gemm_overlap());
  if (!c.gemm_library().empty()) p.gemm_library = c.gemm_library();
  for (const config::GemmLibraryCalibration& gc : c.gemm_libraries()) {
    ComputeParams::GemmLibraryCosts g;
    g.library = gc.library();
    g.skinny_gemm_memory_efficiency = gc.skinny_gemm_memory_efficiency();
    g.gemm_compute_efficiency = gc.gemm_compute_efficiency();
    g.gemm_memory_ramp_ns = gc.gemm_memory_ramp_ns();
    g.gemm_column_rate_gbps = gc.gemm_column_rate_gbps();
    g.gemm_overlap = gc.gemm_overlap();
    p.SetGemmLibrary(g);
  }
  for (const config::AttentionImplementationCalibration& ac : c.attention_implementations()) {
    AttentionImplementation a;
    a.name = ac.name();
    a.row_tile = ac.row_tile();
    a.max_rows_per_block = ac.max_rows_per_block();
    a.kv_tile_tokens = ac.kv_tile_tokens();
    a.blocks_per_sm = ac.blocks_per_sm();
    a.split_blocks_per_sm = ac.split_blocks_per_sm();
    a.splits_round_down = ac.splits_round_down();
    a.combine_value_blocks = std::max(1, ac.combine_value_blocks());
    a.per_head_blocks = ac.per_head_blocks();
    using C = config::AttentionImplementationCalibration;
    a.split_policy = ac.split_policy() == C::SPLIT_POLICY_SGLANG_TRITON       ? SplitPolicy::kSglangTriton
                     : ac.split_policy() == C::SPLIT_POLICY_FIXED             ? SplitPolicy::kFixed
                     : ac.split_policy() == C::SPLIT_POLICY_FLASH_ATTENTION_2 ? SplitPolicy::kFlashAttention2
                     : ac.split_policy() == C::SPLIT_POLICY_FLASH_INFER       ? SplitPolicy::kFlashInfer
                     : ac.split_policy() == C::SPLIT_POLICY_FLASH_ATTENTION_3 ? SplitPolicy::kFlashAttention3
                                                                              : SplitPolicy::kOccupancy;
    a.planned_for_graph = ac.planned_for_graph();
    a.combine_splits_per_step = std::max(1, ac.combine_splits_per_step());
    a.merge_always = ac.merge_always();
    a.gqa_rows_at_q1 = ac.gqa_rows_at_q1();
    a.combine_rows_per_block = std::max(1, ac.combine_rows_per_block());
    a.min_split_tokens = ac.min_split_tokens();
    a.max_splits = ac.max_splits();
    a.ramp_ns = ac.ramp_ns();
    a.memory_efficiency = ac.memory_efficiency();
    a.tile_ns = ac.tile_ns();
    a.row_ns = ac.row_ns();
    a.combine_ns = ac.combine_ns();
    for (const auto& rr : ac.blocks_per_sm_by_rows())
      a.blocks_per_sm_by_rows.push_back({rr.rows_per_block(), rr.blocks_per_sm()});
    for (const auto& rt : ac.kv_tile_tokens_by_rows())
      a.kv_tile_tokens_by_rows.push_back({rt.rows_per_block(), rt.kv_tile_tokens()});
    a.combine_blocks_per_sm = ac.combine_blocks_per_sm();
    a.block_ns = ac.block_ns();
    a.tile_latency_ns = ac.tile_latency_ns();
    a.row_latency_ns = ac.row_latency_ns();
    a.block_row_latency_ns = ac.block_row_latency_ns();
    a.block_row_ns = ac.block_row_ns();
    a.combine_block_ns = ac.combine_block_ns();
    a.combine_split_ns = ac.combine_split_ns();
    p.SetAttentionImplementation(a);
  }
  return p;
}

Status ValidateComputeParams(const ComputeParams& p) {
  RETURN_IF_ERROR(CheckFraction("gemm_compute_efficiency", p.gemm_compute_efficiency));
  RETURN_IF_ERROR(CheckFraction("skinny_gemm_memory_efficiency", p.skinny_gemm_memory_efficiency));
  RETURN_IF_ERROR(CheckFraction("grouped_gemm_compute_efficiency", p.grouped_gemm_compute_efficiency));
  RETURN_IF_ERROR(CheckFraction("grouped_gemm_memory_efficiency", p.grouped_gemm_memory_efficiency));
  RETURN_IF_ERROR(CheckFraction("attention_memory_efficiency", p.attention_memory_efficiency));
  RETURN_IF_ERROR(CheckFraction("attention_compute_efficiency", p.attention_compute_efficiency));
  RETURN_IF_ERROR(CheckFraction("memory_efficiency", p.memory_efficiency));
  if (p.elementwise_memory_efficiency != 0)
    RETURN_IF_ERROR(CheckFraction("elementwise_memory_efficiency", p.elementwise_memory_efficiency));
  const char* pre = "ComputeParams.";
  RETURN_IF_ERROR(CheckNonNegative(pre, "gemm_m_half", p.gemm_m_half));
  RETURN_IF_ERROR(CheckNonNegative(pre, "memory_ramp_ns", p.memory_ramp_ns));
  RETURN_IF_ERROR(CheckNonNegative(pre, "kernel_floor_ns", p.kernel_floor_ns));
  RETURN_IF_ERROR(CheckNonNegative(pre, "launch_overhead_eager_ns", p.launch_overhead_eager_ns));
  RETURN_IF_ERROR(CheckNonNegative(pre, "launch_overhead_graph_ns", p.launch_overhead_graph_ns));
  RETURN_IF_ERROR(CheckNonNegative(pre, "graph_launch_ns", p.graph_launch_ns));
  RETURN_IF_ERROR(CheckNonNegative(pre, "eager_device_gap_ns", p.eager_device_gap_ns));
  RETURN_IF_ERROR(CheckNonNegative(pre, "gemm_column_rate_gbps", p.gemm_column_rate_gbps));
  RETURN_IF_ERROR(CheckNonNegative(pre, "sampling_row_rate_glogits", p.sampling_row_rate_glogits));
  if (!(p.gemm_overlap >= 0 && p.gemm_overlap <= 1))
    return InvalidArgumentError("ComputeParams.gemm_overlap = " + std::to_string(p.gemm_overlap) +
                                ": must be in [0, 1]");
  for (const AttentionImplementation& a : p.attention_implementations)
    RETURN_IF_ERROR(ValidateAttentionImplementation(a));
  for (const auto* v : {&p.attention_regimes.decode, &p.attention_regimes.verify, &p.attention_regimes.mla_decode,
                        &p.attention_regimes.mla_verify}) {
    if (v->size() > 1)
      return InvalidArgumentError("ComputeParams.attention_regimes: at most one implementation per regime");
    for (const AttentionImplementation& a : *v) RETURN_IF_ERROR(ValidateAttentionImplementation(a));
  }
  return OkStatus();
}

Status ValidateGpuForCompute(const GpuSpec& gpu) {
  const std::string pre = "gpu_specs[" + gpu.name + "].";
  if (!(gpu.memory_bandwidth_gbps > 0)) {
    return InvalidArgumentError(pre + "memory_bandwidth_gbps = " + std::to_string(gpu.memory_bandwidth_gbps) +
                                ": must be > 0");
  }
  if (!(gpu.bf16_dense_tflops > 0)) {
    return InvalidArgumentError(pre + "bf16_dense_tflops = " + std::to_string(gpu.bf16_dense_tflops) + ": must be > 0");
  }
  RETURN_IF_ERROR(CheckNonNegative(pre.c_str(), "fp8_dense_tflops", gpu.fp8_dense_tflops));
  RETURN_IF_ERROR(CheckNonNegative(pre.c_str(), "fp4_dense_tflops", gpu.fp4_dense_tflops));
  return OkStatus();
}

ComputeParams ComputeParams::WithGemmLibrary(const std::string& library) const {
  ComputeParams p = *this;
  if (library.empty() || library == gemm_library) return p;
  for (const GemmLibraryCosts& g : gemm_libraries) {
    if (g.library != library) continue;
    p.skinny_gemm_memory_efficiency = g.skinny_gemm_memory_efficiency;
    p.gemm_compute_efficiency = g.gemm_compute_efficiency;
    p.gemm_memory_ramp_ns = g.gemm_memory_ramp_ns;
    p.gemm_column_rate_gbps = g.gemm_column_rate_gbps;
    p.gemm_overlap = g.gemm_overlap;
    p.gemm_library = library;
  }
  return p;
}

namespace {

// Replaces the element whose key equals `value`'s, or appends `value`.
template <typename T, typename Key>
void SetByKey(std::vector<T>* v, const T& value, Key key) {
  for (T& old : *v)
    if (key(old) == key(value)) {
      old = value;
      return;
    }
  v->push_back(value);
}

}  // namespace

void ComputeParams::SetGemmLibrary(const GemmLibraryCosts& g) {
  SetByKey(&gemm_libraries, g, [](const GemmLibraryCosts& x) { return x.library; });
}

void ComputeParams::SetAttentionImplementation(const AttentionImplementation& a) {
  SetByKey(&attention_implementations, a, [](const AttentionImplementation& x) { return x.name; });
}

const AttentionImplementation* ComputeParams::FindAttentionImplementation(const std::string& name) const {
  for (const AttentionImplementation& a : attention_implementations)
    if (a.name == name) return &a;
  return nullptr;
}

double ComputeParams::RampNs(KernelClass c) const {
  const bool gemm = c == KernelClass::kGemm || c == KernelClass::kGroupedGemm || c == KernelClass::kRouter;
  if (gemm && gemm_memory_ramp_ns >= 0) return gemm_memory_ramp_ns;
  if (c == KernelClass::kAttention && attention_memory_ramp_ns >= 0) return attention_memory_ramp_ns;
  if (c == KernelClass::kElementwise && elementwise_memory_ramp_ns >= 0) return elementwise_memory_ramp_ns;
  return memory_ramp_ns;
}

double ComputeParams::KernelRampNs(const Kernel& k) const {
  if (k.kernel_class == KernelClass::kElementwise && k.strided && strided_elementwise_memory_ramp_ns >= 0)
    return strided_elementwise_memory_ramp_ns;
  return RampNs(k.kernel_class);
}

KernelCostModel::KernelCostModel(const GpuSpec& gpu, ComputeParams params) : gpu_(gpu), params_(params) {
  Status g = ValidateGpuForCompute(gpu_);
  SPECSIM_CHECK(g.ok()) << g.ToString();
  Status p = ValidateComputeParams(params_);
  SPECSIM_CHECK(p.ok()) << p.ToString();
}

StatusOr<KernelCostModel> KernelCostModel::Create(const GpuSpec& gpu, ComputeParams params) {
  RETURN_IF_ERROR(ValidateGpuForCompute(gpu));
  RETURN_IF_ERROR(ValidateComputeParams(params));
  return KernelCostModel(gpu, params);
}

double KernelCostModel::PeakTflops(DType math) const {
  const double bf16 = gpu_.bf16_dense_tflops;
  const double fp8 = gpu_.fp8_dense_tflops > 0 ? gpu_.fp8_dense_tflops : bf16;
  switch (math) {
    case DType::kBf16: return bf16;
    case DType::kFp8: return fp8;
    case DType::kFp4: return gpu_.fp4_dense_tflops > 0 ? gpu_.fp4_dense_tflops : fp8;
    case DType::kInt4: return bf16;
  }
  return bf16;
}

double KernelCostModel::ComputeEfficiency(const Kernel& k) const {
  auto ramp = [&](double m) {
    if (m <= 0) return 1.0;  // shape unknown: no ramp
    return m / (m + params_.gemm_m_half);
  };
  switch (k.kernel_class) {
    case KernelClass::kGemm:
    case KernelClass::kRouter: return params_.gemm_compute_efficiency * ramp(k.m);
    case KernelClass::kGroupedGemm: return params_.grouped_gemm_compute_efficiency * ramp(k.m);
    case KernelClass::kAttention: return params_.attention_compute_efficiency;
    default: return 0;  // no compute term
  }
}

double KernelCostModel::MaxMemoryEfficiency(KernelClass c) const {
  switch (c) {
    case KernelClass::kGemm:
    case KernelClass::kRouter: return params_.skinny_gemm_memory_efficiency;
    case KernelClass::kGroupedGemm: return params_.grouped_gemm_memory_efficiency;
    case KernelClass::kAttention: return params_.attention_memory_efficiency;
    case KernelClass::kElementwise:
      return params_.elementwise_memory_efficiency > 0 ? params_.elementwise_memory_efficiency
                                                       : params_.memory_efficiency;
    default: return params_.memory_efficiency;
  }
}

double KernelCostModel::MemoryEfficiency(const Kernel& k) const {
  const double e_max = MaxMemoryEfficiency(k.kernel_class);
  if (k.bytes <= 0) return e_max;
  // B_half in bytes: GB/s * 1e9 * ns * 1e-9 = bytes.
  const double b_half = gpu_.memory_bandwidth_gbps * e_max * params_.KernelRampNs(k);
  return e_max * k.bytes / (k.bytes + b_half);
}

SimTime KernelCostModel::KernelTime(const Kernel& k) const {
  SPECSIM_CHECK(k.flops >= 0 && k.bytes >= 0) << k.name;
  double ns = params_.kernel_floor_ns;
  if (k.kernel_class == KernelClass::kAttention && k.has_attention_call && gpu_.sm_count > 0) {
    if (const AttentionImplementation* impl =
            params_.attention_regimes.For(k.attention.query_tokens, k.attention.latent)) {
      return PicosFromNanos(
          std::max(ns, AttentionTime(*impl, k.attention, gpu_.sm_count, gpu_.memory_bandwidth_gbps).total_ns()));
    }
  }
  double compute_ns = 0;
  if (IsTensorClass(k.kernel_class) && k.flops > 0) {
    // TFLOP/s = 1e3 flops per ns.
    compute_ns = k.flops / (PeakTflops(k.math_dtype) * 1e3 * ComputeEfficiency(k));
    // Attention pays its fixed per-kernel cost (split partials and their reduction pass, the
    // attention ramp) whichever term binds: fixed + per-query compute.
    if (k.kernel_class == KernelClass::kAttention) compute_ns += params_.KernelRampNs(k);
    ns = std::max(ns, compute_ns);
  }
  const double memory_ns = k.bytes > 0 ? MemoryNs(k) : 0;
  ns = std::max(ns, memory_ns);
  if (k.kernel_class == KernelClass::kGemm && params_.gemm_overlap > 0 && compute_ns > 0 && memory_ns > 0)
    ns = std::max(ns, std::max(compute_ns, memory_ns) + params_.gemm_overlap * std::min(compute_ns, memory_ns));
  return PicosFromNanos(ns);
}

bool KernelCostModel::ColumnLimited(const Kernel& k) const {
  const bool gemm = k.kernel_class == KernelClass::kGemm || k.kernel_class == KernelClass::kRouter;
  if (!gemm || k.n <= 0 || params_.gemm_column_rate_gbps <= 0) return false;
  return k.n * params_.gemm_column_rate_gbps < gpu_.memory_bandwidth_gbps * MaxMemoryEfficiency(k.kernel_class);
}

double KernelCostModel::SamplingRowNs(const Kernel& k) const {
  if (k.kernel_class != KernelClass::kSampling || k.n <= 0 || params_.sampling_row_rate_glogits <= 0) return 0;
  return params_.KernelRampNs(k) + k.n / params_.sampling_row_rate_glogits;  // G logits/s = logits per ns
}

double KernelCostModel::MemoryNs(const Kernel& k) const {
  if (k.bytes <= 0) return 0;
  if (const double row_ns = SamplingRowNs(k); row_ns > 0)
    return std::max(row_ns, k.bytes / (gpu_.memory_bandwidth_gbps * MemoryEfficiency(k)));
  // GB/s = 1 byte per ns.
  if (ColumnLimited(k)) {
    // Only the weights stream at the per-column rate (activations are re-read from L2); never
    // faster than the bandwidth law on all the bytes.
    const double w = k.weight_bytes > 0 ? std::min(k.weight_bytes, k.bytes) : k.bytes;
    return std::max(params_.KernelRampNs(k) + w / (k.n * params_.gemm_column_rate_gbps),
                    k.bytes / (gpu_.memory_bandwidth_gbps * MemoryEfficiency(k)));
  }
  return k.bytes / (gpu_.memory_bandwidth_gbps * MemoryEfficiency(k));
}

SimTime KernelCostModel::LaunchOverhead(bool cuda_graph) const {
  return PicosFromNanos(cuda_graph ? params_.launch_overhead_graph_ns : params_.launch_overhead_eager_ns);
}

SimTime KernelCostModel::GraphLaunchOverhead() const { return PicosFromNanos(params_.graph_launch_ns); }

SimTime KernelCostModel::SequenceTime(const std::vector<Kernel>& kernels, bool cuda_graph) const {
  if (cuda_graph) {
    SimTime t = GraphLaunchOverhead();
    for (const Kernel& k : kernels) t += KernelTime(k) + LaunchOverhead(true);
    return t;
  }
  const SimTime issue = LaunchOverhead(false);
  const SimTime gap = EagerDeviceGap();
  SimTime cpu = 0, gpu_end = 0;
  bool first = true;
  for (const Kernel& k : kernels) {
    cpu += issue;
    gpu_end = std::max(cpu, first ? gpu_end : gpu_end + gap) + KernelTime(k);
    first = false;
  }
  return gpu_end;
}

SimTime KernelCostModel::EagerDeviceGap() const {
  return PicosFromNanos(std::max(params_.eager_device_gap_ns, params_.launch_overhead_graph_ns));
}

}  // namespace specsim::compute
