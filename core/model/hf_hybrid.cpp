#include "core/model/hf_hybrid.h"

#include <algorithm>

namespace trainmem {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

// One kind per layer from a list of names; `kind_of` maps a name to its
// kind or returns false for a name the family does not have.
template <class KindOf>
bool readTypeList(ConfigReader& r, std::string_view key, ModelConfig& m, std::string_view allowed, KindOf kind_of) {
    const std::vector<std::string> types = r.strings(key);
    if (r.failed()) return false;
    if (static_cast<int64_t>(types.size()) != m.num_layers) {
        r.fail(key, "must name one type per layer: " + str(m.num_layers) + " (num_hidden_layers), got " +
                        str(static_cast<int64_t>(types.size())));
        return false;
    }
    m.layer_kinds.assign(types.size(), LayerKind{});
    for (size_t i = 0; i < types.size(); ++i) {
        if (!kind_of(types[i], m.layer_kinds[i])) {
            r.fail(key, "entries must be " + std::string(allowed) + " (got \"" + types[i].substr(0, 40) + "\" at " +
                            str(static_cast<int64_t>(i)) + ")");
            return false;
        }
    }
    return true;
}

// Qwen3-Next / Qwen3.5 (Qwen3NextConfig.__post_init__): layer_types, else
// every full_attention_interval-th layer (counted from 1) full attention,
// the others Gated DeltaNet; the FFN by the MoE keys read before.
void readLinearAttentionLayers(ConfigReader& r, const FamilySpec& d, ModelConfig& m) {
    auto ffn = [&](int64_t i) { return m.isMoeLayer(i) ? FfnKind::Moe : FfnKind::Dense; };
    // isMoeLayer reads the MoE pattern while layer_kinds is still empty.
    std::vector<FfnKind> ffns(static_cast<size_t>(m.num_layers));
    for (int64_t i = 0; i < m.num_layers; ++i) ffns[static_cast<size_t>(i)] = ffn(i);
    if (r.present("layer_types")) {
        if (!readTypeList(r, "layer_types", m, "\"linear_attention\" or \"full_attention\"",
                          [](const std::string& t, LayerKind& k) {
                              if (t != "linear_attention" && t != "full_attention") return false;
                              k.mixer = t == "full_attention" ? MixerKind::Attention : MixerKind::GatedDeltaNet;
                              return true;
                          }))
            return;
    } else {
        const int64_t every = r.integer("full_attention_interval", d.full_attention_interval);
        if (r.failed()) return;
        if (every <= 0) {
            r.fail("full_attention_interval", "must be a positive integer (got " + str(every) + ")");
            return;
        }
        m.layer_kinds.assign(static_cast<size_t>(m.num_layers), LayerKind{});
        for (int64_t i = 0; i < m.num_layers; ++i)
            if ((i + 1) % every != 0) m.layer_kinds[static_cast<size_t>(i)].mixer = MixerKind::GatedDeltaNet;
    }
    for (size_t i = 0; i < ffns.size(); ++i) m.layer_kinds[i].ffn = ffns[i];
    LinearAttentionConfig g;
    g.key_heads = r.integer("linear_num_key_heads", 16);
    g.value_heads = r.integer("linear_num_value_heads", 32);
    g.key_head_dim = r.integer("linear_key_head_dim", 128);
    g.value_head_dim = r.integer("linear_value_head_dim", 128);
    g.conv_kernel = r.integer("linear_conv_kernel_dim", 4);
    m.linear_attention = g;
    // Qwen3NextAttention's q_proj always makes the gate (attn_output_gate,
    // which Qwen3.5's config states as true).
    m.attention_output_gate = r.boolean("attn_output_gate", true);
}

MambaConfig readMamba(ConfigReader& r, bool granite) {
    MambaConfig s;
    // NemotronHConfig's spellings, then GraniteMoeHybridConfig's.
    s.heads = r.integer(granite ? "mamba_n_heads" : "mamba_num_heads", 128);
    const std::string_view head_key = granite ? "mamba_d_head" : "mamba_head_dim";
    const std::optional<std::string> automatic = granite && r.present(head_key) && r.isText(head_key)
                                                     ? r.text(head_key) : std::nullopt;
    if (automatic && *automatic != "auto") r.fail(head_key, "must be a positive integer or \"auto\" (got \"" + automatic->substr(0, 40) + "\")");
    s.head_dim = automatic ? 0 : r.integer(head_key, 64);
    s.state_size = r.integer(granite ? "mamba_d_state" : "ssm_state_size", granite ? 256 : 128);
    s.groups = r.integer(granite ? "mamba_n_groups" : "n_groups", granite ? 1 : 8);
    s.conv_kernel = r.integer(granite ? "mamba_d_conv" : "conv_kernel", 4);
    s.chunk_size = r.integer(granite ? "mamba_chunk_size" : "chunk_size", granite ? 256 : 128);
    s.conv_bias = r.boolean(granite ? "mamba_conv_bias" : "use_conv_bias", true);
    s.proj_bias = r.boolean(granite ? "mamba_proj_bias" : "use_bias", false);
    return s;
}

// Nemotron-H (NemotronHConfig): hybrid_override_pattern, one character per
// layer: M a Mamba-2 mixer, * attention, - an MLP, E a MoE block; each
// layer is one of them with one norm.
void readNemotronPattern(ConfigReader& r, const FamilySpec& d, ModelConfig& m) {
    std::optional<std::string> pattern = r.text("hybrid_override_pattern");
    if (!pattern && !r.has("hybrid_override_pattern") && !d.layer_pattern_default.empty())
        pattern = std::string(d.layer_pattern_default);
    if (r.failed()) return;
    if (!pattern) {
        r.fail("hybrid_override_pattern", "required: one character per layer (M Mamba-2, * attention, - MLP, E MoE)");
        return;
    }
    if (static_cast<int64_t>(pattern->size()) != m.num_layers) {
        r.fail("hybrid_override_pattern", "must have one character per layer: " + str(m.num_layers) +
                                              " (num_hidden_layers), got " + str(static_cast<int64_t>(pattern->size())));
        return;
    }
    m.layer_kinds.assign(pattern->size(), LayerKind{});
    for (size_t i = 0; i < pattern->size(); ++i) {
        LayerKind& k = m.layer_kinds[i];
        switch ((*pattern)[i]) {
            case 'M': k = {MixerKind::Mamba2, FfnKind::None}; break;
            case '*': k = {MixerKind::Attention, FfnKind::None}; break;
            case '-': k = {MixerKind::None, FfnKind::Dense}; break;
            case 'E': k = {MixerKind::None, FfnKind::Moe}; break;
            default:
                r.fail("hybrid_override_pattern", "characters must be M (Mamba-2), * (attention), - (MLP) or E (MoE) "
                                                  "(got '" + std::string(1, (*pattern)[i]) + "' at " +
                                                  str(static_cast<int64_t>(i)) + ")");
                return;
        }
        if (k.ffn == FfnKind::Moe && !m.isMoe()) {
            r.fail("hybrid_override_pattern", "has a MoE layer (E) but n_routed_experts gives no experts");
            return;
        }
    }
    m.mamba = readMamba(r, false);
}

// Granite 4.0-H (GraniteMoeHybridConfig): layer_types of "mamba" and
// "attention"; every layer has its experts and shared MLP.
void readGraniteLayers(ConfigReader& r, ModelConfig& m) {
    const FfnKind ffn = m.isMoe() ? FfnKind::Moe : FfnKind::Dense;
    if (!r.present("layer_types")) {
        m.layer_kinds.assign(static_cast<size_t>(m.num_layers), LayerKind{MixerKind::Mamba2, ffn});  // the class default
    } else if (!readTypeList(r, "layer_types", m, "\"mamba\" or \"attention\"", [&](const std::string& t, LayerKind& k) {
            if (t != "mamba" && t != "attention") return false;
            k = {t == "mamba" ? MixerKind::Mamba2 : MixerKind::Attention, ffn};
            return true;
        })) {
        return;
    }
    MambaConfig s = readMamba(r, true);
    // mamba_d_head "auto", null or absent (the class default "auto"):
    // mamba_expand * h / mamba_n_heads.
    const bool automatic = !r.present("mamba_d_head") || r.isText("mamba_d_head");
    const int64_t expand = r.integer("mamba_expand", 2);
    if (automatic && s.heads > 0) s.head_dim = expand * m.hidden_size / s.heads;
    m.mamba = s;
}

// LFM2 (Lfm2Config): layer_types of "conv" and "full_attention", or the
// older full_attn_idxs list; conv_L_cache and conv_bias size the conv.
void readConvLayers(ConfigReader& r, ModelConfig& m) {
    if (r.present("layer_types")) {
        if (!readTypeList(r, "layer_types", m, "\"conv\" or \"full_attention\"", [](const std::string& t, LayerKind& k) {
                if (t != "conv" && t != "full_attention") return false;
                k = {t == "conv" ? MixerKind::ShortConv : MixerKind::Attention, FfnKind::Dense};
                return true;
            }))
            return;
    } else {
        m.layer_kinds.assign(static_cast<size_t>(m.num_layers), LayerKind{MixerKind::ShortConv, FfnKind::Dense});
        for (int64_t i : r.integers("full_attn_idxs")) {
            if (r.failed()) return;
            if (i < 0 || i >= m.num_layers) {
                r.fail("full_attn_idxs", "entries must be layer indices 0.." + str(m.num_layers - 1) + " (got " +
                                             str(i) + ")");
                return;
            }
            m.layer_kinds[static_cast<size_t>(i)].mixer = MixerKind::Attention;
        }
    }
    // Lfm2MLP (modeling_lfm2.py): block_ff_dim (the original key of
    // intermediate_size) reduced to two thirds, scaled by
    // block_ffn_dim_multiplier and rounded up to block_multiple_of.
    int64_t width = r.present("block_ff_dim") ? r.integer("block_ff_dim", 0) : m.ffn_hidden_size;
    if (r.boolean("block_auto_adjust_ff_dim", true)) {
        width = 2 * width / 3;
        if (!r.isNull("block_ffn_dim_multiplier")) {
            const double mult = r.number("block_ffn_dim_multiplier", 1.0);
            const int64_t multiple = r.integer("block_multiple_of", 256);
            if (!r.failed() && (multiple <= 0 || !(mult > 0) || mult > 64)) {
                r.fail(multiple <= 0 ? "block_multiple_of" : "block_ffn_dim_multiplier", "must be positive");
                return;
            }
            width = static_cast<int64_t>(mult * static_cast<double>(width));
            width = multiple * ((width + multiple - 1) / multiple);
        }
    }
    m.ffn_hidden_size = width;
    m.tied_embeddings = r.boolean("tie_embedding", m.tied_embeddings);
    ShortConvConfig c;
    c.kernel = r.integer("conv_L_cache", 3);
    c.bias = r.boolean("conv_bias", false);
    m.short_conv = c;
}

}  // namespace

void readHybridLayers(ConfigReader& r, const FamilySpec& d, ModelConfig& m, std::vector<std::string>& /*warnings*/) {
    if (r.failed() || m.num_layers <= 0) return;
    switch (d.layer_pattern) {
        case LayerPatternKeys::None: return;
        case LayerPatternKeys::LinearAttentionTypes: readLinearAttentionLayers(r, d, m); break;
        case LayerPatternKeys::HybridOverride: readNemotronPattern(r, d, m); break;
        case LayerPatternKeys::MambaAttentionTypes: readGraniteLayers(r, m); break;
        case LayerPatternKeys::ConvAttentionTypes: readConvLayers(r, m); break;
    }
    // Experts that no layer of the pattern builds are not there (NemotronHConfig's
    // defaults name 8 experts beside a pattern without an E layer).
    if (m.isHybrid() && m.moe && std::none_of(m.layer_kinds.begin(), m.layer_kinds.end(),
                                              [](LayerKind k) { return k.ffn == FfnKind::Moe; }))
        m.moe.reset();
    // Where the pattern names each layer's FFN, the MoE rule's fields say
    // nothing (validateHybrid holds them to 0 and 1).
    if (m.isHybrid() && m.moe && d.layer_pattern != LayerPatternKeys::LinearAttentionTypes) {
        m.moe->first_dense_layers = 0;
        m.moe->layer_frequency = 1;
    }
}

void readIndexer(ConfigReader& r, const FamilySpec& d, ModelConfig& m) {
    // Another family has an indexer only when its config says index_n_heads
    // (as exportHuggingFaceConfig writes a renamed DeepSeek-V3.2), and then
    // states all three sizes.
    const bool family = d.indexer_sizes.heads > 0;
    if (!family && !r.present("index_n_heads")) return;
    for (const char* key : {"index_n_heads", "index_head_dim", "index_topk"})
        if (!family && !r.present(key)) r.fail(key, "required for a sparse-attention indexer");
    IndexerConfig x;
    x.heads = r.integer("index_n_heads", d.indexer_sizes.heads);
    x.head_dim = r.integer("index_head_dim", d.indexer_sizes.head_dim);
    x.topk = r.integer("index_topk", d.indexer_sizes.topk);
    if (r.failed()) return;
    for (auto [key, v] : {std::pair<const char*, int64_t>{"index_n_heads", x.heads}, {"index_head_dim", x.head_dim},
                          {"index_topk", x.topk}})
        if (v < 1 || v > 1 << 20) {
            r.fail(key, "must be between 1 and 1048576 (got " + str(v) + ")");
            return;
        }
    m.indexer = x;
}

void readMtpLayers(ConfigReader& r, const FamilySpec& d, ModelConfig& m) {
    // A vision tower's count, as exportHuggingFaceConfig writes a
    // multimodal model's text config (trainmem's own key).
    if (r.present("trainmem_vision_parameters")) m.vision_parameters = r.parameterCount("trainmem_vision_parameters");
    m.mtp_layers = d.mtp_layers;
    for (std::string_view key : {"num_nextn_predict_layers", "mtp_num_hidden_layers"}) {
        if (!r.present(key)) continue;
        m.mtp_layers = r.integer(key, 0);
        if (!r.failed() && m.mtp_layers < 0)
            r.fail(key, "must be zero or a positive integer (got " + str(m.mtp_layers) + ")");
        return;
    }
}

Expected<int64_t> qwenVisionParameters(const json& vc) {
    if (!vc.is_object()) return Error{"model.vision_config", "must be an object (got " + describeJson(vc) + ")"};
    ConfigReader r(vc);
    // Qwen3_5VisionConfig's defaults (transformers' configuration_qwen3_5.py).
    const int64_t D = r.integer("hidden_size", 1152);
    const int64_t I = r.integer("intermediate_size", 4304);
    const int64_t depth = r.integer("depth", 27);
    const int64_t C = r.integer("in_channels", 3);
    const int64_t P = r.integer("patch_size", 16);
    const int64_t T = r.integer("temporal_patch_size", 2);
    const int64_t merge = r.integer("spatial_merge_size", 2);
    const int64_t out = r.integer("out_hidden_size", 3584);
    const int64_t positions = r.integer("num_position_embeddings", 2304);
    if (r.failed()) {
        Error e = r.error();
        e.field = "model.vision_config." + e.field.substr(6);
        return e;
    }
    for (auto [key, v] : {std::pair<const char*, int64_t>{"hidden_size", D}, {"intermediate_size", I}, {"depth", depth},
                          {"in_channels", C}, {"patch_size", P}, {"temporal_patch_size", T},
                          {"spatial_merge_size", merge}, {"out_hidden_size", out}})
        if (v <= 0 || v > 65536)
            return Error{"model.vision_config." + std::string(key), "must be between 1 and 65536 (got " + str(v) + ")"};
    const int64_t patch = C * T * P * P * D + D;          // Conv3d weight and bias
    const int64_t block = 2 * 2 * D                         // two LayerNorms (weight and bias)
                          + 3 * D * D + 3 * D + D * D + D   // qkv and proj, with biases
                          + 2 * D * I + I + D;              // fc1 and fc2, with biases
    const int64_t M = D * merge * merge;
    const int64_t merger = 2 * D + M * M + M + M * out + out;  // LayerNorm, fc1, fc2
    return patch + positions * D + depth * block + merger;
}

}  // namespace trainmem
