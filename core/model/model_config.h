#pragma once
// The architecture of a decoder-only transformer, independent of any file
// format. Hugging Face config.json files are translated into this by
// hf_config.h; every field has the meaning of the corresponding HF field.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/error.h"

namespace trainmem {

enum class MlpKind { Gated, Plain };        // SwiGLU/GeGLU (3 matrices) or GELU MLP (2)
enum class NormKind { RMSNorm, LayerNorm };  // RMSNorm: h weights; LayerNorm: h weights + h biases

// Mixture of experts (Mixtral, Qwen2-MoE, DeepSeek). Absent for dense models.
struct MoeConfig {
    int64_t num_experts = 0;          // routed experts per MoE layer (E)
    int64_t experts_per_token = 0;    // top-k
    int64_t expert_ffn = 0;           // intermediate size of one routed expert
    int64_t shared_experts = 0;       // DeepSeek: n_shared_experts (each expert_ffn wide)
    int64_t shared_expert_ffn = 0;    // Qwen2-MoE: width of the single shared expert; 0 = shared_experts * expert_ffn
    bool shared_expert_gate = false;  // Qwen2-MoE: sigmoid gate Linear(h, 1) on the shared expert
    int64_t first_dense_layers = 0;   // DeepSeek first_k_dense_replace: leading layers with a dense MLP
    int64_t layer_frequency = 1;      // a MoE layer every k layers after the dense ones (moe_layer_freq / decoder_sparse_step)
    bool router_score_bias = false;   // DeepSeek-V3 e_score_correction_bias (E extra parameters per layer)
    double capacity_factor = 0.0;     // 0 = dropless routing; > 0 pads each expert to capacity (token-dropping)
    // The top-k routing weights are divided by their sum (norm_topk_prob;
    // Mixtral always; DeepSeek-V2 never). Keeps T*k + T small tensors.
    bool norm_topk_prob = true;
    // DeepSeek-V2 topk_method "group_limited_greedy": the experts form
    // routing_groups groups (n_group), the best routing_groups_kept
    // (topk_group) by their highest score are kept, the others masked off
    // before the top-k. 0 = plain top-k ("greedy").
    int64_t routing_groups = 0;
    int64_t routing_groups_kept = 0;
    bool operator==(const MoeConfig&) const = default;
};

// Multi-head latent attention (DeepSeek-V2/V3). Replaces q/k/v/o projections.
struct MlaConfig {
    int64_t q_lora_rank = 0;          // 0 = no query compression (DeepSeek-V2-Lite)
    int64_t kv_lora_rank = 0;
    int64_t qk_nope_head_dim = 0;
    int64_t qk_rope_head_dim = 0;
    int64_t v_head_dim = 0;
    bool operator==(const MlaConfig&) const = default;
};

// The token mixer of one layer (issue 23; docs/memory-model.md, "Layer kinds").
// Attention is every softmax attention the rest of ModelConfig describes
// (full, sliding, chunked, MLA); the others are the 2026 hybrids' layers.
enum class MixerKind : uint8_t {
    Attention,
    GatedDeltaNet,  // linear attention with the gated delta rule (Qwen3-Next, Qwen3.5)
    Mamba2,         // Mamba-2 SSD mixer (Nemotron-H, Granite 4.0-H)
    ShortConv,      // LFM2's gated short convolution
    None,           // Nemotron-H's MLP-only and MoE-only layers
    // Falcon-H1: attention and a Mamba-2 mixer side by side on the same
    // normed input, their outputs summed (FalconH1DecoderLayer).
    ParallelAttentionMamba2,
    Mamba1,              // Jamba's selective-scan (Mamba-1) mixer
    KimiDeltaAttention,  // Kimi Linear's KDA (gated delta rule, per-channel decay)
};
// Whether a layer of this mixer has softmax attention (its q, k, v, o and
// the attention traits of ModelConfig), and whether it has a Mamba-2 mixer.
inline constexpr bool mixerHasAttention(MixerKind k) {
    return k == MixerKind::Attention || k == MixerKind::ParallelAttentionMamba2;
}
inline constexpr bool mixerHasMamba2(MixerKind k) {
    return k == MixerKind::Mamba2 || k == MixerKind::ParallelAttentionMamba2;
}
// The feed-forward half of one layer.
enum class FfnKind : uint8_t { Dense, Moe, None };
struct LayerKind {
    MixerKind mixer = MixerKind::Attention;
    FfnKind ffn = FfnKind::Dense;
    bool operator==(const LayerKind&) const = default;
};

// Every LayerKind as one index, for the tables kept per kind (parameters,
// activations, per-stage layer counts).
inline constexpr size_t kMixerKinds = 8;
inline constexpr size_t kFfnKinds = 3;
inline constexpr size_t kLayerKinds = kMixerKinds * kFfnKinds;
inline constexpr size_t hybridKindIndex(LayerKind k) {
    return static_cast<size_t>(k.mixer) * kFfnKinds + static_cast<size_t>(k.ffn);
}
inline constexpr LayerKind hybridKindAt(size_t i) {
    return {static_cast<MixerKind>(i / kFfnKinds), static_cast<FfnKind>(i % kFfnKinds)};
}

// Gated DeltaNet (Qwen3NextGatedDeltaNet): linear_* keys of Qwen3NextConfig.
struct LinearAttentionConfig {
    int64_t key_heads = 0;      // linear_num_key_heads
    int64_t value_heads = 0;    // linear_num_value_heads
    int64_t key_head_dim = 0;   // linear_key_head_dim
    int64_t value_head_dim = 0; // linear_value_head_dim
    int64_t conv_kernel = 0;    // linear_conv_kernel_dim (depthwise causal conv over q, k, v)
    bool operator==(const LinearAttentionConfig&) const = default;
};

// Mamba-2 (transformers' Mamba2Mixer / NemotronHMamba2Mixer).
struct MambaConfig {
    int64_t heads = 0;        // mamba_num_heads: d_inner = heads * head_dim
    int64_t head_dim = 0;     // mamba_head_dim
    int64_t state_size = 0;   // ssm_state_size (d_state)
    int64_t groups = 0;       // n_groups of B and C
    int64_t conv_kernel = 0;  // conv_kernel
    int64_t chunk_size = 0;   // chunk_size of the chunked scan
    bool conv_bias = true;    // use_conv_bias
    bool proj_bias = false;   // use_bias on in_proj (and on out_proj unless out_proj_bias says otherwise)
    bool out_proj_bias = false;  // Falcon-H1: projectors_bias; Nemotron-H, Granite: = proj_bias
    bool gated_norm = true;   // the gated RMSNorm over d_inner (Falcon-H1: only when mamba_rms_norm)
    int64_t inner() const { return heads * head_dim; }
    bool operator==(const MambaConfig&) const = default;
};

// Jamba's Mamba-1 mixer (JambaMambaMixer, modular_jamba.py at transformers
// 01596202): the selective scan with a per-channel state, its dt, B and C
// from x_proj, each RMS-normed (dt_layernorm, b_layernorm, c_layernorm).
struct SelectiveScanConfig {
    int64_t expand = 0;       // mamba_expand: d_inner = expand * hidden_size
    int64_t state_size = 0;   // mamba_d_state
    int64_t conv_kernel = 0;  // mamba_d_conv
    int64_t dt_rank = 0;      // mamba_dt_rank ("auto": ceil(hidden_size / 16))
    bool conv_bias = true;    // mamba_conv_bias
    bool proj_bias = false;   // mamba_proj_bias (in_proj, out_proj)
    bool operator==(const SelectiveScanConfig&) const = default;
};

// Kimi Delta Attention (Kimi Linear's KDA layers): q, k, v projections with
// short depthwise convolutions, a low-rank per-channel forget gate, a
// per-head beta, a low-rank sigmoid output gate and a gated RMSNorm.
struct DeltaAttentionConfig {
    int64_t heads = 0;        // linear_attn_config.num_heads
    int64_t head_dim = 0;     // linear_attn_config.head_dim
    int64_t conv_kernel = 0;  // linear_attn_config.short_conv_kernel_size
    bool operator==(const DeltaAttentionConfig&) const = default;
};

// DeepSeek Sparse Attention's lightning indexer (DeepseekV32Indexer): its
// own query (from the query latent) and key projections, a LayerNorm on
// the key, per-head weights; it picks the index_topk keys each query
// attends to. Runs under no_grad in transformers' training forward.
struct IndexerConfig {
    int64_t heads = 0;     // index_n_heads
    int64_t head_dim = 0;  // index_head_dim
    int64_t topk = 0;      // index_topk
    bool operator==(const IndexerConfig&) const = default;
};

// LFM2's gated short convolution (Lfm2ShortConv).
struct ShortConvConfig {
    int64_t kernel = 0;  // conv_L_cache
    bool bias = false;   // conv_bias
    bool operator==(const ShortConvConfig&) const = default;
};

// The largest value any size, count or index of a model may have. No public
// model comes near it; it keeps every product of two sizes (and the parameter
// total validate() checks) far inside int64_t.
inline constexpr int64_t kMaxModelSize = int64_t{1} << 24;
// The most layers a model may have: 65,536, some 250 times the deepest public
// model (DeepSeek-V3, 61; Llama 3.1 405B, 126). The account walks a stage's
// blocks where the checkpointing policy makes depth matter (every-k and its
// kin) and a hybrid's layer list one by one, so this bound is also the bound
// on that work (docs/robustness.md).
inline constexpr int64_t kMaxLayers = int64_t{1} << 16;

struct ModelConfig {
    std::string name;                  // display name, e.g. "Llama-3.1-8B"
    std::string family;                // HF model_type; its traits are its row in hf_families.h (unknown: Llama-style)
    int64_t hidden_size = 0;           // h
    int64_t num_layers = 0;            // L
    int64_t num_heads = 0;             // H (query heads)
    int64_t num_kv_heads = 0;          // KV heads: = H for MHA, 1 for MQA
    int64_t head_dim = 0;              // d; h / H when the config gives none
    int64_t ffn_hidden_size = 0;       // f: intermediate size of a dense MLP
    int64_t vocab_size = 0;            // V
    int64_t max_position_embeddings = 0;
    MlpKind mlp = MlpKind::Gated;
    NormKind norm = NormKind::RMSNorm;
    int64_t norms_per_block = 2;       // Gemma-2 has 4 (pre and post around attention and MLP)
    bool qk_norm = false;              // RMSNorm on q and k, per head or over the projection as the family says
    bool attention_qkv_bias = false;   // biases on q, k, v (Qwen2, GPT-2)
    bool attention_output_bias = false;// bias on o (GPT-2)
    bool mlp_bias = false;             // biases on every MLP matrix (GPT-2)
    bool tied_embeddings = false;      // LM head shares the embedding matrix
    bool learned_positions = false;    // GPT-2: position embedding of max_position_embeddings x h
    std::string hidden_act = "silu";
    // The share of each q/k head the rotary embedding turns (GLM-4.5's
    // partial_rotary_factor, 0.5); the rest passes through. 1 = the whole head.
    double partial_rotary_factor = 1.0;
    // Layers with sliding-window attention in a model that mixes them with
    // global ones (layer_types: Gemma 2/3, gpt-oss). Only the count matters
    // to memory: a model with both kinds builds two causal masks, and Gemma 3
    // two rotary tables.
    int64_t sliding_window_layers = 0;
    // Llama 4's NoPE layers: layer i skips the rotary embedding (and the
    // L2 q/k norm) when (i + 1) % no_rope_layer_interval == 0; its other
    // layers attend in chunks, with a causal mask of their own. 0 = none.
    int64_t no_rope_layer_interval = 0;
    double attention_dropout = 0.0;    // probability on the attention probabilities
    double hidden_dropout = 0.0;       // probability after attention and MLP outputs (GPT-2 resid_pdrop)
    double embedding_dropout = 0.0;    // probability after the embeddings (GPT-2 embd_pdrop)
    std::optional<MoeConfig> moe;
    std::optional<MlaConfig> mla;
    // Hybrids (issue 23): each layer's kind, one per layer; empty = every
    // layer attention with its FFN by the MoE pattern above.
    std::vector<LayerKind> layer_kinds;
    // Nemotron-NAS (DeciLM's block_configs): each layer's dense MLP width,
    // one per layer; empty = every dense MLP ffn_hidden_size wide (which,
    // for these models, is the widest, the width the per-kind blocks take).
    std::vector<int64_t> layer_ffn_widths;
    std::optional<LinearAttentionConfig> linear_attention;
    std::optional<MambaConfig> mamba;
    std::optional<SelectiveScanConfig> mamba1;         // Jamba
    std::optional<DeltaAttentionConfig> delta_attention;  // Kimi Linear
    std::optional<ShortConvConfig> short_conv;
    std::optional<IndexerConfig> indexer;  // DeepSeek-V3.2, GLM-5: on every attention layer
    // Qwen3-Next's gated attention: q_proj also makes a sigmoid output gate
    // (2 * H * d outputs), its norms are zero-centred.
    bool attention_output_gate = false;
    // Multi-token-prediction layers the checkpoint stores beside the model
    // (num_nextn_predict_layers / mtp_num_hidden_layers); not built by the
    // model class, counted in the checkpoint (parameters.mtp).
    int64_t mtp_layers = 0;
    // Parameters of the vision (and audio) towers a multimodal checkpoint
    // stores beside its language model (parameters.vision).
    int64_t vision_parameters = 0;

    bool isMoe() const { return moe.has_value() && moe->num_experts > 0; }
    bool isHybrid() const { return !layer_kinds.empty(); }
    LayerKind layerKind(int64_t i) const {
        if (isHybrid()) return layer_kinds[static_cast<size_t>(i)];
        return {MixerKind::Attention, isMoeLayer(i) ? FfnKind::Moe : FfnKind::Dense};
    }
    // True when layer i (0-based) has routed experts.
    bool isMoeLayer(int64_t i) const {
        if (isHybrid()) return isMoe() && layer_kinds[static_cast<size_t>(i)].ffn == FfnKind::Moe;
        if (!isMoe() || i < moe->first_dense_layers) return false;
        return (i - moe->first_dense_layers) % moe->layer_frequency == 0;
    }
    // Whether some layer keeps a dense MLP (isMoeLayer false), without
    // walking a plain model's layers.
    bool hasDenseLayer() const {
        if (isHybrid()) {
            for (const LayerKind& k : layer_kinds)
                if (k.ffn == FfnKind::Dense) return true;
            return false;
        }
        if (!isMoe()) return true;
        if (moe->first_dense_layers > 0) return true;
        return moe->layer_frequency > 1 && num_layers - moe->first_dense_layers >= 2;
    }
    // True when layer i (0-based) applies the rotary embedding.
    bool isRopeLayer(int64_t i) const { return no_rope_layer_interval <= 0 || (i + 1) % no_rope_layer_interval != 0; }
    bool operator==(const ModelConfig&) const = default;
};

}  // namespace trainmem
