#pragma once
// The family catalogue: one FamilySpec row per supported Hugging Face
// model_type, holding everything that differs between families: the names
// and defaults of its transformers configuration class (configuration_<type>.py)
// and the traits of its modeling file that the parameter count and the
// activation account read. Adding a family is adding a row (plus code only for
// an operation no family has yet). Nothing outside this catalogue compares
// model_type strings. Internal to the core; docs/memory-model.md tabulates it.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model_config.h"

namespace trainmem {

// How the modeling file names and fuses a block's Linear layers.
enum class ModuleNaming {
    Llama,  // q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj
    Gpt2,   // Conv1D c_attn (fused q, k, v), c_proj, c_fc, c_proj (modeling_gpt2.py)
    Phi3,   // fused qkv_proj and gate_up_proj (modeling_phi3.py)
};

// How the config selects the mixture-of-experts layers.
enum class MoeLayerKeys {
    DeepSeek,  // first_k_dense_replace, moe_layer_freq
    Qwen,      // mlp_only_layers, decoder_sparse_step
    Llama4,    // interleave_moe_layer_step (Qwen's step rule) or an explicit moe_layers list
};

// Where a block's two norms sit.
enum class NormPlacement {
    Pre,   // on the inputs of attention and MLP (Llama; Gemma-2 adds post-norms with norms_per_block 4)
    Post,  // on the outputs of attention and MLP, before the residual add (OLMo 2)
};

// Where q/k normalisation applies (when the model has it).
enum class QkNormSpan {
    PerHead,     // RMSNorm(head_dim) on every head: Qwen3, Gemma 3 (d weights each for q and k)
    Projection,  // RMSNorm over the whole q and k projections: OLMo 2 (H*d and KV*d weights)
    L2,          // Llama 4: a weightless L2 norm per head, after the rotary, on rotary layers only
};

// How a hybrid's config lays out its layers (hf_hybrid.cpp).
enum class LayerPatternKeys {
    None,                  // every layer attention (the MoE keys pick the FFN)
    LinearAttentionTypes,  // Qwen3-Next, Qwen3.5: layer_types "linear_attention" / "full_attention"
    HybridOverride,        // Nemotron-H: hybrid_override_pattern (M, *, -, E)
    MambaAttentionTypes,   // Granite 4.0-H: layer_types "mamba" / "attention"
    ConvAttentionTypes,    // LFM2: layer_types "conv" / "full_attention", or full_attn_idxs
    ParallelHybrid,        // Falcon-H1: every layer attention and Mamba-2 side by side
    JambaPeriods,          // Jamba: attn_layer_period / offset, expert_layer_period / offset
    KimiLayerTypes,        // Kimi Linear: layer_types, or linear_attn_config's kda_layers / full_attn_layers
    BlockConfigs,          // Nemotron-NAS (DeciLM): block_configs, one {attention, ffn} per layer
};
// Whether the family's MoE keys (mlp_only_layers, decoder_sparse_step) say
// which of its layers have experts, as for a plain model (Qwen3-Next,
// Qwen3.5); the other patterns name each layer's FFN themselves (Kimi
// Linear's exporter writes mlp_layer_types).
inline constexpr bool moeLayersByRule(LayerPatternKeys k) { return k == LayerPatternKeys::LinearAttentionTypes; }

struct FamilySpec {
    std::string_view model_type;
    // Other model_type strings that name the same architecture (kimi_k2 is
    // DeepSeek-V3's architecture under another name).
    std::array<std::string_view, 2> aliases{};
    // The model_type of the multimodal checkpoints whose config.json holds
    // this family's config under "text_config" (llama4 -> llama4_text,
    // gemma3 -> gemma3_text): the importer reads the text model.
    std::string_view text_config_of = {};

    // ---- config keys (transformers' names in this family's config class)
    std::string_view hidden_key = "hidden_size";
    std::string_view layers_key = "num_hidden_layers";
    std::string_view heads_key = "num_attention_heads";
    std::string_view intermediate_key = "intermediate_size";
    std::string_view positions_key = "max_position_embeddings";
    std::string_view attention_dropout_key = "attention_dropout";
    std::string_view act_key = "hidden_act";  // Gemma-2's "hidden_activation", GPT-2's "activation_function"
    std::string_view experts_key = "num_local_experts";
    std::string_view expert_ffn_key = "moe_intermediate_size";  // Mixtral: intermediate_size
    std::string_view shared_expert_ffn_key = "shared_expert_intermediate_size";  // Nemotron-H: moe_shared_expert_...
    MoeLayerKeys moe_layer_keys = MoeLayerKeys::DeepSeek;
    // GPT2Config's attribute_map: hidden_size etc. are names of n_embd etc.
    bool attribute_map_aliases = false;
    bool qkv_bias_key = false;           // the config class has a qkv_bias key (Qwen2-MoE)
    std::string_view qk_norm_key = "qk_norm";  // GLM-4.5: use_qk_norm

    // ---- defaults of the configuration class (0 = required where noted)
    int64_t vocab_size = 32000;
    int64_t hidden_size = 4096;
    int64_t intermediate_size = 11008;  // 0 with inner_defaults_to_4h: 4 * hidden
    int64_t num_layers = 32;
    int64_t num_heads = 32;
    int64_t num_kv_heads = 0;           // when the key is absent; 0 = num_heads (an explicit null is always num_heads)
    int64_t head_dim = 0;               // 0 = hidden_size / num_heads
    int64_t max_positions = 2048;
    bool tie_word_embeddings = false;   // PretrainedConfig's default is True; most classes pass False
    std::string_view hidden_act = "silu";
    bool inner_defaults_to_4h = false;  // GPT-2: n_inner None = 4 * n_embd
    double dropout = 0.0;               // every dropout probability's default (GPT-2: 0.1)

    // ---- block structure the modeling file builds
    ModuleNaming modules = ModuleNaming::Llama;
    MlpKind mlp = MlpKind::Gated;
    NormKind norm = NormKind::RMSNorm;
    int64_t norms_per_block = 2;        // Gemma-2/3: pre and post around attention and MLP (4)
    NormPlacement norm_placement = NormPlacement::Pre;
    bool learned_positions = false;     // GPT-2's wpe
    bool qkv_bias = false;              // family convention (Qwen2: always; Qwen2-MoE: the qkv_bias key's default)
    bool output_bias = false;           // o_proj / c_proj bias by convention (GPT-2)
    bool mlp_bias = false;              // MLP biases by convention (GPT-2)
    bool reads_attention_bias = true;   // the modeling code honours attention_bias (q, k, v and o)
    bool attention_bias_on_output = true; // attention_bias reaches o_proj too (GLM-4.5: q, k, v only)
    bool writes_mlp_bias = false;       // the config class has an mlp_bias key (Llama)
    bool qk_norm = false;               // q/k norm by default
    QkNormSpan qk_norm_span = QkNormSpan::PerHead;
    bool mla = false;                   // DeepSeek multi-head latent attention
    MlaConfig mla_sizes{1536, 512, 128, 64, 128};  // the class's MLA defaults (DeepseekV3Config's)
    bool attention_sinks = false;       // gpt-oss: a learned sink logit per query head (H parameters per layer)
    // The class default of partial_rotary_factor when the modeling file reads
    // it (GLM-4.5: 0.5); 0 = the family rotates whole heads and has no such key.
    double partial_rotary_factor = 0.0;
    // The class's default layer_types: layer i slides unless (i + 1) is a
    // multiple of this (Gemma 2, gpt-oss: 2; Gemma 3: sliding_window_pattern,
    // 6); 0 = the family has no layer_types.
    int64_t sliding_window_pattern = 0;
    bool local_rope = false;            // Gemma 3: sliding layers rotate with their own table (rope_local_base_freq)
    // Gemma 2 (modeling_gemma2.py at transformers commit 9a80143c): the model
    // passes one causal mask to every layer and a sliding layer derives its
    // window mask inside its forward, so a checkpoint keeps one mask, not one
    // per layer kind.
    bool sliding_mask_in_layer = false;
    bool rotary_half_table = false;     // gpt-oss: cos / sin hold each frequency once (head_dim / 2 wide)
    // Llama 4: the rotary table is one complex fp32 freqs_cis (head_dim / 2
    // complex values per token), whatever the compute dtype.
    bool complex_rotary = false;
    // Llama 4 (Llama4TextConfig no_rope_layer_interval, class default 4):
    // layer i skips the rotary embedding when (i + 1) is a multiple of it,
    // and its rotary layers attend in chunks (layer_types chunked_attention,
    // a mask of their own). 0 = the family reads no NoPE layers.
    int64_t no_rope_layer_interval = 0;
    // Llama 4 (attn_temperature_tuning, default True): NoPE layers scale the
    // query by a per-position fp32 factor (log1p(floor((pos + 1) / floor_scale)) * attn_scale + 1).
    bool nope_temperature_tuning = false;

    // ---- mixture of experts (num_experts == 0: dense unless the config has expert keys)
    int64_t num_experts = 0;
    int64_t experts_per_token = 0;      // 0 = none (required when the model has experts)
    int64_t moe_intermediate = 0;       // 0 = intermediate_size (Mixtral)
    int64_t shared_experts = -1;        // n_shared_experts default; -1 = one when a shared width is given, else none
    int64_t shared_intermediate = 0;
    int64_t first_dense_layers = 0;
    bool shared_expert_gate = false;
    bool router_score_bias = false;     // DeepSeek-V3 e_score_correction_bias
    // Whether the router divides the top-k routing weights by their sum: the
    // default of the config class's norm_topk_prob where the modeling file
    // reads that key (norm_topk_prob_key), else what the modeling file always
    // does (Mixtral: always; DeepSeek-V2: never).
    bool norm_topk_prob = true;
    bool norm_topk_prob_key = false;
    bool experts_null_is_dense = false; // DeepSeek: n_routed_experts null = a dense model
    bool zero_experts_is_dense = false; // Qwen-MoE: num_experts 0 = a dense model (num_experts > 0 test)
    bool expert_w123 = false;           // Mixtral names expert matrices w1 (gate), w3 (up), w2 (down)
    bool fp32_router = false;           // DeepSeek: router on an fp32 copy of its input, fp32 routing weights
    bool expert_bias = false;           // gpt-oss: biases on every routed expert's gate, up and down projections
    // gpt-oss (GptOssExperts) and Llama 4 (Llama4TextExperts) hold the routed
    // experts as 3-D nn.Parameters, not nn.Linear modules: PEFT's
    // target_modules, "all-linear" included, cannot select them.
    bool experts_are_parameters = false;
    // Granite's shared MLP projects gate and up in one Linear (input_linear):
    // under autocast it keeps one cast of its input, not two.
    bool fused_mlp_gate_up = false;
    bool router_bias = false;           // gpt-oss: the router is Linear(h, E) with a bias
    bool router_topk_softmax = false;   // gpt-oss: top-k of the logits first, then softmax over those k
    bool clamped_swiglu = false;        // gpt-oss: experts' SwiGLU clamps gate and up (swiglu_limit) on a fused gate_up
    // Llama 4 (Llama4TextMoe): sigmoid of the top-k logits (the others -inf,
    // so 0), then every expert runs on every token (the input repeated E
    // times, scaled by its score; one bmm per projection).
    bool every_expert_every_token = false;
    // DeepSeek-V2 (DeepseekV2MoE.moe, modeling_deepseek_v2.py at transformers
    // commit 03eac6f6): a softmax router in fp32; the token slots sorted by
    // expert (argsort), each expert run on its slice of the sorted tokens,
    // the outputs scattered back, cast to the weights' fp32, multiplied in
    // place by the routing weights and summed over the k slots. Its
    // topk_method "group_limited_greedy" masks the experts outside the best
    // topk_group of n_group groups.
    bool sorted_expert_dispatch = false;

    // ---- hybrids and checkpoints (issue 23)
    // DeepSeek Sparse Attention: every attention layer has a lightning
    // indexer (index_n_heads, index_head_dim, index_topk); 0 = none.
    IndexerConfig indexer_sizes{};
    // The checkpoint's MTP layers carry their own copies of the embedding
    // and the head (DeepSeek-V3, GLM-4.5: model.layers.N.embed_tokens and
    // shared_head.head).
    bool mtp_stores_ends = false;
    // MTP layers the family's checkpoints ship when the config names none
    // (Qwen3-Next's release config has no MTP key; its checkpoint stores one).
    int64_t mtp_layers = 0;
    LayerPatternKeys layer_pattern = LayerPatternKeys::None;
    int64_t full_attention_interval = 0;  // Qwen3NextConfig's default (4)
    std::string_view layer_pattern_default = {};  // NemotronHConfig's hybrid_override_pattern
    // Qwen3.5's Gated DeltaNet projects through in_proj_qkv, in_proj_z,
    // in_proj_b and in_proj_a (modeling_qwen3_5.py at d8c1e284); Qwen3-Next's
    // through the fused in_proj_qkvz and in_proj_ba.
    bool gdn_split_projections = false;
    // The multimodal wrapper's vision tower is a Qwen3-VL-style ViT whose
    // parameters the importer counts (qwenVisionParameters).
    bool qwen_vision_tower = false;

    // ---- what the eager forward keeps (activation account)
    bool softmax_fp32 = true;           // softmax(dtype=float32) then cast back (all but GPT-2)
    bool additive_mask = true;          // a 4-D additive causal mask (GPT-2 uses its bool buffer)
    bool rope = true;                   // rotary embedding (GPT-2: learned positions)
    bool norm_weight_fp32 = false;      // the RMSNorm weight multiplies in fp32 (Gemma, OLMo 2): it keeps the fp32 normalised tensor
    bool attention_softcap = false;     // Gemma-2 tanh soft-capping of the attention logits
    bool final_logit_softcap = false;   // Gemma-2 tanh soft-capping of the logits
    bool writes_dropout_keys = false;   // the config carries resid_pdrop / embd_pdrop (GPT-2, Phi-3)
    // Said with every estimate of the family: how its activations are
    // counted where a user would expect otherwise (Llama 4's dense MoE).
    std::string_view activation_caveat = {};
};

// The row for a model_type or one of its aliases; nullptr when unknown.
const FamilySpec* findFamily(std::string_view model_type);
// The row whose config a multimodal model_type nests under text_config;
// nullptr when model_type is not such a wrapper.
const FamilySpec* findTextConfigFamily(std::string_view model_type);
// The row a ModelConfig's family reads as: its own, or the Llama-style row
// that an unknown model_type is read as.
const FamilySpec& familyOf(std::string_view model_type);
// The Llama-style row an unknown model_type is read as (Llama's structure;
// its sizes are required).
const FamilySpec& llamaStyleFamily();
// Width of the rotary cos / sin tables the model computes once per forward
// (and every block's rotary products keep): MLA's rope dims, or
// int(head_dim * partial_rotary_factor) as transformers' rope init takes it.
int64_t rotaryTableWidth(const ModelConfig& model);
// Whether the model has both sliding-window and global layers, and so two
// causal masks (and, with a local rope, two rotary tables).
bool mixesAttentionLayers(const ModelConfig& model);
// How many 4-D causal masks the model passes to its layers: one per kind of
// layer (full, sliding or chunked) where the model builds them up front.
int64_t causalMasks(const ModelConfig& model);
// How many rotary cos / sin pairs the model computes once per forward.
int64_t rotaryTables(const ModelConfig& model);
// Bytes of the rotary tables every block shares, for `tokens` token rows:
// cos and sin per table in `element_bytes` (the compute dtype, fp32 under
// AMP), or Llama 4's complex fp32 freqs_cis.
int64_t rotaryTableBytes(const ModelConfig& model, int64_t tokens, double element_bytes);
// The activation functions (transformers' ACT2FN names) whose autograd
// graph the activation account models op for op, and what each reads as:
// silu and swish (one SiluBackward), gelu and gelu_pytorch_tanh (one
// GeluBackward), gelu_new (NewGELUActivation's chain), relu. Others
// (quick_gelu, gelu_fast, relu2, ...) save other tensors and are refused.
struct ActivationSpec {
    std::string_view name;
    std::string_view same_as;  // an alias's canonical name ("" for a canonical one)
};
const std::vector<ActivationSpec>& activationCatalogue();
const ActivationSpec* findActivation(std::string_view name);
// "silu, swish (= silu), gelu, ..." for messages.
std::string allowedActivations();
// The hidden_act values the activation account models (aliases included),
// in catalogue order: what a front end may offer.
const std::vector<std::string>& supportedActivations();
// Every row, in catalogue order.
const std::vector<const FamilySpec*>& familyCatalogue();
// model_types with known family defaults (aliases and multimodal wrappers too).
const std::vector<std::string>& supportedModelTypes();

// Which blocks have routed experts, as ModelConfig holds it: the first MoE
// layer and the step between MoE layers.
struct MoeLayerPattern {
    int64_t first_dense_layers = 0;
    int64_t layer_frequency = 1;
    bool operator==(const MoeLayerPattern&) const = default;
};

// The layer-selection keys of the families, combined: DeepSeek's
// (layer >= first_k_dense_replace and layer % moe_layer_freq == 0, as in
// DeepSeek's modeling_deepseek.py) and Qwen2-MoE's (layer not in
// mlp_only_layers and (layer + 1) % decoder_sparse_step == 0). The layers
// they select must form a pattern ModelConfig can hold; `supported` is false
// when they do not. Llama 4 may instead list its MoE layers (moe_layers;
// Llama4TextDecoderLayer tests `layer_idx in config.moe_layers`), and then the
// other keys do not apply. The work grows with the lists' lengths, never
// with num_layers times a list (issue 28, N01: 2^24 layers and a 20,000-entry
// list took 10 minutes).
struct MoeLayerSelection {
    int64_t first_k_dense_replace = 0;
    int64_t moe_layer_freq = 1;
    int64_t decoder_sparse_step = 1;
    std::vector<int64_t> mlp_only_layers;
    std::optional<std::vector<int64_t>> moe_layers;  // Llama 4's explicit list
};
struct MoeLayerFit {
    MoeLayerPattern pattern;
    bool supported = true;
};
MoeLayerFit fitMoeLayers(int64_t num_layers, const MoeLayerSelection& keys);

}  // namespace trainmem
