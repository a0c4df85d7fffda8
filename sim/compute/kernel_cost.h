// Roofline cost model of one GPU kernel, with efficiencies that depend on the kernel's class and
// size.
//
// Device time of a kernel with F flops (per GPU) moving B bytes of device memory:
//
//   t = max( F / (peak(math_dtype) * e_c),  B / (bw * e_m(B)),  floor )
//
// (dense GEMMs add gemm_overlap * the smaller of the first two terms, see gemm_overlap below;
// attention kernels with a known call shape and a chosen implementation take attention_cost.h's
// model instead)
//
//   peak(d)   datasheet dense tensor rate of the math dtype (GpuSpec bf16/fp8/fp4_dense_tflops; a
//             dtype the GPU has no tensor cores for runs at the next wider one, see PeakTflops);
//   bw        GpuSpec::memory_bandwidth_gbps;
//   e_c       compute efficiency: for GEMMs it ramps with the rows m (tokens):
//                 e_c(m) = e_max * m / (m + m_half)
//             small-m GEMMs waste most of each tensor-core tile, which is why this ramp exists; at
//             small m the memory term (streaming the weights) dominates anyway. Grouped GEMMs
//             (routed experts) use m = tokens per expert. Attention has its own constant e_c,
//             and its compute term also pays the attention ramp (the kernel's fixed cost: split
//             partials and their reduction pass, paid whether bytes or flops bind):
//                 attention compute = RampNs(attention) + F / (peak * e_c)
//             so a verify pass (N queries per sequence) costs fixed + a per-query term.
//             Norm / elementwise / embedding / sampling kernels have no compute term (a few flops
//             per byte: always memory-bound).
//   e_m(B)    memory efficiency with a size ramp:
//                 e_m(B) = e_max * B / (B + B_half),   B_half = bw * e_max * memory_ramp_ns
//             so B / (bw * e_m(B)) = B / (bw * e_max) + memory_ramp_ns: a kernel pays the time to
//             fill the memory pipeline (DRAM latency, first wave of blocks) once, then streams at
//             e_max. e_max depends on the class: skinny (weight-streaming) GEMM, grouped GEMM,
//             attention (KV-cache reads), everything else (memory_efficiency).
//   floor     no kernel runs shorter (grid launch, one wave, teardown).
//
// GEMM efficiency by shape class (output columns n): a GEMM's blocks are spread over its output
// columns (n / tile_n tiles, split over k only as far as the library's heuristic goes). Narrow
// GEMMs (few output columns, long k: MLA's q_a / kv_a down-projections, MoE routers) cannot keep
// enough loads in flight to stream their weights at e_max; cuBLAS then runs at a rate proportional
// to n. With gemm_column_rate_gbps = r > 0, GEMM and router kernels (n > 0) stream at
//     memory term = max(ramp + W / (n * r), B / (bw * e_m(B)))   when n * r < bw * e_max
// (W = Kernel::weight_bytes, the weights, which are what each column streams; activations are
// re-read from L2; W = B when unknown), the bandwidth law above n* = bw * e_max / r. Per column
// that is k weights at rate r: the time does not grow with n below n*, as measured. r = 0 (default) means no column limit (no public figure for it; `specsim calibrate` fits it
// by least squares over the GEMM items that it binds).
//
// Launch overhead is separate from device time: LaunchOverhead(false) is the CPU time to issue one
// kernel eagerly (framework + driver); LaunchOverhead(true) the gap between consecutive kernels of
// a replayed CUDA graph; GraphLaunchOverhead() the cost of one graph replay. SequenceTime()
// combines them for a sequence of kernels on one stream.
//
// Simplified: no L2 reuse across kernels (weights bigger than L2 are re-read each pass, smaller
// ones too), no clock throttling beyond what the efficiencies absorb, no overlap of kernels on one
// stream, no contention with concurrently running communication kernels.
#pragma once

#include <string>
#include <vector>

#include "sim/compute/kernel.h"
#include "sim/core/status.h"
#include "sim/core/time.h"
#include "sim/core/gpu_spec.h"
#include "specsim/calibration.pb.h"

namespace specsim::compute {

// Every default is an estimate from public figures, never a number chosen to make a throughput come
// out; all of them are meant to be replaced by `specsim calibrate` (proto ComputeCalibration).
struct ComputeParams {
  // Fraction of the datasheet dense tensor rate a large GEMM reaches. cuBLAS large BF16 GEMMs on
  // H100/H200 run at ~650-750 of 989 TFLOP/s (NVIDIA's cuBLAS performance pages, and the ~70% GEMM
  // utilisation commonly reported once clocks settle under power limits).
  double gemm_compute_efficiency = 0.70;
  // m (rows = tokens) at which a GEMM reaches half its compute efficiency. Hopper's wgmma tiles are
  // 64 rows tall and Blackwell's larger; with m_half = 32 a GEMM reaches 2/3 of e_max at m = 64 and
  // 94% at m = 512.
  double gemm_m_half = 32;
  // Fraction of memory bandwidth a skinny GEMM (few tokens: GEMV-like, weight streaming) reaches.
  // Good GEMV / split-K kernels reach 75-85% of HBM bandwidth on large matrices; 0.75 is the low
  // end because cuBLAS does not always pick the best split.
  double skinny_gemm_memory_efficiency = 0.75;
  // Routed experts (fused MoE grouped GEMM): many small per-expert matrices, a routing-dependent
  // schedule and a gather/scatter of tokens; SGLang's Triton fused_moe reaches clearly less than a
  // dense GEMM. Estimates: 0.5 of peak compute, 0.6 of bandwidth.
  double grouped_gemm_compute_efficiency = 0.50;
  double grouped_gemm_memory_efficiency = 0.60;
  // Decode / verify attention over the KV cache (FlashInfer, FlashAttention, FlashMLA decode
  // kernels): 70-80% of bandwidth at long contexts in their published benchmarks; the size ramp
  // handles short contexts. Its compute (few queries per KV row) is far from the tensor peak: 0.4.
  double attention_memory_efficiency = 0.70;
  double attention_compute_efficiency = 0.40;
  // Streaming kernels (norms, activations, rotary, copies, embedding rows, sampling): STREAM-like
  // copies reach ~85-90% of datasheet bandwidth on HBM3 (BabelStream on H100) and GDDR.
  double memory_efficiency = 0.85;
  // Time to fill the memory pipeline once per kernel (see e_m(B) above): DRAM latency ~0.5-0.8 us
  // on Hopper/Blackwell (microbenchmark papers) plus the first wave of blocks. Estimate: 1 us.
  double memory_ramp_ns = 1000;
  // The same fill time for GEMM (cuBLAS: split-K reductions, wave quantisation on small shapes)
  // and attention kernels (split-K partials and their reduction pass), which measure far longer
  // than a norm's (traces/h200-1x: ~2.5 us and ~30 us against ~1 us). Negative: memory_ramp_ns.
  double gemm_memory_ramp_ns = -1;
  double attention_memory_ramp_ns = -1;
  // Elementwise and copy kernels (KernelClass::kElementwise: activations, rotary, residual adds,
  // cache writes, copies) where a calibration fitted them apart from the norms: their fill time
  // (negative: memory_ramp_ns) and streaming efficiency (0: memory_efficiency). PyTorch's elementwise
  // kernels on an H200 take ~0.9-2 us where its RMSNorm takes ~6 us at the same few kilobytes
  // (traces/torch-kernel-probe/h200-1x-2026-12-04c.eager): one ramp cannot price both.
  double elementwise_memory_ramp_ns = -1;
  double elementwise_memory_efficiency = 0;
  // The fill time of elementwise kernels on strided operands (Kernel::strided: PyTorch's
  // `elementwise_kernel` on views and broadcasts, about twice its vectorized kernel's at the same
  // bytes on the H200); negative: the elementwise ramp.
  double strided_elementwise_memory_ramp_ns = -1;
  // Streaming rate per output column of a GEMM (GB/s per column of n), see "GEMM efficiency by
  // shape class" above. 0: no column limit (the default: a property of the GEMM library's kernel
  // choice, measured by `specsim calibrate`, not a datasheet figure).
  double gemm_column_rate_gbps = 0;
  // Sampling kernels (argmax, samplers) reduce each row of logits in few blocks: a row of V logits
  // takes at least V / r, so that with few rows the kernel runs far below the bandwidth law
  // (sampling memory term = max(B / (bw e_m(B)), ramp + V / r), V = Kernel::n, r in 1e9 logits/s;
  // torch's argmax over 8 x 128256 bf16 logits takes 28 us on an H200, where the bandwidth law
  // gives ~3). 0: no row limit (the default: a property of the framework's kernel, no public
  // figure; `specsim calibrate` fits it from sampling items).
  double sampling_row_rate_glogits = 0;
  // Dense GEMMs whose memory and compute terms are close do not hide one behind the other:
  //     t = max(M, C) + gemm_overlap * min(M, C)
  // (0: perfect overlap, the roofline's max). A property of the GEMM library's kernels (tile
  // pipelines that stream weights and run the math in turns); no public figure: 0 by default,
  // `specsim calibrate` picks it from the GEMM items (the value of 0, 0.1, ..., 0.5 whose fit
  // leaves the smallest log error).
  double gemm_overlap = 0;
  // The fill time of kernels of class `c` (the above, or memory_ramp_ns).
  double RampNs(KernelClass c) const;
  // ... and of kernel `k`: its class's, or the strided elementwise ramp for a strided elementwise kernel.
  double KernelRampNs(const Kernel& k) const;
  // Device time of the smallest kernel: tiny norm/elementwise kernels show ~1.5-2.5 us in Nsight
  // traces of decode steps on Hopper. Estimate: 1.5 us.
  double kernel_floor_ns = 1500;
  // CPU time to issue one kernel eagerly from a Python framework (PyTorch dispatcher + Python +
  // cudaLaunchKernel, ~2-3 us of which is the driver launch alone): commonly measured 5-10 us per
  // op.
  double launch_overhead_eager_ns = 5000;
  // Gap between consecutive kernels of a replayed CUDA graph. NVIDIA's "Getting Started with CUDA
  // Graphs" blog: a 2.9 us kernel took 3.4 us per kernel in a graph (3.8 us with stream launches).
  double launch_overhead_graph_ns = 500;
  // Device-side gap between back-to-back kernels queued on a stream (eager launches with the CPU
  // ahead of the GPU): the same blog's 3.8 us per 2.9 us kernel gives 0.9 us. Never below the graph
  // gap.
  double eager_device_gap_ns = 900;
  // One cudaGraphLaunch: CPU submit (~2.5 us) plus the latency until the first kernel starts.
  // Estimate: 5 us.
  double graph_launch_ns = 5000;
  // The GEMM library the GEMM fields above describe ("" = not stated), and the GEMM costs of other
  // libraries, fitted apart on their own items (a library picks its own kernels per shape: cuBLASLt's
  // heuristic and cublasGemmEx differ by 22% at some shapes). Scenarios use the fields above.
  struct GemmLibraryCosts {
    std::string library;
    double skinny_gemm_memory_efficiency = 0.75;
    double gemm_compute_efficiency = 0.70;
    double gemm_memory_ramp_ns = -1;
    double gemm_column_rate_gbps = 0;
    double gemm_overlap = 0;
  };
  std::string gemm_library;
  std::vector<GemmLibraryCosts> gemm_libraries;
  // A copy whose GEMM fields are `library`'s (this one when it is gemm_library, not listed, or empty).
  ComputeParams WithGemmLibrary(const std::string& library) const;
  // Adds `g`, or replaces the entry of the same library.
  void SetGemmLibrary(const GemmLibraryCosts& g);
  // Attention implementations with fitted costs (attention_cost.h), by name: the calibration's
  // library. Kernels use them only through attention_regimes, which a scenario or a trace item
  // selects explicitly: a cost measured on one kernel is never applied to another silently.
  std::vector<AttentionImplementation> attention_implementations;
  const AttentionImplementation* FindAttentionImplementation(const std::string& name) const;
  // Adds `a`, or replaces the implementation of the same name.
  void SetAttentionImplementation(const AttentionImplementation& a);
  // What attention kernels with a known call shape cost: the implementation of their regime (q = 1
  // decode, q > 1 verify); none: the roofline attention terms above.
  AttentionRegimes attention_regimes;
};

// Non-zero fields of `calibration` override the matching defaults (the proto's field comments name
// them); unset (0) fields keep `params`. Grouped-GEMM compute efficiency has no calibration field
// yet and is kept.
ComputeParams ApplyCalibration(ComputeParams params, const config::ComputeCalibration& calibration);

// Efficiencies in (0, 1], times and m_half >= 0. Messages name the field.
Status ValidateComputeParams(const ComputeParams& params);
// The GPU fields the cost model needs: memory_bandwidth_gbps > 0, bf16_dense_tflops > 0, the others
// >= 0 (0 = no tensor cores for that dtype).
Status ValidateGpuForCompute(const GpuSpec& gpu);

class KernelCostModel {
 public:
  // REQUIRES: ValidateGpuForCompute(gpu) and ValidateComputeParams(params) are OK (CHECKed). Use
  // Create() at input boundaries.
  KernelCostModel(const GpuSpec& gpu, ComputeParams params);
  static StatusOr<KernelCostModel> Create(const GpuSpec& gpu, ComputeParams params);

  // Device time of one kernel (see the header comment): max(compute, memory, floor), >= floor.
  SimTime KernelTime(const Kernel& kernel) const;
  // Per-kernel launch cost: CPU issue time when eager, inter-kernel gap inside a CUDA graph.
  SimTime LaunchOverhead(bool cuda_graph) const;
  // Device-side gap between back-to-back eagerly launched kernels (never below the graph gap).
  SimTime EagerDeviceGap() const;
  // Cost of one CUDA graph replay (cudaGraphLaunch).
  SimTime GraphLaunchOverhead() const;
  // Wall time of `kernels` run back to back on one stream from an idle start.
  //   graph: graph_launch + sum_i (KernelTime_i + graph gap)
  //   eager: the CPU issues kernel i at (i+1) * eager overhead; the GPU starts it at
  //          max(issue_i, end_{i-1} + eager device gap): small kernels become CPU-bound, long
  //          ones pay the stream's inter-kernel gap.
  SimTime SequenceTime(const std::vector<Kernel>& kernels, bool cuda_graph) const;

  // Dense tensor rate (TFLOP/s) used for `math`: bf16 -> bf16; fp8 -> fp8 or, without FP8 tensor
  // cores, bf16; fp4 -> fp4, else fp8, else bf16 (e.g. MXFP4 weights on Hopper are upcast); int4 ->
  // bf16 (weight-only int4 kernels such as Marlin dequantize and run bf16 MMA).
  double PeakTflops(DType math) const;
  // The efficiencies KernelTime uses, exposed for tests and reports.
  double ComputeEfficiency(const Kernel& kernel) const;
  double MemoryEfficiency(const Kernel& kernel) const;  // including the size ramp
  // The memory term of KernelTime in ns (0 for a kernel moving no bytes): B / (bw * e_m(B)), with
  // the GEMM column limit (ramp + B / (n * gemm_column_rate_gbps)) when that is slower.
  double MemoryNs(const Kernel& kernel) const;
  // True when the column limit, not the bandwidth, binds the memory term of `kernel`.
  bool ColumnLimited(const Kernel& kernel) const;
  // The row limit of a sampling kernel (ramp + V / sampling_row_rate_glogits, V = kernel.n), 0
  // when none applies (another class, n unknown, or no rate).
  double SamplingRowNs(const Kernel& kernel) const;

  const GpuSpec& gpu() const { return gpu_; }
  const ComputeParams& params() const { return params_; }

 private:
  double MaxMemoryEfficiency(KernelClass c) const;

  GpuSpec gpu_;
  ComputeParams params_;
};

}  // namespace specsim::compute
