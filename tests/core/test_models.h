#pragma once
// Architectures written out by hand from their published config.json files,
// so estimator tests do not depend on the preset loader or the HF importer.
#include "core/model/model_config.h"
#include "core/scenario/scenario.h"

namespace trainmem::testing {

// meta-llama/Llama-2-7b-hf: 6,738,415,616 parameters.
inline ModelConfig llama2_7b() {
    ModelConfig m;
    m.name = "Llama-2-7B";
    m.family = "llama";
    m.hidden_size = 4096;
    m.num_layers = 32;
    m.num_heads = 32;
    m.num_kv_heads = 32;
    m.head_dim = 128;
    m.ffn_hidden_size = 11008;
    m.vocab_size = 32000;
    m.max_position_embeddings = 4096;
    return m;
}

// openai-community/gpt2-xl: 1,557,611,200 parameters (the ZeRO paper's "GPT-2 1.5B").
inline ModelConfig gpt2_xl() {
    ModelConfig m;
    m.name = "GPT-2 XL";
    m.family = "gpt2";
    m.hidden_size = 1600;
    m.num_layers = 48;
    m.num_heads = 25;
    m.num_kv_heads = 25;
    m.head_dim = 64;
    m.ffn_hidden_size = 6400;
    m.vocab_size = 50257;
    m.max_position_embeddings = 1024;
    m.mlp = MlpKind::Plain;
    m.norm = NormKind::LayerNorm;
    m.attention_qkv_bias = true;
    m.attention_output_bias = true;
    m.mlp_bias = true;
    m.tied_embeddings = true;
    m.learned_positions = true;
    m.hidden_act = "gelu_new";
    return m;
}

// meta-llama/Llama-3.1-405B: 405,853,388,800 parameters.
inline ModelConfig llama31_405b() {
    ModelConfig m = llama2_7b();
    m.name = "Llama-3.1-405B";
    m.hidden_size = 16384;
    m.num_layers = 126;
    m.num_heads = 128;
    m.num_kv_heads = 8;
    m.head_dim = 128;
    m.ffn_hidden_size = 53248;
    m.vocab_size = 128256;
    m.max_position_embeddings = 131072;
    return m;
}

// mistralai/Mixtral-8x7B-v0.1: 46,702,792,704 parameters.
inline ModelConfig mixtral_8x7b() {
    ModelConfig m = llama2_7b();
    m.name = "Mixtral-8x7B";
    m.family = "mixtral";
    m.num_kv_heads = 8;
    m.ffn_hidden_size = 14336;
    m.max_position_embeddings = 32768;
    MoeConfig moe;
    moe.num_experts = 8;
    moe.experts_per_token = 2;
    moe.expert_ffn = 14336;
    m.moe = moe;
    return m;
}

inline Scenario scenarioOf(ModelConfig m) {
    Scenario s;
    s.name = m.name;
    s.model = std::move(m);
    return s;
}

}  // namespace trainmem::testing
