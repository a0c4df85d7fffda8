#include "sim/llm/memory_plan.h"

#include <fmt/format.h>

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

// `target`: the pass is the target's (or its MTP layer's): serving.weight_formats apply.
PassShape ShapeFor(const ServingShape& s, compute::DType weights, bool target) {
  PassShape p;
  if (target) p.weight_formats = s.weight_formats;
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

// InvalidArgument for a GPU without memory, no context, or two drafts.
Status CheckMemoryInputs(const std::optional<ModelSpec>& draft, const ServingShape& serving, const net::GpuSpec& gpu) {
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
  return OkStatus();
}

// ", TP8" or ", TP8 EP8".
std::string ParallelismSuffix(const ParallelSpec& parallel) {
  return ", TP" + std::to_string(parallel.tp) + (parallel.ep > 1 ? " EP" + std::to_string(parallel.ep) : "");
}

std::string WeightsNote(const ServingShape& serving, const ParallelSpec& parallel) {
  if (serving.weight_formats) {
    const WeightFormats& f = *serving.weight_formats;
    return "checkpoint: " + WeightFormatName(f.attention) +
           (f.routed_experts == f.attention ? std::string() : ", experts " + WeightFormatName(f.routed_experts)) +
           ParallelismSuffix(parallel);
  }
  return std::string(compute::DTypeName(serving.weight_dtype)) +
         (serving.expert_weight_dtype ? std::string(", experts ") + compute::DTypeName(*serving.expert_weight_dtype)
                                      : std::string()) +
         ParallelismSuffix(parallel);
}

// The draft's weights line (an EAGLE-3 head, or the target's MTP layer; none without a draft),
// its name in the title; returns the draft's KV cache bytes (one layer), 0 without a draft.
StatusOr<double> AddDraftWeights(const ModelSpec& target, const std::optional<ModelSpec>& draft,
                                 const ParallelSpec& parallel, const ServingShape& serving, const PassShape& shape,
                                 MemoryPlan* plan) {
  const int tp = parallel.tp;
  if (draft.has_value() && serving.standalone_draft) {
    // Both frameworks size the draft's KV cache for as many tokens as the target's (SGLang:
    // draft_runner_cache_size = the target's max_total_num_tokens; vLLM: one block table for both).
    ASSIGN_OR_RETURN(ForwardPass d, BuildForwardPass(*draft, ParallelSpec{tp, 1},
                                                     ShapeFor(serving, serving.draft_weight_dtype, /*target=*/false)));
    plan->title += " + " + draft->name;
    plan->lines.push_back({"draft weights", d.weight_bytes_per_gpu,
                           std::string("standalone draft model, ") + compute::DTypeName(serving.draft_weight_dtype) +
                               ", TP" + std::to_string(tp)});
    return KvCacheBytesPerGpu(*draft, ParallelSpec{tp, 1}, serving.kv_dtype, serving.batch, serving.max_context);
  }
  if (draft.has_value()) {
    ASSIGN_OR_RETURN(ForwardPass d,
                     BuildEagle3DraftPass(*draft, target, ParallelSpec{tp, 1},
                                          ShapeFor(serving, serving.draft_weight_dtype, /*target=*/false)));
    plan->title += " + " + draft->name;
    plan->lines.push_back({"draft weights", d.weight_bytes_per_gpu,
                           std::string("EAGLE-3 head, ") + compute::DTypeName(serving.draft_weight_dtype)});
    ModelSpec one = *draft;
    one.num_layers = 1;
    one.sliding_window = 0;
    return KvCacheBytesPerGpu(one, ParallelSpec{tp, 1}, serving.kv_dtype, serving.batch, serving.max_context);
  }
  if (serving.mtp_draft) {
    ASSIGN_OR_RETURN(ForwardPass d, BuildMtpDraftPass(target, parallel, shape));
    plan->title += " + MTP";
    plan->lines.push_back(
        {"draft weights", d.weight_bytes_per_gpu,
         std::string("MTP layer, ") +
             (serving.weight_formats ? "checkpoint formats" : compute::DTypeName(serving.weight_dtype))});
    ModelSpec one = target;
    one.num_layers = 1;
    one.sliding_window = 0;
    return KvCacheBytesPerGpu(one, parallel, serving.kv_dtype, serving.batch, serving.max_context);
  }
  return 0.0;
}

// The largest pass's live activations plus the fixed workspace (memory_plan.h).
MemoryLine ActivationsLine(const ForwardPass& pass, const ModelSpec& target, const ServingShape& serving,
                           const RuntimeMemorySpec& runtime) {
  const double logits_vocab = target.vocab_size;
  const double T = static_cast<double>(pass.tokens);
  const double act = 4 * T * target.hidden_size * 2 + LargestGemmOf(pass, /*layers_only=*/false).in_out +
                     T * logits_vocab * (serving.logit_bytes + 4) + runtime.workspace_mib * kMiB;
  return {"activations + workspace", act, Printf("%.0f tokens; workspace %.0f MiB", T, runtime.workspace_mib)};
}

// NCCL's buffers (and the all-to-all's with EP) plus the custom allreduce's; none on one GPU.
MemoryLine CommunicationBuffersLine(const CommBufferSpec& comm, const ParallelSpec& parallel) {
  double nccl = 0;
  std::string nccl_note = "no NCCL (TP1)";
  if (parallel.tp > 1) {
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
  return {"communication buffers", nccl, nccl_note};
}

}  // namespace

StatusOr<MemoryPlan> PlanMemory(const ModelSpec& target, const std::optional<ModelSpec>& draft,
                                const ParallelSpec& parallel, const ServingShape& serving, const net::GpuSpec& gpu,
                                const CommBufferSpec& comm, const RuntimeMemorySpec& runtime) {
  RETURN_IF_ERROR(CheckMemoryInputs(draft, serving, gpu));
  const PassShape shape = ShapeFor(serving, serving.weight_dtype, /*target=*/true);
  ASSIGN_OR_RETURN(ForwardPass pass, BuildForwardPass(target, parallel, shape));

  MemoryPlan plan;
  plan.title = target.name;
  plan.lines.push_back({"weights", pass.weight_bytes_per_gpu, WeightsNote(serving, parallel)});
  ASSIGN_OR_RETURN(const double draft_kv, AddDraftWeights(target, draft, parallel, serving, shape, &plan));
  plan.title += ParallelismSuffix(parallel) + " on " + gpu.name;

  const double kv = KvCacheBytesPerGpu(target, parallel, serving.kv_dtype, serving.batch, serving.max_context);
  plan.lines.push_back({"KV cache", kv,
                        std::to_string(serving.batch) + " x " + std::to_string(serving.max_context) + " tokens, " +
                            compute::DTypeName(serving.kv_dtype)});
  if (draft_kv > 0)
    plan.lines.push_back({"draft KV cache", draft_kv, serving.standalone_draft ? "all its layers" : "one layer"});
  plan.lines.push_back(ActivationsLine(pass, target, serving, runtime));
  plan.lines.push_back(CommunicationBuffersLine(comm, parallel));
  if (runtime.graph_pool) {
    // The largest captured graph's pass: its tokens as one batch of single tokens (the pool's
    // intermediates depend on the tokens, not on how they split into sequences).
    int64_t largest = 1;
    for (int64_t t : runtime.graph_pool->captured_tokens) largest = std::max(largest, t);
    PassShape big = shape;
    big.batch = static_cast<int>(std::min<int64_t>(largest, 1 << 24));
    big.tokens_per_sequence = 1;
    ASSIGN_OR_RETURN(ForwardPass graph, BuildForwardPass(target, parallel, big));
    const GraphPoolBytes g = CudaGraphPool(graph, target, *runtime.graph_pool);
    plan.lines.push_back({"CUDA graph pool", g.total(),
                          fmt::format("{} graphs up to {} tokens: workspace {:.0f} + intermediates {:.0f} + outputs "
                                      "{:.0f} + slack {:.0f} MiB",
                                      runtime.graph_pool->captured_tokens.size(), largest, g.workspace / kMiB,
                                      g.intermediates / kMiB, g.outputs / kMiB, g.allocator_slack / kMiB)});
  } else {
    plan.lines.push_back({"CUDA graph pool", 0, "no CUDA graphs"});
  }
  plan.lines.push_back({"runtime reserve", runtime.runtime_reserve_gib * kGiB, "CUDA context, allocator slack"});

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
