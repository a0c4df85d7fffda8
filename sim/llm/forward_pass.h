// One forward pass of a model on one tensor-parallel group, as the ordered kernels each GPU runs
// (flops and device-memory bytes per GPU) and the collectives between them (payloads per GPU).
//
// Notation: T = batch * tokens_per_sequence tokens in the pass (a ragged batch, narrow_sequences
// r > 0: (b - r) * N + r), b = batch, N = tokens_per_sequence
// (1: decode, N: verify of N draft tokens), C = context_length (tokens already in the KV cache),
// h = hidden, t = tp, H/KV = attention / key-value heads, d = head_dim, V = vocab, I = dense
// intermediate; kvb = bytes per KV value, ab = bytes per GEMM input activation (the activation
// dtype); residual-stream and GEMM outputs are bf16 (2 B). Weight bytes of each GEMM are
// WeightBytes(format, n, k) (weight_format.h: values plus their block / group scales) with the
// format of its tensor class (attention, dense MLP, shared experts, routed experts, LM head):
// PassShape::weight_formats when set (e.g. the checkpoint's quantization_config), else
// FormatsFromDtypes(weight_dtype, expert_weight_dtype). Below, W = that byte count.
// Per GPU: Hl = H/t heads, KVl = KV/t kv heads, or 1 when KV < t (kv heads replicated t/KV times),
// Vl = ceil(V/t) (vocab-parallel, padded).
//
// GEMM (m, n, k per GPU; W weight bytes): flops = 2*m*n*k, bytes = W + m*k*ab + m*n*2.
// GEMMs run on the tensor cores of the activation dtype, or of the weight dtype when the weights
// are wider (int4 weights with bf16 activations: weight-only quantization, bf16 math).
//
//  embed          vocab-parallel lookup: bytes 2*T*h*2 (+ 4*T token ids); table V*h*2/t resident
//                 (bf16); at t>1 allreduce "embed_allreduce" T*h*2 B
//  per layer l:
//   input_norm    fused residual add + RMSNorm: bytes 4*T*h*2 (reads hidden and residual,
//                 writes both)
//   GQA:  qkv_proj GEMM n=(Hl+2*KVl)*d, k=h;
//         rope_kv_store: 2*T*(Hl+KVl)*d*2 + T*2*KVl*d*kvb;
//         attention: L = C_l + N positions per query, C_l = min(C, sliding_window) on sliding
//         layers (layer l slides when l % sliding_window_every == 0: gpt-oss's layer_types start
//         with sliding_attention), C otherwise.  bytes = b*L*2*KVl*d*kvb (each sequence's KV is
//         read once for its N queries) + 2*T*Hl*d*2;  flops = 4*T*Hl*d*L;  o_proj GEMM n=h, k=Hl*d
//   MLA (rq = q_lora_rank, rkv = kv_lora_rank, dn/dr/dv = qk_nope/qk_rope/v head dims), decode with
//         weight absorption: qkv_a_proj GEMM n=rq+rkv+dr, k=h, replicated on every GPU;
//         qkv_a_norm; q_b_proj GEMM n=Hl*(dn+dr), k=rq (rq = 0, no query compression as in
//         DeepSeek-V2-Lite: q_proj GEMM n=Hl*(dn+dr), k=h instead, and qkv_a_proj n=rkv+dr); q_absorb (per-head W_UK) flops
//         2*T*Hl*dn*rkv, weights Hl*dn*rkv*wb; rope_kv_store 2*T*Hl*dr*2 + T*(rkv+dr)*(2+kvb);
//         attention over the latent cache (rkv+dr values per token per layer, NOT split over TP:
//         every GPU holds its sequences' whole latent cache): bytes b*L*(rkv+dr)*kvb +
//         T*Hl*(2*rkv+dr)*2, flops 2*T*Hl*L*(2*rkv+dr); v_absorb (W_UV) flops 2*T*Hl*rkv*dv;
//         o_proj GEMM n=h, k=Hl*dv
//   attn_allreduce  t>1: T*h*2 B
//   post_attention_norm  4*T*h*2
//   dense MLP:    gate_up_proj GEMM n=2*I/t, k=h; act (SiLU*mul) T*(2I/t)*2 + T*(I/t)*ab;
//                 down_proj GEMM n=h, k=I/t; mlp_allreduce t>1: T*h*2 B
//   MoE (E routed, k per token, S shared, Im = moe_intermediate_size, D = expected distinct experts
//        touched by T tokens = ExpectedDistinctExperts(E, k, T), see experts.h):
//     ep = 1 (experts TP-sharded: every GPU holds 1/t of every expert):
//                 router (kRouter: gate GEMM n=E, k=h, bf16 weights replicated, + top-k; writes
//                 T*E*4 B); experts_gate_up grouped GEMM flops 2*T*k*(2Im/t)*h, weights read
//                 D*2*Im*h*eb/t, m = T*k/D tokens per expert; experts_act; experts_down flops
//                 2*T*k*h*Im/t, weights D*Im*h*eb/t; shared experts as a dense MLP with S*Im
//                 split over t; moe_sum (reads T*k*h*2, writes T*h*2); moe_allreduce T*h*2 B
//     ep = t (expert parallel over the TP GPUs, attention stays TP): each GPU takes a slice of
//                 Ts = ceil(T/ep) tokens of the (replicated) hidden states; router on Ts;
//                 moe_dispatch all-to-all Ts*k*h*2 B (the busiest GPU's send buffer, nccl-tests
//                 size); local experts (E/ep, whole) run T*k/ep routings: the same flops and, in
//                 expectation, the same weight bytes per GPU as TP (D/ep experts of whole size);
//                 moe_combine all-to-all Ts*k*h*2 B; shared experts replicated on every GPU, run on
//                 Ts tokens; moe_sum; moe_allgather T*h*2 B (output buffer) to restore the
//                 replicated residual stream for the next TP attention
//  final_norm, lm_head GEMM n=Vl, k=h (tied embeddings: no extra resident weights);
//  logits_allgather t>1: T*Vl*t*logit_bytes B (gathered output buffer; SGLang and vLLM gather the
//  GEMM's bf16 output and cast to fp32 afterwards: logit_bytes = 2 by default);
//  sampling (replicated on every GPU): cast to fp32 and one softmax/top-k read: T*V*(2+4+4) B.
// Norm weights (h*2 B) are counted in the resident weights.
//
// CommPoint::bytes is the per-GPU buffer in nccl-tests' sense: allreduce = the buffer, all-gather =
// the gathered output, all-to-all = the whole send buffer (of which 1/n stays local).
//
// Simplified: decode/verify only (no prefill or chunked prefill); no overlap of communication with
// compute and no fusion of the allreduce with the next norm; the tree mask of a verify pass is
// treated as full attention over C + N; routing is uniform and independent (expected distinct
// experts, no load imbalance: with EP the busiest GPU would see more); biases, QK-norm (Qwen3),
// attention sinks (gpt-oss) and the router's bias correction are ignored; the embedding table and
// norms stay bf16 whatever the weight dtype; MTP/EAGLE-3 drafts share the target's embedding and
// (MTP) LM head, counted in the target's resident weights.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/compute/kernel.h"
#include "sim/core/status.h"
#include "sim/llm/model.h"
#include "sim/llm/weight_format.h"

namespace specsim::llm {

struct ParallelSpec {
  int tp = 1;  // tensor parallel degree = GPUs in the group
  int ep = 1;  // 1, or tp: MoE routed experts spread over ep GPUs (attention stays TP)
};

// How a layer's small ops are launched (framework.proto KernelInventory): the fused kernels of the
// pass above (one kernel each for the residual add + RMSNorm, for rotary + KV store, for SiLU x up)
// or separate ones, as SGLang, vLLM or plain PyTorch launch them:
//   add_norm false:      residual_add (reads 2, writes 1: 3*T*w*2) then an RMSNorm of 2 passes
//                        (2*T*w*2), for every norm that takes the residual;
//   rope_kv_store false: `rotary_kernels` rotary kernels, each reading and writing what it rotates:
//                        per tensor (rotary_per_tensor: q with Hl heads and k with KVl heads apart,
//                        2*T*heads*d*2 each) or q and k together (2*T*(Hl+KVl)*d*2); then
//                        `kv_store_kernels` (1: K and V together, 2: apart) cache writes, T*KVl*d*
//                        (2 + kvb) per tensor;
//   activation false:    silu (T*il*(2+2)) then mul (T*il*(3*2));
//   query_copy:          with more than one token in the pass, the query made contiguous before the
//                        attention (2*T*Hl*d*2);
//   merge_heads_copy:    at q > 1 the attention output [b, H, q, d] copied to [b*q, H*d] (2*T*Hl*d*2);
//   strided_views:       the separate kernels run on views, PyTorch's strided elementwise kernel
//                        (Kernel::strided, priced by the strided elementwise ramp): the rotary
//                        kernels but the last (the slices, the broadcast cos / sin, the cat), the last
//                        above one token, the cache writes, the mask's `where`, SiLU and mul above one
//                        token (chunks of [T, 2I]), the copies; the residual adds and fills are
//                        vectorized (traces/torch-kernel-probe/h200-1x-2026-12-04.kineto.rank0.json.gz);
//   mask_bias_above_q1:  at q > 1 the boolean [q, L] mask turned into an additive bias before the
//                        attention (PyTorch's SDPA with a boolean mask on cuDNN's kernel, which takes
//                        GQA natively: no K/V expansion): a `where` of q*L*(1+2) B and two fills of
//                        q*pad16(L)*2 B (the kernels before cuDNN's SDPA at q >= 2 in
//                        traces/torch-kernel-probe/h200-1x-2026-12-04.kineto.rank0.json.gz).
// MLA layers keep their fused kernels (no MLA inventory is modelled).
struct KernelInventory {
  bool add_norm = true;
  bool rope_kv_store = true;
  int rotary_kernels = 1;
  bool rotary_per_tensor = false;
  int kv_store_kernels = 1;
  bool activation = true;
  bool query_copy = false;
  bool merge_heads_copy = false;
  bool mask_bias_above_q1 = false;
  bool strided_views = false;
  bool Fused() const {
    return add_norm && rope_kv_store && activation && !query_copy && !merge_heads_copy && !mask_bias_above_q1;
  }
  // For reports: "fused: ..." or the separate kernels it launches.
  std::string Describe() const;
};

struct PassShape {
  int batch = 1;
  int tokens_per_sequence = 1;  // 1: decode; N: verify of N tokens per sequence
  // A ragged batch (vLLM's n-gram sequences without a match, sim/llm/ngram.h): this many of the
  // batch's sequences run one token, the rest tokens_per_sequence. Every op but attention runs over
  // the T = (batch - r) N + r tokens; attention is priced at the full width, b sequences of N
  // (an upper bound; exact where a sequence's G N rows fit one row tile, as one and N rows then
  // take the same tiles and read the same cache). 0 <= r <= batch.
  int narrow_sequences = 0;
  int context_length = 0;  // tokens already in the KV cache per sequence
  compute::DType weight_dtype = compute::DType::kBf16;
  compute::DType activation_dtype = compute::DType::kBf16;
  compute::DType kv_dtype = compute::DType::kBf16;
  // Routed experts only; unset = weight_dtype (e.g. Kimi-K2-Thinking: int4 experts, bf16
  // elsewhere).
  std::optional<compute::DType> expert_weight_dtype;
  // Per-tensor-class weight formats (e.g. FormatsFromCheckpoint(model.quantization)); set, they
  // replace weight_dtype and expert_weight_dtype.
  std::optional<WeightFormats> weight_formats;
  // Bytes per gathered logit (2: bf16 gather, see the header comment).
  int logit_bytes = 2;
  // The framework's kernels for the layer's small ops (fused by default).
  KernelInventory inventory;
};

enum class CommKind { kAllReduce, kAllGather, kAllToAll };
const char* CommKindName(CommKind k);

struct CommPoint {
  CommKind kind = CommKind::kAllReduce;
  int64_t bytes = 0;  // the full buffer per GPU in nccl-tests' sense (see the header comment)
  std::string name;   // e.g. "layer3.attn_allreduce"
};

struct PassStep {
  enum Kind { kKernel, kComm } kind = kKernel;
  compute::Kernel kernel;  // valid when kind == kKernel
  CommPoint comm;          // valid when kind == kComm
  int layer = -1;          // decoder layer, -1 outside the layers
};

struct ForwardPass {
  std::string model;
  ParallelSpec parallel;
  PassShape shape;
  int64_t tokens = 0;                    // T = batch * tokens_per_sequence (ragged: see PassShape)
  std::vector<PassStep> steps;           // in execution order
  double weight_bytes_per_gpu = 0;       // resident weights this pass owns (all experts)
  double weight_bytes_read_per_gpu = 0;  // weights this pass reads (distinct experts only)
  double kv_bytes_read_per_gpu = 0;      // KV cache bytes read by attention
  double expected_distinct_experts = 0;  // per MoE layer (0 for dense models)

  int num_kernels() const;
  int num_comms() const;
  int num_comms(CommKind kind) const;
  double flops_per_gpu() const;  // sum over kernels
  double bytes_per_gpu() const;  // sum over kernels
  std::vector<compute::Kernel> kernels() const;
  std::vector<CommPoint> comms() const;
};

// The target model's forward pass over T = batch * tokens_per_sequence tokens.
// Errors (InvalidArgument) name the field: tp not dividing the heads, ep not 1 or tp, ...
StatusOr<ForwardPass> BuildForwardPass(const ModelSpec& model, const ParallelSpec& parallel, const PassShape& shape);

// One EAGLE-3 draft forward (docs/reference/speculative-decoding.md): shared target embedding (+ its allreduce);
// `apply_fc`: the FC fusing 3 target hidden states (3h -> h, a plain replicated Linear in SGLang),
// run when the input comes from the target (first draft step, draft extend) and skipped on later
// steps that feed the draft's own hidden state; one decoder layer whose q/k/v take 2h inputs
// (embedding and hidden state concatenated, two input norms), its MLP; its own LM head over
// draft_vocab_size (vocab-parallel) with the logits gather and sampling. Resident weights exclude
// the shared embedding. Errors unless draft.is_eagle3() and draft.hidden_size ==
// target.hidden_size. parallel.ep is ignored (the head has no experts; it runs TP over
// parallel.tp). shape.weight_dtype is the head's own (EAGLE-3 heads ship in bf16 even for quantized
// targets).
StatusOr<ForwardPass> BuildEagle3DraftPass(const ModelSpec& draft, const ModelSpec& target,
                                           const ParallelSpec& parallel, const PassShape& shape, bool apply_fc = true);

// One MTP (NEXTN) draft forward: shared embedding (+ allreduce), enorm and hnorm, eh_proj (2h -> h,
// replicated), one extra target-shaped decoder layer (an MoE layer for DeepSeek-V3/Kimi-K2), a
// final norm and the target's shared LM head (+ gather, sampling). Resident weights: eh_proj, the
// layer and its norms.
StatusOr<ForwardPass> BuildMtpDraftPass(const ModelSpec& target, const ParallelSpec& parallel, const PassShape& shape);

// KV cache bytes per GPU for `batch` sequences of `context` tokens each: sum over layers of
// batch * min(context, window_l) * per-token bytes (GQA: 2*KVl*d*kvb; MLA: (rkv+dr)*kvb, not split
// over TP). Assumes a hybrid pool that keeps only the window for sliding layers.
double KvCacheBytesPerGpu(const ModelSpec& model, const ParallelSpec& parallel, compute::DType kv_dtype, int64_t batch,
                          int64_t context);

// Checks the model's shape against the parallel spec (the errors BuildForwardPass returns).
Status ValidateForPass(const ModelSpec& model, const ParallelSpec& parallel);

}  // namespace specsim::llm
