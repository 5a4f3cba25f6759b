// ModelConfig -> config.json: the family's own keys, plus the documented
// trainmem keys (norm_type, qkv_bias, ...) only where a model departs from
// its family's convention, so that importHuggingFaceConfig reads back the
// same ModelConfig. Keys and family defaults are the model-field table's
// (model_fields.h); which keys a family writes is code.
#include <algorithm>
#include <string>
#include <vector>

#include "core/model/hf_config.h"
#include "core/model/hf_families.h"
#include "core/model/model_fields.h"

namespace trainmem {
namespace {

using nlohmann::json;

class ConfigWriter {
public:
    ConfigWriter(const ModelConfig& m, const FamilySpec& d) : m_(m), d_(d) {}

    json run() {
        j_["model_type"] = m_.family;
        if (!m_.name.empty()) j_["_name_or_path"] = m_.name;
        writeSizes();
        writeStructure();
        writeDropout();
        if (m_.mla) writeMla();
        writeMoe();
        writeHybrid();
        return j_;
    }

private:
    std::string key(ModelField f) const { return std::string(modelFieldRow(f).key(d_)); }
    void set(ModelField f, json v) { j_[key(f)] = std::move(v); }
    // Whether the model departs from its family's default for the field.
    bool differs(ModelField f) const { return modelFieldRow(f).get(m_) != modelFieldRow(f).default_of(d_); }

    void writeSizes() {
        set(ModelField::HiddenSize, m_.hidden_size);
        set(ModelField::NumLayers, m_.num_layers);
        set(ModelField::NumHeads, m_.num_heads);
        set(ModelField::Intermediate, m_.ffn_hidden_size);
        set(ModelField::Vocab, m_.vocab_size);
        set(ModelField::MaxPositions, m_.max_position_embeddings);
        if (!d_.attribute_map_aliases || m_.num_kv_heads != m_.num_heads) set(ModelField::NumKvHeads, m_.num_kv_heads);
        const bool derived = m_.num_heads > 0 && m_.head_dim * m_.num_heads == m_.hidden_size;
        if (!m_.mla && (!d_.attribute_map_aliases || !derived)) set(ModelField::HeadDim, m_.head_dim);
    }

    void writeStructure() {
        set(ModelField::TiedEmbeddings, m_.tied_embeddings);
        set(ModelField::HiddenAct, m_.hidden_act);
        for (ModelField f : {ModelField::Mlp, ModelField::Norm, ModelField::NormsPerBlock, ModelField::QkNorm,
                             ModelField::LearnedPositions})
            if (differs(f)) set(f, modelFieldRow(f).get(m_));
        // Biases: what the family implies after its own keys, then overrides.
        bool qkv = d_.qkv_bias;
        bool out = d_.output_bias;
        if (d_.reads_attention_bias) {
            // GLM-4.5's attention_bias reaches q, k and v only.
            const bool on = d_.attention_bias_on_output ? m_.attention_qkv_bias && m_.attention_output_bias
                                                        : m_.attention_qkv_bias;
            j_["attention_bias"] = on;
            qkv = on;
            out = d_.attention_bias_on_output && on;
        }
        if (d_.qkv_bias_key || m_.attention_qkv_bias != qkv) j_["qkv_bias"] = m_.attention_qkv_bias;
        if (m_.attention_output_bias != out) set(ModelField::AttentionOutputBias, m_.attention_output_bias);
        if (d_.writes_mlp_bias || differs(ModelField::MlpBias)) set(ModelField::MlpBias, m_.mlp_bias);
        if (d_.sliding_window_pattern > 0 || m_.sliding_window_layers > 0) {
            // One entry per layer: the sliding ones first (only the count matters).
            json types = json::array();
            for (int64_t i = 0; i < m_.num_layers; ++i)
                types.push_back(i < m_.sliding_window_layers ? "sliding_attention" : "full_attention");
            j_["layer_types"] = std::move(types);
        }
        if (d_.no_rope_layer_interval > 0 || m_.no_rope_layer_interval > 0)
            set(ModelField::NoRopeLayerInterval, m_.no_rope_layer_interval);
        if (d_.partial_rotary_factor > 0 || m_.partial_rotary_factor != 1.0)
            set(ModelField::PartialRotaryFactor, m_.partial_rotary_factor);
        // The MTP layers the checkpoint stores (parameters.mtp).
        if (m_.mtp_layers != d_.mtp_layers) j_["num_nextn_predict_layers"] = m_.mtp_layers;
    }

    void writeDropout() {
        set(ModelField::AttentionDropout, m_.attention_dropout);
        const bool native = d_.writes_dropout_keys;  // the families whose configs carry these keys
        if (native || m_.hidden_dropout != 0.0) set(ModelField::HiddenDropout, m_.hidden_dropout);
        if (native || m_.embedding_dropout != 0.0) set(ModelField::EmbeddingDropout, m_.embedding_dropout);
    }

    void writeMla() {
        const MlaConfig& a = *m_.mla;
        set(ModelField::QLoraRank, a.q_lora_rank > 0 ? json(a.q_lora_rank) : json(nullptr));
        set(ModelField::KvLoraRank, a.kv_lora_rank);
        set(ModelField::QkNopeHeadDim, a.qk_nope_head_dim);
        set(ModelField::QkRopeHeadDim, a.qk_rope_head_dim);
        set(ModelField::VHeadDim, a.v_head_dim);
    }

    void writeMoe() {
        const bool family_moe = d_.num_experts > 0;
        if (!m_.moe) {
            // A family that has experts by default needs to be told it has none.
            if (family_moe)
                set(ModelField::NumExperts, d_.experts_null_is_dense ? json(nullptr) : json(0));
            return;
        }
        const MoeConfig& e = *m_.moe;
        set(ModelField::NumExperts, e.num_experts);
        set(ModelField::ExpertsPerToken, e.experts_per_token);
        const std::string_view moe_width = modelFieldRow(ModelField::ExpertFfn).aliases.front();  // moe_intermediate_size
        if (key(ModelField::ExpertFfn) != key(ModelField::Intermediate) && key(ModelField::ExpertFfn) != moe_width)
            set(ModelField::ExpertFfn, e.expert_ffn);  // Llama 4: intermediate_size
        else if (d_.moe_intermediate > 0 || e.expert_ffn != m_.ffn_hidden_size)
            j_[std::string(moe_width)] = e.expert_ffn;
        const bool deepseek = d_.mla;  // DeepSeek's configs state every MoE key
        if (differs(ModelField::SharedExpertFfn)) set(ModelField::SharedExpertFfn, e.shared_expert_ffn);
        const int64_t shared_default =
            d_.shared_experts >= 0 ? d_.shared_experts : (e.shared_expert_ffn > 0 ? 1 : 0);
        if (deepseek || e.shared_experts != shared_default) set(ModelField::SharedExperts, e.shared_experts);
        for (ModelField f : {ModelField::SharedExpertGate, ModelField::RouterScoreBias})
            if (differs(f)) set(f, modelFieldRow(f).get(m_));
        if (e.routing_groups > 0) {
            j_["topk_method"] = "group_limited_greedy";
            set(ModelField::RoutingGroups, e.routing_groups);
            set(ModelField::RoutingGroupsKept, e.routing_groups_kept);
        }
        if (d_.norm_topk_prob_key && (deepseek || differs(ModelField::NormTopkProb)))
            set(ModelField::NormTopkProb, e.norm_topk_prob);
        if (differs(ModelField::CapacityFactor)) set(ModelField::CapacityFactor, e.capacity_factor);
        writeMoeLayers(e, deepseek);
    }

    void writeMoeLayers(const MoeConfig& e, bool deepseek) {
        const MoeLayerPattern want{e.first_dense_layers, e.layer_frequency};
        MoeLayerSelection sel;
        if (d_.moe_layer_keys == MoeLayerKeys::Llama4) {
            sel.decoder_sparse_step = e.layer_frequency;
            j_["interleave_moe_layer_step"] = e.layer_frequency;
        } else if (d_.moe_layer_keys == MoeLayerKeys::Qwen) {
            sel.decoder_sparse_step = e.layer_frequency;
            for (int64_t i = 0; i < e.first_dense_layers && e.layer_frequency > 0; ++i)
                if ((i + 1) % e.layer_frequency == 0) sel.mlp_only_layers.push_back(i);
            j_["decoder_sparse_step"] = sel.decoder_sparse_step;
            j_["mlp_only_layers"] = sel.mlp_only_layers;
        } else {
            sel.first_k_dense_replace = e.first_dense_layers;
            sel.moe_layer_freq = e.layer_frequency;
            if (deepseek || e.first_dense_layers != d_.first_dense_layers) j_["first_k_dense_replace"] = e.first_dense_layers;
            if (deepseek || e.layer_frequency != 1) j_["moe_layer_freq"] = e.layer_frequency;
        }
        const MoeLayerFit fit = fitMoeLayers(m_.num_layers, sel);
        if (!fit.supported || !(fit.pattern == want)) {
            // The family's keys cannot say it exactly: state it outright.
            j_["trainmem_first_dense_layers"] = e.first_dense_layers;
            j_["trainmem_moe_layer_frequency"] = e.layer_frequency;
        }
    }

    // The hybrids' layer pattern and mixer sizes in the family's spelling
    // (hf_hybrid.cpp reads them back), the indexer, and the vision tower's
    // count, which a text config cannot hold otherwise.
    void writeHybrid() {
        if (m_.indexer) {
            j_["index_n_heads"] = m_.indexer->heads;
            j_["index_head_dim"] = m_.indexer->head_dim;
            j_["index_topk"] = m_.indexer->topk;
        }
        if (m_.vision_parameters > 0) j_["trainmem_vision_parameters"] = m_.vision_parameters;
        if (!m_.isHybrid()) return;
        json types = json::array();
        std::string pattern;
        for (const LayerKind& k : m_.layer_kinds) {
            switch (d_.layer_pattern) {
                case LayerPatternKeys::LinearAttentionTypes:
                case LayerPatternKeys::KimiLayerTypes:
                    types.push_back(k.mixer == MixerKind::Attention ? "full_attention" : "linear_attention");
                    break;
                case LayerPatternKeys::MambaAttentionTypes:
                    types.push_back(k.mixer == MixerKind::Attention ? "attention" : "mamba");
                    break;
                case LayerPatternKeys::ConvAttentionTypes:
                    types.push_back(k.mixer == MixerKind::Attention ? "full_attention" : "conv");
                    break;
                case LayerPatternKeys::HybridOverride:
                    pattern += k.mixer == MixerKind::Mamba2     ? 'M'
                               : k.mixer == MixerKind::Attention ? '*'
                               : k.ffn == FfnKind::Moe           ? 'E'
                                                                 : '-';
                    break;
                case LayerPatternKeys::None:
                case LayerPatternKeys::ParallelHybrid:
                case LayerPatternKeys::JambaPeriods:
                case LayerPatternKeys::BlockConfigs:
                    break;
            }
        }
        if (d_.layer_pattern == LayerPatternKeys::HybridOverride)
            j_["hybrid_override_pattern"] = pattern;
        else if (d_.layer_pattern == LayerPatternKeys::JambaPeriods)
            writeJambaPeriods();
        else if (d_.layer_pattern == LayerPatternKeys::BlockConfigs)
            writeBlockConfigs();
        else if (d_.layer_pattern != LayerPatternKeys::ParallelHybrid)
            j_["layer_types"] = std::move(types);
        if (m_.linear_attention) {
            const LinearAttentionConfig& g = *m_.linear_attention;
            j_["linear_num_key_heads"] = g.key_heads;
            j_["linear_num_value_heads"] = g.value_heads;
            j_["linear_key_head_dim"] = g.key_head_dim;
            j_["linear_value_head_dim"] = g.value_head_dim;
            j_["linear_conv_kernel_dim"] = g.conv_kernel;
            j_["attn_output_gate"] = m_.attention_output_gate;
        }
        if (m_.mamba) {
            // In the family's spelling (the model-field rows: Granite's and
            // Falcon-H1's mamba_n_heads, Nemotron-H's mamba_num_heads, ...).
            const MambaConfig& x = *m_.mamba;
            j_[key(ModelField::MambaHeads)] = x.heads;
            j_[key(ModelField::MambaHeadDim)] = x.head_dim;
            j_[key(ModelField::MambaStateSize)] = x.state_size;
            j_[key(ModelField::MambaGroups)] = x.groups;
            j_[key(ModelField::MambaConvKernel)] = x.conv_kernel;
            j_[key(ModelField::MambaChunkSize)] = x.chunk_size;
            j_[key(ModelField::MambaConvBias)] = x.conv_bias;
            j_[key(ModelField::MambaProjBias)] = x.proj_bias;
            if (d_.layer_pattern == LayerPatternKeys::ParallelHybrid) {
                j_["mamba_d_ssm"] = x.inner();
                j_["mamba_rms_norm"] = x.gated_norm;
                j_["projectors_bias"] = x.out_proj_bias;
            }
        }
        if (m_.delta_attention) {
            j_["linear_head_dim"] = m_.delta_attention->head_dim;
            j_["linear_num_heads"] = m_.delta_attention->heads;
            j_["linear_conv_kernel_dim"] = m_.delta_attention->conv_kernel;
        }
        if (d_.layer_pattern == LayerPatternKeys::KimiLayerTypes) {
            json ffns = json::array();
            for (const LayerKind& k : m_.layer_kinds) ffns.push_back(k.ffn == FfnKind::Moe ? "sparse" : "dense");
            j_["mlp_layer_types"] = std::move(ffns);
        }
        if (m_.mamba1) {
            const SelectiveScanConfig& x = *m_.mamba1;
            j_["mamba_expand"] = x.expand;
            j_["mamba_d_state"] = x.state_size;
            j_["mamba_d_conv"] = x.conv_kernel;
            j_["mamba_dt_rank"] = x.dt_rank;
            j_["mamba_conv_bias"] = x.conv_bias;
            j_["mamba_proj_bias"] = x.proj_bias;
        }
        if (m_.short_conv) {
            j_["conv_L_cache"] = m_.short_conv->kernel;
            j_["conv_bias"] = m_.short_conv->bias;
            // The width is written as it is, not as block_ff_dim to adjust again.
            j_["block_auto_adjust_ff_dim"] = false;
        }
    }

    // Nemotron-NAS's block_configs: ffn_mult = 3 w / (2 h) gives back the
    // width w (a multiple of 256, as every imported width is).
    void writeBlockConfigs() {
        json blocks = json::array();
        for (size_t i = 0; i < m_.layer_kinds.size(); ++i) {
            const LayerKind k = m_.layer_kinds[i];
            const bool attention = k.mixer == MixerKind::Attention, ffn = k.ffn == FfnKind::Dense;
            const int64_t width = m_.layer_ffn_widths.empty() ? m_.ffn_hidden_size : m_.layer_ffn_widths[i];
            blocks.push_back(
                {{"attention",
                  {{"no_op", !attention},
                   {"replace_with_linear", false},
                   {"n_heads_in_group", attention && m_.num_kv_heads > 0 ? json(m_.num_heads / m_.num_kv_heads) : json(nullptr)}}},
                 {"ffn",
                  {{"no_op", !ffn},
                   {"replace_with_linear", false},
                   {"ffn_mult", ffn ? json(3.0 * static_cast<double>(width) / (2.0 * static_cast<double>(m_.hidden_size)))
                                    : json(nullptr)}}}});
        }
        j_["block_configs"] = std::move(blocks);
    }

    // Jamba's layers as the periods and offsets they were read from: the
    // first layer of a kind and the distance to the next (one layer alone:
    // a period past the last layer; none: an offset no layer reaches).
    void writeJambaPeriods() {
        const int64_t L = m_.num_layers;
        auto periodOf = [&](auto is, const char* period_key, const char* offset_key) {
            std::vector<int64_t> at;
            for (int64_t i = 0; i < L && at.size() < 2; ++i)
                if (is(m_.layer_kinds[static_cast<size_t>(i)])) at.push_back(i);
            int64_t period = L + 1, offset = L;
            if (at.size() == 2) period = at[1] - at[0], offset = at[0];
            if (at.size() == 1) period = std::max(at[0] + 1, L - at[0]), offset = at[0];
            j_[period_key] = period;
            j_[offset_key] = offset;
        };
        periodOf([](LayerKind k) { return k.mixer == MixerKind::Attention; }, "attn_layer_period", "attn_layer_offset");
        periodOf([](LayerKind k) { return k.ffn == FfnKind::Moe; }, "expert_layer_period", "expert_layer_offset");
    }

    const ModelConfig& m_;
    const FamilySpec& d_;
    json j_ = json::object();
};

}  // namespace

json exportHuggingFaceConfig(const ModelConfig& model) {
    return ConfigWriter(model, familyOf(model.family)).run();
}

}  // namespace trainmem
