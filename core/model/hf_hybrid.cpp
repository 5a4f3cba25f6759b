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
    s.out_proj_bias = s.proj_bias;
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

// Falcon-H1 (FalconH1Config, configuration_falcon_h1.py at transformers
// 7abb76c5; FalconH1DecoderLayer, modular_falcon_h1.py at 00511f5d): every
// layer runs attention and a Mamba-2 mixer side by side, then its MLP. The
// mixer is mamba_d_ssm wide (null: mamba_expand * hidden_size), in heads of
// mamba_d_head ("auto": mamba_d_ssm / mamba_n_heads); its gated RMSNorm
// exists only with mamba_rms_norm; out_proj's bias is projectors_bias.
void readParallelLayers(ConfigReader& r, ModelConfig& m) {
    m.layer_kinds.assign(static_cast<size_t>(m.num_layers), LayerKind{MixerKind::ParallelAttentionMamba2, FfnKind::Dense});
    MambaConfig s = readMamba(r, true);  // Granite's mamba_* spellings and defaults, which are FalconH1Config's
    const int64_t expand = r.integer("mamba_expand", 2);
    const int64_t d_ssm = r.isNull("mamba_d_ssm") ? expand * m.hidden_size : r.integer("mamba_d_ssm", 1024);
    s.gated_norm = r.boolean("mamba_rms_norm", false);
    s.out_proj_bias = r.boolean("projectors_bias", false);
    if (r.failed()) return;
    if (s.heads <= 0 || d_ssm <= 0 || d_ssm % s.heads != 0) {
        r.fail("mamba_n_heads", "must be a positive divisor of mamba_d_ssm (" + str(d_ssm) + "), got " + str(s.heads));
        return;
    }
    const bool automatic = !r.present("mamba_d_head") || r.isText("mamba_d_head");
    if (automatic) s.head_dim = d_ssm / s.heads;
    if (s.head_dim * s.heads != d_ssm) {
        r.fail("mamba_d_head", "must make mamba_n_heads x mamba_d_head = mamba_d_ssm (" + str(s.heads) + " x " +
                                   str(s.head_dim) + " != " + str(d_ssm) + ")");
        return;
    }
    m.mamba = s;
}

// Jamba (JambaConfig, configuration_jamba.py at transformers 161d2bed):
// layer i attends when i % attn_layer_period == attn_layer_offset, else
// runs a Mamba-1 mixer; its FFN has num_experts experts when i %
// expert_layer_period == expert_layer_offset, else (and always with one
// expert) a dense MLP (JambaDecoderLayer: num_experts > 1).
void readJambaLayers(ConfigReader& r, ModelConfig& m) {
    struct Period { const char* period_key; const char* offset_key; int64_t period; int64_t offset; };
    Period attn{"attn_layer_period", "attn_layer_offset", 8, 4};
    Period expert{"expert_layer_period", "expert_layer_offset", 2, 1};
    for (Period* p : {&attn, &expert}) {
        p->period = r.integer(p->period_key, p->period);
        p->offset = r.integer(p->offset_key, p->offset);
        if (r.failed()) return;
        if (p->period <= 0) {
            r.fail(p->period_key, "must be a positive integer (got " + str(p->period) + ")");
            return;
        }
        // JambaConfig._check_supported_offset.
        if (p->offset < 0 || p->offset >= p->period) {
            r.fail(p->offset_key, "must be between 0 and " + std::string(p->period_key) + " - 1 (" +
                                      str(p->period - 1) + "), got " + str(p->offset));
            return;
        }
    }
    // One expert builds a dense MLP (JambaDecoderLayer: num_experts > 1).
    if (m.moe && m.moe->num_experts <= 1) m.moe.reset();
    const bool experts = m.isMoe();
    m.layer_kinds.assign(static_cast<size_t>(m.num_layers), LayerKind{});
    for (int64_t i = 0; i < m.num_layers; ++i) {
        LayerKind& k = m.layer_kinds[static_cast<size_t>(i)];
        k.mixer = i % attn.period == attn.offset ? MixerKind::Attention : MixerKind::Mamba1;
        k.ffn = experts && i % expert.period == expert.offset ? FfnKind::Moe : FfnKind::Dense;
    }
    SelectiveScanConfig s;
    s.expand = r.integer("mamba_expand", 2);
    s.state_size = r.integer("mamba_d_state", 16);
    s.conv_kernel = r.integer("mamba_d_conv", 4);
    // mamba_dt_rank "auto" (the class default): ceil(hidden_size / 16).
    if (r.present("mamba_dt_rank") && r.isText("mamba_dt_rank")) {
        const std::string t = *r.text("mamba_dt_rank");
        if (t != "auto") r.fail("mamba_dt_rank", "must be a positive integer or \"auto\" (got \"" + t.substr(0, 40) + "\")");
        s.dt_rank = (m.hidden_size + 15) / 16;
    } else {
        s.dt_rank = r.present("mamba_dt_rank") ? r.integer("mamba_dt_rank", 0) : (m.hidden_size + 15) / 16;
    }
    s.conv_bias = r.boolean("mamba_conv_bias", true);
    s.proj_bias = r.boolean("mamba_proj_bias", false);
    m.mamba1 = s;
}

// Kimi Linear (KimiLinearConfig.__post_init__, configuration_kimi_linear.py
// at transformers 630ebd85): layer_types ("linear_attention" KDA,
// "full_attention" MLA), else linear_attn_config's 1-indexed kda_layers
// and full_attn_layers, else full attention at every layer i > 0 with
// i % 4 == 0; the KDA sizes from linear_attn_config (head_dim, num_heads,
// short_conv_kernel_size) over linear_head_dim, linear_num_heads,
// linear_conv_kernel_dim; mlp_layer_types ("dense" / "sparse") over
// first_k_dense_replace (read with the MoE keys).
void readKimiLayers(ConfigReader& r, ModelConfig& m, std::vector<std::string>& warnings) {
    // The attribute_map's names of the MoE keys read before (whose absence
    // under transformers' own names was warned about: no longer true).
    if (m.moe) {
        auto alias = [&](const char* name, const char* key) {
            if (!r.present(name)) return false;
            std::erase_if(warnings, [&](const std::string& w) { return w.rfind("model." + std::string(key) + ":", 0) == 0; });
            return true;
        };
        if (alias("num_local_experts", "n_routed_experts")) m.moe->num_experts = r.integer("num_local_experts", 0);
        if (alias("num_experts_per_token", "num_experts_per_tok"))
            m.moe->experts_per_token = r.integer("num_experts_per_token", 0);
        if (alias("moe_renormalize", "norm_topk_prob")) m.moe->norm_topk_prob = r.boolean("moe_renormalize", true);
    }
    const json* sub = nullptr;
    if (r.present("linear_attn_config")) {
        if (!r.raw("linear_attn_config").is_object()) {
            r.fail("linear_attn_config", "must be an object (got " + describeJson(r.raw("linear_attn_config")) + ")");
            return;
        }
        sub = &r.raw("linear_attn_config");
    }
    static const json kNone = json::object();
    ConfigReader lin(sub ? *sub : kNone);
    DeltaAttentionConfig k;
    k.head_dim = lin.present("head_dim") ? lin.integer("head_dim", 0) : r.integer("linear_head_dim", 128);
    k.heads = lin.present("num_heads") ? lin.integer("num_heads", 0) : r.integer("linear_num_heads", 32);
    k.conv_kernel = lin.present("short_conv_kernel_size") ? lin.integer("short_conv_kernel_size", 0)
                                                          : r.integer("linear_conv_kernel_dim", 4);
    if (lin.failed()) {
        Error e = lin.error();
        r.fail("linear_attn_config." + e.field.substr(6), e.message);
        return;
    }
    std::vector<FfnKind> ffns(static_cast<size_t>(m.num_layers));
    for (int64_t i = 0; i < m.num_layers; ++i)
        ffns[static_cast<size_t>(i)] = m.isMoeLayer(i) ? FfnKind::Moe : FfnKind::Dense;
    if (r.present("layer_types")) {
        if (!readTypeList(r, "layer_types", m, "\"linear_attention\" or \"full_attention\"",
                          [](const std::string& t, LayerKind& kind) {
                              if (t != "linear_attention" && t != "full_attention") return false;
                              kind.mixer = t == "full_attention" ? MixerKind::Attention : MixerKind::KimiDeltaAttention;
                              return true;
                          }))
            return;
    } else if (sub && lin.present("full_attn_layers") && lin.present("kda_layers")) {
        std::vector<int> set(static_cast<size_t>(m.num_layers), 0);
        m.layer_kinds.assign(static_cast<size_t>(m.num_layers), LayerKind{});
        for (const char* list : {"full_attn_layers", "kda_layers"}) {
            for (int64_t n : lin.integers(list)) {
                if (lin.failed()) break;
                if (n < 1 || n > m.num_layers) {
                    r.fail(std::string("linear_attn_config.") + list,
                           "entries must be 1-indexed layers 1.." + str(m.num_layers) + " (got " + str(n) + ")");
                    return;
                }
                m.layer_kinds[static_cast<size_t>(n - 1)].mixer =
                    std::string_view(list) == "kda_layers" ? MixerKind::KimiDeltaAttention : MixerKind::Attention;
                set[static_cast<size_t>(n - 1)] = 1;
            }
        }
        if (lin.failed()) {
            Error e = lin.error();
            r.fail("linear_attn_config." + e.field.substr(6), e.message);
            return;
        }
        for (int64_t i = 0; i < m.num_layers; ++i)
            if (!set[static_cast<size_t>(i)]) {
                r.fail("linear_attn_config.kda_layers", "with full_attn_layers must name every layer 1.." +
                                                            str(m.num_layers) + " (layer " + str(i + 1) + " is in neither)");
                return;
            }
    } else {
        m.layer_kinds.assign(static_cast<size_t>(m.num_layers), LayerKind{MixerKind::KimiDeltaAttention, FfnKind::Dense});
        for (int64_t i = 4; i < m.num_layers; i += 4) m.layer_kinds[static_cast<size_t>(i)].mixer = MixerKind::Attention;
    }
    if (r.present("mlp_layer_types")) {
        const std::vector<std::string> types = r.strings("mlp_layer_types");
        if (r.failed()) return;
        if (static_cast<int64_t>(types.size()) != m.num_layers) {
            r.fail("mlp_layer_types", "must name one type per layer: " + str(m.num_layers) + " (num_hidden_layers), got " +
                                          str(static_cast<int64_t>(types.size())));
            return;
        }
        for (size_t i = 0; i < types.size(); ++i) {
            if (types[i] != "dense" && types[i] != "sparse") {
                r.fail("mlp_layer_types", "entries must be \"dense\" or \"sparse\" (got \"" + types[i].substr(0, 40) +
                                              "\" at " + str(static_cast<int64_t>(i)) + ")");
                return;
            }
            ffns[i] = types[i] == "sparse" ? FfnKind::Moe : FfnKind::Dense;
        }
    }
    for (size_t i = 0; i < ffns.size(); ++i) {
        if (ffns[i] == FfnKind::Moe && !m.isMoe()) {
            r.fail(r.present("mlp_layer_types") ? "mlp_layer_types" : "n_routed_experts",
                   "has sparse (MoE) layers but the model has no experts");
            return;
        }
        m.layer_kinds[i].ffn = ffns[i];
    }
    m.delta_attention = k;
}

// Nemotron-NAS (DeciLM, configuration_decilm.py of the checkpoints, read
// through NVIDIA NeMo's llama_nemotron_config.py at 8cfedd72 and the DeciLM
// ports of vLLM, SGLang and TensorRT-LLM): block_configs holds one
// {attention, ffn} per layer. attention: no_op (no attention, no
// input_layernorm) or n_heads_in_group (KV heads = heads / it); ffn: no_op
// (no MLP, no post_attention_layernorm) or ffn_mult, the SwiGLU width
// int(2 * ffn_mult * h / 3) rounded up to a multiple of 256
// (_ffn_mult_to_intermediate_size). intermediate_size and
// num_key_value_heads are null in these configs: block_configs says them.
void readBlockConfigs(ConfigReader& r, ModelConfig& m, std::vector<std::string>& warnings) {
    // The null intermediate_size warned about as absent: block_configs gives the widths.
    std::erase_if(warnings, [](const std::string& w) { return w.rfind("model.intermediate_size:", 0) == 0; });
    if (!r.present("block_configs")) {
        r.fail("block_configs", "required: one {\"attention\": {...}, \"ffn\": {...}} object per layer");
        return;
    }
    const json& list = r.raw("block_configs");
    if (!list.is_array() || static_cast<int64_t>(list.size()) != m.num_layers) {
        r.fail("block_configs", "must be a list of one object per layer: " + str(m.num_layers) +
                                    " (num_hidden_layers), got " + describeJson(list));
        return;
    }
    static const json kNone = json::object();
    int64_t group = 0;  // n_heads_in_group, the same on every attention layer
    m.layer_kinds.assign(list.size(), LayerKind{});
    m.layer_ffn_widths.assign(list.size(), 0);
    int64_t widest = 0;
    for (size_t i = 0; i < list.size(); ++i) {
        const std::string at = "block_configs[" + str(static_cast<int64_t>(i)) + "]";
        // A failure inside one block is named by its full path.
        auto failed = [&](ConfigReader& part, const char* name) {
            if (!part.failed()) return false;
            r.fail(at + "." + name + "." + part.error().field.substr(6), part.error().message);
            return true;
        };
        const json& block = list[i];
        if (!block.is_object()) {
            r.fail(at, "must be an object with \"attention\" and \"ffn\" (got " + describeJson(block) + ")");
            return;
        }
        for (const char* half : {"attention", "ffn"})
            if (block.contains(half) && !block[half].is_object()) {
                r.fail(at + "." + half, "must be an object (got " + describeJson(block[half]) + ")");
                return;
            }
        ConfigReader attention(block.contains("attention") ? block["attention"] : kNone);
        ConfigReader ffn(block.contains("ffn") ? block["ffn"] : kNone);
        const bool attention_gone = attention.boolean("no_op", false);
        const bool attention_linear = attention.boolean("replace_with_linear", false);
        const bool ffn_gone = ffn.boolean("no_op", false);
        const bool ffn_linear = ffn.boolean("replace_with_linear", false);
        if (failed(attention, "attention") || failed(ffn, "ffn")) return;
        if (attention_linear || ffn_linear) {
            r.fail(at + (attention_linear ? ".attention" : ".ffn") + ".replace_with_linear",
                   "a layer replaced by one h x h Linear is not modelled yet (Llama-3.3-Nemotron-Super has none)");
            return;
        }
        LayerKind& kind = m.layer_kinds[i];
        kind.mixer = attention_gone ? MixerKind::None : MixerKind::Attention;
        kind.ffn = ffn_gone ? FfnKind::None : FfnKind::Dense;
        if (!attention_gone) {
            const int64_t g = attention.integer("n_heads_in_group", 0);
            if (failed(attention, "attention")) return;
            if (g <= 0 || m.num_heads % g != 0) {
                r.fail(at + ".attention.n_heads_in_group", "must be a positive divisor of num_attention_heads (" +
                                                               str(m.num_heads) + ") (got " + str(g) + ")");
                return;
            }
            if (group > 0 && g != group) {
                r.fail(at + ".attention.n_heads_in_group", "differs from the other layers' (" + str(group) + ", got " +
                                                               str(g) + "): per-layer KV heads are not modelled");
                return;
            }
            group = g;
        }
        if (!ffn_gone) {
            if (!ffn.present("ffn_mult")) {
                r.fail(at + ".ffn.ffn_mult", "required unless ffn.no_op is true");
                return;
            }
            const double mult = ffn.number("ffn_mult", 0.0);
            if (failed(ffn, "ffn")) return;
            if (!(mult > 0.0) || mult > 64.0) {
                r.fail(at + ".ffn.ffn_mult", "must be above 0 and at most 64 (got " + describeJson(block["ffn"]["ffn_mult"]) + ")");
                return;
            }
            int64_t width = static_cast<int64_t>(2.0 * mult * static_cast<double>(m.hidden_size) / 3.0);
            if (width % 256 != 0) width += 256 - width % 256;
            m.layer_ffn_widths[i] = width;
            widest = std::max(widest, width);
        }
    }
    if (group > 0) m.num_kv_heads = m.num_heads / group;
    if (widest > 0) m.ffn_hidden_size = widest;
}

}  // namespace

void readHybridLayers(ConfigReader& r, const FamilySpec& d, ModelConfig& m, std::vector<std::string>& warnings) {
    if (r.failed() || m.num_layers <= 0) return;
    switch (d.layer_pattern) {
        case LayerPatternKeys::None: return;
        case LayerPatternKeys::LinearAttentionTypes: readLinearAttentionLayers(r, d, m); break;
        case LayerPatternKeys::HybridOverride: readNemotronPattern(r, d, m); break;
        case LayerPatternKeys::MambaAttentionTypes: readGraniteLayers(r, m); break;
        case LayerPatternKeys::ConvAttentionTypes: readConvLayers(r, m); break;
        case LayerPatternKeys::ParallelHybrid: readParallelLayers(r, m); break;
        case LayerPatternKeys::JambaPeriods: readJambaLayers(r, m); break;
        case LayerPatternKeys::KimiLayerTypes: readKimiLayers(r, m, warnings); break;
        case LayerPatternKeys::BlockConfigs: readBlockConfigs(r, m, warnings); break;
    }
    // Experts that no layer of the pattern builds are not there (NemotronHConfig's
    // defaults name 8 experts beside a pattern without an E layer).
    if (m.isHybrid() && m.moe && std::none_of(m.layer_kinds.begin(), m.layer_kinds.end(),
                                              [](LayerKind k) { return k.ffn == FfnKind::Moe; }))
        m.moe.reset();
    // Where the pattern names each layer's FFN, the MoE rule's fields say
    // nothing (validateHybrid holds them to 0 and 1).
    if (m.isHybrid() && m.moe && !moeLayersByRule(d.layer_pattern)) {
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
