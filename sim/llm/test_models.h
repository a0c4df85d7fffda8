// Model shapes for tests, from the models' config.json (docs/reference/models.md). Test-only: the
// simulator loads models from models/*.textproto or config.json through sim/io.
#pragma once

#include "sim/llm/model.h"

namespace specsim::llm::testing {

inline ModelSpec Llama31_8B() {
  ModelSpec m;
  m.name = "Llama-3.1-8B";
  m.family = ModelFamily::kLlama;
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.num_attention_heads = 32;
  m.num_key_value_heads = 8;
  m.head_dim = 128;
  m.intermediate_size = 14336;
  m.vocab_size = 128256;
  return m;
}

// Llama-3.2-1B (models/llama-3.2-1b.textproto): the usual standalone draft for Llama-3.1.
inline ModelSpec Llama32_1B() {
  ModelSpec m;
  m.name = "Llama-3.2-1B";
  m.family = ModelFamily::kLlama;
  m.num_layers = 16;
  m.hidden_size = 2048;
  m.num_attention_heads = 32;
  m.num_key_value_heads = 8;
  m.head_dim = 64;
  m.intermediate_size = 8192;
  m.vocab_size = 128256;
  m.tie_word_embeddings = true;
  return m;
}

inline ModelSpec Llama31_70B() {
  ModelSpec m = Llama31_8B();
  m.name = "Llama-3.1-70B";
  m.num_layers = 80;
  m.hidden_size = 8192;
  m.num_attention_heads = 64;
  m.intermediate_size = 28672;
  return m;
}

inline ModelSpec Qwen3_235B() {
  ModelSpec m;
  m.name = "Qwen3-235B-A22B";
  m.family = ModelFamily::kQwen3Moe;
  m.num_layers = 94;
  m.hidden_size = 4096;
  m.num_attention_heads = 64;
  m.num_key_value_heads = 4;
  m.head_dim = 128;
  m.intermediate_size = 12288;
  m.vocab_size = 151936;
  m.moe = {128, 0, 8, 1536, 0};
  return m;
}

inline ModelSpec GptOss120B() {
  ModelSpec m;
  m.name = "gpt-oss-120b";
  m.family = ModelFamily::kGptOss;
  m.num_layers = 36;
  m.hidden_size = 2880;
  m.num_attention_heads = 64;
  m.num_key_value_heads = 8;
  m.head_dim = 64;
  m.intermediate_size = 2880;
  m.vocab_size = 201088;
  m.moe = {128, 0, 4, 2880, 0};
  m.sliding_window = 128;
  m.sliding_window_every = 2;
  return m;
}

inline ModelSpec DeepseekV3() {
  ModelSpec m;
  m.name = "DeepSeek-V3";
  m.family = ModelFamily::kDeepseekV3;
  m.num_layers = 61;
  m.hidden_size = 7168;
  m.num_attention_heads = 128;
  m.num_key_value_heads = 128;
  m.head_dim = 192;
  m.intermediate_size = 18432;
  m.vocab_size = 129280;
  m.moe = {256, 1, 8, 2048, 3};
  m.mla = {1536, 512, 128, 64, 128};
  m.num_nextn_predict_layers = 1;
  return m;
}

inline ModelSpec KimiK2() {
  ModelSpec m = DeepseekV3();
  m.name = "Kimi-K2";
  m.num_attention_heads = 64;
  m.num_key_value_heads = 64;
  m.vocab_size = 163840;
  m.moe = {384, 1, 8, 2048, 1};
  m.num_nextn_predict_layers = 0;
  return m;
}

// yuhuili/EAGLE3-LLaMA3.1-Instruct-8B.
inline ModelSpec Eagle3Llama31_8B() {
  ModelSpec m = Llama31_8B();
  m.name = "EAGLE3-LLaMA3.1-Instruct-8B";
  m.family = ModelFamily::kEagle3;
  m.num_layers = 1;
  m.eagle3.draft_vocab_size = 32000;
  m.eagle3.fused_hidden_states = 3;
  m.eagle3.target = "Llama-3.1-8B";
  return m;
}

}  // namespace specsim::llm::testing
