#include "core/model/model_validate.h"

#include <array>
#include <cmath>
#include <sstream>

#include "core/model/block_linears.h"
#include "core/model/hf_families.h"
#include "core/model/model_fields.h"

namespace trainmem {
namespace {

constexpr int64_t kMaxSize = kMaxModelSize;
constexpr long double kMaxParameters = 1e15L;

std::string number(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

class ModelChecker {
public:
    explicit ModelChecker(const ModelConfig& m) : m_(m) {}
    bool failed() const { return failed_; }
    Error error() const { return error_; }

    // The row's allowed range (model_fields.h), each kind with its one message.
    void range(const ModelFieldRow& row) {
        if (row.range == FieldRange::Any) return;
        const nlohmann::json v = row.get(m_);
        switch (row.range) {
            case FieldRange::Any: return;
            case FieldRange::Positive: return positive(row.field, v.get<int64_t>());
            case FieldRange::LayerCount: {
                const int64_t n = v.get<int64_t>();
                if (!failed_ && (n < 1 || n > kMaxLayers))
                    fail(row.field, "must be a positive number of layers, at most " + std::to_string(kMaxLayers) +
                                        " (got " + std::to_string(n) + ")");
                return;
            }
            case FieldRange::NonNegative: return nonNegative(row.field, v.get<int64_t>());
            case FieldRange::Probability: {
                const double p = v.get<double>();
                if (!(p >= 0.0 && p < 1.0)) fail(row.field, "must be a probability in [0, 1) (got " + number(p) + ")");
                return;
            }
            case FieldRange::Fraction: {
                const double p = v.get<double>();
                if (!failed_ && !(p > 0.0 && p <= 1.0))
                    fail(row.field, "must be a fraction in (0, 1] of head_dim (got " + std::to_string(p) + ")");
                return;
            }
            case FieldRange::NonNegativeNumber: {
                const double x = v.get<double>();
                if (!(x >= 0.0 && std::isfinite(x)))
                    fail(row.field, "must be 0 (dropless routing) or a positive number (got " + number(x) + ")");
                return;
            }
            case FieldRange::UpToLayers: {
                const int64_t n = v.get<int64_t>();
                if (!failed_ && (n < 0 || n > m_.num_layers))
                    fail(row.field, "must name at most num_hidden_layers (" + std::to_string(m_.num_layers) +
                                        ") sliding_attention layers (got " + std::to_string(n) + ")");
                return;
            }
            case FieldRange::NoPeInterval: {
                const int64_t k = v.get<int64_t>();
                if (!failed_ && (k < 0 || k > kMaxModelSize + 1))
                    fail(row.field, "must be 0 (no NoPE layers) or a positive integer up to " +
                                        std::to_string(kMaxModelSize + 1) + " (got " + std::to_string(k) + ")");
                return;
            }
            case FieldRange::Activation: {
                // An activation the account does not model would otherwise be
                // read as SiLU's without a word (activationFn's default).
                const std::string& a = m_.hidden_act;
                if (failed_ || findActivation(a)) return;
                std::string shown = a.substr(0, 40);
                if (shown.size() < a.size()) shown += "...";
                fail(row.field, "must be one of " + allowedActivations() + " (got \"" + shown + "\")");
                return;
            }
        }
    }
    void positive(ModelField f, int64_t v) {
        if (v <= 0)
            fail(f, "must be a positive integer (got " + std::to_string(v) + ")");
        else
            atMost(f, v);
    }
    void nonNegative(ModelField f, int64_t v) {
        if (v < 0)
            fail(f, "must be zero or a positive integer (got " + std::to_string(v) + ")");
        else
            atMost(f, v);
    }
    void fail(ModelField f, std::string message) {
        if (failed_) return;  // the first problem is the one reported
        failed_ = true;
        error_ = Error{modelField(m_.family, f), std::move(message)};
    }

private:
    void atMost(ModelField f, int64_t v) {
        if (v > kMaxSize)
            fail(f, "must be at most " + std::to_string(kMaxSize) + " (got " + std::to_string(v) + ")");
    }
    const ModelConfig& m_;
    bool failed_ = false;
    Error error_;
};

// The relations between fields, checked right after the field they name.
void checkRelations(ModelChecker& c, const ModelConfig& m, ModelField f) {
    if (c.failed()) return;
    switch (f) {
        case ModelField::NumKvHeads:
            if (m.num_heads % m.num_kv_heads != 0)
                c.fail(f, "must divide " + std::string(configKey(m.family, ModelField::NumHeads)) + " (" +
                              std::to_string(m.num_heads) + ") (got " + std::to_string(m.num_kv_heads) + ")");
            return;
        case ModelField::ExpertsPerToken:
            if (m.moe->experts_per_token > m.moe->num_experts)
                c.fail(f, "must be at most the number of routed experts (" + std::to_string(m.moe->num_experts) +
                              ") (got " + std::to_string(m.moe->experts_per_token) + ")");
            return;
        case ModelField::FirstDenseLayers:
            if (m.moe->first_dense_layers > m.num_layers)
                c.fail(f, "must be at most num_hidden_layers (" + std::to_string(m.num_layers) + ") (got " +
                              std::to_string(m.moe->first_dense_layers) + ")");
            return;
        default: return;
    }
}

// The rows of one group of sections, in table order, listed once: every
// estimate validates its model, so each check walks only its own rows.
enum class RowGroup { Shape, Experts, Latent };
const std::vector<const ModelFieldRow*>& rowsOf(RowGroup group) {
    static const std::array<std::vector<const ModelFieldRow*>, 3> groups = [] {
        std::array<std::vector<const ModelFieldRow*>, 3> g;
        for (const ModelFieldRow& row : modelFields()) {
            const RowGroup r = row.section == ModelSection::Experts  ? RowGroup::Experts
                               : row.section == ModelSection::Latent ? RowGroup::Latent
                                                                     : RowGroup::Shape;
            g[static_cast<size_t>(r)].push_back(&row);
        }
        return g;
    }();
    return groups[static_cast<size_t>(group)];
}

void checkSection(ModelChecker& c, const ModelConfig& m, RowGroup group) {
    for (const ModelFieldRow* r : rowsOf(group)) {
        const ModelFieldRow& row = *r;
        // An optional block's rows (the sparse-attention indexer within latent
        // attention) when the block is absent: nothing to check.
        if (row.range != FieldRange::Any && row.get(m).is_null()) continue;
        // GPT-2's learned position table needs at least one row; a rotary
        // model may leave max_position_embeddings 0.
        if (row.field == ModelField::MaxPositions && m.learned_positions)
            c.positive(row.field, m.max_position_embeddings);
        else
            c.range(row);
        checkRelations(c, m, row.field);
    }
}

void checkMla(ModelChecker& c, const ModelConfig& m) {
    const MlaConfig& a = *m.mla;
    checkSection(c, m, RowGroup::Latent);
    if (!c.failed() && m.head_dim != a.qk_nope_head_dim + a.qk_rope_head_dim)
        c.fail(ModelField::HeadDim, "must equal qk_nope_head_dim + qk_rope_head_dim (" +
                                        std::to_string(a.qk_nope_head_dim + a.qk_rope_head_dim) +
                                        ") for multi-head latent attention (got " + std::to_string(m.head_dim) + ")");
}

// Summed in floating point so that absurd sizes cannot overflow before
// they are rejected.
long double approximateParameters(const ModelConfig& m) {
    auto block = [&](bool moe) {
        long double n = 0;
        for (const BlockLinear& l : blockLinears(m, moe))
            n += static_cast<long double>(l.copies) * l.in * (l.out + 1);
        return n + 2.0L * m.norms_per_block * m.hidden_size;
    };
    long double layers = static_cast<long double>(m.num_layers) * block(false);
    if (m.isMoe()) layers = std::max(layers, static_cast<long double>(m.num_layers) * block(true));
    return layers + 2.0L * (m.vocab_size + m.max_position_embeddings) * m.hidden_size;
}

// A hybrid's layer kinds and mixer sizes (issue 23): one kind per layer,
// the sizes of every mixer a layer uses present and bounded so that every
// product with the hidden size stays inside int64_t (the importer bounds
// each value; an edit in the app may change the layer count).
Status validateHybrid(const ModelConfig& m) {
    if (!m.isHybrid()) return ok();
    auto str = [](int64_t v) { return std::to_string(v); };
    // Only a family that reads a layer pattern can say which layer is which
    // (the exporter writes it in that family's keys).
    if (familyOf(m.family).layer_pattern == LayerPatternKeys::None)
        return Error{"model.model_type", "\"" + m.family.substr(0, 40) +
                                             "\" has no hybrid layer pattern; a model with Gated DeltaNet, Mamba-2 "
                                             "or short-convolution layers needs the model_type of a hybrid family "
                                             "(one whose config lists its layers' kinds, e.g. qwen3_next, nemotron_h)"};
    if (static_cast<int64_t>(m.layer_kinds.size()) != m.num_layers)
        return Error{"model.layer_types", "must give one kind per layer: " + str(m.num_layers) +
                                              " (num_hidden_layers), got " + str(static_cast<int64_t>(m.layer_kinds.size()))};
    // Errors name the key in the family's spelling (Granite's mamba_n_heads).
    auto sizeOf = [&](const std::string& key, int64_t v, int64_t most) -> Status {
        if (v < 1 || v > most)
            return Error{key.rfind("model.", 0) == 0 ? key : "model." + key,
                         "must be between 1 and " + str(most) + " (got " + str(v) + ")"};
        return ok();
    };
    auto size = [&](ModelField f, int64_t v, int64_t most) { return sizeOf(modelField(m.family, f), v, most); };
    bool gdn = false, mamba = false, conv = false, moe = false, mamba1 = false, kda = false;
    for (const LayerKind& k : m.layer_kinds) {
        gdn |= k.mixer == MixerKind::GatedDeltaNet;
        mamba |= mixerHasMamba2(k.mixer);
        mamba1 |= k.mixer == MixerKind::Mamba1;
        kda |= k.mixer == MixerKind::KimiDeltaAttention;
        conv |= k.mixer == MixerKind::ShortConv;
        moe |= k.ffn == FfnKind::Moe;
    }
    if (moe && !m.isMoe()) return Error{"model.layer_types", "has MoE layers but the model has no experts"};
    if (!moe && m.isMoe())
        return Error{modelField(m.family, ModelField::NumExperts),
                     "the layer pattern has no MoE layer for the experts; use 0 or a pattern with MoE layers"};
    // Qwen3.5-MoE reads both widths from moe_intermediate_size.
    const FamilySpec& family = familyOf(m.family);
    if (m.isMoe() && family.intermediate_key == family.expert_ffn_key && m.ffn_hidden_size != m.moe->expert_ffn)
        return Error{modelField(m.family, ModelField::ExpertFfn),
                     "is also this family's dense width (" + str(m.ffn_hidden_size) + "); the two cannot differ"};
    // Which layers have experts: Qwen3-Next's and Qwen3.5's configs say it
    // by their MoE keys (moeLayersByRule), the others' patterns by layer;
    // the rule's fields must agree with the layers.
    if (m.isMoe()) {
        const MoeConfig& e = *m.moe;
        const bool by_rule = moeLayersByRule(family.layer_pattern);
        const int64_t k = std::max<int64_t>(e.layer_frequency, 1);
        const std::string says = "; in a hybrid the layers' kinds say which layers have experts";
        if (!by_rule && (e.first_dense_layers != 0 || e.layer_frequency != 1))
            return Error{modelField(m.family, e.first_dense_layers != 0 ? ModelField::FirstDenseLayers
                                                                        : ModelField::LayerFrequency),
                         "must be " + std::string(e.first_dense_layers != 0 ? "0" : "1") + says};
        for (int64_t i = 0; by_rule && i < m.num_layers; ++i) {
            const bool rule = i >= e.first_dense_layers && (i - e.first_dense_layers) % k == 0;
            const bool moe_layer = m.layer_kinds[static_cast<size_t>(i)].ffn == FfnKind::Moe;
            if (rule != moe_layer)
                return Error{modelField(m.family, ModelField::FirstDenseLayers),
                             "disagrees with the layer pattern (layer " + str(i) + " is " +
                                 (moe_layer ? "a MoE layer" : "not a MoE layer") + ")" + says};
        }
    }
    if (!m.layer_ffn_widths.empty()) {
        if (static_cast<int64_t>(m.layer_ffn_widths.size()) != m.num_layers)
            return Error{"model.block_configs", "must give one MLP width per layer: " + str(m.num_layers) +
                                                    " (num_hidden_layers), got " +
                                                    str(static_cast<int64_t>(m.layer_ffn_widths.size()))};
        for (size_t i = 0; i < m.layer_ffn_widths.size(); ++i)
            if (m.layer_kinds[i].ffn == FfnKind::Dense)
                if (Status st = sizeOf("block_configs", m.layer_ffn_widths[i], kMaxModelSize); !st) return st;
    }
    if (gdn) {
        if (!m.linear_attention) return Error{modelField(m.family, ModelField::LinearKeyHeads), "required for Gated DeltaNet layers"};
        const LinearAttentionConfig& g = *m.linear_attention;
        for (Status st : {size(ModelField::LinearKeyHeads, g.key_heads, 65536), size(ModelField::LinearValueHeads, g.value_heads, 65536),
                          size(ModelField::LinearKeyHeadDim, g.key_head_dim, 65536), size(ModelField::LinearValueHeadDim, g.value_head_dim, 65536),
                          size(ModelField::LinearConvKernel, g.conv_kernel, 1024),
                          size(ModelField::LinearKeyHeads, g.key_heads * g.key_head_dim, kMaxModelSize),
                          size(ModelField::LinearValueHeads, g.value_heads * g.value_head_dim, kMaxModelSize)})
            if (!st) return st;
    }
    if (mamba) {
        if (!m.mamba) return Error{modelField(m.family, ModelField::MambaHeads), "required for Mamba-2 layers"};
        const MambaConfig& x = *m.mamba;
        for (Status st : {size(ModelField::MambaHeads, x.heads, 65536), size(ModelField::MambaHeadDim, x.head_dim, 65536),
                          size(ModelField::MambaStateSize, x.state_size, 65536), size(ModelField::MambaGroups, x.groups, 65536),
                          size(ModelField::MambaConvKernel, x.conv_kernel, 1024), size(ModelField::MambaChunkSize, x.chunk_size, 1 << 20),
                          size(ModelField::MambaHeads, x.heads * x.head_dim, kMaxModelSize),
                          size(ModelField::MambaGroups, x.groups * x.state_size, kMaxModelSize)})
            if (!st) return st;
    }
    if (mamba1) {
        if (!m.mamba1) return Error{"model.mamba_d_state", "required for Mamba-1 layers"};
        const SelectiveScanConfig& x = *m.mamba1;
        for (Status st : {sizeOf("mamba_expand", x.expand, 1024), sizeOf("mamba_d_state", x.state_size, 65536),
                          sizeOf("mamba_d_conv", x.conv_kernel, 1024), sizeOf("mamba_dt_rank", x.dt_rank, 65536),
                          sizeOf("mamba_expand", x.expand * m.hidden_size, kMaxModelSize),
                          sizeOf("mamba_d_state", x.expand * m.hidden_size * x.state_size, kMaxModelSize)})
            if (!st) return st;
    }
    if (kda) {
        if (!m.delta_attention) return Error{"model.linear_attn_config", "required for Kimi Delta Attention layers"};
        const DeltaAttentionConfig& k = *m.delta_attention;
        for (Status st : {sizeOf("linear_attn_config.num_heads", k.heads, 65536),
                          sizeOf("linear_attn_config.head_dim", k.head_dim, 65536),
                          sizeOf("linear_attn_config.short_conv_kernel_size", k.conv_kernel, 1024),
                          sizeOf("linear_attn_config.num_heads", k.heads * k.head_dim, kMaxModelSize)})
            if (!st) return st;
    }
    if (conv) {
        if (!m.short_conv) return Error{modelField(m.family, ModelField::ShortConvKernel), "required for short-convolution layers"};
        if (Status st = size(ModelField::ShortConvKernel, m.short_conv->kernel, 1024); !st) return st;
    }
    return ok();
}

}  // namespace

Status validate(const ModelConfig& m) {
    ModelChecker c(m);
    checkSection(c, m, RowGroup::Shape);
    if (m.moe) checkSection(c, m, RowGroup::Experts);
    // A family whose modeling code always routes (Mixtral) has no dense form;
    // a hybrid's routing layers are those its pattern names (maybe none).
    const FamilySpec& family = familyOf(m.family);
    if (family.num_experts > 0 && !family.zero_experts_is_dense && !family.experts_null_is_dense && !m.isMoe() &&
        family.layer_pattern == LayerPatternKeys::None)
        c.fail(ModelField::NumExperts, "must be a positive integer: every " + m.family +
                                           " mixture-of-experts layer has this many experts (got 0)");
    if (m.mla) checkMla(c, m);
    if (c.failed()) return c.error();
    if (Status hybrid = validateHybrid(m); !hybrid) return hybrid;
    const long double total = approximateParameters(m);
    if (total > kMaxParameters)
        return Error{"model", "has about " + number(static_cast<double>(total)) +
                                  " parameters; at most 1e+15 are supported"};
    return ok();
}

}  // namespace trainmem
