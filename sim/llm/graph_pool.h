// The CUDA-graph memory pool a serving framework's graph runner fills (measured:
// traces/torch-graph-pool/, validate/torch_graph_pool_probe.py). The runners capture one graph
// per batch size into one shared pool, largest first (sgl-project/sglang
// python/sglang/srt/model_executor/cuda_graph_runner.py @0021673 CudaGraphRunner.capture "Reverse
// the order to enable better memory sharing"; vllm-project/vllm vllm/compilation/cuda_graph.py
// @018fe84 CUDAGraphWrapper into the global graph pool, v1/worker/gpu_model_runner.py @000fc94
// capture_model "Capture the large shapes first"), so the pool holds:
//   the cuBLAS workspace PyTorch allocates for the capture stream (CublasHandlePool.cpp
//     parseChosenWorkspaceSize: 32 MiB on sm90, 4096 KiB x 2 + 16 KiB x 8 elsewhere);
//   the largest graph's live intermediates at their peak, which the smaller graphs reuse:
//     the residual stream (4 T h bytes in and out, bf16), the layers' largest GEMM's input and output
//     (the LM head's output is the graph's output), and
//     the activation's two outputs (silu(gate), its product with up) as large as that GEMM's output;
//   the outputs the runner keeps: every captured graph's own (SGLang's older runner: output_buffers
//     per batch size, cuda_graph_runner.py @0021673), one buffer of the largest's (SGLang's newer
//     runner: graph_shared_output.py @252129a GraphSharedOutput), or none (vLLM v1: the graph ends
//     at the hidden states, its outputs held as weak references, cuda_graph.py @018fe84);
//   one allocator segment of slack: PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp
//     kSmallBuffer 2 MiB, kLargeBuffer 20 MiB, kMinLargeAlloc 10 MiB) packs allocations of 1-10 MiB
//     into 20 MiB segments, smaller ones into 2 MiB: 20 MiB when one of the largest graph's tensors
//     is 1-10 MiB, else 2 MiB.
// Simplified: one allocator segment of slack, not the allocator's block-by-block packing (a graph
// of odd sizes may reserve a segment or two more); the intermediates of a dense layer's MLP stand for
// the peak (an MoE layer's grouped GEMM enters as its largest GEMM).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/llm/forward_pass.h"

namespace specsim::llm {

struct GraphPoolSpec {
  enum class Outputs { kKeptPerSize, kOneSharedBuffer, kNotKept };
  Outputs outputs = Outputs::kNotKept;
  double output_bytes_per_token = 0;     // what one captured token's output holds
  std::vector<int64_t> captured_tokens;  // every captured graph's tokens (batch x tokens per sequence)
  double library_workspace_bytes = 0;    // CublasWorkspaceBytes of the GPU
};

// The largest GEMM of a pass by its live activations: rows x (n + k) x 2 bytes (input and output,
// grouped GEMMs over all their routings) and its output rows x n x 2. `layers_only`: the decoder
// layers' GEMMs (not the LM head, whose output a graph keeps as its output).
struct LargestGemmBytes {
  double in_out = 0, out = 0;
};
LargestGemmBytes LargestGemmOf(const ForwardPass& pass, bool layers_only);

struct GraphPoolBytes {
  double workspace = 0, intermediates = 0, outputs = 0, allocator_slack = 0;
  double total() const { return workspace + intermediates + outputs + allocator_slack; }
};

// The pool of `spec`'s graphs; `largest`: the forward pass of the largest captured graph.
// REQUIRES: spec.captured_tokens non-empty, every entry >= 1.
GraphPoolBytes CudaGraphPool(const ForwardPass& largest, const ModelSpec& model, const GraphPoolSpec& spec);

// PyTorch's cuBLAS workspace per (handle, stream): 32 MiB on sm90, 8 MiB + 128 KiB elsewhere
// (aten/src/ATen/cuda/CublasHandlePool.cpp @26a3905 parseChosenWorkspaceSize).
double CublasWorkspaceBytes(const std::string& gpu_arch);

// The batch sizes a list formula gives up to `largest`: `small` first, then every `step` from the
// first multiple of it above the small ones, and `largest` itself (as the frameworks' capture lists).
std::vector<int64_t> CaptureSizes(const std::vector<int>& small, int step, int largest);

}  // namespace specsim::llm
