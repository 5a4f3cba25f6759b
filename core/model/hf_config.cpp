#include "core/model/hf_config.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "core/model/hf_families.h"
#include "core/base/json_input.h"  // describeJson: bounded values in messages
#include "core/model/model_fields.h"
#include "core/model/model_validate.h"
#include "core/model/config_reader.h"
#include "core/model/hf_hybrid.h"

namespace trainmem {
namespace {

using nlohmann::json;

std::string knownTypes() {
    std::string s;
    for (const std::string& t : supportedModelTypes()) s += (s.empty() ? "" : ", ") + t;
    return s;
}

class ModelImporter {
public:
    ModelImporter(const json& config, std::string type, const FamilySpec& d, bool known)
        : r_(config), config_(config), type_(std::move(type)), d_(d), known_(known) {}

    Expected<ImportedModel> run() {
        ModelConfig& m = out_.model;
        m.family = type_;
        if (!known_)
            out_.warnings.push_back("model.model_type: \"" + type_ +
                                    "\" is not a known family; read as a Llama-style decoder (gated MLP, RMSNorm, "
                                    "biases only where attention_bias / mlp_bias say so)");
        readName();
        readSizes();
        readStructure();
        readDropout();
        readLayerTypes();
        readMla();
        readMoe();
        readHybridLayers(r_, d_, m, out_.warnings);
        readIndexer(r_, d_, m);
        readMtpLayers(r_, d_, m);
        readQuantization();
        if (r_.failed()) return r_.error();
        if (Status s = validate(m); !s.ok()) return s.error();
        return std::move(out_);
    }

private:
    // The key in this family's spelling and the family's default, from the
    // model-field table (model_fields.h); a null default (derived or
    // required) reads as 0.
    std::string_view key(ModelField f) const { return modelFieldRow(f).key(d_); }
    nlohmann::json familyDefault(ModelField f) const { return modelFieldRow(f).default_of(d_); }
    int64_t defaultSize(ModelField f) const {
        const nlohmann::json v = familyDefault(f);
        return v.is_number() ? v.get<int64_t>() : 0;
    }
    bool defaultFlag(ModelField f) const { return familyDefault(f).get<bool>(); }
    double defaultNumber(ModelField f) const { return familyDefault(f).get<double>(); }

    // A size the family defaults when absent (with a warning: a config without
    // it is unusual), or that an unknown model_type must state.
    int64_t size(ModelField f, int64_t fallback) {
        const std::string_view k = key(f);
        if (const std::optional<int64_t> alias = attributeMapAlias(f)) return *alias;
        if (r_.present(k)) return r_.integer(k, 0);
        if (fallback <= 0 || !known_) {
            r_.fail(k, "required");
            return 0;
        }
        out_.warnings.push_back("model." + std::string(k) + ": not in the config; using the " + type_ +
                                " default " + std::to_string(fallback));
        return fallback;
    }

    // GPT2Config's attribute_map makes hidden_size, num_hidden_layers,
    // num_attention_heads and max_position_embeddings names of n_embd, n_layer,
    // n_head and n_positions; set after __init__, they win when both are
    // given (PretrainedConfig.__init__ sets the remaining kwargs last).
    // intermediate_size for n_inner is this importer's convenience.
    std::optional<int64_t> attributeMapAlias(ModelField f) {
        if (!d_.attribute_map_aliases) return std::nullopt;
        // The generic names are the Llama-style row's (an unknown model_type's).
        const std::string_view alias = modelFieldRow(f).key(llamaStyleFamily());
        if (alias == key(f) || !r_.present(alias)) return std::nullopt;
        return r_.integer(alias, 0);
    }

    void readName() {
        const ModelFieldRow& row = modelFieldRow(ModelField::Name);
        std::vector<std::string_view> keys = {row.key(d_)};
        keys.insert(keys.end(), row.aliases.begin(), row.aliases.end());
        for (std::string_view k : keys) {
            if (std::optional<std::string> n = r_.text(k); n && !n->empty()) {
                out_.model.name = *n;
                return;
            }
        }
        out_.model.name = type_;
    }

    void readSizes() {
        ModelConfig& m = out_.model;
        m.hidden_size = size(ModelField::HiddenSize, defaultSize(ModelField::HiddenSize));
        m.num_layers = size(ModelField::NumLayers, defaultSize(ModelField::NumLayers));
        m.num_heads = size(ModelField::NumHeads, defaultSize(ModelField::NumHeads));
        m.vocab_size = size(ModelField::Vocab, defaultSize(ModelField::Vocab));
        if (d_.inner_defaults_to_4h) {
            // n_inner None means 4 * n_embd (GPT2MLP in modeling_gpt2.py).
            const std::string_view k = key(ModelField::Intermediate);
            const std::optional<int64_t> alias = attributeMapAlias(ModelField::Intermediate);
            m.ffn_hidden_size = alias ? *alias : r_.present(k) ? r_.integer(k, 0) : 4 * m.hidden_size;
        } else {
            m.ffn_hidden_size = size(ModelField::Intermediate, defaultSize(ModelField::Intermediate));
        }
        const std::string_view kv = key(ModelField::NumKvHeads);
        const int64_t kv_default = defaultSize(ModelField::NumKvHeads);  // 0: as many as the heads
        if (r_.isNull(kv) || (!r_.has(kv) && kv_default == 0))
            m.num_kv_heads = m.num_heads;  // multi-head attention
        else
            m.num_kv_heads = r_.integer(kv, kv_default);
        const std::string_view mp = key(ModelField::MaxPositions);
        const std::optional<int64_t> mp_alias = attributeMapAlias(ModelField::MaxPositions);
        m.max_position_embeddings = mp_alias ? *mp_alias : r_.integer(mp, defaultSize(ModelField::MaxPositions));
        const std::string_view hd = key(ModelField::HeadDim);
        if (r_.present(hd)) {
            m.head_dim = r_.integer(hd, 0);
        } else if (defaultSize(ModelField::HeadDim) > 0) {
            m.head_dim = defaultSize(ModelField::HeadDim);
        } else if (m.num_heads > 0 && m.hidden_size > 0) {
            if (m.hidden_size % m.num_heads != 0 && !d_.mla && !r_.present(key(ModelField::KvLoraRank)))
                r_.fail(key(ModelField::NumHeads), "must divide " + std::string(key(ModelField::HiddenSize)) + " (" +
                                                       std::to_string(m.hidden_size) +
                                                       ") when head_dim is not given (got " +
                                                       std::to_string(m.num_heads) + ")");
            m.head_dim = m.hidden_size / m.num_heads;
        }
    }

    // Structure the family implies, then the keys that change it. Keys that
    // are not transformers keys (norm_type, mlp_type, ...) are documented in
    // docs/memory-model.md; exportHuggingFaceConfig writes them only when
    // a model differs from its family's convention.
    void readStructure() {
        ModelConfig& m = out_.model;
        m.tied_embeddings = r_.boolean(key(ModelField::TiedEmbeddings), defaultFlag(ModelField::TiedEmbeddings));
        m.hidden_act = familyDefault(ModelField::HiddenAct).get<std::string>();
        // The family's key, then the two spellings any family's config may use.
        for (std::string_view k : {key(ModelField::HiddenAct), std::string_view("hidden_activation"), std::string_view("hidden_act")})
            if (std::optional<std::string> a = r_.text(k)) {
                m.hidden_act = *a;
                break;
            }
        m.mlp = d_.mlp;
        if (std::optional<std::string> t = r_.text(key(ModelField::Mlp))) {
            if (*t == "gated" || *t == "plain")
                m.mlp = *t == "gated" ? MlpKind::Gated : MlpKind::Plain;
            else
                r_.fail(key(ModelField::Mlp), "must be \"gated\" or \"plain\" (got \"" + *t + "\")");
        }
        m.norm = d_.norm;
        if (std::optional<std::string> t = r_.text(key(ModelField::Norm))) {
            if (*t == "rmsnorm" || *t == "layernorm")
                m.norm = *t == "rmsnorm" ? NormKind::RMSNorm : NormKind::LayerNorm;
            else
                r_.fail(key(ModelField::Norm), "must be \"rmsnorm\" or \"layernorm\" (got \"" + *t + "\")");
        }
        m.norms_per_block = r_.integer(key(ModelField::NormsPerBlock), defaultSize(ModelField::NormsPerBlock));
        m.qk_norm = r_.boolean(key(ModelField::QkNorm), defaultFlag(ModelField::QkNorm));
        m.learned_positions = r_.boolean(key(ModelField::LearnedPositions), defaultFlag(ModelField::LearnedPositions));
        m.attention_qkv_bias = d_.qkv_bias;
        m.attention_output_bias = d_.output_bias;
        if (d_.reads_attention_bias && r_.present("attention_bias")) {
            m.attention_qkv_bias = r_.boolean("attention_bias", false);
            m.attention_output_bias = d_.attention_bias_on_output && m.attention_qkv_bias;
        }
        m.attention_qkv_bias = r_.boolean("qkv_bias", m.attention_qkv_bias);
        m.attention_output_bias = r_.boolean(key(ModelField::AttentionOutputBias), m.attention_output_bias);
        m.mlp_bias = r_.boolean(key(ModelField::MlpBias), defaultFlag(ModelField::MlpBias));
        // transformers' default rope init (modeling_rope_utils.py) reads
        // partial_rotary_factor of any config; the GLM-4.5 class defaults it.
        m.partial_rotary_factor =
            r_.number(key(ModelField::PartialRotaryFactor), defaultNumber(ModelField::PartialRotaryFactor));
    }

    void readDropout() {
        ModelConfig& m = out_.model;
        // GPT2Config defaults every dropout to 0.1; the other families to 0.
        const double fallback = defaultNumber(ModelField::AttentionDropout);
        m.attention_dropout = r_.number(key(ModelField::AttentionDropout), fallback);
        const std::string_view resid = key(ModelField::HiddenDropout);
        m.hidden_dropout = r_.present(resid) ? r_.number(resid, fallback) : r_.number("hidden_dropout", fallback);
        m.embedding_dropout = r_.number(key(ModelField::EmbeddingDropout), fallback);
    }

    // Sliding-window and global layers: the config's layer_types (newer
    // transformers configs of any family may carry it), else the class
    // default (every sliding_window_pattern-th layer global).
    void readLayerTypes() {
        ModelConfig& m = out_.model;
        if (r_.failed() || m.num_layers <= 0) return;
        if (d_.layer_pattern != LayerPatternKeys::None) return;  // a hybrid's layer_types: hf_hybrid.cpp
        if (d_.no_rope_layer_interval > 0) {
            readNoRopeLayers();
            return;
        }
        // Another family keeps a ModelConfig's NoPE interval only as
        // exportHuggingFaceConfig writes it (a Llama 4 model renamed).
        if (r_.present("no_rope_layer_interval")) {
            m.no_rope_layer_interval = r_.integer("no_rope_layer_interval", 0);
            if (!r_.failed() && m.no_rope_layer_interval < 0)
                r_.fail("no_rope_layer_interval", "must be 0 (no NoPE layers) or a positive integer (got " +
                                                      std::to_string(m.no_rope_layer_interval) + ")");
        }
        if (r_.present("layer_types")) {
            const std::vector<std::string> types = r_.strings("layer_types");
            if (r_.failed()) return;
            if (static_cast<int64_t>(types.size()) != m.num_layers) {
                r_.fail("layer_types", "must name one type per layer: " + std::to_string(m.num_layers) +
                                           " (num_hidden_layers), got " + std::to_string(types.size()));
                return;
            }
            for (const std::string& t : types) {
                if (t == "sliding_attention")
                    ++m.sliding_window_layers;
                else if (t != "full_attention")
                    r_.fail("layer_types", "entries must be \"sliding_attention\" or \"full_attention\" (got \"" +
                                               t.substr(0, 40) + "\")");
            }
            return;
        }
        if (d_.sliding_window_pattern <= 0) return;  // the family has no sliding layers by default
        const int64_t pattern = r_.integer("sliding_window_pattern", d_.sliding_window_pattern);
        if (pattern <= 0) {
            r_.fail("sliding_window_pattern", "must be a positive integer (got " + std::to_string(pattern) + ")");
            return;
        }
        m.sliding_window_layers = m.num_layers - m.num_layers / pattern;
    }

    // Llama 4 (Llama4TextConfig at transformers commit 000c33fd): a non-empty
    // no_rope_layers (1 = rotary layer, 0 = NoPE) wins over
    // no_rope_layer_interval (layer i is NoPE when (i + 1) % interval == 0);
    // layer_types defaults to chunked_attention on the rotary layers and
    // full_attention on the NoPE ones. ModelConfig holds the interval.
    void readNoRopeLayers() {
        ModelConfig& m = out_.model;
        const int64_t L = m.num_layers;
        int64_t k = r_.integer("no_rope_layer_interval", d_.no_rope_layer_interval);
        if (r_.failed()) return;
        if (k <= 0) {
            r_.fail("no_rope_layer_interval", "must be a positive integer (got " + std::to_string(k) + ")");
            return;
        }
        if (r_.present("no_rope_layers")) {
            const std::vector<int64_t> flags = r_.integers("no_rope_layers");
            if (r_.failed()) return;
            if (!flags.empty()) {
                if (static_cast<int64_t>(flags.size()) != L) {
                    r_.fail("no_rope_layers", "must give one flag per layer: " + std::to_string(L) +
                                                  " (num_hidden_layers), got " + std::to_string(flags.size()));
                    return;
                }
                const auto first_nope = std::find(flags.begin(), flags.end(), 0);
                k = first_nope == flags.end() ? L + 1 : (first_nope - flags.begin()) + 1;
                for (int64_t i = 0; i < L; ++i) {
                    if (flags[static_cast<size_t>(i)] != ((i + 1) % k != 0 ? 1 : 0)) {
                        r_.fail("no_rope_layers",
                                "must be 1 (rotary) or 0 (NoPE) with every k-th layer NoPE, as "
                                "no_rope_layer_interval gives them; other patterns cannot be represented");
                        return;
                    }
                }
            }
        }
        m.no_rope_layer_interval = k;
        if (!r_.present("layer_types")) return;
        const std::vector<std::string> types = r_.strings("layer_types");
        if (r_.failed()) return;
        bool matches = static_cast<int64_t>(types.size()) == L;
        for (int64_t i = 0; matches && i < L; ++i)
            matches = types[static_cast<size_t>(i)] == (m.isRopeLayer(i) ? "chunked_attention" : "full_attention");
        if (!matches)
            r_.fail("layer_types", "must be \"chunked_attention\" on the rotary layers and \"full_attention\" on "
                                   "the NoPE layers, one per layer (Llama4TextConfig's default)");
    }

    // A pre-quantized checkpoint (bitsandbytes 4-bit, GPTQ, AWQ, FP8)
    // states quantization_config. The estimate keeps the weights at the
    // training precision's width (or QLoRA's 4-bit base when
    // training.finetuning is qlora); say so rather than ignore it.
    void readQuantization() {
        if (!r_.present("quantization_config")) return;
        std::string method = "unnamed";
        const json& q = config_["quantization_config"];
        if (q.is_object() && q.contains("quant_method") && q["quant_method"].is_string())
            method = describeText(q["quant_method"].get<std::string>());
        out_.warnings.push_back("model.quantization_config: the checkpoint is stored quantized (" + method +
                                "); its weights are estimated at the training precision's width, not as stored "
                                "(training.finetuning = qlora models a 4-bit base)");
    }

    // DeepSeek's multi-head latent attention (DeepseekV2Config / V3Config
    // defaults); another family has it only when its config says kv_lora_rank.
    void readMla() {
        ModelConfig& m = out_.model;
        if (!d_.mla && !r_.present(key(ModelField::KvLoraRank))) return;
        auto dim = [&](ModelField f, int64_t fallback) {
            const std::string_view k = key(f);
            if (r_.present(k)) return r_.integer(k, 0);
            if (!d_.mla) r_.fail(k, "required for multi-head latent attention");
            return fallback;
        };
        MlaConfig a;
        const std::string_view q = key(ModelField::QLoraRank);
        a.q_lora_rank = r_.isNull(q) ? 0 : r_.integer(q, defaultSize(ModelField::QLoraRank));  // null: no query compression
        a.kv_lora_rank = dim(ModelField::KvLoraRank, defaultSize(ModelField::KvLoraRank));
        a.qk_nope_head_dim = dim(ModelField::QkNopeHeadDim, defaultSize(ModelField::QkNopeHeadDim));
        a.qk_rope_head_dim = dim(ModelField::QkRopeHeadDim, defaultSize(ModelField::QkRopeHeadDim));
        a.v_head_dim = dim(ModelField::VHeadDim, defaultSize(ModelField::VHeadDim));
        m.mla = a;
        // HF stores head_dim = qk_rope_head_dim for RoPE; the q/k head is nope + rope wide.
        m.head_dim = a.qk_nope_head_dim + a.qk_rope_head_dim;
    }

    std::string_view expertsKey() const {
        if (d_.num_experts > 0) return key(ModelField::NumExperts);
        for (std::string_view k : {"num_local_experts", "num_experts", "n_routed_experts"})
            if (r_.has(k)) return k;
        return "";
    }

    void readMoe() {
        ModelConfig& m = out_.model;
        const std::string_view ek = expertsKey();
        if (ek.empty()) return;
        const bool defining = d_.num_experts > 0;  // the family is a mixture of experts
        if (r_.isNull(ek)) {
            // DeepSeek: n_routed_experts null builds dense MLPs; elsewhere the
            // modeling code cannot build the block.
            if (defining && !d_.experts_null_is_dense)
                r_.fail(ek, "must be a positive integer: every " + type_ +
                                " mixture-of-experts layer has this many experts (got null)");
            return;
        }
        MoeConfig e;
        e.num_experts = r_.present(ek) ? r_.integer(ek, 0) : size(ModelField::NumExperts, defaultSize(ModelField::NumExperts));
        if (e.num_experts == 0) {
            // Qwen2-MoE / Qwen3-MoE build dense MLPs when num_experts is 0
            // (their decoder layers test num_experts > 0); Mixtral's block
            // cannot route to no expert.
            if (defining && !d_.zero_experts_is_dense)
                r_.fail(ek, "must be a positive integer: every " + type_ +
                                " mixture-of-experts layer has this many experts (got 0)");
            return;
        }
        const std::string_view top = key(ModelField::ExpertsPerToken);
        if (r_.present(top))
            e.experts_per_token = r_.integer(top, 0);
        else if (defaultSize(ModelField::ExpertsPerToken) > 0)
            e.experts_per_token = size(ModelField::ExpertsPerToken, defaultSize(ModelField::ExpertsPerToken));
        else
            r_.fail(top, "required for a mixture-of-experts model");
        // Llama 4 names the expert width intermediate_size (its dense MLPs are
        // intermediate_size_mlp); elsewhere it is moe_intermediate_size.
        // Where the two share intermediate_size (Mixtral, gpt-oss) the
        // experts' own width is the row's alias, moe_intermediate_size.
        const std::string_view ffn_key = key(ModelField::ExpertFfn) != key(ModelField::Intermediate)
                                             ? key(ModelField::ExpertFfn)
                                             : modelFieldRow(ModelField::ExpertFfn).aliases.front();
        if (r_.present(ffn_key))
            e.expert_ffn = r_.integer(ffn_key, 0);
        else if (defaultSize(ModelField::ExpertFfn) > 0)
            e.expert_ffn = size(ModelField::ExpertFfn, defaultSize(ModelField::ExpertFfn));
        else
            e.expert_ffn = m.ffn_hidden_size;  // Mixtral's experts are intermediate_size wide
        e.shared_expert_ffn = r_.integer(key(ModelField::SharedExpertFfn), defaultSize(ModelField::SharedExpertFfn));
        // A null family default: one shared expert when a shared width is given, else none.
        const nlohmann::json shared = familyDefault(ModelField::SharedExperts);
        const int64_t shared_default = shared.is_number() ? shared.get<int64_t>() : (e.shared_expert_ffn > 0 ? 1 : 0);
        const std::string_view shared_key = key(ModelField::SharedExperts);
        e.shared_experts = r_.isNull(shared_key) ? 0 : r_.integer(shared_key, shared_default);
        e.shared_expert_gate = r_.boolean(key(ModelField::SharedExpertGate), defaultFlag(ModelField::SharedExpertGate));
        // DeepSeek-V3 routes with a score-correction bias ("noaux_tc"); V2 can too.
        bool score_bias = defaultFlag(ModelField::RouterScoreBias);
        if (std::optional<std::string> method = r_.text("topk_method")) {
            // DeepseekV2Config's "greedy" and "group_limited_greedy",
            // DeepseekV3Config's "noaux_tc"; anything else is a typo that
            // would silently route greedily.
            if (*method != "greedy" && *method != "group_limited_greedy" && *method != "noaux_tc")
                r_.fail("topk_method", "must be \"greedy\", \"group_limited_greedy\" or \"noaux_tc\" (got \"" +
                                           describeText(*method) + "\")");
            score_bias = *method == "noaux_tc";
            if (d_.sorted_expert_dispatch && *method == "group_limited_greedy") readRoutingGroups(e);
        }
        e.router_score_bias = r_.boolean(key(ModelField::RouterScoreBias), score_bias);
        const bool normalise = defaultFlag(ModelField::NormTopkProb);
        e.norm_topk_prob = d_.norm_topk_prob_key ? r_.boolean(key(ModelField::NormTopkProb), normalise) : normalise;
        e.capacity_factor = r_.number(key(ModelField::CapacityFactor), defaultNumber(ModelField::CapacityFactor));
        readMoeLayers(e);
        m.moe = e;
    }

    // DeepSeek-V2's group-limited top-k: n_group groups of experts, the best
    // topk_group kept (DeepseekV2MoEGate; both are None in the class).
    void readRoutingGroups(MoeConfig& e) {
        e.routing_groups = r_.integer(key(ModelField::RoutingGroups), defaultSize(ModelField::RoutingGroups));
        e.routing_groups_kept = r_.integer(key(ModelField::RoutingGroupsKept), defaultSize(ModelField::RoutingGroupsKept));
        if (r_.failed()) return;
        if (e.routing_groups <= 0 || e.num_experts % e.routing_groups != 0)
            r_.fail("n_group", "must be a positive divisor of n_routed_experts (" + std::to_string(e.num_experts) +
                                   ") with topk_method group_limited_greedy (got " +
                                   std::to_string(e.routing_groups) + ")");
        else if (e.routing_groups_kept <= 0 || e.routing_groups_kept > e.routing_groups)
            r_.fail("topk_group", "must be between 1 and n_group (" + std::to_string(e.routing_groups) +
                                      ") with topk_method group_limited_greedy (got " +
                                      std::to_string(e.routing_groups_kept) + ")");
    }

    void readMoeLayers(MoeConfig& e) {
        // The layer count is within limits before any walk over the layers.
        if (r_.failed() || out_.model.num_layers <= 0) return;
        MoeLayerSelection sel;
        sel.first_k_dense_replace = r_.integer("first_k_dense_replace", defaultSize(ModelField::FirstDenseLayers));
        sel.moe_layer_freq = r_.integer("moe_layer_freq", 1);
        // Qwen2MoeDecoderLayer and Qwen3MoeDecoderLayer read mlp_only_layers
        // and decoder_sparse_step; no other family's class does (Mixtral's
        // with decoder_sparse_step 16777216 is still sparse in transformers).
        // A family not in the catalogue is read with every key, as said.
        const bool qwen_keys = d_.moe_layer_keys == MoeLayerKeys::Qwen || !known_;
        for (const char* qwen_key : {"decoder_sparse_step", "mlp_only_layers"}) {
            if (qwen_keys || !r_.has(qwen_key)) continue;
            out_.warnings.push_back(std::string("model.") + qwen_key + ": ignored: " + type_ +
                                    " models do not read it (only Qwen2-MoE and Qwen3-MoE do)");
        }
        if (qwen_keys) {
            sel.decoder_sparse_step = r_.integer("decoder_sparse_step", 1);
            sel.mlp_only_layers = r_.integers("mlp_only_layers");
        }
        if (d_.moe_layer_keys == MoeLayerKeys::Llama4) {
            // Llama4TextModel: moe_layers, or every interleave_moe_layer_step-th
            // layer counted from 1 (range(step - 1, L, step)), Qwen's rule.
            sel.decoder_sparse_step = r_.integer("interleave_moe_layer_step", 1);
            if (r_.present("moe_layers")) sel.moe_layers = r_.integers("moe_layers");
        }
        if (r_.failed()) return;
        const MoeLayerFit fit = fitMoeLayers(out_.model.num_layers, sel);
        if (!fit.supported)
            r_.fail(sel.moe_layers ? "moe_layers" : sel.mlp_only_layers.empty() ? "decoder_sparse_step" : "mlp_only_layers",
                    "selects mixture-of-experts layers that are not every k-th layer after the leading dense "
                    "ones, which this calculator cannot represent");
        e.first_dense_layers = r_.integer("trainmem_first_dense_layers", fit.pattern.first_dense_layers);
        e.layer_frequency = r_.integer("trainmem_moe_layer_frequency", fit.pattern.layer_frequency);
    }

    ConfigReader r_;
    const json& config_;
    std::string type_;
    const FamilySpec& d_;
    bool known_;
    ImportedModel out_;
};

}  // namespace

// A multimodal checkpoint's config.json (Llama 4, Gemma 3 4B and up): its
// language model's config sits under text_config and is imported as that
// family's own config.json would be; errors name the nested key.
static Expected<ImportedModel> importTextConfig(const json& config, const std::string& type, const FamilySpec& text) {
    // Llama4Config / Gemma3Config build the text config class's defaults
    // when text_config is absent or null.
    const auto tc = config.find("text_config");
    const bool defaults = tc == config.end() || tc->is_null();
    if (!defaults && !tc->is_object())
        return Error{"model.text_config", "must be an object: a " + type + " config.json holds its language model's "
                                              "config (" + std::string(text.model_type) + ") here (got " +
                                              describeJson(*tc) + ")"};
    json inner = defaults ? json::object() : *tc;
    const auto inner_type = inner.find("model_type");
    if (inner_type == inner.end() || inner_type->is_null())
        inner["model_type"] = text.model_type;
    else if (!inner_type->is_string() || inner_type->get<std::string>() != text.model_type)
        return Error{"model.text_config.model_type", "must be \"" + std::string(text.model_type) + "\" in a " + type +
                                                         " config.json (got " + describeJson(*inner_type) + ")"};
    if (!inner.contains("_name_or_path") && config.contains("_name_or_path")) inner["_name_or_path"] = config["_name_or_path"];
    Expected<ImportedModel> imported = importHuggingFaceConfig(inner);
    if (!imported.ok()) {
        Error e = imported.error();
        if (e.field.rfind("model.", 0) == 0) e.field = "model.text_config." + e.field.substr(6);
        return e;
    }
    for (std::string& w : imported->warnings)
        if (w.rfind("model.", 0) == 0) w = "model.text_config." + w.substr(6);
    if (text.qwen_vision_tower) {
        // Qwen3.5: the vision tower is counted with the checkpoint
        // (parameters.vision), from vision_config or the class defaults.
        const auto vc = config.find("vision_config");
        Expected<int64_t> vision = qwenVisionParameters(vc == config.end() || vc->is_null() ? json::object() : *vc);
        if (!vision.ok()) return vision.error();
        imported->model.vision_parameters = *vision;
        // The checkpoint's top-level tie_word_embeddings (Qwen3_5Config) when text_config has none.
        if (!defaults && !tc->contains("tie_word_embeddings") && config.contains("tie_word_embeddings") &&
            config["tie_word_embeddings"].is_boolean())
            imported->model.tied_embeddings = config["tie_word_embeddings"].get<bool>();
        return imported;
    }
    imported->warnings.push_back("model.text_config: the " + type + " checkpoint's language model (" +
                                 std::string(text.model_type) +
                                 "); its vision encoder and projector (vision_config) are not counted");
    return imported;
}

Expected<ImportedModel> importHuggingFaceConfig(const json& config) {
    if (!config.is_object())
        return Error{"model", "must be a JSON object with the keys of a Hugging Face config.json (got " +
                                  std::string(config.type_name()) + ")"};
    const auto it = config.find("model_type");
    if (it == config.end() || it->is_null())
        return Error{"model.model_type", "required: one of " + knownTypes() +
                                             " (another model_type is read as a Llama-style decoder)"};
    if (!it->is_string()) return Error{"model.model_type", "must be a string (got " + describeJson(*it) + ")"};
    const std::string type = it->get<std::string>();
    if (const FamilySpec* text = findTextConfigFamily(type)) return importTextConfig(config, type, *text);
    const FamilySpec* known = findFamily(type);
    ModelImporter importer(config, type, known ? *known : llamaStyleFamily(), known != nullptr);
    return importer.run();
}

}  // namespace trainmem
