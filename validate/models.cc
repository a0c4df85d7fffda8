#include "validate/models.h"

namespace specsim::validate {
namespace {

trace::ModelShape Dense(const char* name, int layers, int hidden, int heads, int kv, int head_dim,
                        int inter, int vocab) {
  trace::ModelShape m;
  m.set_name(name);
  m.set_source("builtin");
  m.set_layers(layers);
  m.set_hidden(hidden);
  m.set_heads(heads);
  m.set_kv_heads(kv);
  m.set_head_dim(head_dim);
  m.set_intermediate(inter);
  m.set_vocab(vocab);
  m.set_draft_vocab(32000);
  return m;
}

}  // namespace

std::vector<std::string> BuiltinModelNames() {
  return {"llama-3.1-8b", "llama-3.1-70b", "qwen3-32b", "kimi-k2"};
}

StatusOr<trace::ModelShape> BuiltinModel(const std::string& name) {
  if (name == "llama-3.1-8b") return Dense("llama-3.1-8b", 32, 4096, 32, 8, 128, 14336, 128256);
  if (name == "llama-3.1-70b") return Dense("llama-3.1-70b", 80, 8192, 64, 8, 128, 28672, 128256);
  if (name == "qwen3-32b") return Dense("qwen3-32b", 64, 5120, 64, 8, 128, 25600, 151936);
  if (name == "kimi-k2") {
    // The dense layer (and attention) of Kimi-K2; the MoE layers are not modelled here.
    trace::ModelShape m = Dense("kimi-k2", 61, 7168, 64, 64, 192, 18432, 163840);
    m.set_mla(true);
    m.set_q_lora_rank(1536);
    m.set_kv_lora_rank(512);
    m.set_qk_nope_head_dim(128);
    m.set_qk_rope_head_dim(64);
    m.set_v_head_dim(128);
    return m;
  }
  std::string names;
  for (const auto& n : BuiltinModelNames()) names += (names.empty() ? "" : ", ") + n;
  return Status(StatusCode::kNotFound, "unknown model '" + name + "' (built in: " + names + ")");
}

StatusOr<std::vector<GemmShape>> LayerGemms(const trace::ModelShape& m, int tp) {
  if (tp < 1) return InvalidArgument("tp must be >= 1");
  if (m.heads() % tp != 0)
    return InvalidArgument(m.name() + ": tp " + std::to_string(tp) + " does not divide " +
                           std::to_string(m.heads()) + " heads");
  if (m.intermediate() % tp != 0)
    return InvalidArgument(m.name() + ": tp " + std::to_string(tp) + " does not divide intermediate " +
                           std::to_string(m.intermediate()));
  const int64_t h = m.hidden();
  const int64_t heads = m.heads() / tp;
  const int64_t vocab = (m.vocab() + tp - 1) / tp;
  std::vector<GemmShape> g;
  if (m.mla()) {
    const int64_t qk = m.qk_nope_head_dim() + m.qk_rope_head_dim();
    g.push_back({"q_a", m.q_lora_rank(), h});
    g.push_back({"q_b", heads * qk, m.q_lora_rank()});
    g.push_back({"kv_a", m.kv_lora_rank() + m.qk_rope_head_dim(), h});
    g.push_back({"kv_b", heads * (m.qk_nope_head_dim() + m.v_head_dim()), m.kv_lora_rank()});
    g.push_back({"o", h, heads * m.v_head_dim()});
  } else {
    const int64_t kv = m.kv_heads() >= tp ? m.kv_heads() / tp : 1;
    g.push_back({"qkv", (heads + 2 * kv) * m.head_dim(), h});
    g.push_back({"o", h, heads * m.head_dim()});
  }
  g.push_back({"gate_up", 2 * static_cast<int64_t>(m.intermediate()) / tp, h});
  g.push_back({"down", h, m.intermediate() / tp});
  g.push_back({"lm_head", vocab, h});
  return g;
}

StatusOr<AttentionShape> AttentionFor(const trace::ModelShape& m, int tp) {
  if (tp < 1 || m.heads() % tp != 0) return InvalidArgument(m.name() + ": tp does not divide heads");
  AttentionShape a;
  a.q_heads = m.heads() / tp;
  if (m.mla()) {
    // Absorbed MLA decode: every q head attends one shared latent cache of kv_lora + rope values.
    a.kv_heads = 1;
    a.head_dim = m.kv_lora_rank() + m.qk_rope_head_dim();
    a.v_head_dim = m.kv_lora_rank();
    a.kv_shared = true;
  } else {
    a.kv_heads = m.kv_heads() >= tp ? m.kv_heads() / tp : 1;
    a.head_dim = m.head_dim();
    a.v_head_dim = m.head_dim();
  }
  return a;
}

int64_t LayerWeightBytes(const std::vector<GemmShape>& gemms) {
  int64_t b = 0;
  for (const auto& g : gemms) {
    if (g.op != "lm_head") b += g.n * g.k * 2;
  }
  return b;
}

}  // namespace specsim::validate
