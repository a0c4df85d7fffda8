// A transformer's shape in plain C++ (loaded by sim/io from models/*.textproto or a Hugging Face
// config.json). Only shapes matter to the simulator.
#pragma once

#include <string>

#include "sim/llm/weight_format.h"

namespace specsim::llm {

enum class ModelFamily {
  kLlama,
  kQwen3,
  kQwen3Moe,
  kDeepseekV3,
  kGptOss,
  kEagle3,
  kMistral,
  kMixtral,
  kQwen2,
  kQwen2Moe,
  kDeepseekV2,
  kGlm4Moe
};

const char* ModelFamilyName(ModelFamily f);

struct MoeSpec {
  int num_experts = 0;  // 0: dense model
  int num_shared_experts = 0;
  int experts_per_token = 0;
  int moe_intermediate_size = 0;
  int first_dense_layers = 0;  // layers [0, first_dense_layers) use the dense MLP
};

struct MlaSpec {
  int q_lora_rank = 0;   // 0: no query compression (q_proj h -> heads * (nope + rope))
  int kv_lora_rank = 0;  // 0: no MLA
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
};

struct Eagle3Spec {
  int draft_vocab_size = 0;
  int fused_hidden_states = 3;
  std::string target;
};

struct ModelSpec {
  std::string name;
  ModelFamily family = ModelFamily::kLlama;
  int num_layers = 0;
  int hidden_size = 0;
  int num_attention_heads = 0;
  int num_key_value_heads = 0;
  int head_dim = 0;
  int intermediate_size = 0;
  int vocab_size = 0;
  bool tie_word_embeddings = false;
  MoeSpec moe;
  MlaSpec mla;
  int sliding_window = 0;
  int sliding_window_every = 0;
  Eagle3Spec eagle3;
  int num_nextn_predict_layers = 0;
  // How the checkpoint stores its weights (config.json quantization_config); used when a scenario
  // asks for the checkpoint's formats (FormatsFromCheckpoint).
  CheckpointQuantization quantization;
  std::string hf_id;               // Hugging Face repository, for launch commands ("" unknown)
  bool trust_remote_code = false;  // the checkpoint ships modelling code (auto_map)
  // The draft's published acceptance (model.proto PublishedAcceptance); mean_accept_length 0: none.
  struct PublishedAcceptance {
    double mean_accept_length = 0;
    int num_steps = 0, topk = 1, num_draft_tokens = 0;
    std::string source;
  } published_acceptance;

  bool is_moe() const { return moe.num_experts > 0; }
  bool is_mla() const { return mla.kv_lora_rank > 0; }
  bool is_eagle3() const { return family == ModelFamily::kEagle3; }
  // Layer l uses routed experts (MoE) rather than the dense MLP.
  bool is_moe_layer(int layer) const { return is_moe() && layer >= moe.first_dense_layers; }
};

// The formats of the tensor classes `m` has (attention and LM head always; the dense MLP, shared
// and routed experts where the model has them), classes of one format together, in that order:
// "attention, LM head bf16; routed experts fp4 g32 +8-bit scales" (WeightFormatName).
std::string DescribeWeightFormats(const ModelSpec& m, const WeightFormats& f);

}  // namespace specsim::llm
