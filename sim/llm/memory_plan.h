// Per-GPU memory of a serving deployment: what must live on each GPU of the tensor-parallel group
// before the first request, and whether it fits.
//
//   weights        BuildForwardPass(...).weight_bytes_per_gpu: all resident weights of the target
//                  (every expert, vocab-parallel embedding and LM head, replicated pieces counted
//                  whole), in the serving weight dtype with its scales (weight_format.h), or in
//                  the per-tensor formats of serving.weight_formats
//   draft weights  EAGLE-3 head (FC, one layer, draft LM head; the embedding is the target's)
//                  or the MTP layer (eh_proj + one target layer; embedding and head shared)
//   KV cache       KvCacheBytesPerGpu(batch, max_context) for the target, plus the draft's layer
//   activations    live activations of the largest pass (T = batch * max_tokens_per_sequence):
//                  the residual stream, norm output and attention output (4*T*h*2 B), plus the
//                  largest GEMM's input + output (m*(n+k)*2 B over the pass's GEMMs, grouped GEMMs
//                  counted over all their routings), plus the logits (T*V*(logit_bytes + 4) B:
//                  gathered and fp32), plus a fixed workspace (RuntimeMemorySpec)
//   communication  NCCL: communicators * channels * receive connections per channel * (Simple + LL
//                  (+ LL128) buffer) per GPU; with EP also (ep-1) peers * p2p channels * the P2P
//                  buffer for the all-to-all; plus the custom-allreduce buffer if one is used
//   CUDA graphs    the graph memory pool (RuntimeMemorySpec)
//   runtime        CUDA context, library modules, allocator slack (RuntimeMemorySpec)
// Capacity is GpuSpec::memory_gib * 2^30; fits = total <= capacity.
//
// Simplified: serving frameworks size the KV pool from what is left (SGLang's mem_fraction_static)
// rather than from batch * max_context; here the KV line is what the stated batch and context need.
// Fragmentation, pinned host buffers and multiple graph batch sizes are folded into the constants.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/compute/kernel.h"
#include "sim/core/status.h"
#include "sim/llm/forward_pass.h"
#include "sim/llm/graph_pool.h"
#include "sim/llm/model.h"
#include "sim/net/topology.h"

namespace specsim::llm {

struct ServingShape {
  int batch = 1;                    // concurrent sequences
  int max_context = 4096;           // tokens per sequence the KV cache must hold
  int max_tokens_per_sequence = 1;  // tokens per sequence in the largest pass (verify: N)
  compute::DType weight_dtype = compute::DType::kBf16;
  std::optional<compute::DType> expert_weight_dtype;  // routed experts; unset = weight_dtype
  compute::DType activation_dtype = compute::DType::kBf16;
  compute::DType kv_dtype = compute::DType::kBf16;
  compute::DType draft_weight_dtype = compute::DType::kBf16;  // EAGLE-3 heads ship in bf16
  // The target's per-tensor weight formats (e.g. FormatsFromCheckpoint(target.quantization)); set,
  // they replace weight_dtype and expert_weight_dtype for the target and its MTP layer.
  std::optional<WeightFormats> weight_formats;
  bool mtp_draft = false;  // draft with the target's MTP (NEXTN) layer (no `draft` model then)
  // `draft` is a standalone draft model (DRAFT_MODEL), not an EAGLE-3 head: its whole weights
  // sharded over the TP group and a KV cache for all its layers.
  bool standalone_draft = false;
  int logit_bytes = 2;
};

// NCCL and custom-allreduce buffers. Defaults follow NCCL's source constants; channel counts are
// what NCCL typically builds on PCIe boxes and should be set from the run's NCCL_DEBUG=INFO log.
struct CommBufferSpec {
  // SGLang holds two NCCL communicators over the TP group: torch.distributed's and its own PyNccl.
  int nccl_communicators = 2;
  // Collective channels per communicator. On 8x PCIe Gen5 boxes NCCL's search usually finds 2 rings
  // and duplicates them (docs/reference/nccl-cost-model.md): 4. NVLink boxes: 16-32.
  int nccl_channels = 4;
  // Receive connections per channel holding buffers on this GPU: 1 for the ring (from the previous
  // rank), up to 3 more for the tree (parent and children); 2 assumes ring + a tree parent.
  int nccl_connections_per_channel = 2;
  // NCCL_BUFFSIZE default: 4 MiB per connection (Simple).
  double nccl_simple_buffer_mib = 4;
  // DEFAULT_LL_BUFFSIZE = NCCL_LL_LINES_PER_THREAD (8) * NCCL_LL_MAX_NTHREADS (512) * NCCL_STEPS
  // (8)
  // * 16-byte lines = 512 KiB.
  double nccl_ll_buffer_mib = 0.5;
  // DEFAULT_LL128_BUFFSIZE = 120 elems * 640 threads * 8 steps * 8 B = 4.69 MiB when LL128 is
  // enabled; NCCL disables it on PCIe (docs/reference/nccl-cost-model.md): 0.
  double nccl_ll128_buffer_mib = 0;
  // All-to-all (EP only): P2P buffer per peer per p2p channel (chunk size 512 KiB * NCCL_STEPS 8 =
  // 4 MiB) and p2p channels per peer.
  double nccl_p2p_buffer_mib = 4;
  int nccl_p2p_channels_per_peer = 1;
  // Custom allreduce (vLLM/SGLang): registered IPC buffer; 0 when not used (disabled on PCIe with
  // more than 2 GPUs, docs/reference/allreduce-algorithms.md). vLLM's default maximum size is 8 MiB, doubled for
  // its in/out buffers: 16 when enabled.
  double custom_allreduce_mib = 0;
};

struct RuntimeMemorySpec {
  // Attention and GEMM workspaces: vLLM's FlashInfer workspace buffer (256 MiB) + cuBLAS workspace
  // (32 MiB on Hopper per the cuBLAS documentation).
  double workspace_mib = 288;
  // The CUDA-graph memory pool (graph_pool.h: the cuBLAS workspace of the capture stream, the
  // largest graph's intermediates, the outputs kept, one allocator segment); nullopt: no graphs.
  std::optional<GraphPoolSpec> graph_pool;
  // CUDA context (with lazy module loading ~0.3-0.6 GiB as nvidia-smi shows for an idle PyTorch
  // process), library kernels, allocator fragmentation slack.
  double runtime_reserve_gib = 1.0;
};

struct MemoryLine {
  std::string name;
  double bytes = 0;
  std::string note;
};

struct MemoryPlan {
  std::string title;              // model, draft, parallelism, GPU
  std::vector<MemoryLine> lines;  // per GPU
  double total_bytes = 0;
  double capacity_bytes = 0;
  bool fits = false;
  double free_bytes() const { return capacity_bytes - total_bytes; }
};

// `draft`: an EAGLE-3 head, or nullopt (then serving.mtp_draft selects the MTP layer, or no draft).
// Errors: the forward-pass errors (shapes vs parallelism), a bad shape, a GPU without memory.
StatusOr<MemoryPlan> PlanMemory(const ModelSpec& target, const std::optional<ModelSpec>& draft,
                                const ParallelSpec& parallel, const ServingShape& serving, const net::GpuSpec& gpu,
                                const CommBufferSpec& comm = {}, const RuntimeMemorySpec& runtime = {});

// A readable table: one line per item in GiB with its note, the total, the capacity and the
// verdict.
std::string FormatMemoryPlan(const MemoryPlan& plan);

}  // namespace specsim::llm
