// The rows of the model-field table. Keys and defaults come from the
// family's FamilySpec row (hf_families.cpp, where each is sourced to its
// transformers configuration class); what the keys mean and their sources
// are in docs/memory-model.md ("Model keys").
#include "core/model/model_fields.h"

#include <utility>

namespace trainmem {
namespace {

using nlohmann::json;

// A family default of 0 that means "required" or "derived" is null.
json orNull(int64_t v) { return v > 0 ? json(v) : json(nullptr); }

std::string_view same(std::string_view k) { return k; }

// Accessors of the optional blocks: null when absent, created by a write.
const MoeConfig* moeOf(const ModelConfig& m) { return m.moe ? &*m.moe : nullptr; }
MoeConfig& editMoe(ModelConfig& m) {
    if (!m.moe) m.moe.emplace();
    return *m.moe;
}
const MlaConfig* mlaOf(const ModelConfig& m) { return m.mla ? &*m.mla : nullptr; }
MlaConfig& editMla(ModelConfig& m) {
    if (!m.mla) m.mla.emplace();
    return *m.mla;
}

#define TM_FIELD(member)                                                        \
    [](const ModelConfig& m) -> json { return m.member; },                      \
        [](ModelConfig& m, const json& v) { v.get_to(m.member); }
#define TM_MOE(member)                                                          \
    [](const ModelConfig& m) -> json { return moeOf(m) ? json(moeOf(m)->member) : json(nullptr); }, \
        [](ModelConfig& m, const json& v) { v.get_to(editMoe(m).member); }
const IndexerConfig* indexerOf(const ModelConfig& m) { return m.indexer ? &*m.indexer : nullptr; }
IndexerConfig& editIndexer(ModelConfig& m) {
    if (!m.indexer) m.indexer.emplace();
    return *m.indexer;
}
#define TM_INDEXER(member)                                                      \
    [](const ModelConfig& m) -> json { return indexerOf(m) ? json(indexerOf(m)->member) : json(nullptr); }, \
        [](ModelConfig& m, const json& v) { v.get_to(editIndexer(m).member); }
// The hybrids' mixer blocks: absent reads as null, a set creates the block.
template <class Block>
const Block* blockOf(const std::optional<Block>& b) {
    return b ? &*b : nullptr;
}
template <class Block>
Block& editBlock(std::optional<Block>& b) {
    if (!b) b.emplace();
    return *b;
}
#define TM_BLOCK(block, member)                                                                          \
    [](const ModelConfig& m) -> json { return blockOf(m.block) ? json(blockOf(m.block)->member) : json(nullptr); }, \
        [](ModelConfig& m, const json& v) { v.get_to(editBlock(m.block).member); }
// Granite 4.0-H and Falcon-H1 spell the Mamba keys mamba_n_heads,
// mamba_d_head, ...; Nemotron-H mamba_num_heads, mamba_head_dim, ...
bool graniteMamba(const FamilySpec& f) {
    return f.layer_pattern == LayerPatternKeys::MambaAttentionTypes || f.layer_pattern == LayerPatternKeys::ParallelHybrid;
}
#define TM_MLA(member)                                                          \
    [](const ModelConfig& m) -> json { return mlaOf(m) ? json(mlaOf(m)->member) : json(nullptr); }, \
        [](ModelConfig& m, const json& v) { v.get_to(editMla(m).member); }

using T = ModelFieldType;
using S = ModelSection;
using R = FieldRange;
constexpr double kMax = static_cast<double>(kMaxModelSize);

std::vector<ModelFieldRow> makeRows() {
    std::vector<ModelFieldRow> rows = {
        {ModelField::Name, "name", T::Text, S::Identity, "Name", "Display name used in titles and exports (_name_or_path).",
         R::Any, [](const FamilySpec&) { return same("_name_or_path"); }, {"name"},
         [](const FamilySpec&) { return json(nullptr); }, {}, "", 0, 0, TM_FIELD(name)},
        {ModelField::Family, "family", T::Choice, S::Identity, "Family",
         "The Hugging Face model_type: its keys, defaults and block structure are its row in the family catalogue "
         "(another model_type reads as a Llama-style decoder).",
         R::Any, [](const FamilySpec&) { return same("model_type"); }, {}, [](const FamilySpec& f) { return json(std::string(f.model_type)); },
         {}, "family", 0, 0, TM_FIELD(family)},

        {ModelField::HiddenSize, "hidden_size", T::Integer, S::Sizes, "Hidden size",
         "h, the width of the residual stream (hidden_size). 4096 for 7-8B models, 8192 for 70B, 16384 for 405B.",
         R::Positive, [](const FamilySpec& f) { return f.hidden_key; }, {"hidden_size", "n_embd"},
         [](const FamilySpec& f) { return orNull(f.hidden_size); }, {}, "hidden_size", 1, kMax, TM_FIELD(hidden_size)},
        {ModelField::NumLayers, "num_layers", T::Integer, S::Sizes, "Layers",
         "L, transformer blocks (num_hidden_layers). 32 for Llama-3-8B, 80 for 70B, 126 for 405B.",
         R::LayerCount, [](const FamilySpec& f) { return f.layers_key; }, {"num_hidden_layers", "n_layer"},
         [](const FamilySpec& f) { return orNull(f.num_layers); }, {}, "num_layers", 1,
         static_cast<double>(kMaxLayers), TM_FIELD(num_layers)},
        {ModelField::NumHeads, "num_heads", T::Integer, S::Sizes, "Attention heads",
         "H, query heads (num_attention_heads). Usually hidden size / 128.",
         R::Positive, [](const FamilySpec& f) { return f.heads_key; }, {"num_attention_heads", "n_head"},
         [](const FamilySpec& f) { return orNull(f.num_heads); }, {}, "num_heads", 1, 100000, TM_FIELD(num_heads)},
        {ModelField::NumKvHeads, "num_kv_heads", T::Integer, S::Sizes, "KV heads",
         "Key/value heads (num_key_value_heads): = heads for MHA, 8 for Llama-3 GQA, 1 for MQA. Must divide the heads.",
         R::Positive, [](const FamilySpec&) { return same("num_key_value_heads"); }, {},
         [](const FamilySpec& f) { return orNull(f.num_kv_heads); }, {}, "num_kv_heads", 1, 100000, TM_FIELD(num_kv_heads)},
        {ModelField::HeadDim, "head_dim", T::Integer, S::Sizes, "Head dim",
         "d, width of one head (head_dim); hidden size / heads unless the config says otherwise (Gemma: 256).",
         R::Positive, [](const FamilySpec&) { return same("head_dim"); }, {},
         [](const FamilySpec& f) { return orNull(f.head_dim); }, {}, "head_dim", 1, 100000, TM_FIELD(head_dim)},

        {ModelField::HiddenAct, "hidden_act", T::Choice, S::Structure, "Activation",
         "MLP activation function: silu (Llama), gelu_pytorch_tanh (Gemma), gelu_new (GPT-2).",
         R::Activation, [](const FamilySpec& f) { return f.act_key; },
         {"hidden_act", "hidden_activation", "activation_function"},
         [](const FamilySpec& f) { return json(std::string(f.hidden_act)); }, {}, "hidden_act", 0, 0, TM_FIELD(hidden_act)},
        {ModelField::SlidingWindowLayers, "sliding_window_layers", T::Integer, S::Layers, "Sliding-window layers",
         "Layers with sliding-window attention among global ones (layer_types: Gemma 2/3, gpt-oss). Only the count "
         "matters: a model that mixes both builds two causal masks (Gemma 3: two rotary tables).",
         R::UpToLayers, [](const FamilySpec&) { return same("layer_types"); }, {"sliding_window_pattern"},
         [](const FamilySpec&) { return json(nullptr); }, {}, "sliding_window_layers", 0, 100000,
         TM_FIELD(sliding_window_layers)},
        {ModelField::NoRopeLayerInterval, "no_rope_layer_interval", T::Integer, S::Layers, "NoPE every k layers",
         "Llama 4: every k-th layer skips the rotary embedding (no_rope_layer_interval, 4) and attends globally; "
         "the others attend in chunks. 0 = no NoPE layers.",
         R::NoPeInterval, [](const FamilySpec&) { return same("no_rope_layer_interval"); }, {"no_rope_layers"},
         [](const FamilySpec& f) { return json(f.no_rope_layer_interval); }, {}, "no_rope_layer_interval", 0, 100000,
         TM_FIELD(no_rope_layer_interval)},
        {ModelField::PartialRotaryFactor, "partial_rotary_factor", T::Number, S::Structure, "Rotary share",
         "The share of each q/k head the rotary embedding turns (partial_rotary_factor): 1 for most models, 0.5 for GLM-4.5.",
         R::Fraction, [](const FamilySpec&) { return same("partial_rotary_factor"); }, {},
         [](const FamilySpec& f) { return json(f.partial_rotary_factor > 0 ? f.partial_rotary_factor : 1.0); }, {}, "",
         0, 1, TM_FIELD(partial_rotary_factor)},

        {ModelField::Intermediate, "ffn_hidden_size", T::Integer, S::Sizes, "FFN size",
         "f, intermediate size of a dense MLP (intermediate_size; Llama 4: intermediate_size_mlp). 14336 for "
         "Llama-3-8B; 4h for GPT-2.",
         R::Positive, [](const FamilySpec& f) { return f.intermediate_key; }, {"intermediate_size", "n_inner"},
         [](const FamilySpec& f) { return f.inner_defaults_to_4h ? json(nullptr) : orNull(f.intermediate_size); }, {},
         "ffn_hidden_size", 1, kMax, TM_FIELD(ffn_hidden_size)},
        {ModelField::Vocab, "vocab_size", T::Integer, S::Sizes, "Vocabulary",
         "V, tokens in the vocabulary (vocab_size). 32000 (Llama-2), 128256 (Llama-3), 151936 (Qwen2). Drives the "
         "embedding, LM head and logits memory.",
         R::Positive, [](const FamilySpec&) { return same("vocab_size"); }, {},
         [](const FamilySpec& f) { return orNull(f.vocab_size); }, {}, "vocab_size", 1, kMax, TM_FIELD(vocab_size)},
        {ModelField::MaxPositions, "max_position_embeddings", T::Integer, S::Sizes, "Max positions",
         "Longest context the model was built for (max_position_embeddings); sizes GPT-2's learned position table.",
         R::NonNegative, [](const FamilySpec& f) { return f.positions_key; }, {"max_position_embeddings", "n_positions"},
         [](const FamilySpec& f) { return json(f.max_positions); }, {}, "max_position_embeddings", 1, kMax,
         TM_FIELD(max_position_embeddings)},
        {ModelField::Mlp, "mlp", T::Choice, S::Structure, "MLP",
         "Gated (SwiGLU/GeGLU: gate, up, down = 3 matrices) or plain (GELU: 2 matrices, GPT-2).",
         R::Any, [](const FamilySpec&) { return same("mlp_type"); }, {},
         [](const FamilySpec& f) { return json(f.mlp == MlpKind::Gated ? "gated" : "plain"); },
         {{"gated", "Gated (SwiGLU)"}, {"plain", "Plain (GELU)"}}, "mlp", 0, 0,
         [](const ModelConfig& m) -> json { return m.mlp == MlpKind::Gated ? "gated" : "plain"; },
         [](ModelConfig& m, const json& v) { m.mlp = v == "plain" ? MlpKind::Plain : MlpKind::Gated; }},
        {ModelField::Norm, "norm", T::Choice, S::Structure, "Norm",
         "RMSNorm (h weights, Llama and most current models) or LayerNorm (weights + biases, GPT-2).",
         R::Any, [](const FamilySpec&) { return same("norm_type"); }, {},
         [](const FamilySpec& f) { return json(f.norm == NormKind::RMSNorm ? "rmsnorm" : "layernorm"); },
         {{"rmsnorm", "RMSNorm"}, {"layernorm", "LayerNorm"}}, "norm", 0, 0,
         [](const ModelConfig& m) -> json { return m.norm == NormKind::RMSNorm ? "rmsnorm" : "layernorm"; },
         [](ModelConfig& m, const json& v) { m.norm = v == "layernorm" ? NormKind::LayerNorm : NormKind::RMSNorm; }},
        {ModelField::NormsPerBlock, "norms_per_block", T::Integer, S::Structure, "Norms per block",
         "2 for most models; 4 for Gemma-2 (pre and post norms around attention and MLP).",
         R::Positive, [](const FamilySpec&) { return same("norms_per_block"); }, {},
         [](const FamilySpec& f) { return json(f.norms_per_block); }, {}, "norms_per_block", 1, 8, TM_FIELD(norms_per_block)},
        {ModelField::QkNorm, "qk_norm", T::Flag, S::Structure, "QK norm",
         "Norm on queries and keys: per head (Qwen3, Gemma 3), over the projections (OLMo 2), or Llama 4's L2 norm.",
         R::Any, [](const FamilySpec& f) { return f.qk_norm_key; }, {"qk_norm", "use_qk_norm"},
         [](const FamilySpec& f) { return json(f.qk_norm); }, {}, "", 0, 0, TM_FIELD(qk_norm)},
        {ModelField::TiedEmbeddings, "tied_embeddings", T::Flag, S::Structure, "Tied embeddings",
         "LM head shares the embedding matrix (tie_word_embeddings): Gemma, GPT-2, Llama-3.2-1B/3B.",
         R::Any, [](const FamilySpec&) { return same("tie_word_embeddings"); }, {},
         [](const FamilySpec& f) { return json(f.tie_word_embeddings); }, {}, "tied_embeddings", 0, 0, TM_FIELD(tied_embeddings)},
        {ModelField::LearnedPositions, "learned_positions", T::Flag, S::Structure, "Learned positions",
         "A learned position embedding of max positions x h (GPT-2); rotary models have none.",
         R::Any, [](const FamilySpec&) { return same("learned_position_embeddings"); }, {},
         [](const FamilySpec& f) { return json(f.learned_positions); }, {}, "learned_positions", 0, 0,
         TM_FIELD(learned_positions)},
        {ModelField::AttentionQkvBias, "attention_qkv_bias", T::Flag, S::Structure, "q/k/v bias",
         "Biases on the q, k and v projections (Qwen2, GPT-2).",
         R::Any, [](const FamilySpec& f) { return f.reads_attention_bias ? same("attention_bias") : same("qkv_bias"); },
         {"attention_bias", "qkv_bias"}, [](const FamilySpec& f) { return json(f.qkv_bias); }, {}, "attention_qkv_bias", 0, 0,
         TM_FIELD(attention_qkv_bias)},
        {ModelField::AttentionOutputBias, "attention_output_bias", T::Flag, S::Structure, "Output bias",
         "Bias on the attention output projection (GPT-2).",
         R::Any, [](const FamilySpec&) { return same("attention_output_bias"); }, {},
         [](const FamilySpec& f) { return json(f.output_bias); }, {}, "attention_output_bias", 0, 0,
         TM_FIELD(attention_output_bias)},
        {ModelField::MlpBias, "mlp_bias", T::Flag, S::Structure, "MLP bias", "Biases on every MLP matrix (GPT-2).",
         R::Any, [](const FamilySpec&) { return same("mlp_bias"); }, {},
         [](const FamilySpec& f) { return json(f.mlp_bias); }, {}, "mlp_bias", 0, 0, TM_FIELD(mlp_bias)},

        {ModelField::AttentionDropout, "attention_dropout", T::Number, S::Dropout, "Attention dropout",
         "Dropout probability on the attention probabilities; 0 in most LLM training today. Non-zero keeps a 1-byte "
         "mask per element for backward.",
         R::Probability, [](const FamilySpec& f) { return f.attention_dropout_key; }, {"attention_dropout", "attn_pdrop"},
         [](const FamilySpec& f) { return json(f.dropout); }, {}, "attention_dropout", 0, 1, TM_FIELD(attention_dropout)},
        // GPT-2's and Phi-3's names; every family reads them (hf_config.cpp).
        {ModelField::HiddenDropout, "hidden_dropout", T::Number, S::Dropout, "Hidden dropout",
         "Dropout probability after attention and MLP outputs (resid_pdrop); 0 in most LLM training today. Non-zero "
         "keeps a 1-byte mask per element for backward.",
         R::Probability, [](const FamilySpec&) { return same("resid_pdrop"); }, {"hidden_dropout"},
         [](const FamilySpec& f) { return json(f.dropout); }, {}, "hidden_dropout", 0, 1, TM_FIELD(hidden_dropout)},
        {ModelField::EmbeddingDropout, "embedding_dropout", T::Number, S::Dropout, "Embedding dropout",
         "Dropout probability after the embeddings (embd_pdrop); 0 in most LLM training today. Non-zero keeps a "
         "1-byte mask per element for backward.",
         R::Probability, [](const FamilySpec&) { return same("embd_pdrop"); }, {"embedding_dropout"},
         [](const FamilySpec& f) { return json(f.dropout); }, {}, "embedding_dropout", 0, 1, TM_FIELD(embedding_dropout)},

        {ModelField::NumExperts, "moe.num_experts", T::Integer, S::Experts, "Experts",
         "E, routed experts per MoE layer: 8 (Mixtral), 60 (Qwen1.5-MoE), 256 (DeepSeek-V3).",
         R::Positive, [](const FamilySpec& f) { return f.experts_key; },
         {"num_local_experts", "num_experts", "n_routed_experts"},
         [](const FamilySpec& f) { return json(f.num_experts); }, {}, "num_experts", 1, 100000, TM_MOE(num_experts)},
        {ModelField::ExpertsPerToken, "moe.experts_per_token", T::Integer, S::Experts, "Experts per token",
         "Top-k routing: 2 (Mixtral), 4 (Qwen1.5-MoE), 8 (DeepSeek-V3). Multiplies expert activations.",
         R::Positive, [](const FamilySpec&) { return same("num_experts_per_tok"); }, {},
         [](const FamilySpec& f) { return orNull(f.experts_per_token); }, {}, "experts_per_token", 1, 1000,
         TM_MOE(experts_per_token)},
        // Mixtral, gpt-oss and Llama 4 name it intermediate_size (Llama 4's
        // dense MLPs are intermediate_size_mlp); Mixtral's and gpt-oss's
        // configs have no other width, so their experts default to it.
        {ModelField::ExpertFfn, "moe.expert_ffn", T::Integer, S::Experts, "Expert FFN size",
         "Intermediate size of one routed expert (moe_intermediate_size; Mixtral, gpt-oss and Llama 4: "
         "intermediate_size). 14336 for Mixtral-8x7B, 2048 for DeepSeek-V3.",
         R::Positive, [](const FamilySpec& f) { return f.expert_ffn_key; }, {"moe_intermediate_size"},
         [](const FamilySpec& f) { return orNull(f.moe_intermediate); }, {}, "expert_ffn", 1, kMax, TM_MOE(expert_ffn)},
        {ModelField::SharedExperts, "moe.shared_experts", T::Integer, S::Experts, "Shared experts",
         "Experts every token uses (DeepSeek n_shared_experts: 1-2). 0 for Mixtral.",
         R::NonNegative, [](const FamilySpec&) { return same("n_shared_experts"); }, {},
         [](const FamilySpec& f) { return f.shared_experts >= 0 ? json(f.shared_experts) : json(nullptr); }, {}, "", 0,
         1000, TM_MOE(shared_experts)},
        {ModelField::SharedExpertFfn, "moe.shared_expert_ffn", T::Integer, S::Experts, "Shared expert FFN",
         "Qwen2-MoE: width of the single shared expert (shared_expert_intermediate_size); 0 = shared experts x "
         "expert FFN size.",
         R::NonNegative, [](const FamilySpec& f) { return f.shared_expert_ffn_key; }, {"shared_expert_intermediate_size"},
         [](const FamilySpec& f) { return json(f.shared_intermediate); }, {}, "", 0, kMax, TM_MOE(shared_expert_ffn)},
        {ModelField::SharedExpertGate, "moe.shared_expert_gate", T::Flag, S::Experts, "Shared expert gate",
         "Qwen2-MoE's sigmoid gate Linear(h, 1) on the shared expert.",
         R::Any, [](const FamilySpec&) { return same("shared_expert_gate"); }, {},
         [](const FamilySpec& f) { return json(f.shared_expert_gate); }, {}, "shared_expert_gate", 0, 0,
         TM_MOE(shared_expert_gate)},
        {ModelField::FirstDenseLayers, "moe.first_dense_layers", T::Integer, S::Experts, "Leading dense layers",
         "The first layers keep a dense MLP: DeepSeek first_k_dense_replace (3 in DeepSeek-V3); Qwen's "
         "mlp_only_layers and Llama 4's moe_layers select layers the same way.",
         R::NonNegative,
         [](const FamilySpec& f) {
             return f.moe_layer_keys == MoeLayerKeys::Llama4 ? same("moe_layers")
                    : f.moe_layer_keys == MoeLayerKeys::Qwen ? same("mlp_only_layers")
                                                             : same("first_k_dense_replace");
         },
         {"first_k_dense_replace", "mlp_only_layers", "moe_layers", "trainmem_first_dense_layers"},
         [](const FamilySpec& f) { return json(f.first_dense_layers); }, {}, "", 0, 100000, TM_MOE(first_dense_layers)},
        {ModelField::LayerFrequency, "moe.layer_frequency", T::Integer, S::Experts, "MoE every k layers",
         "A MoE layer every k layers after the dense ones (moe_layer_freq, decoder_sparse_step, Llama 4's "
         "interleave_moe_layer_step); 1 = every layer.",
         R::Positive,
         [](const FamilySpec& f) {
             return f.moe_layer_keys == MoeLayerKeys::Llama4 ? same("interleave_moe_layer_step")
                    : f.moe_layer_keys == MoeLayerKeys::Qwen ? same("decoder_sparse_step")
                                                             : same("moe_layer_freq");
         },
         {"moe_layer_freq", "decoder_sparse_step", "interleave_moe_layer_step", "trainmem_moe_layer_frequency"},
         [](const FamilySpec&) { return json(1); }, {}, "", 1, 1000, TM_MOE(layer_frequency)},
        {ModelField::RouterScoreBias, "moe.router_score_bias", T::Flag, S::Experts, "Router score bias",
         "DeepSeek-V3's e_score_correction_bias (topk_method noaux_tc): E extra parameters per layer.",
         R::Any, [](const FamilySpec&) { return same("router_score_bias"); }, {"topk_method"},
         [](const FamilySpec& f) { return json(f.router_score_bias); }, {}, "router_score_bias", 0, 0,
         TM_MOE(router_score_bias)},
        {ModelField::NormTopkProb, "moe.norm_topk_prob", T::Flag, S::Experts, "Renormalise top-k",
         "The top-k routing weights are divided by their sum (norm_topk_prob; Mixtral always, DeepSeek-V2 never): "
         "keeps T x k + T small tensors.",
         R::Any, [](const FamilySpec&) { return same("norm_topk_prob"); }, {},
         [](const FamilySpec& f) { return json(f.norm_topk_prob); }, {}, "norm_topk_prob", 0, 0, TM_MOE(norm_topk_prob)},
        {ModelField::RoutingGroups, "moe.routing_groups", T::Integer, S::Experts, "Routing groups",
         "DeepSeek-V2's group-limited routing (topk_method group_limited_greedy): the experts form n_group groups. "
         "0 = plain top-k.",
         R::Any, [](const FamilySpec&) { return same("n_group"); }, {},
         [](const FamilySpec&) { return json(0); }, {}, "routing_groups", 0, 1000, TM_MOE(routing_groups)},
        {ModelField::RoutingGroupsKept, "moe.routing_groups_kept", T::Integer, S::Experts, "Groups kept",
         "DeepSeek-V2's topk_group: the best groups kept before the top-k; the others are masked off.",
         R::Any, [](const FamilySpec&) { return same("topk_group"); }, {},
         [](const FamilySpec&) { return json(0); }, {}, "routing_groups_kept", 0, 1000, TM_MOE(routing_groups_kept)},
        {ModelField::CapacityFactor, "moe.capacity_factor", T::Number, S::Experts, "Capacity factor",
         "0 = dropless routing (Megablocks, DeepSeek). > 0 pads every expert to capacity x tokens x k / E (e.g. 1.25).",
         R::NonNegativeNumber, [](const FamilySpec&) { return same("capacity_factor"); }, {},
         [](const FamilySpec&) { return json(0.0); }, {}, "capacity_factor", 0, 5, TM_MOE(capacity_factor)},

        {ModelField::QLoraRank, "mla.q_lora_rank", T::Integer, S::Latent, "q LoRA rank",
         "Query compression rank (q_lora_rank): 1536 (DeepSeek-V3); 0 = none (V2-Lite).",
         R::NonNegative, [](const FamilySpec&) { return same("q_lora_rank"); }, {},
         [](const FamilySpec& f) { return f.mla ? json(f.mla_sizes.q_lora_rank) : json(0); }, {}, "q_lora_rank", 0, kMax, TM_MLA(q_lora_rank)},
        {ModelField::KvLoraRank, "mla.kv_lora_rank", T::Integer, S::Latent, "kv LoRA rank",
         "Key/value latent rank (kv_lora_rank): 512 (DeepSeek-V2/V3).",
         R::Positive, [](const FamilySpec&) { return same("kv_lora_rank"); }, {},
         [](const FamilySpec& f) { return f.mla ? json(f.mla_sizes.kv_lora_rank) : json(nullptr); }, {}, "kv_lora_rank", 1, kMax,
         TM_MLA(kv_lora_rank)},
        {ModelField::QkNopeHeadDim, "mla.qk_nope_head_dim", T::Integer, S::Latent, "qk nope dim",
         "Per-head query/key width without rotary (qk_nope_head_dim): 128.",
         R::NonNegative, [](const FamilySpec&) { return same("qk_nope_head_dim"); }, {},
         [](const FamilySpec& f) { return f.mla ? json(f.mla_sizes.qk_nope_head_dim) : json(nullptr); }, {}, "qk_nope_head_dim", 1, 100000,
         TM_MLA(qk_nope_head_dim)},
        {ModelField::QkRopeHeadDim, "mla.qk_rope_head_dim", T::Integer, S::Latent, "qk rope dim",
         "Per-head rotary query/key width (qk_rope_head_dim): 64.",
         R::Positive, [](const FamilySpec&) { return same("qk_rope_head_dim"); }, {},
         [](const FamilySpec& f) { return f.mla ? json(f.mla_sizes.qk_rope_head_dim) : json(nullptr); }, {}, "qk_rope_head_dim", 1, 100000,
         TM_MLA(qk_rope_head_dim)},
        {ModelField::VHeadDim, "mla.v_head_dim", T::Integer, S::Latent, "v head dim",
         "Per-head value width (v_head_dim): 128.",
         R::Positive, [](const FamilySpec&) { return same("v_head_dim"); }, {},
         [](const FamilySpec& f) { return f.mla ? json(f.mla_sizes.v_head_dim) : json(nullptr); }, {}, "v_head_dim", 1, 100000,
         TM_MLA(v_head_dim)},
        {ModelField::MtpLayers, "mtp_layers", T::Integer, S::Layers, "MTP layers (stored)",
         "Multi-token-prediction layers the checkpoint stores beside the model (num_nextn_predict_layers, "
         "mtp_num_hidden_layers): DeepSeek-V3 and GLM-4.5 1, Qwen3-Next 1. Counted in parameters.mtp and the "
         "checkpoint's total, not trained.",
         R::NonNegative, [](const FamilySpec&) { return same("num_nextn_predict_layers"); }, {"mtp_num_hidden_layers"},
         [](const FamilySpec& f) { return json(f.mtp_layers); }, {}, "", 0, 16, TM_FIELD(mtp_layers)},
        {ModelField::IndexHeads, "indexer.heads", T::Integer, S::Latent, "Indexer heads",
         "DeepSeek Sparse Attention's lightning indexer (index_n_heads): 64 (DeepSeek-V3.2), 32 (GLM-5). Its "
         "parameters count as weights; it runs under no_grad and keeps nothing for backward.",
         R::Positive, [](const FamilySpec&) { return same("index_n_heads"); }, {},
         [](const FamilySpec& f) { return orNull(f.indexer_sizes.heads); }, {}, "", 1, 1024, TM_INDEXER(heads)},
        {ModelField::IndexHeadDim, "indexer.head_dim", T::Integer, S::Latent, "Indexer head dim",
         "Width of one indexer head (index_head_dim): 128.",
         R::Positive, [](const FamilySpec&) { return same("index_head_dim"); }, {},
         [](const FamilySpec& f) { return orNull(f.indexer_sizes.head_dim); }, {}, "", 1, 4096, TM_INDEXER(head_dim)},
        {ModelField::IndexTopk, "indexer.topk", T::Integer, S::Latent, "Indexer top-k",
         "Keys each query attends to (index_topk): 2048.",
         R::Positive, [](const FamilySpec&) { return same("index_topk"); }, {},
         [](const FamilySpec& f) { return orNull(f.indexer_sizes.topk); }, {}, "", 1, 1 << 20, TM_INDEXER(topk)},

        {ModelField::AttentionOutputGate, "attention_output_gate", T::Flag, S::Mixers, "Gated attention output",
         "Qwen3-Next and Qwen3.5 (attn_output_gate): q_proj also makes a sigmoid gate on the attention output.",
         R::Any, [](const FamilySpec&) { return same("attn_output_gate"); }, {},
         [](const FamilySpec&) { return json(nullptr); }, {}, "", 0, 0, TM_FIELD(attention_output_gate)},
        {ModelField::LinearKeyHeads, "linear_attention.key_heads", T::Integer, S::Mixers, "DeltaNet key heads",
         "Gated DeltaNet layers' key heads (linear_num_key_heads): 16 in Qwen3-Next and Qwen3.5.",
         R::Any, [](const FamilySpec&) { return same("linear_num_key_heads"); }, {},
         [](const FamilySpec&) { return json(nullptr); }, {}, "", 1, 1024, TM_BLOCK(linear_attention, key_heads)},
        {ModelField::LinearValueHeads, "linear_attention.value_heads", T::Integer, S::Mixers, "DeltaNet value heads",
         "Gated DeltaNet value heads (linear_num_value_heads): 32 in Qwen3-Next; each key head serves value/key of them.",
         R::Any, [](const FamilySpec&) { return same("linear_num_value_heads"); }, {},
         [](const FamilySpec&) { return json(nullptr); }, {}, "", 1, 1024, TM_BLOCK(linear_attention, value_heads)},
        {ModelField::LinearKeyHeadDim, "linear_attention.key_head_dim", T::Integer, S::Mixers, "DeltaNet key head dim",
         "Width of a Gated DeltaNet key head (linear_key_head_dim): 128.",
         R::Any, [](const FamilySpec&) { return same("linear_key_head_dim"); }, {},
         [](const FamilySpec&) { return json(nullptr); }, {}, "", 1, 4096, TM_BLOCK(linear_attention, key_head_dim)},
        {ModelField::LinearValueHeadDim, "linear_attention.value_head_dim", T::Integer, S::Mixers,
         "DeltaNet value head dim", "Width of a Gated DeltaNet value head (linear_value_head_dim): 128.",
         R::Any, [](const FamilySpec&) { return same("linear_value_head_dim"); }, {},
         [](const FamilySpec&) { return json(nullptr); }, {}, "", 1, 4096, TM_BLOCK(linear_attention, value_head_dim)},
        {ModelField::LinearConvKernel, "linear_attention.conv_kernel", T::Integer, S::Mixers, "DeltaNet conv kernel",
         "The depthwise causal convolution over q, k and v (linear_conv_kernel_dim): 4.",
         R::Any, [](const FamilySpec&) { return same("linear_conv_kernel_dim"); }, {},
         [](const FamilySpec&) { return json(nullptr); }, {}, "", 1, 64, TM_BLOCK(linear_attention, conv_kernel)},
        {ModelField::MambaHeads, "mamba.heads", T::Integer, S::Mixers, "Mamba heads",
         "Mamba-2 heads (mamba_num_heads; Granite mamba_n_heads): the inner width is heads x head dim.",
         R::Any, [](const FamilySpec& f) { return graniteMamba(f) ? std::string_view("mamba_n_heads") : "mamba_num_heads"; },
         {}, [](const FamilySpec&) { return json(nullptr); }, {}, "", 1, 4096, TM_BLOCK(mamba, heads)},
        {ModelField::MambaHeadDim, "mamba.head_dim", T::Integer, S::Mixers, "Mamba head dim",
         "Width of a Mamba-2 head (mamba_head_dim; Granite mamba_d_head): 64 in Nemotron-H.",
         R::Any, [](const FamilySpec& f) { return graniteMamba(f) ? std::string_view("mamba_d_head") : "mamba_head_dim"; },
         {}, [](const FamilySpec&) { return json(nullptr); }, {}, "", 1, 4096, TM_BLOCK(mamba, head_dim)},
        {ModelField::MambaStateSize, "mamba.state_size", T::Integer, S::Mixers, "Mamba state size",
         "The SSM state per head and group (ssm_state_size; Granite mamba_d_state): 128.",
         R::Any, [](const FamilySpec& f) { return graniteMamba(f) ? std::string_view("mamba_d_state") : "ssm_state_size"; },
         {}, [](const FamilySpec&) { return json(nullptr); }, {}, "", 1, 4096, TM_BLOCK(mamba, state_size)},
        {ModelField::MambaGroups, "mamba.groups", T::Integer, S::Mixers, "Mamba groups",
         "Groups of the B and C projections (n_groups; Granite mamba_n_groups): 8 in Nemotron-H, 1 in Granite 4.0-H.",
         R::Any, [](const FamilySpec& f) { return graniteMamba(f) ? std::string_view("mamba_n_groups") : "n_groups"; },
         {}, [](const FamilySpec&) { return json(nullptr); }, {}, "", 1, 256, TM_BLOCK(mamba, groups)},
        {ModelField::MambaConvKernel, "mamba.conv_kernel", T::Integer, S::Mixers, "Mamba conv kernel",
         "The depthwise causal convolution over x, B and C (conv_kernel; Granite mamba_d_conv): 4.",
         R::Any, [](const FamilySpec& f) { return graniteMamba(f) ? std::string_view("mamba_d_conv") : "conv_kernel"; },
         {}, [](const FamilySpec&) { return json(nullptr); }, {}, "", 1, 64, TM_BLOCK(mamba, conv_kernel)},
        {ModelField::MambaChunkSize, "mamba.chunk_size", T::Integer, S::Mixers, "Mamba chunk size",
         "Tokens per chunk of the chunked scan (chunk_size; Granite mamba_chunk_size): 128 or 256.",
         R::Any, [](const FamilySpec& f) { return graniteMamba(f) ? std::string_view("mamba_chunk_size") : "chunk_size"; },
         {}, [](const FamilySpec&) { return json(nullptr); }, {}, "", 1, 4096, TM_BLOCK(mamba, chunk_size)},
        {ModelField::MambaConvBias, "mamba.conv_bias", T::Flag, S::Mixers, "Mamba conv bias",
         "The convolution has a bias (use_conv_bias; Granite mamba_conv_bias).",
         R::Any, [](const FamilySpec& f) { return graniteMamba(f) ? std::string_view("mamba_conv_bias") : "use_conv_bias"; },
         {}, [](const FamilySpec&) { return json(nullptr); }, {}, "", 0, 0, TM_BLOCK(mamba, conv_bias)},
        {ModelField::MambaProjBias, "mamba.proj_bias", T::Flag, S::Mixers, "Mamba projection bias",
         "in_proj and out_proj have biases (use_bias; Granite mamba_proj_bias).",
         R::Any, [](const FamilySpec& f) { return graniteMamba(f) ? std::string_view("mamba_proj_bias") : "use_bias"; },
         {}, [](const FamilySpec&) { return json(nullptr); }, {}, "", 0, 0, TM_BLOCK(mamba, proj_bias)},
        {ModelField::ShortConvKernel, "short_conv.kernel", T::Integer, S::Mixers, "Short conv kernel",
         "LFM2's gated short convolution taps (conv_L_cache): 3.",
         R::Any, [](const FamilySpec&) { return same("conv_L_cache"); }, {},
         [](const FamilySpec&) { return json(nullptr); }, {}, "", 1, 64, TM_BLOCK(short_conv, kernel)},
        {ModelField::ShortConvBias, "short_conv.bias", T::Flag, S::Mixers, "Short conv bias",
         "The short convolution and its projections have biases (conv_bias).",
         R::Any, [](const FamilySpec&) { return same("conv_bias"); }, {},
         [](const FamilySpec&) { return json(nullptr); }, {}, "", 0, 0, TM_BLOCK(short_conv, bias)},
    };
    return rows;
}

#undef TM_FIELD
#undef TM_MOE
#undef TM_MLA

}  // namespace

const std::vector<ModelFieldRow>& modelFields() {
    static const std::vector<ModelFieldRow> rows = [] {
        std::vector<ModelFieldRow> r = makeRows();
        return r;  // in ModelField order: modelFieldRow indexes it (ModelFields.RowsAreInEnumOrder)
    }();
    return rows;
}

const ModelFieldRow& modelFieldRow(ModelField field) { return modelFields()[static_cast<size_t>(field)]; }

std::vector<FieldChoice> choicesOf(const ModelFieldRow& row) {
    if (!row.choices.empty()) return row.choices;
    std::vector<FieldChoice> out;
    if (row.field == ModelField::HiddenAct) {
        for (const ActivationSpec& a : activationCatalogue()) out.push_back({a.name, a.name});
    } else if (row.field == ModelField::Family) {
        for (const FamilySpec* f : familyCatalogue()) {
            out.push_back({f->model_type, f->model_type});
            for (std::string_view alias : f->aliases)
                if (!alias.empty()) out.push_back({alias, alias});
        }
    }
    return out;
}

std::string_view configKey(std::string_view family, ModelField f) { return modelFieldRow(f).key(familyOf(family)); }

std::string modelField(std::string_view family, ModelField f) {
    return "model." + std::string(configKey(family, f));
}

std::vector<std::string> fieldPaths(const ModelFieldRow& row) {
    std::vector<std::string> paths = {"model." + std::string(row.name)};
    auto add = [&](std::string path) {
        for (const std::string& p : paths)
            if (p == path) return;
        paths.push_back(std::move(path));
    };
    std::vector<const FamilySpec*> families = familyCatalogue();
    families.push_back(&llamaStyleFamily());
    for (const FamilySpec* f : families) {
        add("model." + std::string(row.key(*f)));
        if (!f->text_config_of.empty()) add("model.text_config." + std::string(row.key(*f)));
    }
    for (std::string_view alias : row.aliases) add("model." + std::string(alias));
    return paths;
}

std::vector<std::string> familyFieldPaths(const ModelFieldRow& row, std::string_view family) {
    const FamilySpec& f = familyOf(family);
    std::vector<std::string> paths = {"model." + std::string(row.key(f))};
    if (!f.text_config_of.empty()) paths.push_back("model.text_config." + std::string(row.key(f)));
    return paths;
}

}  // namespace trainmem
