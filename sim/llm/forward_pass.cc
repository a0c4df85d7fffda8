#include "sim/llm/forward_pass.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "sim/llm/experts.h"

namespace specsim::llm {
namespace {

using compute::DType;
using compute::DTypeBytes;
using compute::Kernel;
using compute::KernelClass;

constexpr double kBf16 = 2.0;  // residual stream, GEMM outputs, norm weights, embedding table

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string Field(const ModelSpec& m, const std::string& field, int64_t value) {
  return "model " + m.name + ": " + field + " = " + std::to_string(value);
}

bool HasDenseLayers(const ModelSpec& m) { return !m.is_moe() || m.moe.first_dense_layers > 0; }

bool IsSlidingLayer(const ModelSpec& m, int layer) {
  return m.sliding_window > 0 && m.sliding_window_every > 0 && layer % m.sliding_window_every == 0;
}

// The tensor cores a GEMM runs on: the activation dtype unless the weights are wider.
DType MathDtype(DType weight, DType activation) {
  return DTypeBytes(weight) > DTypeBytes(activation) ? weight : activation;
}

int KvHeadsPerGpu(const ModelSpec& m, int tp) { return m.num_key_value_heads >= tp ? m.num_key_value_heads / tp : 1; }

// KV bytes per context token per layer on one GPU.
double KvBytesPerTokenLayer(const ModelSpec& m, int tp, DType kv) {
  if (m.is_mla()) return (m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * DTypeBytes(kv);
  return 2.0 * KvHeadsPerGpu(m, tp) * m.head_dim * DTypeBytes(kv);
}

class PassBuilder {
 public:
  PassBuilder(const ModelSpec& model, const ParallelSpec& par, const PassShape& shape, std::string prefix)
      : m_(model), p_(par), s_(shape), prefix_(std::move(prefix)) {
    out_.model = model.name;
    out_.parallel = par;
    out_.shape = shape;
    out_.tokens =
        static_cast<int64_t>(shape.batch - shape.narrow_sequences) * shape.tokens_per_sequence + shape.narrow_sequences;
    T_ = static_cast<double>(out_.tokens);
    h_ = model.hidden_size;
    tp_ = par.tp;
    fmt_ =
        shape.weight_formats ? *shape.weight_formats : FormatsFromDtypes(shape.weight_dtype, shape.expert_weight_dtype);
    ab_ = DTypeBytes(shape.activation_dtype);
    kvb_ = DTypeBytes(shape.kv_dtype);
    out_.steps.reserve(static_cast<size_t>(model.num_layers + 2) * 24);  // ~20 steps per layer
  }

  // Vocab-parallel embedding lookup (+ allreduce at TP > 1). `resident`: the table is this pass's.
  void Embedding(bool resident) {
    const double vl = static_cast<double>(CeilDiv(m_.vocab_size, tp_));
    AddKernel(prefix_ + "embed", -1, KernelClass::kEmbedding, 0, 2 * T_ * h_ * kBf16 + 4 * T_);
    if (resident) out_.weight_bytes_per_gpu += vl * h_ * kBf16;
    AllReduce("embed_allreduce", -1);
  }

  void Norm(const std::string& name, int layer, double width, bool with_residual) {
    if (with_residual && !s_.inventory.add_norm) {
      // PyTorch's separate residual add, then an RMSNorm that reads and writes once.
      Elementwise(name + "_residual_add", layer, 3 * T_ * width * kBf16, T_ * width);
      with_residual = false;
    }
    const double passes = with_residual ? 4 : 2;
    AddKernel(name, layer, KernelClass::kNorm, 4 * T_ * width, passes * T_ * width * kBf16);
    out_.weight_bytes_per_gpu += width * kBf16;
  }

  // A GEMM with per-GPU shape (m, n, k) over weights stored as `f` (WeightBytes(f, n, k), scales
  // included); its weights are resident and read once. Math: the activation dtype unless the
  // weights are wider, or `math` when given.
  void Gemm(const std::string& name, int layer, double m, double n, double k, const WeightFormat& f,
            KernelClass cls = KernelClass::kGemm, std::optional<DType> math = std::nullopt) {
    const double w = WeightBytes(f, n, k);
    Kernel& kr = AddKernel(name, layer, cls, 2 * m * n * k, w + m * k * ab_ + m * n * kBf16);
    kr.math_dtype = math.value_or(MathDtype(f.dtype, s_.activation_dtype));
    kr.m = m;
    kr.n = n;
    kr.k = k;
    kr.weight_bytes = w;
    out_.weight_bytes_per_gpu += w;
    out_.weight_bytes_read_per_gpu += w;
  }

  void Elementwise(const std::string& name, int layer, double bytes, double flops = 0) {
    AddKernel(name, layer, KernelClass::kElementwise, flops, bytes);
  }
  // A separate kernel that runs on views when the inventory says so (KernelInventory::strided_views)
  // and `on_views` holds for it.
  void Separate(const std::string& name, int layer, double bytes, double flops, bool on_views) {
    AddKernel(name, layer, KernelClass::kElementwise, flops, bytes).strided = s_.inventory.strided_views && on_views;
  }

  // One decoder layer. `qkv_input` = width of the attention input (h, or 2h for EAGLE-3).
  void DecoderLayer(int layer, double qkv_input) {
    Norm(Name(layer, "input_norm"), layer, h_, /*with_residual=*/true);
    if (m_.is_mla()) {
      MlaAttention(layer);
    } else {
      GqaAttention(layer, qkv_input);
    }
    AllReduce(Name(layer, "attn_allreduce"), layer);
    Norm(Name(layer, "post_attention_norm"), layer, h_, true);
    if (m_.is_moe_layer(layer)) {
      if (p_.ep > 1) {
        MoeExpertParallel(layer);
      } else {
        MoeTensorParallel(layer);
      }
    } else {
      // NOLINTNEXTLINE(bugprone-integer-division): exact, ValidateForPass requires intermediate_size % tp == 0
      DenseMlp(layer, "", m_.intermediate_size / tp_, T_, fmt_.dense_mlp);
      AllReduce(Name(layer, "mlp_allreduce"), layer);
    }
  }

  // Final norm, LM head over `vocab` (vocab-parallel), logits gather, sampling.
  void Head(int vocab, bool resident_head, const std::string& head_name = "lm_head") {
    Norm(prefix_ + "final_norm", -1, h_, true);
    const double vl = static_cast<double>(CeilDiv(vocab, tp_));
    const double before_w = out_.weight_bytes_per_gpu;
    Gemm(prefix_ + head_name, -1, T_, vl, h_, fmt_.lm_head);
    if (!resident_head) out_.weight_bytes_per_gpu = before_w;
    if (tp_ > 1) {
      AddComm(CommKind::kAllGather, static_cast<int64_t>(std::llround(T_ * vl * tp_ * s_.logit_bytes)),
              prefix_ + "logits_allgather", -1);
    }
    Kernel& sampling = AddKernel(prefix_ + "sampling", -1, KernelClass::kSampling, 5 * T_ * vocab,
                                 T_ * vocab * (s_.logit_bytes + 4 + 4));
    sampling.m = T_;     // rows of logits
    sampling.n = vocab;  // logits per row (the sampling row limit, kernel_cost.h)
  }

  // Replicated Linear (EAGLE-3 fc, MTP eh_proj): n = h, k = in.
  // Stored like the dense MLP.
  void ReplicatedProjection(const std::string& name, double in) {
    Gemm(prefix_ + name, -1, T_, h_, in, fmt_.dense_mlp);
  }

  ForwardPass Finish() { return std::move(out_); }

 private:
  std::string Name(int layer, const char* what) const { return prefix_ + "layer" + std::to_string(layer) + "." + what; }

  Kernel& AddKernel(const std::string& name, int layer, KernelClass cls, double flops, double bytes) {
    PassStep step;
    step.kind = PassStep::kKernel;
    step.layer = layer;
    step.kernel.name = name;
    step.kernel.kernel_class = cls;
    step.kernel.flops = flops;
    step.kernel.bytes = bytes;
    step.kernel.math_dtype = DType::kBf16;
    out_.steps.push_back(std::move(step));
    return out_.steps.back().kernel;
  }

  void AddComm(CommKind kind, int64_t bytes, const std::string& name, int layer) {
    PassStep step;
    step.kind = PassStep::kComm;
    step.layer = layer;
    step.comm.kind = kind;
    step.comm.bytes = bytes;
    step.comm.name = name;
    out_.steps.push_back(std::move(step));
  }

  void AllReduce(const std::string& name, int layer) {
    if (tp_ > 1) {
      AddComm(CommKind::kAllReduce, static_cast<int64_t>(std::llround(T_ * h_ * kBf16)),
              name.rfind(prefix_, 0) == 0 ? name : prefix_ + name, layer);
    }
  }

  // Attention over the KV cache: `kv_token_bytes` per cached token per layer on this GPU.
  // q_heads / kv_heads per GPU: the call's shape for an implementation's cost model.
  void Attention(int layer, double kv_token_bytes, double q_out_bytes, double flops_per_pos, double q_heads,
                 double kv_heads, bool latent = false) {
    double ctx = s_.context_length;
    if (IsSlidingLayer(m_, layer)) ctx = std::min<double>(ctx, m_.sliding_window);
    const double L = ctx + s_.tokens_per_sequence;
    const double kv_read = s_.batch * L * kv_token_bytes;
    // A ragged batch's attention at the full width (PassShape::narrow_sequences): b N query tokens.
    const double full_tokens = double(s_.batch) * s_.tokens_per_sequence;
    Kernel& k = AddKernel(Name(layer, "attention"), layer, KernelClass::kAttention, full_tokens * flops_per_pos * L,
                          kv_read + q_out_bytes * (full_tokens / T_));
    k.math_dtype = DType::kBf16;
    k.has_attention_call = s_.batch >= 1 && q_heads >= 1 && kv_heads >= 1;
    k.attention.seqs = s_.batch;
    k.attention.query_tokens = s_.tokens_per_sequence;
    k.attention.q_heads = static_cast<int64_t>(q_heads);
    k.attention.kv_heads = static_cast<int64_t>(kv_heads);
    k.attention.context = static_cast<int64_t>(std::llround(L));
    k.attention.kv_bytes = kv_read;
    k.attention.latent = latent;
    out_.kv_bytes_read_per_gpu += kv_read;
  }

  void GqaAttention(int layer, double qkv_input) {
    const double d = m_.head_dim;
    const double hl = m_.num_attention_heads / tp_;  // NOLINT(bugprone-integer-division): exact, heads % tp == 0
    const double kvl = KvHeadsPerGpu(m_, tp_);
    Gemm(Name(layer, "qkv_proj"), layer, T_, (hl + 2 * kvl) * d, qkv_input, fmt_.attention);
    const KernelInventory& inv = s_.inventory;
    if (inv.rope_kv_store) {
      Elementwise(Name(layer, "rope_kv_store"), layer, 2 * T_ * (hl + kvl) * d * kBf16 + T_ * 2 * kvl * d * kvb_,
                  6 * T_ * (hl + kvl) * d);
    } else {
      for (int i = 0; i < inv.rotary_kernels; ++i) {
        const bool on_views = i + 1 < inv.rotary_kernels || T_ > 1;
        if (inv.rotary_per_tensor) {
          for (const auto& [tensor, heads] : {std::pair{"q", hl}, std::pair{"k", kvl}})
            Separate(Name(layer, fmt::format("rotary_{}{}", tensor, i).c_str()), layer, 2 * T_ * heads * d * kBf16,
                     T_ * heads * d, on_views);
        } else {
          Separate(Name(layer, fmt::format("rotary{}", i).c_str()), layer, 2 * T_ * (hl + kvl) * d * kBf16,
                   6 * T_ * (hl + kvl) * d, on_views);
        }
      }
      if (inv.kv_store_kernels >= 2) {
        for (const char* cache : {"cache_write_k", "cache_write_v"})
          Separate(Name(layer, cache), layer, T_ * kvl * d * (kBf16 + kvb_), 0, true);
      } else {
        Separate(Name(layer, "kv_store"), layer, T_ * 2 * kvl * d * (kBf16 + kvb_), 0, true);
      }
    }
    const bool wide = s_.tokens_per_sequence > 1;
    if (inv.query_copy && T_ > 1) Separate(Name(layer, "query_copy"), layer, 2 * T_ * hl * d * kBf16, 0, true);
    if (inv.mask_bias_above_q1 && wide) {
      // The boolean [q, L] mask turned into an additive bf16 bias (a `where`: reads 1 B, writes 2 B per
      // position) and two fills of the bias padded to 16 keys (writes only), per layer.
      double ctx = s_.context_length;
      if (IsSlidingLayer(m_, layer)) ctx = std::min<double>(ctx, m_.sliding_window);
      const double q = s_.tokens_per_sequence, L = ctx + q, padded = 16 * std::ceil(L / 16);
      Separate(Name(layer, "mask_bias"), layer, q * L * (1 + kBf16), 0, true);
      for (const char* fill : {"mask_bias_fill0", "mask_bias_fill1"})
        Elementwise(Name(layer, fill), layer, q * padded * kBf16);
    }
    Attention(layer, 2 * kvl * d * kvb_, 2 * T_ * hl * d * kBf16, 4 * hl * d, hl, kvl);
    if (inv.merge_heads_copy && wide) Separate(Name(layer, "merge_heads"), layer, 2 * T_ * hl * d * kBf16, 0, true);
    Gemm(Name(layer, "o_proj"), layer, T_, h_, hl * d, fmt_.attention);
  }

  void MlaAttention(int layer) {
    const MlaSpec& a = m_.mla;
    const double hl = m_.num_attention_heads / tp_;  // NOLINT(bugprone-integer-division): exact, heads % tp == 0
    const double rq = a.q_lora_rank, rkv = a.kv_lora_rank, dn = a.qk_nope_head_dim, dr = a.qk_rope_head_dim,
                 dv = a.v_head_dim;
    const WeightFormat& f = fmt_.attention;
    Gemm(Name(layer, "qkv_a_proj"), layer, T_, rq + rkv + dr, h_, f);  // replicated
    Norm(Name(layer, "qkv_a_norm"), layer, rq + rkv, false);
    if (rq > 0) {
      Gemm(Name(layer, "q_b_proj"), layer, T_, hl * (dn + dr), rq, f);
    } else {
      Gemm(Name(layer, "q_proj"), layer, T_, hl * (dn + dr), h_, f);  // no query compression (V2-Lite)
    }
    // Absorbed W_UK: per head [T, dn] x [dn, rkv].
    Gemm(Name(layer, "q_absorb"), layer, T_, hl * rkv, dn, f);
    Elementwise(Name(layer, "rope_kv_store"), layer, 2 * T_ * hl * dr * kBf16 + T_ * (rkv + dr) * (kBf16 + kvb_),
                6 * T_ * hl * dr);
    Attention(layer, (rkv + dr) * kvb_, T_ * hl * (2 * rkv + dr) * kBf16, 2 * hl * (2 * rkv + dr), hl, 1,
              /*latent=*/true);
    // Absorbed W_UV: per head [T, rkv] x [rkv, dv].
    Gemm(Name(layer, "v_absorb"), layer, T_, hl * dv, rkv, f);
    Gemm(Name(layer, "o_proj"), layer, T_, h_, hl * dv, f);
  }

  // gate_up, act, down over `tokens` rows with `il` intermediate per GPU.
  void DenseMlp(int layer, const std::string& tag, double il, double tokens, const WeightFormat& f) {
    const double T = tokens;
    Gemm(Name(layer, (tag + "gate_up_proj").c_str()), layer, T, 2 * il, h_, f);
    if (s_.inventory.activation) {
      Elementwise(Name(layer, (tag + "act").c_str()), layer, T * 2 * il * kBf16 + T * il * ab_, 4 * T * il);
    } else {
      Separate(Name(layer, (tag + "silu").c_str()), layer, 2 * T * il * kBf16, 3 * T * il, T > 1);
      Separate(Name(layer, (tag + "mul").c_str()), layer, 2 * T * il * kBf16 + T * il * ab_, T * il, T > 1);
    }
    Gemm(Name(layer, (tag + "down_proj").c_str()), layer, T, h_, il, f);
  }

  void Router(int layer, double tokens) {
    const double e = m_.moe.num_experts;
    Gemm(Name(layer, "router"), layer, tokens, e, h_, WeightFormat{}, KernelClass::kRouter, DType::kBf16);
    out_.steps.back().kernel.bytes += tokens * e * 4;  // fp32 router logits for top-k
  }

  // Routed experts: `routings` (token, expert) pairs on this GPU over `distinct_local` experts
  // whose per-GPU intermediate is `il`; `resident_experts` experts' weights live here.
  void RoutedExperts(int layer, double routings, double distinct_local, double il, double resident_experts) {
    const double per_expert_m = distinct_local > 0 ? routings / distinct_local : 0;
    const WeightFormat& f = fmt_.routed_experts;
    auto grouped = [&](const char* what, double n, double k) {
      const double per_expert = WeightBytes(f, n, k);
      const double w_read = distinct_local * per_expert;
      Kernel& kr = AddKernel(Name(layer, what), layer, KernelClass::kGroupedGemm, 2 * routings * n * k,
                             w_read + routings * k * ab_ + routings * n * kBf16);
      kr.math_dtype = MathDtype(f.dtype, s_.activation_dtype);
      kr.m = per_expert_m;
      kr.n = n;
      kr.k = k;
      out_.weight_bytes_read_per_gpu += w_read;
      out_.weight_bytes_per_gpu += resident_experts * per_expert;
    };
    grouped("experts_gate_up", 2 * il, h_);
    Elementwise(Name(layer, "experts_act"), layer, routings * 2 * il * kBf16 + routings * il * ab_, 4 * routings * il);
    grouped("experts_down", h_, il);
  }

  void MoeTensorParallel(int layer) {
    const MoeSpec& moe = m_.moe;
    Router(layer, T_);
    const double D = ExpectedDistinctExperts(moe.num_experts, moe.experts_per_token, out_.tokens);
    out_.expected_distinct_experts = D;
    const double il = static_cast<double>(moe.moe_intermediate_size) / tp_;
    RoutedExperts(layer, T_ * moe.experts_per_token, D, il, moe.num_experts);
    if (moe.num_shared_experts > 0) {
      DenseMlp(layer, "shared_", il * moe.num_shared_experts, T_, fmt_.shared_experts);
    }
    Elementwise(Name(layer, "moe_sum"), layer, T_ * moe.experts_per_token * h_ * kBf16 + T_ * h_ * kBf16,
                T_ * moe.experts_per_token * h_);
    AllReduce(Name(layer, "moe_allreduce"), layer);
  }

  void MoeExpertParallel(int layer) {
    const MoeSpec& moe = m_.moe;
    const int ep = p_.ep;
    const double ts = static_cast<double>(CeilDiv(out_.tokens, ep));  // this GPU's token slice
    const double k = moe.experts_per_token;
    Router(layer, ts);
    const int64_t a2a = static_cast<int64_t>(std::llround(ts * k * h_ * kBf16));
    AddComm(CommKind::kAllToAll, a2a, Name(layer, "moe_dispatch"), layer);
    const double D = ExpectedDistinctExperts(moe.num_experts, moe.experts_per_token, out_.tokens);
    out_.expected_distinct_experts = D;
    RoutedExperts(layer, T_ * k / ep, D / ep, moe.moe_intermediate_size, static_cast<double>(moe.num_experts) / ep);
    AddComm(CommKind::kAllToAll, a2a, Name(layer, "moe_combine"), layer);
    if (moe.num_shared_experts > 0) {
      DenseMlp(layer, "shared_", static_cast<double>(moe.moe_intermediate_size) * moe.num_shared_experts, ts,
               fmt_.shared_experts);
    }
    Elementwise(Name(layer, "moe_sum"), layer, ts * k * h_ * kBf16 + ts * h_ * kBf16, ts * k * h_);
    AddComm(CommKind::kAllGather, static_cast<int64_t>(std::llround(T_ * h_ * kBf16)), Name(layer, "moe_allgather"),
            layer);
  }

  const ModelSpec& m_;
  ParallelSpec p_;
  PassShape s_;
  std::string prefix_;
  ForwardPass out_;
  double T_ = 0, h_ = 0, ab_ = 2, kvb_ = 2;
  int tp_ = 1;
  WeightFormats fmt_;
};

Status ValidateShape(const PassShape& s) {
  if (s.batch < 1) return InvalidArgumentError("PassShape.batch = " + std::to_string(s.batch) + ": must be >= 1");
  if (s.tokens_per_sequence < 1) {
    return InvalidArgumentError("PassShape.tokens_per_sequence = " + std::to_string(s.tokens_per_sequence) +
                                ": must be >= 1");
  }
  if (s.narrow_sequences < 0 || s.narrow_sequences > s.batch) {
    return InvalidArgumentError(
        fmt::format("PassShape.narrow_sequences = {}: must be in [0, batch = {}]", s.narrow_sequences, s.batch));
  }
  if (s.context_length < 0) {
    return InvalidArgumentError("PassShape.context_length = " + std::to_string(s.context_length) + ": must be >= 0");
  }
  if (s.logit_bytes != 2 && s.logit_bytes != 4) {
    return InvalidArgumentError("PassShape.logit_bytes = " + std::to_string(s.logit_bytes) +
                                ": must be 2 (bf16) or 4 (fp32)");
  }
  if (s.inventory.rotary_kernels < 1 || s.inventory.rotary_kernels > 16)
    return InvalidArgumentError("PassShape.inventory.rotary_kernels = " + std::to_string(s.inventory.rotary_kernels) +
                                ": must be in [1, 16]");
  if (s.inventory.kv_store_kernels != 1 && s.inventory.kv_store_kernels != 2)
    return InvalidArgumentError(
        "PassShape.inventory.kv_store_kernels = " + std::to_string(s.inventory.kv_store_kernels) +
        ": must be 1 (K and V together) or 2 (apart)");
  return OkStatus();
}

}  // namespace

const char* CommKindName(CommKind k) {
  switch (k) {
    case CommKind::kAllReduce: return "allreduce";
    case CommKind::kAllGather: return "allgather";
    case CommKind::kAllToAll: return "alltoall";
  }
  return "?";
}

int ForwardPass::num_kernels() const {
  return static_cast<int>(
      std::count_if(steps.begin(), steps.end(), [](const PassStep& s) { return s.kind == PassStep::kKernel; }));
}

int ForwardPass::num_comms() const { return static_cast<int>(steps.size()) - num_kernels(); }

int ForwardPass::num_comms(CommKind kind) const {
  return static_cast<int>(std::count_if(
      steps.begin(), steps.end(), [&](const PassStep& s) { return s.kind == PassStep::kComm && s.comm.kind == kind; }));
}

double ForwardPass::flops_per_gpu() const {
  double f = 0;
  for (const PassStep& s : steps) {
    if (s.kind == PassStep::kKernel) f += s.kernel.flops;
  }
  return f;
}

double ForwardPass::bytes_per_gpu() const {
  double b = 0;
  for (const PassStep& s : steps) {
    if (s.kind == PassStep::kKernel) b += s.kernel.bytes;
  }
  return b;
}

std::vector<compute::Kernel> ForwardPass::kernels() const {
  std::vector<compute::Kernel> out;
  for (const PassStep& s : steps) {
    if (s.kind == PassStep::kKernel) out.push_back(s.kernel);
  }
  return out;
}

std::vector<CommPoint> ForwardPass::comms() const {
  std::vector<CommPoint> out;
  for (const PassStep& s : steps) {
    if (s.kind == PassStep::kComm) out.push_back(s.comm);
  }
  return out;
}

Status ValidateForPass(const ModelSpec& m, const ParallelSpec& p) {
  if (p.tp < 1) return InvalidArgumentError("ParallelSpec.tp = " + std::to_string(p.tp) + ": must be >= 1");
  if (p.ep < 1) return InvalidArgumentError("ParallelSpec.ep = " + std::to_string(p.ep) + ": must be >= 1");
  if (m.num_layers < 1) return InvalidArgumentError(Field(m, "num_layers", m.num_layers) + ": must be >= 1");
  if (m.hidden_size < 1) return InvalidArgumentError(Field(m, "hidden_size", m.hidden_size) + ": must be >= 1");
  if (m.vocab_size < 1) return InvalidArgumentError(Field(m, "vocab_size", m.vocab_size) + ": must be >= 1");
  if (m.num_attention_heads < 1 || m.num_attention_heads % p.tp != 0) {
    return InvalidArgumentError(Field(m, "num_attention_heads", m.num_attention_heads) +
                                ": must be >= 1 and divisible by tp = " + std::to_string(p.tp));
  }
  if (m.is_mla()) {
    const MlaSpec& a = m.mla;
    if (a.q_lora_rank < 0 || a.qk_nope_head_dim < 1 || a.qk_rope_head_dim < 1 || a.v_head_dim < 1) {
      return InvalidArgumentError("model " + m.name +
                                  ": mla.qk_nope_head_dim, qk_rope_head_dim and v_head_dim must be >= 1 and "
                                  "q_lora_rank >= 0 (0: no query compression) when kv_lora_rank > 0");
    }
  } else {
    if (m.head_dim < 1) return InvalidArgumentError(Field(m, "head_dim", m.head_dim) + ": must be >= 1");
    const int kv = m.num_key_value_heads;
    if (kv < 1 || (kv % p.tp != 0 && p.tp % kv != 0)) {
      return InvalidArgumentError(Field(m, "num_key_value_heads", kv) +
                                  ": must be >= 1 and divide or be divisible by tp = " + std::to_string(p.tp));
    }
  }
  if (HasDenseLayers(m) && (m.intermediate_size < 1 || m.intermediate_size % p.tp != 0)) {
    return InvalidArgumentError(Field(m, "intermediate_size", m.intermediate_size) +
                                ": must be >= 1 and divisible by tp = " + std::to_string(p.tp));
  }
  if (p.ep > 1) {
    if (!m.is_moe()) {
      return InvalidArgumentError("ParallelSpec.ep = " + std::to_string(p.ep) + ": model " + m.name +
                                  " has no routed experts (ep must be 1)");
    }
    if (p.ep != p.tp) {
      return InvalidArgumentError("ParallelSpec.ep = " + std::to_string(p.ep) + ": must be 1 or equal to tp = " +
                                  std::to_string(p.tp) + " (experts and attention share the same GPUs)");
    }
    if (m.moe.num_experts % p.ep != 0) {
      return InvalidArgumentError(Field(m, "moe.num_experts", m.moe.num_experts) +
                                  ": must be divisible by ep = " + std::to_string(p.ep));
    }
  }
  if (m.is_moe()) {
    const MoeSpec& e = m.moe;
    if (e.experts_per_token < 1 || e.experts_per_token > e.num_experts) {
      return InvalidArgumentError(Field(m, "moe.experts_per_token", e.experts_per_token) +
                                  ": must be in [1, num_experts = " + std::to_string(e.num_experts) + "]");
    }
    if (e.moe_intermediate_size < 1 || e.moe_intermediate_size % (p.tp / p.ep) != 0) {
      return InvalidArgumentError(Field(m, "moe.moe_intermediate_size", e.moe_intermediate_size) +
                                  ": must be >= 1 and divisible by tp/ep");
    }
    if (e.num_shared_experts < 0) {
      return InvalidArgumentError(Field(m, "moe.num_shared_experts", e.num_shared_experts) + ": must be >= 0");
    }
  }
  return OkStatus();
}

std::string KernelInventory::Describe() const {
  if (Fused()) return "fused: one kernel each for residual add + RMSNorm, rotary + KV store, SiLU x up";
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : "; ") + part; };
  add(add_norm ? "residual add + RMSNorm fused" : "residual add, then RMSNorm");
  add(rope_kv_store ? "rotary + KV store fused"
                    : fmt::format("rotary {} kernel{} {}, {}", rotary_kernels, rotary_kernels == 1 ? "" : "s",
                                  rotary_per_tensor ? "per tensor" : "for q and k",
                                  kv_store_kernels >= 2 ? "K and V cache writes apart" : "one KV store"));
  add(activation ? "SiLU x up fused" : "SiLU, then mul");
  if (query_copy) add("query copied contiguous above one token in the pass");
  if (mask_bias_above_q1) add("the boolean mask turned into a bias above one token (where, two fills)");
  if (strided_views) add("on views: PyTorch's strided kernels");
  if (merge_heads_copy) add("attention output copied above one token");
  return out;
}

StatusOr<ForwardPass> BuildForwardPass(const ModelSpec& model, const ParallelSpec& parallel, const PassShape& shape) {
  RETURN_IF_ERROR(ValidateShape(shape));
  RETURN_IF_ERROR(ValidateForPass(model, parallel));
  PassBuilder b(model, parallel, shape, "");
  b.Embedding(/*resident=*/true);
  for (int l = 0; l < model.num_layers; ++l) b.DecoderLayer(l, model.hidden_size);
  b.Head(model.vocab_size, /*resident_head=*/!model.tie_word_embeddings);
  return b.Finish();
}

StatusOr<ForwardPass> BuildEagle3DraftPass(const ModelSpec& draft, const ModelSpec& target,
                                           const ParallelSpec& parallel, const PassShape& shape, bool apply_fc) {
  RETURN_IF_ERROR(ValidateShape(shape));
  if (!draft.is_eagle3()) {
    return InvalidArgumentError("model " + draft.name + ": family must be EAGLE3 for a draft head");
  }
  if (draft.hidden_size != target.hidden_size) {
    return InvalidArgumentError(Field(draft, "hidden_size", draft.hidden_size) + ": must equal the target's (" +
                                target.name + ": " + std::to_string(target.hidden_size) + ")");
  }
  if (draft.is_moe() || draft.is_mla()) {
    return InvalidArgumentError("model " + draft.name + ": an EAGLE-3 head is one dense GQA layer (no moe / mla)");
  }
  // The head has no experts: the target's ep does not apply to it.
  const ParallelSpec tp_only{parallel.tp, 1};
  RETURN_IF_ERROR(ValidateForPass(draft, tp_only));
  RETURN_IF_ERROR(ValidateForPass(target, ParallelSpec{parallel.tp, 1}).WithPrefix("target"));
  // The embedding is the target's: look it up with the target's vocabulary.
  ModelSpec head = draft;
  head.num_layers = 1;
  head.vocab_size = target.vocab_size;
  head.sliding_window = 0;
  const int draft_vocab = draft.eagle3.draft_vocab_size > 0 ? draft.eagle3.draft_vocab_size : draft.vocab_size;
  PassBuilder b(head, tp_only, shape, "eagle3.");
  b.Embedding(/*resident=*/false);
  const int fused = draft.eagle3.fused_hidden_states > 0 ? draft.eagle3.fused_hidden_states : 3;
  if (apply_fc) b.ReplicatedProjection("fc", static_cast<double>(fused) * draft.hidden_size);
  b.Norm("eagle3.hidden_norm", 0, draft.hidden_size, false);
  b.DecoderLayer(0, 2.0 * draft.hidden_size);
  b.Head(draft_vocab, /*resident_head=*/true);
  ForwardPass pass = b.Finish();
  pass.model = draft.name;
  return pass;
}

StatusOr<ForwardPass> BuildMtpDraftPass(const ModelSpec& target, const ParallelSpec& parallel, const PassShape& shape) {
  RETURN_IF_ERROR(ValidateShape(shape));
  RETURN_IF_ERROR(ValidateForPass(target, parallel));
  // One extra layer, indexed after the target's last (is_moe_layer is true for MoE targets).
  PassBuilder b(target, parallel, shape, "mtp.");
  b.Embedding(/*resident=*/false);
  b.Norm("mtp.enorm", -1, target.hidden_size, false);
  b.Norm("mtp.hnorm", -1, target.hidden_size, false);
  b.ReplicatedProjection("eh_proj", 2.0 * target.hidden_size);
  b.DecoderLayer(target.num_layers, target.hidden_size);
  b.Head(target.vocab_size, /*resident_head=*/false);
  ForwardPass pass = b.Finish();
  pass.model = target.name + ".mtp";
  return pass;
}

double KvCacheBytesPerGpu(const ModelSpec& model, const ParallelSpec& parallel, DType kv_dtype, int64_t batch,
                          int64_t context) {
  const double per_token = KvBytesPerTokenLayer(model, parallel.tp, kv_dtype);
  double total = 0;
  for (int l = 0; l < model.num_layers; ++l) {
    int64_t ctx = context;
    if (IsSlidingLayer(model, l)) ctx = std::min<int64_t>(ctx, model.sliding_window);
    total += static_cast<double>(batch) * static_cast<double>(ctx) * per_token;
  }
  return total;
}

}  // namespace specsim::llm
