// The model as the block code reads it: sizes, the family row's traits, and
// which layers have experts. The CLI's `estimate --format json` carries it as
// "model", so that validation/ builds its PyTorch blocks from the model the
// importer produced, not from a second reading of config.json.
#include "core/model/hf_config.h"
#include "core/model/hf_families.h"

namespace trainmem {

nlohmann::json describeModel(const ModelConfig& m) {
    using nlohmann::json;
    const FamilySpec* known = findFamily(m.family);
    const FamilySpec& f = familyOf(m.family);
    json d;
    d["family"] = m.family;
    // The catalogue row it was read as ("llama-style" for an unknown model_type).
    d["read_as"] = known ? std::string(known->model_type) : std::string("llama-style");
    d["hidden_size"] = m.hidden_size;
    d["num_layers"] = m.num_layers;
    d["num_heads"] = m.num_heads;
    d["num_kv_heads"] = m.num_kv_heads;
    d["head_dim"] = m.head_dim;
    d["ffn_hidden_size"] = m.ffn_hidden_size;
    d["vocab_size"] = m.vocab_size;
    d["max_position_embeddings"] = m.max_position_embeddings;
    d["hidden_act"] = m.hidden_act;
    d["mlp"] = m.mlp == MlpKind::Gated ? "gated" : "plain";
    d["norm"] = m.norm == NormKind::RMSNorm ? "rmsnorm" : "layernorm";
    d["norms_per_block"] = m.norms_per_block;
    d["norm_placement"] = f.norm_placement == NormPlacement::Post ? "post" : "pre";
    d["norm_weight_fp32"] = f.norm_weight_fp32;
    d["qk_norm"] = !m.qk_norm                              ? "none"
                   : f.qk_norm_span == QkNormSpan::PerHead ? "per_head"
                   : f.qk_norm_span == QkNormSpan::L2      ? "l2"
                                                           : "projection";
    d["no_rope_layer_interval"] = m.no_rope_layer_interval;
    d["complex_rotary"] = f.complex_rotary;
    d["temperature_tuning"] = f.nope_temperature_tuning;
    d["attention_qkv_bias"] = m.attention_qkv_bias;
    d["attention_output_bias"] = m.attention_output_bias;
    d["mlp_bias"] = m.mlp_bias;
    d["tied_embeddings"] = m.tied_embeddings;
    d["learned_positions"] = m.learned_positions;
    d["rope"] = f.rope && !m.learned_positions;
    d["rotary_dim"] = rotaryTableWidth(m);
    d["rotary_half_table"] = f.rotary_half_table;
    d["attention_sinks"] = f.attention_sinks;
    d["sliding_window_layers"] = m.sliding_window_layers;
    d["rotary_tables"] = rotaryTables(m);
    d["causal_masks"] = causalMasks(m);
    d["activation_caveat"] = f.activation_caveat;  // also among the estimate's warnings
    d["attention_softcap"] = f.attention_softcap;
    d["final_logit_softcap"] = f.final_logit_softcap;
    d["modules"] = f.modules == ModuleNaming::Gpt2 ? "gpt2" : f.modules == ModuleNaming::Phi3 ? "phi3" : "llama";
    d["attention_dropout"] = m.attention_dropout;
    d["hidden_dropout"] = m.hidden_dropout;
    d["embedding_dropout"] = m.embedding_dropout;
    d["moe"] = nullptr;
    if (m.isMoe()) {
        const MoeConfig& e = *m.moe;
        json layers = json::array();
        for (int64_t i = 0; i < m.num_layers; ++i) layers.push_back(m.isMoeLayer(i));
        d["moe"] = {{"num_experts", e.num_experts},
                    {"experts_per_token", e.experts_per_token},
                    {"expert_ffn", e.expert_ffn},
                    {"shared_expert_ffn", e.shared_expert_ffn > 0 ? e.shared_expert_ffn
                                                                  : e.shared_experts * e.expert_ffn},
                    {"shared_expert_gate", e.shared_expert_gate},
                    {"router", f.sorted_expert_dispatch     ? "softmax_fp32_sorted"
                               : f.fp32_router              ? "sigmoid_fp32"
                               : f.router_topk_softmax      ? "topk_softmax"
                               : f.every_expert_every_token ? "topk_sigmoid_every_expert"
                                                            : "softmax"},
                    {"clamped_swiglu", f.clamped_swiglu},
                    {"router_score_bias", e.router_score_bias},
                    {"norm_topk_prob", e.norm_topk_prob},
                    {"routing_groups", e.routing_groups},
                    {"routing_groups_kept", e.routing_groups_kept},
                    {"capacity_factor", e.capacity_factor},
                    {"moe_layers", std::move(layers)}};
    }
    d["mla"] = nullptr;
    if (m.mla) {
        const MlaConfig& a = *m.mla;
        d["mla"] = {{"q_lora_rank", a.q_lora_rank},
                    {"kv_lora_rank", a.kv_lora_rank},
                    {"qk_nope_head_dim", a.qk_nope_head_dim},
                    {"qk_rope_head_dim", a.qk_rope_head_dim},
                    {"v_head_dim", a.v_head_dim}};
    }
    return d;
}

}  // namespace trainmem
