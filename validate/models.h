// Built-in model shapes for --model, from the models' config.json (docs/reference.md section 7).
//
// TEMPORARY: the models/ textproto loader (sim/io) will replace this table; until then these are
// the only names specsim-validate accepts. Every shape used is recorded in the trace.
//
// Sharding at tensor-parallel degree tp (Megatron style, as SGLang/vLLM do): q heads, the MLP
// intermediate and the vocabulary are split tp ways; KV heads are split when kv_heads >= tp and
// replicated (1 per GPU) otherwise. MLA (Kimi-K2 dense layer): q_a and kv_a projections are
// replicated, q_b / kv_b / o are split by heads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "specsim/trace.pb.h"
#include "validate/status.h"

namespace specsim::validate {

std::vector<std::string> BuiltinModelNames();
StatusOr<trace::ModelShape> BuiltinModel(const std::string& name);

// One GEMM of a layer at a TP degree: out[m, n] = in[m, k] * W[n, k]^T, m = tokens.
struct GemmShape {
  std::string op;
  int64_t n = 0;
  int64_t k = 0;
};

// The GEMMs of one (dense / MLA) layer plus the LM head, per GPU. Error when tp does not divide
// the heads or the intermediate size.
StatusOr<std::vector<GemmShape>> LayerGemms(const trace::ModelShape& m, int tp);

struct AttentionShape {
  int q_heads = 0;   // per GPU
  int kv_heads = 0;  // per GPU
  int head_dim = 0;
  int v_head_dim = 0;
  bool kv_shared = false;
};
StatusOr<AttentionShape> AttentionFor(const trace::ModelShape& m, int tp);

// Weight bytes of one layer per GPU in bf16 (the GEMMs above minus the LM head).
int64_t LayerWeightBytes(const std::vector<GemmShape>& gemms);

}  // namespace specsim::validate
