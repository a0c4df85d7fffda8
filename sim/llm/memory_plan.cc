#include "sim/llm/memory_plan.h"

#include <algorithm>
#include <cstdio>

namespace specsim::llm {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

std::string Printf(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), fmt, a, b, c);
  return buf;
}

// Live input + output of the largest GEMM in the pass (grouped GEMMs over all their routings).
double LargestGemmActivations(const ForwardPass& pass) {
  double best = 0;
  for (const PassStep& step : pass.steps) {
    if (step.kind != PassStep::kKernel) continue;
    const compute::Kernel& k = step.kernel;
    if (k.kernel_class != compute::KernelClass::kGemm && k.kernel_class != compute::KernelClass::kGroupedGemm) {
      continue;
    }
    if (k.n <= 0 || k.k <= 0) continue;
    const double rows = k.flops / (2 * k.n * k.k);
    best = std::max(best, rows * (k.n + k.k) * 2);
  }
  return best;
}

PassShape ShapeFor(const ServingShape& s, compute::DType weights) {
  PassShape p;
  p.batch = s.batch;
  p.tokens_per_sequence = s.max_tokens_per_sequence;
  p.context_length = s.max_context;
  p.weight_dtype = weights;
  p.expert_weight_dtype = s.expert_weight_dtype;
  p.activation_dtype = s.activation_dtype;
  p.kv_dtype = s.kv_dtype;
  p.logit_bytes = s.logit_bytes;
  return p;
}

}  // namespace

StatusOr<MemoryPlan> PlanMemory(const ModelSpec& target, const std::optional<ModelSpec>& draft,
                                const ParallelSpec& parallel, const ServingShape& serving, const net::GpuSpec& gpu,
                                const CommBufferSpec& comm, const RuntimeMemorySpec& runtime) {
  if (!(gpu.memory_gib > 0)) {
    return InvalidArgumentError("gpu_specs[" + gpu.name + "].memory_gib = " + std::to_string(gpu.memory_gib) +
                                ": must be > 0");
  }
  if (serving.max_context < 1) {
    return InvalidArgumentError("ServingShape.max_context = " + std::to_string(serving.max_context) + ": must be >= 1");
  }
  if (draft.has_value() && serving.mtp_draft) {
    return InvalidArgumentError("ServingShape.mtp_draft is set and an EAGLE-3 draft is given: pick one");
  }
  const PassShape shape = ShapeFor(serving, serving.weight_dtype);
  ASSIGN_OR_RETURN(ForwardPass pass, BuildForwardPass(target, parallel, shape));

  MemoryPlan plan;
  const int tp = parallel.tp;
  plan.title = target.name;
  auto add = [&](std::string name, double bytes, std::string note) {
    plan.lines.push_back({std::move(name), bytes, std::move(note)});
  };
  add("weights", pass.weight_bytes_per_gpu,
      std::string(compute::DTypeName(serving.weight_dtype)) +
          (serving.expert_weight_dtype ? std::string(", experts ") + compute::DTypeName(*serving.expert_weight_dtype)
                                       : std::string()) +
          ", TP" + std::to_string(tp) + (parallel.ep > 1 ? " EP" + std::to_string(parallel.ep) : ""));

  double draft_kv = 0;
  double logits_vocab = target.vocab_size;
  if (draft.has_value()) {
    ASSIGN_OR_RETURN(ForwardPass d, BuildEagle3DraftPass(*draft, target, ParallelSpec{tp, 1},
                                                         ShapeFor(serving, serving.draft_weight_dtype)));
    plan.title += " + " + draft->name;
    add("draft weights", d.weight_bytes_per_gpu,
        std::string("EAGLE-3 head, ") + compute::DTypeName(serving.draft_weight_dtype));
    ModelSpec one = *draft;
    one.num_layers = 1;
    one.sliding_window = 0;
    draft_kv = KvCacheBytesPerGpu(one, ParallelSpec{tp, 1}, serving.kv_dtype, serving.batch, serving.max_context);
  } else if (serving.mtp_draft) {
    ASSIGN_OR_RETURN(ForwardPass d, BuildMtpDraftPass(target, parallel, shape));
    plan.title += " + MTP";
    add("draft weights", d.weight_bytes_per_gpu, std::string("MTP layer, ") + compute::DTypeName(serving.weight_dtype));
    ModelSpec one = target;
    one.num_layers = 1;
    one.sliding_window = 0;
    draft_kv = KvCacheBytesPerGpu(one, parallel, serving.kv_dtype, serving.batch, serving.max_context);
  }
  plan.title +=
      ", TP" + std::to_string(tp) + (parallel.ep > 1 ? " EP" + std::to_string(parallel.ep) : "") + " on " + gpu.name;

  const double kv = KvCacheBytesPerGpu(target, parallel, serving.kv_dtype, serving.batch, serving.max_context);
  add("KV cache", kv,
      std::to_string(serving.batch) + " x " + std::to_string(serving.max_context) + " tokens, " +
          compute::DTypeName(serving.kv_dtype));
  if (draft_kv > 0) add("draft KV cache", draft_kv, "one layer");

  const double T = static_cast<double>(pass.tokens);
  const double act = 4 * T * target.hidden_size * 2 + LargestGemmActivations(pass) +
                     T * logits_vocab * (serving.logit_bytes + 4) + runtime.workspace_mib * kMiB;
  add("activations + workspace", act, Printf("%.0f tokens; workspace %.0f MiB", T, runtime.workspace_mib));

  double nccl = 0;
  std::string nccl_note = "no NCCL (TP1)";
  if (tp > 1) {
    nccl = comm.nccl_communicators * comm.nccl_channels * comm.nccl_connections_per_channel *
           (comm.nccl_simple_buffer_mib + comm.nccl_ll_buffer_mib + comm.nccl_ll128_buffer_mib) * kMiB;
    nccl_note = Printf("%.0f comms x %.0f ch x %.0f conn", comm.nccl_communicators, comm.nccl_channels,
                       comm.nccl_connections_per_channel);
    if (parallel.ep > 1) {
      nccl += (parallel.ep - 1) * comm.nccl_p2p_channels_per_peer * comm.nccl_p2p_buffer_mib * kMiB;
      nccl_note += "; all-to-all P2P buffers";
    }
    nccl += comm.custom_allreduce_mib * kMiB;
    if (comm.custom_allreduce_mib > 0) nccl_note += "; custom allreduce";
  }
  add("communication buffers", nccl, nccl_note);
  add("CUDA graph pool", runtime.cuda_graph_pool_gib * kGiB, "");
  add("runtime reserve", runtime.runtime_reserve_gib * kGiB, "CUDA context, allocator slack");

  for (const MemoryLine& l : plan.lines) plan.total_bytes += l.bytes;
  plan.capacity_bytes = gpu.memory_gib * kGiB;
  plan.fits = plan.total_bytes <= plan.capacity_bytes;
  return plan;
}

std::string FormatMemoryPlan(const MemoryPlan& plan) {
  std::string out = "Memory per GPU: " + plan.title + "\n";
  char buf[512];
  for (const MemoryLine& l : plan.lines) {
    std::snprintf(buf, sizeof(buf), "  %-24s %10.2f GiB  %s\n", l.name.c_str(), l.bytes / kGiB, l.note.c_str());
    out += buf;
  }
  std::snprintf(buf, sizeof(buf), "  %-24s %10.2f GiB\n  %-24s %10.2f GiB\n", "total", plan.total_bytes / kGiB,
                "capacity", plan.capacity_bytes / kGiB);
  out += buf;
  if (plan.fits) {
    std::snprintf(buf, sizeof(buf), "  fits: %.2f GiB free\n", plan.free_bytes() / kGiB);
  } else {
    std::snprintf(buf, sizeof(buf), "  DOES NOT FIT: %.2f GiB short\n", -plan.free_bytes() / kGiB);
  }
  out += buf;
  return out;
}

}  // namespace specsim::llm
