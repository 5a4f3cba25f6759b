#include "core/model/model_validate.h"

#include <cmath>
#include <sstream>

#include "core/model/block_linears.h"
#include "core/model/hf_families.h"
#include "core/model/model_keys.h"

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
    void probability(ModelField f, double p) {
        if (!(p >= 0.0 && p < 1.0)) fail(f, "must be a probability in [0, 1) (got " + number(p) + ")");
    }
    void fail(ModelField f, std::string message) { failRaw(modelField(m_.family, f), std::move(message)); }
    void failRaw(std::string field, std::string message) {
        if (failed_) return;  // the first problem is the one reported
        failed_ = true;
        error_ = Error{std::move(field), std::move(message)};
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

void checkMoe(ModelChecker& c, const ModelConfig& m) {
    const MoeConfig& e = *m.moe;
    c.positive(ModelField::NumExperts, e.num_experts);
    c.positive(ModelField::ExpertsPerToken, e.experts_per_token);
    if (!c.failed() && e.experts_per_token > e.num_experts)
        c.fail(ModelField::ExpertsPerToken, "must be at most the number of routed experts (" +
                                                std::to_string(e.num_experts) + ") (got " +
                                                std::to_string(e.experts_per_token) + ")");
    c.positive(ModelField::ExpertFfn, e.expert_ffn);
    c.nonNegative(ModelField::SharedExperts, e.shared_experts);
    c.nonNegative(ModelField::SharedExpertFfn, e.shared_expert_ffn);
    c.nonNegative(ModelField::FirstDenseLayers, e.first_dense_layers);
    if (!c.failed() && e.first_dense_layers > m.num_layers)
        c.fail(ModelField::FirstDenseLayers, "must be at most num_hidden_layers (" + std::to_string(m.num_layers) +
                                                 ") (got " + std::to_string(e.first_dense_layers) + ")");
    c.positive(ModelField::LayerFrequency, e.layer_frequency);
    if (!(e.capacity_factor >= 0.0 && std::isfinite(e.capacity_factor)))
        c.fail(ModelField::CapacityFactor,
               "must be 0 (dropless routing) or a positive number (got " + number(e.capacity_factor) + ")");
}

void checkMla(ModelChecker& c, const ModelConfig& m) {
    const MlaConfig& a = *m.mla;
    c.nonNegative(ModelField::QLoraRank, a.q_lora_rank);
    c.positive(ModelField::KvLoraRank, a.kv_lora_rank);
    c.nonNegative(ModelField::QkNopeHeadDim, a.qk_nope_head_dim);
    c.positive(ModelField::QkRopeHeadDim, a.qk_rope_head_dim);
    c.positive(ModelField::VHeadDim, a.v_head_dim);
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

}  // namespace

Status validate(const ModelConfig& m) {
    ModelChecker c(m);
    c.positive(ModelField::HiddenSize, m.hidden_size);
    c.positive(ModelField::NumLayers, m.num_layers);
    c.positive(ModelField::NumHeads, m.num_heads);
    c.positive(ModelField::NumKvHeads, m.num_kv_heads);
    if (!c.failed() && m.num_heads % m.num_kv_heads != 0)
        c.fail(ModelField::NumKvHeads, "must divide " + std::string(configKey(m.family, ModelField::NumHeads)) +
                                           " (" + std::to_string(m.num_heads) + ") (got " +
                                           std::to_string(m.num_kv_heads) + ")");
    c.positive(ModelField::HeadDim, m.head_dim);
    if (!c.failed() && !findActivation(m.hidden_act)) {
        // An activation the account does not model would otherwise be read
        // as SiLU's without a word (activationFn's default).
        std::string shown = m.hidden_act.substr(0, 40);
        if (shown.size() < m.hidden_act.size()) shown += "...";
        c.failRaw("model." + std::string(familyOf(m.family).act_key),
                  "must be one of " + allowedActivations() + " (got \"" + shown + "\")");
    }
    if (!c.failed() && (m.sliding_window_layers < 0 || m.sliding_window_layers > m.num_layers))
        c.failRaw("model.layer_types", "must name at most num_hidden_layers (" + std::to_string(m.num_layers) +
                                           ") sliding_attention layers (got " +
                                           std::to_string(m.sliding_window_layers) + ")");
    if (!c.failed() && (m.no_rope_layer_interval < 0 || m.no_rope_layer_interval > kMaxModelSize + 1))
        c.failRaw("model.no_rope_layer_interval", "must be 0 (no NoPE layers) or a positive integer up to " +
                                                      std::to_string(kMaxModelSize + 1) + " (got " +
                                                      std::to_string(m.no_rope_layer_interval) + ")");
    if (!c.failed() && !(m.partial_rotary_factor > 0.0 && m.partial_rotary_factor <= 1.0))
        c.failRaw("model.partial_rotary_factor",
                  "must be a fraction in (0, 1] of head_dim (got " + std::to_string(m.partial_rotary_factor) + ")");
    c.positive(ModelField::Intermediate, m.ffn_hidden_size);
    c.positive(ModelField::Vocab, m.vocab_size);
    if (m.learned_positions)
        c.positive(ModelField::MaxPositions, m.max_position_embeddings);
    else
        c.nonNegative(ModelField::MaxPositions, m.max_position_embeddings);
    c.positive(ModelField::NormsPerBlock, m.norms_per_block);
    c.probability(ModelField::AttentionDropout, m.attention_dropout);
    c.probability(ModelField::HiddenDropout, m.hidden_dropout);
    c.probability(ModelField::EmbeddingDropout, m.embedding_dropout);
    if (m.moe) checkMoe(c, m);
    // A family whose modeling code always routes (Mixtral) has no dense form.
    const FamilySpec& family = familyOf(m.family);
    if (family.num_experts > 0 && !family.zero_experts_is_dense && !family.experts_null_is_dense && !m.isMoe())
        c.fail(ModelField::NumExperts, "must be a positive integer: every " + m.family +
                                           " mixture-of-experts layer has this many experts (got 0)");
    if (m.mla) checkMla(c, m);
    if (c.failed()) return c.error();
    const long double total = approximateParameters(m);
    if (total > kMaxParameters)
        return Error{"model", "has about " + number(static_cast<double>(total)) +
                                  " parameters; at most 1e+15 are supported"};
    return ok();
}

}  // namespace trainmem
