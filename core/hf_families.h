#pragma once
// Each supported model_type's transformers configuration-class defaults
// (configuration_<type>.py), used for keys a config.json leaves out, and the
// family conventions no config key states. Internal to the core; shared by
// the importer and the exporter.
#include <cstdint>
#include <string_view>
#include <vector>

namespace trainmem {

struct FamilyDefaults {
    std::string_view model_type;
    int64_t vocab_size;
    int64_t hidden_size;
    int64_t intermediate_size;
    int64_t num_layers;
    int64_t num_heads;
    int64_t num_kv_heads;       // when the key is absent; 0 = num_heads (an explicit null is always num_heads)
    int64_t head_dim;           // 0 = hidden_size / num_heads
    int64_t max_positions;
    bool tie_word_embeddings;
    std::string_view hidden_act;
    std::string_view act_key;   // "hidden_act", or Gemma-2's "hidden_activation"
    bool qkv_bias;              // family convention (Qwen2: always; Qwen2-MoE: the qkv_bias key's default)
    bool reads_attention_bias;  // the modeling code honours attention_bias (q, k, v and o)
    int64_t norms_per_block;
    // Mixture of experts (num_experts == 0: dense unless the config has expert keys).
    int64_t num_experts;
    int64_t experts_per_token;  // 0 = none (required when the model has experts)
    int64_t moe_intermediate;   // 0 = intermediate_size (Mixtral)
    int64_t shared_experts;     // n_shared_experts default; -1 = one when a shared width is given, else none
    int64_t shared_intermediate;
    int64_t first_dense_layers;
    bool shared_expert_gate;
    bool mla;                   // DeepSeek multi-head latent attention
};

// nullptr for model_types without known defaults (read as Llama-style).
const FamilyDefaults* familyDefaults(std::string_view model_type);

// The defaults used for an unknown model_type (Llama's, minus the sizes,
// which such a config must state).
const FamilyDefaults& llamaStyleDefaults();

// Which blocks have routed experts, as ModelConfig holds it: the first MoE
// layer and the step between MoE layers.
struct MoeLayerPattern {
    int64_t first_dense_layers = 0;
    int64_t layer_frequency = 1;
    bool operator==(const MoeLayerPattern&) const = default;
};

// The layer-selection keys of the families, combined: DeepSeek's
// (layer >= first_k_dense_replace and layer % moe_layer_freq == 0, as in
// DeepSeek's modeling_deepseek.py) and Qwen2-MoE's (layer not in
// mlp_only_layers and (layer + 1) % decoder_sparse_step == 0). The layers
// they select must form a pattern ModelConfig can hold; `supported` is false
// when they do not.
struct MoeLayerSelection {
    int64_t first_k_dense_replace = 0;
    int64_t moe_layer_freq = 1;
    int64_t decoder_sparse_step = 1;
    std::vector<int64_t> mlp_only_layers;
};
struct MoeLayerFit {
    MoeLayerPattern pattern;
    bool supported = true;
};
MoeLayerFit fitMoeLayers(int64_t num_layers, const MoeLayerSelection& keys);

}  // namespace trainmem
