#include "sim/profile/kernel_class.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <vector>

#include "sim/core/strings.h"

namespace specsim::profile {
namespace {

bool Has(const std::string& lower, std::initializer_list<const char*> parts) {
  for (const char* p : parts)
    if (lower.find(p) != std::string::npos) return true;
  return false;
}

}  // namespace

const char* KernelClassName(KernelClass c) {
  switch (c) {
    case KernelClass::kGemm: return "gemm";
    case KernelClass::kAttention: return "attention";
    case KernelClass::kNorm: return "norm";
    case KernelClass::kNccl: return "nccl";
    case KernelClass::kCustomAllreduce: return "custom_allreduce";
    case KernelClass::kMoe: return "moe";
    case KernelClass::kSampling: return "sampling";
    case KernelClass::kRotary: return "rotary";
    case KernelClass::kOther: return "other";
  }
  return "other";
}

KernelClass ClassifyKernel(const std::string& name) {
  if (name.rfind("ncclDevKernel_", 0) == 0 || name.rfind("ncclKernel_", 0) == 0) return KernelClass::kNccl;
  // The kernel's own name, without its template and parameter list.
  const std::string l = AsciiLower(name);
  if (Has(l, {"cross_device_reduce", "custom_all_reduce", "customallreduce", "one_shot_all", "two_shot_all",
              "oneshot_all", "twoshot_all"}))
    return KernelClass::kCustomAllreduce;
  if (Has(l, {"moe", "expert", "topk_gating"})) return KernelClass::kMoe;
  if (Has(l, {"norm"})) return KernelClass::kNorm;
  // torch.compile's Triton kernels are named by the ops they fuse: an RMSNorm's reduction has rsqrt
  // (triton_red_fused_add_mean_mul_pow_rsqrt_0).
  if (Has(l, {"triton"}) && Has(l, {"rsqrt"})) return KernelClass::kNorm;
  if (Has(l, {"argmax", "topk", "top_k", "sampling", "sample"})) return KernelClass::kSampling;
  if (Has(l, {"rotary", "rope"})) return KernelClass::kRotary;
  // "flash" names FlashAttention's kernels, not FlashInfer's namespace (whose norms, samplers and
  // rotary kernels are taken above).
  std::string a = l;
  for (size_t at = a.find("flashinfer"); at != std::string::npos; at = a.find("flashinfer")) a.erase(at, 10);
  if (Has(a, {"flash", "fmha", "sdpa", "attention", "attn", "batchdecode", "batchprefill", "mla_"}))
    return KernelClass::kAttention;
  if (Has(l, {"gemm", "gemv", "nvjet", "cutlass", "cublas", "xmma", "splitkreduce"})) return KernelClass::kGemm;
  return KernelClass::kOther;
}

NcclKernel ParseNcclKernelName(const std::string& name) {
  NcclKernel k;
  std::string body;
  if (name.rfind("ncclDevKernel_", 0) == 0)
    body = name.substr(14);
  else if (name.rfind("ncclKernel_", 0) == 0)
    body = name.substr(11);
  else
    return k;
  body = body.substr(0, body.find('('));
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= body.size()) {
    const size_t end = body.find('_', start);
    parts.push_back(body.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (parts.empty() || parts[0].empty()) return k;
  k.op = parts[0];
  static const char* kAlgorithms[] = {"RING", "TREE", "NVLS", "PAT", "COLLNET"};
  static const char* kProtocols[] = {"LL", "LL128", "SIMPLE"};
  static const char* kReductions[] = {"Sum", "Prod", "Max", "Min", "PreMulSum", "SumPostDiv"};
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    const bool algorithm =
        std::any_of(std::begin(kAlgorithms), std::end(kAlgorithms), [&](const char* a) { return p == a; });
    if (algorithm) {
      k.algorithm = p;
      // COLLNET_DIRECT / COLLNET_CHAIN / NVLS_TREE are two tokens.
      if (i + 1 < parts.size() && (parts[i + 1] == "DIRECT" || parts[i + 1] == "CHAIN" || parts[i + 1] == "TREE")) {
        k.algorithm += "_" + parts[i + 1];
        ++i;
      }
    } else if (std::any_of(std::begin(kProtocols), std::end(kProtocols), [&](const char* a) { return p == a; })) {
      k.protocol = p;
    } else if (std::any_of(std::begin(kReductions), std::end(kReductions), [&](const char* a) { return p == a; })) {
      k.reduction = p;
    } else if (k.dtype.empty() && !p.empty()) {
      k.dtype = p;  // bf16, f16, f32, i8, u8, ... (NCCL < 2.19: bfloat16, half, float, ...)
    }
  }
  k.ok = true;
  return k;
}

std::string ProfileClassOfSimulatorClass(const std::string& simulator_class) {
  if (simulator_class == "gemm" || simulator_class == "attention" || simulator_class == "norm" ||
      simulator_class == "sampling")
    return simulator_class;
  if (simulator_class == "grouped_gemm" || simulator_class == "router") return "moe";
  if (simulator_class == "collective") return "nccl";
  return "other";
}

std::string ComparedClassOf(const std::string& profile_class) {
  if (profile_class == "rotary") return "other";
  if (profile_class == "custom_allreduce") return "nccl";
  return profile_class;
}

}  // namespace specsim::profile
