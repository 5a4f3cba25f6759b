// The model as the block code reads it: sizes, the family row's traits, and
// which layers have experts. The CLI's `estimate --format json` carries it as
// "model", so that validation/ builds its PyTorch blocks from the model the
// importer produced, not from a second reading of config.json. The plain
// fields are the model-field table's rows (their described_as names); the
// family's traits and what follows from them are written here.
#include "core/model/hf_config.h"
#include "core/model/hf_families.h"
#include "core/model/model_fields.h"

namespace trainmem {

namespace {

// The rows of one section (or of every dense one) under their described names.
void describeFields(nlohmann::json& d, const ModelConfig& m, bool (*in)(ModelSection)) {
    for (const ModelFieldRow& row : modelFields())
        if (!row.described_as.empty() && in(row.section)) d[std::string(row.described_as)] = row.get(m);
}

const char* mixerName(MixerKind k) {
    switch (k) {
        case MixerKind::Attention: return "attention";
        case MixerKind::GatedDeltaNet: return "gated_deltanet";
        case MixerKind::Mamba2: return "mamba2";
        case MixerKind::ShortConv: return "short_conv";
        case MixerKind::None: return "none";
        case MixerKind::ParallelAttentionMamba2: return "attention_and_mamba2";
        case MixerKind::Mamba1: return "mamba1";
        case MixerKind::KimiDeltaAttention: return "kimi_delta_attention";
    }
    return "none";
}

const char* ffnName(FfnKind k) {
    return k == FfnKind::Dense ? "dense" : k == FfnKind::Moe ? "moe" : "none";
}

// The hybrids' layers and their mixers' sizes (issue 23): validation builds
// each layer of the kind the importer read.
void describeHybrid(nlohmann::json& d, const ModelConfig& m) {
    using nlohmann::json;
    d["layer_kinds"] = nullptr;
    if (m.isHybrid()) {
        json kinds = json::array();
        for (const LayerKind& k : m.layer_kinds) kinds.push_back({{"mixer", mixerName(k.mixer)}, {"ffn", ffnName(k.ffn)}});
        d["layer_kinds"] = std::move(kinds);
    }
    d["attention_output_gate"] = m.attention_output_gate;
    d["linear_attention"] = nullptr;
    if (const auto& g = m.linear_attention)
        d["linear_attention"] = {{"key_heads", g->key_heads},         {"value_heads", g->value_heads},
                                 {"key_head_dim", g->key_head_dim},   {"value_head_dim", g->value_head_dim},
                                 {"conv_kernel", g->conv_kernel}};
    d["mamba"] = nullptr;
    if (const auto& x = m.mamba)
        d["mamba"] = {{"heads", x->heads},         {"head_dim", x->head_dim},       {"state_size", x->state_size},
                      {"groups", x->groups},       {"conv_kernel", x->conv_kernel}, {"chunk_size", x->chunk_size},
                      {"conv_bias", x->conv_bias}, {"proj_bias", x->proj_bias}};
    d["short_conv"] = nullptr;
    if (const auto& c = m.short_conv) d["short_conv"] = {{"kernel", c->kernel}, {"bias", c->bias}};
    // Falcon-H1, Jamba and Kimi Linear: said only where a model has them, so
    // that the other models' descriptions stay as they were.
    if (const auto& x = m.mamba; x && (x->out_proj_bias != x->proj_bias || !x->gated_norm)) {
        d["mamba"]["out_proj_bias"] = x->out_proj_bias;
        d["mamba"]["gated_norm"] = x->gated_norm;
    }
    if (const auto& s = m.mamba1)
        d["mamba1"] = {{"expand", s->expand},       {"state_size", s->state_size}, {"conv_kernel", s->conv_kernel},
                       {"dt_rank", s->dt_rank},     {"conv_bias", s->conv_bias},   {"proj_bias", s->proj_bias}};
    if (!m.layer_ffn_widths.empty()) d["layer_ffn_widths"] = m.layer_ffn_widths;
    if (const auto& k = m.delta_attention)
        d["delta_attention"] = {{"heads", k->heads}, {"head_dim", k->head_dim}, {"conv_kernel", k->conv_kernel}};
}

}  // namespace

nlohmann::json describeModel(const ModelConfig& m) {
    using nlohmann::json;
    const FamilySpec* known = findFamily(m.family);
    const FamilySpec& f = familyOf(m.family);
    json d;
    describeFields(d, m, [](ModelSection s) { return s != ModelSection::Experts && s != ModelSection::Latent; });
    // The catalogue row it was read as ("llama-style" for an unknown model_type).
    d["read_as"] = known ? std::string(known->model_type) : std::string("llama-style");
    d["norm_placement"] = f.norm_placement == NormPlacement::Post ? "post" : "pre";
    d["norm_weight_fp32"] = f.norm_weight_fp32;
    d["qk_norm"] = !m.qk_norm                              ? "none"
                   : f.qk_norm_span == QkNormSpan::PerHead ? "per_head"
                   : f.qk_norm_span == QkNormSpan::L2      ? "l2"
                                                           : "projection";
    d["complex_rotary"] = f.complex_rotary;
    d["temperature_tuning"] = f.nope_temperature_tuning;
    d["rope"] = f.rope && !m.learned_positions;
    d["rotary_dim"] = rotaryTableWidth(m);
    d["rotary_half_table"] = f.rotary_half_table;
    d["attention_sinks"] = f.attention_sinks;
    d["rotary_tables"] = rotaryTables(m);
    d["causal_masks"] = causalMasks(m);
    d["activation_caveat"] = f.activation_caveat;  // also among the estimate's warnings
    d["attention_softcap"] = f.attention_softcap;
    d["final_logit_softcap"] = f.final_logit_softcap;
    d["modules"] = f.modules == ModuleNaming::Gpt2 ? "gpt2" : f.modules == ModuleNaming::Phi3 ? "phi3" : "llama";
    d["moe"] = nullptr;
    if (m.isMoe()) {
        const MoeConfig& e = *m.moe;
        json layers = json::array();
        for (int64_t i = 0; i < m.num_layers; ++i) layers.push_back(m.isMoeLayer(i));
        json moe = {{"shared_expert_ffn", e.shared_expert_ffn > 0 ? e.shared_expert_ffn
                                                                   : e.shared_experts * e.expert_ffn},
                    {"router", f.sorted_expert_dispatch     ? "softmax_fp32_sorted"
                               : f.fp32_router              ? "sigmoid_fp32"
                               : f.router_topk_softmax      ? "topk_softmax"
                               : f.every_expert_every_token ? "topk_sigmoid_every_expert"
                                                            : "softmax"},
                    {"clamped_swiglu", f.clamped_swiglu},
                    {"moe_layers", std::move(layers)}};
        describeFields(moe, m, [](ModelSection s) { return s == ModelSection::Experts; });
        d["moe"] = std::move(moe);
    }
    // DeepSeek Sparse Attention's indexer (validation builds it and runs it
    // as transformers does, under no_grad).
    d["indexer"] = nullptr;
    if (m.indexer)
        d["indexer"] = {{"heads", m.indexer->heads}, {"head_dim", m.indexer->head_dim}, {"topk", m.indexer->topk}};
    describeHybrid(d, m);
    d["mla"] = nullptr;
    if (m.mla) {
        json mla = json::object();
        describeFields(mla, m, [](ModelSection s) { return s == ModelSection::Latent; });
        d["mla"] = std::move(mla);
    }
    return d;
}

}  // namespace trainmem
