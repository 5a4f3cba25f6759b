#include "core/hf_families.h"

#include <array>
#include <string>

#include "core/hf_config.h"

namespace trainmem {
namespace {

// Values from the transformers configuration classes (configuration_<type>.py)
// and modeling files; docs/memory-model.md lists them with their sources.
// Fields: type, vocab, hidden, intermediate, layers, heads, kv_heads, head_dim,
// max_positions, tie, act, act_key, qkv_bias, reads_attention_bias,
// norms_per_block, experts, top_k, moe_intermediate, shared_experts,
// shared_intermediate, first_dense, shared_gate, mla.
constexpr std::array<FamilyDefaults, 11> kFamilies = {{
    // GPT2Config: n_inner None = 4 * n_embd (resolved by the importer); Conv1D
    // biases everywhere; LayerNorm; learned positions; tie_word_embeddings
    // from PretrainedConfig (True).
    {"gpt2", 50257, 768, 0, 12, 12, 0, 0, 1024, true, "gelu_new", "activation_function", true, false, 2,
     0, 0, 0, -1, 0, 0, false, false},
    {"llama", 32000, 4096, 11008, 32, 32, 0, 0, 2048, false, "silu", "hidden_act", false, true, 2,
     0, 0, 0, -1, 0, 0, false, false},
    // MistralConfig: num_key_value_heads=8, max_position_embeddings=4096*32;
    // MistralAttention has no biases.
    {"mistral", 32000, 4096, 14336, 32, 32, 8, 0, 131072, false, "silu", "hidden_act", false, false, 2,
     0, 0, 0, -1, 0, 0, false, false},
    // MixtralConfig: num_local_experts=8, num_experts_per_tok=2; experts use intermediate_size.
    {"mixtral", 32000, 4096, 14336, 32, 32, 8, 0, 131072, false, "silu", "hidden_act", false, false, 2,
     8, 2, 0, -1, 0, 0, false, false},
    // Qwen2Attention: q, k, v with bias=True, o without (no config key).
    {"qwen2", 151936, 4096, 22016, 32, 32, 32, 0, 32768, false, "silu", "hidden_act", true, false, 2,
     0, 0, 0, -1, 0, 0, false, false},
    // Qwen2MoeConfig: num_experts=60, top-4, moe_intermediate_size=1408, one
    // shared expert of 5632 with a sigmoid gate, qkv_bias=True.
    {"qwen2_moe", 151936, 2048, 5632, 24, 16, 16, 0, 32768, false, "silu", "hidden_act", true, false, 2,
     60, 4, 1408, -1, 5632, 0, true, false},
    // GemmaConfig: head_dim=256, tie_word_embeddings=True.
    {"gemma", 256000, 3072, 24576, 28, 16, 16, 256, 8192, true, "gelu_pytorch_tanh", "hidden_act", false, true, 2,
     0, 0, 0, -1, 0, 0, false, false},
    // Gemma2Config: pre- and post-norms around attention and MLP (4 per block).
    {"gemma2", 256000, 2304, 9216, 26, 8, 4, 256, 8192, true, "gelu_pytorch_tanh", "hidden_activation", false, true,
     4, 0, 0, 0, -1, 0, 0, false, false},
    // Phi3Config: fused qkv_proj / gate_up_proj without biases.
    {"phi3", 32064, 3072, 8192, 32, 32, 0, 0, 4096, false, "silu", "hidden_act", false, false, 2,
     0, 0, 0, -1, 0, 0, false, false},
    // DeepseekV2Config: n_routed_experts=64, num_experts_per_tok=None,
    // moe_intermediate_size=1407, n_shared_experts=2, first_k_dense_replace=0.
    {"deepseek_v2", 32000, 4096, 11008, 32, 32, 0, 0, 2048, false, "silu", "hidden_act", false, true, 2,
     64, 0, 1407, 2, 0, 0, false, true},
    // DeepseekV3Config: 256 experts, top-8, 2048 wide, 1 shared, 3 dense layers.
    {"deepseek_v3", 129280, 7168, 18432, 61, 128, 128, 0, 4096, false, "silu", "hidden_act", false, true, 2,
     256, 8, 2048, 1, 0, 3, false, true},
}};

// An unknown model_type must state its sizes (0 = required); the rest is Llama's.
constexpr FamilyDefaults kLlamaStyle = {"", 0, 0, 0, 0, 0, 0, 0, 0, false, "silu", "hidden_act", false, true, 2,
                                        0, 0, 0, -1, 0, 0, false, false};

}  // namespace

const FamilyDefaults* familyDefaults(std::string_view model_type) {
    for (const FamilyDefaults& f : kFamilies)
        if (f.model_type == model_type) return &f;
    return nullptr;
}

const FamilyDefaults& llamaStyleDefaults() { return kLlamaStyle; }

}  // namespace trainmem

namespace trainmem {

const std::vector<std::string>& supportedModelTypes() {
    static const std::vector<std::string> types = [] {
        std::vector<std::string> t;
        for (const FamilyDefaults& f : kFamilies) t.emplace_back(f.model_type);
        return t;
    }();
    return types;
}

MoeLayerFit fitMoeLayers(int64_t L, const MoeLayerSelection& k) {
    const int64_t fkd = k.first_k_dense_replace;
    const int64_t f1 = k.moe_layer_freq;
    const int64_t step = k.decoder_sparse_step;
    // Non-positive values are reported by validate() under their own key.
    if (f1 <= 0) return {{fkd, f1}, true};
    if (step <= 0) return {{0, step}, true};
    if (fkd < 0) return {{fkd, f1}, true};
    if (k.mlp_only_layers.empty() && step == 1) {
        // DeepSeek's rule: the first MoE layer is the first multiple of the
        // frequency at or after first_k_dense_replace.
        const int64_t first = (fkd + f1 - 1) / f1 * f1;
        if (fkd > L) return {{fkd, f1}, true};  // validate() rejects it
        return {{first > L ? L : first, f1}, true};
    }
    if (k.mlp_only_layers.empty() && fkd == 0 && f1 == 1) {
        // Qwen2-MoE's rule: layers step-1, 2*step-1, ...
        return {{step - 1 > L ? L : step - 1, step}, true};
    }
    auto isMoe = [&](int64_t i) {
        if (i < fkd || i % f1 != 0 || (i + 1) % step != 0) return false;
        for (int64_t d : k.mlp_only_layers)
            if (d == i) return false;
        return true;
    };
    std::vector<int64_t> moe;
    for (int64_t i = 0; i < L; ++i)
        if (isMoe(i)) moe.push_back(i);
    if (moe.empty()) return {{L, f1 > 1 ? f1 : step}, true};
    auto matches = [&](int64_t first, int64_t freq) {
        for (int64_t i = 0; i < L; ++i)
            if (isMoe(i) != (i >= first && (i - first) % freq == 0)) return false;
        return true;
    };
    const int64_t first = moe.front();
    const int64_t candidates[] = {moe.size() > 1 ? moe[1] - first : step, step, f1, L - first};
    for (int64_t freq : candidates)
        if (freq >= 1 && matches(first, freq)) return {{first, freq}, true};
    return {{first, 1}, false};
}

}  // namespace trainmem
