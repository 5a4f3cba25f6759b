#include "core/model_keys.h"

namespace trainmem {

std::string_view configKey(std::string_view family, ModelField f) {
    const bool gpt2 = family == "gpt2";
    const bool deepseek = family == "deepseek_v2" || family == "deepseek_v3";
    const bool qwen_moe = family == "qwen2_moe";
    switch (f) {
        case ModelField::HiddenSize: return gpt2 ? "n_embd" : "hidden_size";
        case ModelField::NumLayers: return gpt2 ? "n_layer" : "num_hidden_layers";
        case ModelField::NumHeads: return gpt2 ? "n_head" : "num_attention_heads";
        case ModelField::NumKvHeads: return "num_key_value_heads";
        case ModelField::HeadDim: return "head_dim";
        case ModelField::Intermediate: return gpt2 ? "n_inner" : "intermediate_size";
        case ModelField::Vocab: return "vocab_size";
        case ModelField::MaxPositions: return gpt2 ? "n_positions" : "max_position_embeddings";
        case ModelField::NormsPerBlock: return "norms_per_block";
        case ModelField::AttentionDropout: return gpt2 ? "attn_pdrop" : "attention_dropout";
        // GPT-2's and Phi-3's names; every family reads them (hf_config.cpp).
        case ModelField::HiddenDropout: return "resid_pdrop";
        case ModelField::EmbeddingDropout: return "embd_pdrop";
        case ModelField::NumExperts:
            return deepseek ? "n_routed_experts" : qwen_moe ? "num_experts" : "num_local_experts";
        case ModelField::ExpertsPerToken: return "num_experts_per_tok";
        case ModelField::ExpertFfn: return family == "mixtral" ? "intermediate_size" : "moe_intermediate_size";
        case ModelField::SharedExperts: return "n_shared_experts";
        case ModelField::SharedExpertFfn: return "shared_expert_intermediate_size";
        case ModelField::FirstDenseLayers: return qwen_moe ? "mlp_only_layers" : "first_k_dense_replace";
        case ModelField::LayerFrequency: return qwen_moe ? "decoder_sparse_step" : "moe_layer_freq";
        case ModelField::CapacityFactor: return "capacity_factor";
        case ModelField::QLoraRank: return "q_lora_rank";
        case ModelField::KvLoraRank: return "kv_lora_rank";
        case ModelField::QkNopeHeadDim: return "qk_nope_head_dim";
        case ModelField::QkRopeHeadDim: return "qk_rope_head_dim";
        case ModelField::VHeadDim: return "v_head_dim";
    }
    return "";
}

std::string modelField(std::string_view family, ModelField f) {
    return "model." + std::string(configKey(family, f));
}

}  // namespace trainmem
