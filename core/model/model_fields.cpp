#include "core/model/model_keys.h"

#include "core/model/hf_families.h"

namespace trainmem {

std::string_view configKey(std::string_view family, ModelField f) {
    const FamilySpec& spec = familyOf(family);
    const bool qwen_layers = spec.moe_layer_keys == MoeLayerKeys::Qwen;
    const bool llama4_layers = spec.moe_layer_keys == MoeLayerKeys::Llama4;
    switch (f) {
        case ModelField::HiddenSize: return spec.hidden_key;
        case ModelField::NumLayers: return spec.layers_key;
        case ModelField::NumHeads: return spec.heads_key;
        case ModelField::NumKvHeads: return "num_key_value_heads";
        case ModelField::HeadDim: return "head_dim";
        case ModelField::Intermediate: return spec.intermediate_key;
        case ModelField::Vocab: return "vocab_size";
        case ModelField::MaxPositions: return spec.positions_key;
        case ModelField::NormsPerBlock: return "norms_per_block";
        case ModelField::AttentionDropout: return spec.attention_dropout_key;
        // GPT-2's and Phi-3's names; every family reads them (hf_config.cpp).
        case ModelField::HiddenDropout: return "resid_pdrop";
        case ModelField::EmbeddingDropout: return "embd_pdrop";
        case ModelField::NumExperts: return spec.experts_key;
        case ModelField::ExpertsPerToken: return "num_experts_per_tok";
        case ModelField::ExpertFfn: return spec.expert_ffn_key;
        case ModelField::SharedExperts: return "n_shared_experts";
        case ModelField::SharedExpertFfn: return "shared_expert_intermediate_size";
        case ModelField::FirstDenseLayers:
            if (llama4_layers) return "moe_layers";
            return qwen_layers ? "mlp_only_layers" : "first_k_dense_replace";
        case ModelField::LayerFrequency:
            if (llama4_layers) return "interleave_moe_layer_step";
            return qwen_layers ? "decoder_sparse_step" : "moe_layer_freq";
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
