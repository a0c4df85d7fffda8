// What a GPU kernel of a profiler trace is, from its name: the classes specsim's cost model has
// (GEMM, attention, norm, NCCL collective, custom allreduce, MoE routing / experts, sampling,
// rotary, other elementwise and copies), and for NCCL kernels the collective, reduction, dtype,
// algorithm and protocol that NCCL encodes in the kernel's name
// ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(...)"; NCCL < 2.19: "ncclKernel_AllReduce_RING_LL_Sum_bfloat16").
//
// Name rules (checked in this order, case-insensitive):
//   nccl              ncclDevKernel_* / ncclKernel_*
//   custom_allreduce  cross_device_reduce*, *one_shot* / *two_shot* allreduce, *custom*all*reduce*
//   moe               moe, expert, topk_gating
//   norm              norm (rms_norm, layer_norm)
//   sampling          argmax, ArgMax, topk, top_k, sampling, sample
//   rotary            rotary, rope
//   attention         flash (not FlashInfer's namespace), fmha, sdpa, attention, attn,
//                     BatchDecode, BatchPrefill, mla_
//   gemm              gemm, gemv, nvjet, cutlass, cublas, xmma, splitKreduce
//   other             everything else (elementwise, copies, fills, reductions)
// A rule that misfiles a production kernel is a bug: add the name to kernel_class_test.cc.
#pragma once

#include <string>

namespace specsim::profile {

enum class KernelClass { kGemm, kAttention, kNorm, kNccl, kCustomAllreduce, kMoe, kSampling, kRotary, kOther };

const char* KernelClassName(KernelClass c);  // "gemm", "attention", ...
KernelClass ClassifyKernel(const std::string& name);

struct NcclKernel {
  bool ok = false;
  std::string op;         // "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "SendRecv", ...
  std::string reduction;  // "Sum", ... ("" for ops without one)
  std::string dtype;      // "bf16", ... ("" when not in the name)
  std::string algorithm;  // "RING", "TREE", "NVLS", "COLLNET_DIRECT", "COLLNET_CHAIN", "PAT", ...
  std::string protocol;   // "LL", "LL128", "SIMPLE"
};
// The parts of an NCCL kernel's name; ok = false for a name that is not NCCL's.
NcclKernel ParseNcclKernelName(const std::string& name);

// The class names a profile's passes are compared in: the profile's class of a simulator kernel
// class (compute::KernelClassName: "gemm", "attention", "norm", "sampling" kept; "grouped_gemm" and
// "router" -> "moe"; "collective" -> "nccl"; elementwise, rotary, embedding and the rest ->
// "other"), and of a profile class (rotary -> "other", custom_allreduce -> "nccl": the simulator
// prices them as elementwise kernels and as the collective).
std::string ProfileClassOfSimulatorClass(const std::string& simulator_class);
std::string ComparedClassOf(const std::string& profile_class);

}  // namespace specsim::profile
