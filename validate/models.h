// Model shapes for --model / --draft-model, read from the repository's models/*.textproto
// (proto/specsim/model.proto, message specsim.config.Model) with google::protobuf::TextFormat only
// (the GPU machine has protobuf but none of sim/io's libraries). Every shape used is recorded in
// the trace (`models`: the file, its parsed content and the derived shape fields).
//
// Sharding at tensor-parallel degree tp (Megatron style, as SGLang/vLLM do): q heads, the MLP
// intermediate (dense, shared and routed experts) and the vocabulary are split tp ways; KV heads
// are split when kv_heads >= tp and replicated (1 per GPU) otherwise. MLA (DeepSeek-V3 / Kimi-K2):
// q_a and kv_a projections are replicated, q_b / kv_b / o are split by heads. The MoE router is
// replicated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "specsim/model.pb.h"
#include "specsim/trace.pb.h"
#include "validate/status.h"

namespace specsim::validate {

// ---- loading ----
// Where short names are looked up: the current directory and each of its parents, then the source
// tree the binary was built from (SPECSIM_SOURCE_DIR), each as ROOT/models/NAME.textproto.
std::vector<std::string> DefaultModelRoots();
// An argument containing '/' or ending in ".textproto" is a path, used as given. Anything else is a
// short name (alias) NAME for models/NAME.textproto under the first of `roots` that has it.
// Error (kNotFound) naming every place tried and the names available.
StatusOr<std::string> ResolveModelPath(const std::string& arg, const std::vector<std::string>& roots);
// Parses text-format specsim.config.Model; `file` only labels errors ("FILE:LINE:COL: message").
// Checks the fields the suites need (see CheckModel) and reports each problem with its line.
StatusOr<config::Model> ParseModelText(const std::string& text, const std::string& file);
StatusOr<config::Model> LoadModelFile(const std::string& path);
// "models/llama-3.1-8b.textproto" -> "llama-3.1-8b".
std::string ModelStem(const std::string& path);
// The trace's shape record for a target model: name = the file's stem (item names stay stable).
// The draft is the approximation until AttachEagle3Draft.
StatusOr<trace::ModelShape> ShapeFromConfig(const config::Model& m, const std::string& file);
// Resolve + load + ShapeFromConfig. An EAGLE-3 head cannot be a target.
StatusOr<trace::ModelShape> LoadModel(const std::string& arg, const std::vector<std::string>& roots);
// Uses an EAGLE-3 head (family EAGLE3) as `target`'s draft. Error when its hidden size differs.
Status AttachEagle3Draft(const config::Model& head, const std::string& file, trace::ModelShape* target);
// Loads every --draft-model head and attaches each to the models whose config name (or file stem)
// equals its eagle3.target. Error for a head that is not EAGLE3 or that matches no model.
Status AttachDraftModels(const std::vector<std::string>& args, const std::vector<std::string>& roots,
                         std::vector<trace::ModelShape>* models);

// ---- shapes per GPU ----
// One GEMM of a layer at a TP degree: out[m, n] = in[m, k] * W[n, k]^T, m = tokens.
struct GemmShape {
  std::string op;
  int64_t n = 0;
  int64_t k = 0;
};

// The GEMMs of one layer plus the LM head, per GPU: attention (qkv/o or MLA q_a/q_b/kv_a/kv_b/o),
// the dense MLP (when the model has dense layers), for MoE models the router, one routed expert
// (expert_gate_up / expert_down) and the shared experts (shared_gate_up / shared_down), then
// lm_head. Error when tp does not divide the heads or an intermediate size.
StatusOr<std::vector<GemmShape>> LayerGemms(const trace::ModelShape& m, int tp);

struct AttentionShape {
  int q_heads = 0;   // per GPU
  int kv_heads = 0;  // per GPU
  int head_dim = 0;
  int v_head_dim = 0;
  bool kv_shared = false;
};
StatusOr<AttentionShape> AttentionFor(const trace::ModelShape& m, int tp);

// Weight bytes in bf16 of the GEMMs above minus the LM head.
int64_t LayerWeightBytes(const std::vector<GemmShape>& gemms);

// Expected number of distinct experts hit when `tokens` tokens each pick `top_k` of `experts`
// uniformly: E * (1 - (1 - k/E)^T), rounded, in [min(k, E), E].
int ExpectedDistinctExperts(int experts, int top_k, int64_t tokens);

}  // namespace specsim::validate
