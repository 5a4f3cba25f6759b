#include "core/model/hf_families.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>

#include "core/base/byte_count.h"

namespace trainmem {
namespace {

// Values from the transformers configuration classes (configuration_<type>.py)
// and modeling files (modeling_<type>.py); docs/memory-model.md lists them
// with their sources. A row states only what differs from FamilySpec's
// defaults, which are LlamaConfig's and modeling_llama.py's.
const FamilySpec kFamilies[] = {
    // GPT2Config: n_inner None = 4 * n_embd; Conv1D biases everywhere;
    // LayerNorm; learned positions; every dropout 0.1; tie_word_embeddings
    // from PretrainedConfig (True). GPT2Attention softmaxes in the compute
    // dtype and masks with its bool buffer.
    {.model_type = "gpt2", .hidden_key = "n_embd", .layers_key = "n_layer", .heads_key = "n_head",
     .intermediate_key = "n_inner", .positions_key = "n_positions", .attention_dropout_key = "attn_pdrop",
     .act_key = "activation_function", .attribute_map_aliases = true,
     .vocab_size = 50257, .hidden_size = 768, .intermediate_size = 0, .num_layers = 12, .num_heads = 12,
     .max_positions = 1024, .tie_word_embeddings = true, .hidden_act = "gelu_new", .inner_defaults_to_4h = true,
     .dropout = 0.1, .modules = ModuleNaming::Gpt2, .mlp = MlpKind::Plain, .norm = NormKind::LayerNorm,
     .learned_positions = true, .qkv_bias = true, .output_bias = true, .mlp_bias = true,
     .reads_attention_bias = false, .softmax_fp32 = false, .additive_mask = false, .rope = false,
     .writes_dropout_keys = true},
    // LlamaConfig (Llama-2-7B's sizes); attention_bias and mlp_bias keys.
    {.model_type = "llama", .writes_mlp_bias = true},
    // MistralConfig: num_key_value_heads=8, max_position_embeddings=4096*32;
    // MistralAttention has no biases.
    {.model_type = "mistral", .intermediate_size = 14336, .num_kv_heads = 8, .max_positions = 131072,
     .reads_attention_bias = false},
    // MixtralConfig: num_local_experts=8, num_experts_per_tok=2; the experts
    // are intermediate_size wide and named w1 / w3 / w2.
    {.model_type = "mixtral", .expert_ffn_key = "intermediate_size", .intermediate_size = 14336, .num_kv_heads = 8,
     .max_positions = 131072, .reads_attention_bias = false, .num_experts = 8, .experts_per_token = 2,
     .expert_w123 = true},
    // Qwen2Attention: q, k, v with bias=True, o without (no config key).
    {.model_type = "qwen2", .vocab_size = 151936, .intermediate_size = 22016, .num_kv_heads = 32,
     .max_positions = 32768, .qkv_bias = true, .reads_attention_bias = false},
    // Qwen2MoeConfig: num_experts=60, top-4, moe_intermediate_size=1408, one
    // shared expert of 5632 with a sigmoid gate, qkv_bias=True,
    // norm_topk_prob=False (Qwen2MoeSparseMoeBlock renormalises only when set:
    // modeling_qwen2_moe.py at transformers commit 00a3f938).
    {.model_type = "qwen2_moe", .experts_key = "num_experts", .moe_layer_keys = MoeLayerKeys::Qwen,
     .qkv_bias_key = true, .vocab_size = 151936, .hidden_size = 2048, .intermediate_size = 5632, .num_layers = 24,
     .num_heads = 16, .num_kv_heads = 16, .max_positions = 32768, .qkv_bias = true, .reads_attention_bias = false,
     .num_experts = 60, .experts_per_token = 4, .moe_intermediate = 1408, .shared_intermediate = 5632,
     .shared_expert_gate = true, .norm_topk_prob = false, .norm_topk_prob_key = true, .zero_experts_is_dense = true},
    // Qwen3Config (transformers 4.51): head_dim=128, attention_bias=False;
    // Qwen3Attention adds q_norm / k_norm = Qwen3RMSNorm(head_dim) on every head.
    {.model_type = "qwen3", .vocab_size = 151936, .intermediate_size = 22016, .num_kv_heads = 32, .head_dim = 128,
     .max_positions = 32768, .qk_norm = true},
    // Qwen3MoeConfig (transformers 4.51): num_experts=128, top-8,
    // moe_intermediate_size=768, no shared expert; Qwen3MoeSparseMoeBlock's
    // experts are Qwen3MoeMLP (gate_proj / up_proj / down_proj); per-head q/k norms;
    // norm_topk_prob=False, read as Qwen2-MoE's block reads it.
    {.model_type = "qwen3_moe", .experts_key = "num_experts", .moe_layer_keys = MoeLayerKeys::Qwen,
     .vocab_size = 151936, .hidden_size = 2048, .intermediate_size = 6144, .num_layers = 24, .num_kv_heads = 4,
     .max_positions = 32768, .qk_norm = true, .num_experts = 128, .experts_per_token = 8, .moe_intermediate = 768,
     .norm_topk_prob = false, .norm_topk_prob_key = true, .zero_experts_is_dense = true},
    // Olmo2Config (transformers 4.47): vocab_size=50304, untied. Olmo2DecoderLayer
    // norms the outputs of attention and MLP (post_attention_layernorm,
    // post_feedforward_layernorm), not their inputs; Olmo2Attention's q_norm
    // and k_norm are Olmo2RMSNorm(H * head_dim) and (KV * head_dim) over the
    // whole projections; Olmo2RMSNorm multiplies by its weight in fp32.
    {.model_type = "olmo2", .vocab_size = 50304, .norm_placement = NormPlacement::Post, .qk_norm = true,
     .qk_norm_span = QkNormSpan::Projection, .norm_weight_fp32 = true},
    // SmolLM3Config (transformers 4.53): tie_word_embeddings=True (the
    // SmolLM3-3B config.json leaves the key out), GQA with 4 KV heads; every
    // fourth layer skips the rotary embedding (no_rope_layers), which keeps
    // nothing per block either way.
    {.model_type = "smollm3", .vocab_size = 128256, .hidden_size = 2048, .num_layers = 36, .num_heads = 16,
     .num_kv_heads = 4, .max_positions = 32768, .tie_word_embeddings = true, .writes_mlp_bias = true},
    // GraniteConfig (transformers 4.45+): LlamaConfig's defaults and blocks;
    // its embedding, attention, residual and logits multipliers scale by
    // Python numbers, which keep no tensor.
    {.model_type = "granite", .writes_mlp_bias = true},
    // GemmaConfig: head_dim=256, tie_word_embeddings=True; GemmaRMSNorm
    // computes in fp32 and scales by (1 + weight).
    {.model_type = "gemma", .vocab_size = 256000, .hidden_size = 3072, .intermediate_size = 24576,
     .num_layers = 28, .num_heads = 16, .num_kv_heads = 16, .head_dim = 256, .max_positions = 8192,
     .tie_word_embeddings = true, .hidden_act = "gelu_pytorch_tanh", .norm_weight_fp32 = true},
    // Gemma2Config: pre- and post-norms around attention and MLP (4 per
    // block), tanh soft-capping of attention logits and final logits.
    // modeling_gemma2.py at transformers commit 9a80143c (and modular_gemma2.py
    // at 213da5a0): every other layer (even indices) slides; Gemma2Model
    // builds one causal mask and one rotary table for all layers, and
    // Gemma2DecoderLayer derives the sliding mask inside its forward.
    {.model_type = "gemma2", .act_key = "hidden_activation", .vocab_size = 256000, .hidden_size = 2304,
     .intermediate_size = 9216, .num_layers = 26, .num_heads = 8, .num_kv_heads = 4, .head_dim = 256,
     .max_positions = 8192, .tie_word_embeddings = true, .hidden_act = "gelu_pytorch_tanh", .norms_per_block = 4,
     .sliding_window_pattern = 2, .sliding_mask_in_layer = true, .norm_weight_fp32 = true, .attention_softcap = true,
     .final_logit_softcap = true},
    // Gemma3TextConfig (transformers 4.50), the text model of Gemma 3 (the 1B
    // checkpoint is text-only; the larger ones are model_type gemma3 with it
    // under text_config): Gemma-2's four norms per block plus per-head
    // q_norm / k_norm (Gemma3RMSNorm(head_dim)); attn_logit_softcapping and
    // final_logit_softcapping default to None, so nothing is soft-capped; five
    // sliding-window layers per global one (sliding_window_pattern 6), which
    // keep the same tensors per block. Gemma3TextModel builds a causal mask
    // and a rotary table per layer type: the sliding layers' rotates with
    // rope_local_base_freq (modeling_gemma3.py at transformers 0018aa64).
    {.model_type = "gemma3_text", .text_config_of = "gemma3", .act_key = "hidden_activation", .vocab_size = 262208, .hidden_size = 2304,
     .intermediate_size = 9216, .num_layers = 26, .num_heads = 8, .num_kv_heads = 4, .head_dim = 256,
     .max_positions = 131072, .tie_word_embeddings = true, .hidden_act = "gelu_pytorch_tanh", .norms_per_block = 4,
     .qk_norm = true, .sliding_window_pattern = 6, .local_rope = true, .norm_weight_fp32 = true},
    // GptOssConfig / modeling_gpt_oss.py (transformers 4.55): 36 layers of
    // 2880 with 64 heads of 64 and 8 KV heads, 128 experts top-4, each
    // intermediate_size (2880) wide, attention_bias=True (q, k, v and o), untied.
    // GptOssAttention holds `sinks`, one learned logit per head; GptOssExperts
    // holds gate_up_proj_bias [E, 2f] and down_proj_bias [E, h];
    // GptOssTopKRouter holds a bias [E]. Every layer is a MoE layer. The
    // checkpoint's MXFP4 expert blocks are counted as the parameters they
    // dequantize to. What the eager forward keeps (modeling_gpt_oss.py at
    // transformers commit 6edf5b31): GptOssRMSNorm multiplies its weight in
    // fp32; cos / sin are head_dim / 2 wide (emb = freqs); the sink column
    // joins the logits before a row max and a softmax in their own dtype;
    // the router takes top-k of the logits, then softmax over the k; each
    // expert's SwiGLU clamps interleaved gate and up columns.
    {.model_type = "gpt_oss", .expert_ffn_key = "intermediate_size", .vocab_size = 201088, .hidden_size = 2880,
     .intermediate_size = 2880, .num_layers = 36, .num_heads = 64, .num_kv_heads = 8, .head_dim = 64,
     .max_positions = 131072, .qkv_bias = true, .output_bias = true, .attention_sinks = true,
     .sliding_window_pattern = 2, .rotary_half_table = true, .num_experts = 128, .experts_per_token = 4,
     .expert_bias = true, .experts_are_parameters = true, .router_bias = true, .router_topk_softmax = true,
     .clamped_swiglu = true, .norm_weight_fp32 = true},
    // Glm4MoeConfig / modeling_glm4_moe.py (transformers 4.54, GLM-4.5-Air's
    // sizes): 46 layers of 4096, 96 heads, 8 KV heads, 128 experts top-8 of
    // 1408, one shared expert, first_k_dense_replace=1, attention_bias=False,
    // use_qk_norm=False. Glm4MoeAttention puts attention_bias on q, k and v
    // only (o_proj has none); q_norm / k_norm are per head when use_qk_norm.
    // Glm4MoeTopkRouter is DeepSeek-V3's: fp32 logits and
    // e_score_correction_bias. The class has no head_dim default (the
    // modeling file falls back to h / H, 42 here); every GLM-4.5 config.json
    // gives 128, the row's default. The MTP layer (num_nextn_predict_layers)
    // is stored in the checkpoint but not built: not counted.
    // partial_rotary_factor=0.5: apply_rotary_pos_emb turns the first
    // cos.shape[-1] dims of each head and concatenates the rest.
    {.model_type = "glm4_moe", .experts_key = "n_routed_experts", .qk_norm_key = "use_qk_norm",
     .vocab_size = 151552, .hidden_size = 4096, .intermediate_size = 10944, .num_layers = 46, .num_heads = 96,
     .num_kv_heads = 8, .head_dim = 128, .max_positions = 131072, .attention_bias_on_output = false,
     .partial_rotary_factor = 0.5, .num_experts = 128, .experts_per_token = 8, .moe_intermediate = 1408, .shared_experts = 1,
     .first_dense_layers = 1, .router_score_bias = true, .norm_topk_prob_key = true, .fp32_router = true,
     .mtp_stores_ends = true},
    // Llama4TextConfig / modeling_llama4.py (transformers 4.51): 48 layers
    // of 5120, 40 heads of 128, 8 KV heads; routed experts intermediate_size
    // (8192) wide, dense MLPs intermediate_size_mlp (16384); 16 experts top-1;
    // MoE layers interleave_moe_layer_step-1, 2*step-1, ... (moe_layers when
    // given), each with one shared expert (Llama4TextMLP of intermediate_size)
    // and a bias-free router. attention_bias is forced False by the class.
    // Llama-4 checkpoints are multimodal (model_type llama4 with a
    // text_config); the importer reads that text_config as Llama4ForCausalLM,
    // as the preset is. What the eager forward keeps (modeling_llama4.py and
    // configuration_llama4.py at transformers commit 000c33fd): softmax in
    // the compute dtype; the rotary as one complex fp32 freqs_cis product;
    // use_qk_norm: Llama4TextL2Norm (no weight, on an fp32 copy) after the
    // rotary, on rotary layers only; every no_rope_layer_interval-th layer
    // (4) is NoPE and scales its query by attn_scales (attn_temperature_tuning,
    // default True); the rotary layers are chunked_attention layers with
    // their own mask; Llama4TextMoe runs every expert on every token.
    {.model_type = "llama4_text", .text_config_of = "llama4", .intermediate_key = "intermediate_size_mlp", .expert_ffn_key = "intermediate_size",
     .moe_layer_keys = MoeLayerKeys::Llama4, .qk_norm_key = "use_qk_norm", .vocab_size = 202048, .hidden_size = 5120,
     .intermediate_size = 16384, .num_layers = 48, .num_heads = 40, .num_kv_heads = 8, .head_dim = 128,
     .max_positions = 131072, .reads_attention_bias = false, .qk_norm = true, .qk_norm_span = QkNormSpan::L2,
     .complex_rotary = true, .no_rope_layer_interval = 4, .nope_temperature_tuning = true,
     .num_experts = 16, .experts_per_token = 1, .moe_intermediate = 8192, .shared_experts = 1,
     .experts_are_parameters = true, .every_expert_every_token = true, .softmax_fp32 = false,
     .activation_caveat = "activations: transformers' eager Llama4TextMoe runs every expert on every token "
                          "(num_local_experts copies of each token's expert tensors), as counted here with "
                          "kernels = eager; a grouped-GEMM stack (kernels = fused or megatron) keeps top-k "
                          "(docs/memory-model.md)"},
    // Phi3Config: fused qkv_proj / gate_up_proj without biases.
    {.model_type = "phi3", .vocab_size = 32064, .hidden_size = 3072, .intermediate_size = 8192, .max_positions = 4096,
     .modules = ModuleNaming::Phi3, .reads_attention_bias = false, .writes_dropout_keys = true},
    // DeepseekV2Config: n_routed_experts=64, num_experts_per_tok=None,
    // moe_intermediate_size=1407, n_shared_experts=2, first_k_dense_replace=0.
    // DeepseekV2MoEGate scales the top-k softmax weights by
    // routed_scaling_factor and never renormalises them: norm_topk_prob is
    // stored, not read (modeling_deepseek_v2.py at transformers commits
    // 03eac6f6 and 0233e509). DeepseekV2RotaryEmbedding makes one complex
    // fp32 freqs_cis of qk_rope_head_dim / 2 values per token; apply_rotary_emb
    // multiplies fp32 complex views of the rope slices by it, which keeps
    // nothing per block.
    {.model_type = "deepseek_v2", .experts_key = "n_routed_experts", .mla = true, .complex_rotary = true,
     .num_experts = 64, .moe_intermediate = 1407, .shared_experts = 2, .norm_topk_prob = false,
     .experts_null_is_dense = true, .fp32_router = true, .sorted_expert_dispatch = true},
    // DeepseekV3Config: 256 experts, top-8, 2048 wide, 1 shared, 3 dense
    // layers, e_score_correction_bias. Kimi-K2 ships this architecture as
    // model_type kimi_k2 (its config.json names DeepseekV3ForCausalLM).
    // DeepseekV3TopkRouter renormalises when norm_topk_prob (class default
    // True; modeling_deepseek_v3.py at transformers commit 00b676f8).
    {.model_type = "deepseek_v3", .aliases = {"kimi_k2"}, .experts_key = "n_routed_experts", .vocab_size = 129280,
     .hidden_size = 7168, .intermediate_size = 18432, .num_layers = 61, .num_heads = 128, .num_kv_heads = 128,
     .max_positions = 4096, .mla = true, .num_experts = 256, .experts_per_token = 8, .moe_intermediate = 2048,
     .shared_experts = 1, .first_dense_layers = 3, .router_score_bias = true, .norm_topk_prob_key = true,
     .experts_null_is_dense = true, .fp32_router = true, .mtp_stores_ends = true},
    // DeepseekV32Config (modular_deepseek_v32.py at transformers 01f8fa55):
    // DeepSeek-V3 with DeepSeek Sparse Attention, a lightning indexer on
    // every layer (64 heads of 128, top-2048; its forward runs under
    // no_grad, so it saves nothing for backward and the layer keeps MLA's
    // tensors). The MTP layer (model.layers.61, with its own embedding and
    // head copies) is stored, not built.
    {.model_type = "deepseek_v32", .experts_key = "n_routed_experts", .vocab_size = 129280,
     .hidden_size = 7168, .intermediate_size = 18432, .num_layers = 61, .num_heads = 128, .num_kv_heads = 128,
     .max_positions = 4096, .mla = true, .num_experts = 256, .experts_per_token = 8, .moe_intermediate = 2048,
     .shared_experts = 1, .first_dense_layers = 3, .router_score_bias = true, .norm_topk_prob_key = true,
     .experts_null_is_dense = true, .fp32_router = true, .indexer_sizes = {64, 128, 2048}, .mtp_stores_ends = true},
    // GlmMoeDsaConfig (configuration_glm_moe_dsa.py at transformers 008e5743,
    // documented against zai-org/GLM-5): MLA (q_lora 2048, kv_lora 512, qk
    // 192 + 64, v 256) with DeepSeek's sparse-attention indexer (32 heads of
    // 128) on every layer, DeepSeek-V3's MoE (3 dense layers, 256 experts
    // top-8 of 2048, one shared). The MTP layer is stored without embedding
    // or head copies.
    {.model_type = "glm_moe_dsa", .experts_key = "n_routed_experts", .vocab_size = 154880, .hidden_size = 6144,
     .intermediate_size = 12288, .num_layers = 78, .num_heads = 64, .num_kv_heads = 64, .max_positions = 202752,
     .mla = true, .mla_sizes = {2048, 512, 192, 64, 256}, .num_experts = 256, .experts_per_token = 8,
     .moe_intermediate = 2048, .shared_experts = 1, .first_dense_layers = 3, .router_score_bias = true,
     .norm_topk_prob_key = true, .experts_null_is_dense = true, .fp32_router = true, .indexer_sizes = {32, 128, 2048}},
    // ---- hybrids (issue 23; docs/memory-model.md, "Layer kinds") ----
    // Qwen3NextConfig (configuration_qwen3_next.py at transformers commit
    // 008e5743; modeling_qwen3_next.py at 01cdc608): Gated DeltaNet layers
    // with every full_attention_interval-th (4) layer a gated full attention
    // (q_proj doubled for a sigmoid output gate, per-head q/k norms, a
    // quarter of each head rotated); every layer a Qwen2-MoE-style block of
    // 512 experts top-10 with a gated shared expert; the MTP layer
    // (mtp.*) is stored in the checkpoint, not built.
    {.model_type = "qwen3_next", .experts_key = "num_experts", .moe_layer_keys = MoeLayerKeys::Qwen,
     .vocab_size = 151936, .hidden_size = 2048, .intermediate_size = 5632, .num_layers = 48, .num_heads = 16,
     .num_kv_heads = 2, .head_dim = 256, .max_positions = 32768, .qk_norm = true, .partial_rotary_factor = 0.25,
     .num_experts = 512, .experts_per_token = 10, .moe_intermediate = 512, .shared_intermediate = 512,
     .shared_expert_gate = true, .norm_topk_prob_key = true, .zero_experts_is_dense = true,
     .experts_are_parameters = true, .mtp_layers = 1,
     .layer_pattern = LayerPatternKeys::LinearAttentionTypes, .full_attention_interval = 4, .norm_weight_fp32 = true},
    // MiniMaxM2Config (configuration_minimax_m2.py at 008e5743; modeling at
    // 0205eec1): 62 layers of 3072, 48 heads of 128, 8 KV heads; q_norm and
    // k_norm over the whole projections; half of each head rotated
    // (rotary_dim 64); 256 experts top-8, intermediate_size wide, a sigmoid
    // router with e_score_correction_bias; no shared expert. The config
    // names 3 MTP modules but the checkpoint ships none.
    {.model_type = "minimax_m2", .experts_key = "num_local_experts", .expert_ffn_key = "intermediate_size",
     .qk_norm_key = "use_qk_norm", .vocab_size = 200064, .hidden_size = 3072, .intermediate_size = 1536,
     .num_layers = 62, .num_heads = 48, .num_kv_heads = 8, .head_dim = 128, .max_positions = 196608,
     .reads_attention_bias = false, .qk_norm = true, .qk_norm_span = QkNormSpan::Projection,
     .partial_rotary_factor = 0.5, .num_experts = 256, .experts_per_token = 8, .router_score_bias = true,
     .fp32_router = true,
     .activation_caveat = "activations: MiniMax-M2's blocks have no autograd ground-truth case yet; they are counted "
                          "with OLMo 2's whole-projection q/k norms and DeepSeek-V3's fp32 sigmoid router "
                          "(docs/memory-model.md, Layer kinds)"},
    // Qwen3_5TextConfig (configuration_qwen3_5.py at 8116e632): Qwen3-Next's
    // layers with a dense SwiGLU MLP; the checkpoint (qwen3_5) is
    // multimodal, its text model under text_config, its vision tower a
    // Qwen3-VL ViT without deepstack, counted from vision_config.
    {.model_type = "qwen3_5_text", .text_config_of = "qwen3_5", .vocab_size = 248320, .hidden_size = 4096,
     .intermediate_size = 12288, .num_layers = 32, .num_heads = 16, .num_kv_heads = 4, .head_dim = 256,
     .max_positions = 32768, .qk_norm = true, .partial_rotary_factor = 0.25,
     .layer_pattern = LayerPatternKeys::LinearAttentionTypes, .full_attention_interval = 4,
     .gdn_split_projections = true, .qwen_vision_tower = true, .norm_weight_fp32 = true},
    // Qwen3_5MoeTextConfig (configuration_qwen3_5_moe.py at 008e5743): every
    // layer a MoE block (256 experts top-8 of 512, a gated shared expert);
    // the class has no dense intermediate_size (no layer is dense), so the
    // dense width reads the experts' (one key for both: validateHybrid).
    {.model_type = "qwen3_5_moe_text", .text_config_of = "qwen3_5_moe", .intermediate_key = "moe_intermediate_size",
     .experts_key = "num_experts",
     .moe_layer_keys = MoeLayerKeys::Qwen, .vocab_size = 248320, .hidden_size = 2048, .intermediate_size = 512,
     .num_layers = 40, .num_heads = 16, .num_kv_heads = 2, .head_dim = 256, .max_positions = 32768,
     .qk_norm = true, .partial_rotary_factor = 0.25, .num_experts = 256, .experts_per_token = 8,
     .moe_intermediate = 512, .shared_intermediate = 512, .shared_expert_gate = true, .norm_topk_prob_key = true,
     .experts_are_parameters = true, .layer_pattern = LayerPatternKeys::LinearAttentionTypes, .full_attention_interval = 4,
     .gdn_split_projections = true, .qwen_vision_tower = true, .norm_weight_fp32 = true},
    // NemotronHConfig (configuration_nemotron_h.py at 13923c6; modeling at
    // 008d9e9): hybrid_override_pattern lays out Mamba-2 (M), attention (*),
    // MLP (-) and MoE (E) layers, each with one norm; MLPs and experts are
    // non-gated relu2 (up, down); the router is DeepSeek-V3's with
    // e_score_correction_bias; the experts are 3-D parameters. The class
    // defaults are Nemotron-H-8B's (52 layers, its pattern).
    {.model_type = "nemotron_h", .act_key = "mlp_hidden_act", .experts_key = "n_routed_experts",
     .shared_expert_ffn_key = "moe_shared_expert_intermediate_size", .vocab_size = 131072, .hidden_size = 4096,
     .intermediate_size = 21504, .num_layers = 52, .num_heads = 32, .num_kv_heads = 8, .head_dim = 128,
     .max_positions = 4096, .hidden_act = "relu2", .mlp = MlpKind::Plain,
     .num_experts = 8, .experts_per_token = 2, .moe_intermediate = 7688, .shared_experts = 1,
     .shared_intermediate = 7688, .router_score_bias = true, .norm_topk_prob_key = true, .fp32_router = true,
     .experts_are_parameters = true, .layer_pattern = LayerPatternKeys::HybridOverride,
     .layer_pattern_default = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-", .rope = false},
    // GraniteMoeHybridConfig (configuration_granitemoehybrid.py at 008f5c8):
    // layer_types of mamba and attention layers (default all mamba), every
    // layer with its experts (input_linear gate+up, output_linear) and a
    // shared MLP of shared_intermediate_size; no rotary ("nope").
    {.model_type = "granitemoehybrid", .experts_key = "num_local_experts",
     .expert_ffn_key = "intermediate_size", .shared_expert_ffn_key = "shared_intermediate_size",
     .num_experts = 8, .experts_per_token = 2, .shared_intermediate = 1024, .experts_are_parameters = true,
     .fused_mlp_gate_up = true, .layer_pattern = LayerPatternKeys::MambaAttentionTypes, .rope = false,
     .activation_caveat = "activations: Granite 4.0-H's router keeps one index per routed token and its top-k "
                          "weights (about 0.5% of an MoE block less than counted, measured on the CPU: "
                          "validation/activations/saved_tensors.json)"},
    // Lfm2Config (modeling_lfm2.py at 0096ba4f): gated short-convolution
    // layers and attention layers (full_attn_idxs / layer_types) with
    // per-head q/k norms; the MLP width is block_ff_dim adjusted
    // (lfm2FfnWidth); tie_embedding ties the head.
    {.model_type = "lfm2", .intermediate_key = "block_ff_dim", .vocab_size = 65536, .hidden_size = 2560, .intermediate_size = 12288,
     .num_heads = 32, .num_kv_heads = 8, .max_positions = 128000, .tie_word_embeddings = true, .qk_norm = true,
     .layer_pattern = LayerPatternKeys::ConvAttentionTypes},
    // FalconH1Config (configuration_falcon_h1.py at transformers 7abb76c5;
    // FalconH1DecoderLayer and FalconH1Mixer, modular_falcon_h1.py at
    // 00511f5d): every layer attention (Llama's q, k, v, o, rotary) and a
    // Mamba-2 mixer side by side on one norm, then a SwiGLU MLP on another;
    // the mu-P multipliers scale by Python numbers and a non-persistent
    // buffer (mup_vector), no parameters.
    {.model_type = "falcon_h1", .vocab_size = 128000, .intermediate_size = 14336, .num_kv_heads = 8,
     .max_positions = 8192, .writes_mlp_bias = true, .layer_pattern = LayerPatternKeys::ParallelHybrid},
    // JambaConfig (configuration_jamba.py at transformers 161d2bed;
    // modular_jamba.py at 01596202): Mamba-1 mixers with an attention layer
    // every attn_layer_period (no positional embedding at all), MoE every
    // expert_layer_period (16 experts top-2 of intermediate_size, 3-D expert
    // parameters, a bias-free router whose top-k softmax weights are not
    // renormalised; num_experts 0 or 1 builds dense MLPs: JambaDecoderLayer
    // tests num_experts > 1); attention without biases.
    {.model_type = "jamba", .experts_key = "num_experts", .expert_ffn_key = "intermediate_size", .vocab_size = 65536,
     .intermediate_size = 14336, .num_kv_heads = 8, .max_positions = 262144, .reads_attention_bias = false,
     .num_experts = 16, .experts_per_token = 2, .norm_topk_prob = false, .zero_experts_is_dense = true,
     .experts_are_parameters = true, .layer_pattern = LayerPatternKeys::JambaPeriods, .rope = false},
    // KimiLinearConfig (configuration_kimi_linear.py at transformers
    // 630ebd85; modeling_kimi_linear.py at 016bd12c): Kimi Delta Attention
    // layers and MLA layers (q_lora_rank None: no query compression), the
    // first first_k_dense_replace layers a dense MLP, the others DeepSeek-V3's
    // MoE (a sigmoid router with e_score_correction_bias, one shared expert,
    // 3-D expert parameters). attribute_map: num_local_experts ->
    // n_routed_experts, num_experts_per_token -> num_experts_per_tok,
    // moe_renormalize -> norm_topk_prob (read in hf_hybrid.cpp).
    {.model_type = "kimi_linear", .experts_key = "n_routed_experts", .vocab_size = 163840, .hidden_size = 2304,
     .intermediate_size = 9216, .num_layers = 27, .num_heads = 32, .num_kv_heads = 32, .max_positions = 1048576,
     .mla = true, .mla_sizes = {0, 512, 128, 64, 128}, .num_experts = 256, .experts_per_token = 8,
     .moe_intermediate = 1024, .shared_experts = 1, .first_dense_layers = 1, .router_score_bias = true,
     .norm_topk_prob_key = true, .fp32_router = true, .experts_are_parameters = true,
     .layer_pattern = LayerPatternKeys::KimiLayerTypes},
    // Nemotron-NAS (DeciLMConfig, a LlamaConfig with block_configs; its
    // configuration_decilm.py ships with the checkpoints, read through
    // NVIDIA NeMo's llama_nemotron_config.py at 8cfedd72 and the DeciLM
    // ports of vLLM, SGLang and TensorRT-LLM): Llama's blocks, each layer's
    // attention absent (no_op) or with heads / n_heads_in_group KV heads, its
    // SwiGLU MLP absent or ffn_mult wide; each present half keeps its norm.
    {.model_type = "nemotron-nas", .writes_mlp_bias = true, .layer_pattern = LayerPatternKeys::BlockConfigs},
};

// An unknown model_type must state its sizes (0 = required); the rest is
// Llama's. Its MoE blocks are Mixtral's, renormalising unless norm_topk_prob
// says otherwise.
constexpr FamilySpec kLlamaStyle = {.model_type = "", .vocab_size = 0, .hidden_size = 0, .intermediate_size = 0,
                                    .num_layers = 0, .num_heads = 0, .max_positions = 0,
                                    .norm_topk_prob_key = true};

}  // namespace

const FamilySpec* findFamily(std::string_view model_type) {
    for (const FamilySpec& f : kFamilies) {
        if (f.model_type == model_type) return &f;
        for (std::string_view alias : f.aliases)
            if (!alias.empty() && alias == model_type) return &f;
    }
    return nullptr;
}

const FamilySpec* findTextConfigFamily(std::string_view model_type) {
    for (const FamilySpec& f : kFamilies)
        if (!f.text_config_of.empty() && f.text_config_of == model_type) return &f;
    return nullptr;
}

const FamilySpec& familyOf(std::string_view model_type) {
    const FamilySpec* f = findFamily(model_type);
    return f ? *f : kLlamaStyle;
}

const FamilySpec& llamaStyleFamily() { return kLlamaStyle; }

int64_t rotaryTableWidth(const ModelConfig& m) {
    if (m.mla) return m.mla->qk_rope_head_dim;
    const auto width = static_cast<int64_t>(static_cast<double>(m.head_dim) * m.partial_rotary_factor);
    return familyOf(m.family).rotary_half_table ? width / 2 : width;
}

bool mixesAttentionLayers(const ModelConfig& m) {
    // Llama 4: chunked rotary layers and global NoPE layers.
    if (familyOf(m.family).no_rope_layer_interval > 0 && m.no_rope_layer_interval > 1 &&
        m.no_rope_layer_interval <= m.num_layers)
        return true;
    return m.sliding_window_layers > 0 && m.sliding_window_layers < m.num_layers;
}

int64_t causalMasks(const ModelConfig& m) {
    return mixesAttentionLayers(m) && !familyOf(m.family).sliding_mask_in_layer ? 2 : 1;
}

int64_t rotaryTables(const ModelConfig& m) { return familyOf(m.family).local_rope && mixesAttentionLayers(m) ? 2 : 1; }

int64_t rotaryTableBytes(const ModelConfig& m, int64_t tokens, double element_bytes) {
    const int64_t width = rotaryTableWidth(m);
    // Llama4TextRotaryEmbedding: torch.polar of fp32 freqs, width / 2 complex64 values per token.
    if (familyOf(m.family).complex_rotary) return rotaryTables(m) * tensorBytes(tokens * (width / 2), 8.0);
    return rotaryTables(m) * 2 * tensorBytes(tokens * width, element_bytes);
}

const std::vector<ActivationSpec>& activationCatalogue() {
    // transformers/activations.py ACT2CLS: "silu" and "swish" are both
    // nn.SiLU; "gelu" is GELUActivation (F.gelu), "gelu_pytorch_tanh"
    // F.gelu(approximate="tanh"), "gelu_new" NewGELUActivation.
    static const std::vector<ActivationSpec> rows = {
        {"silu", ""}, {"swish", "silu"}, {"gelu", ""}, {"gelu_pytorch_tanh", ""}, {"gelu_new", ""}, {"relu", ""}, {"relu2", ""},
    };
    return rows;
}

const ActivationSpec* findActivation(std::string_view name) {
    for (const ActivationSpec& a : activationCatalogue())
        if (a.name == name) return &a;
    return nullptr;
}

const std::vector<std::string>& supportedActivations() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const ActivationSpec& a : activationCatalogue()) n.emplace_back(a.name);
        return n;
    }();
    return names;
}

std::string allowedActivations() {
    std::string s;
    for (const ActivationSpec& a : activationCatalogue()) {
        if (!s.empty()) s += ", ";
        s += a.name;
        if (!a.same_as.empty()) s += " (= " + std::string(a.same_as) + ")";
    }
    return s;
}

const std::vector<const FamilySpec*>& familyCatalogue() {
    static const std::vector<const FamilySpec*> rows = [] {
        std::vector<const FamilySpec*> r;
        for (const FamilySpec& f : kFamilies) r.push_back(&f);
        return r;
    }();
    return rows;
}

const std::vector<std::string>& supportedModelTypes() {
    static const std::vector<std::string> types = [] {
        std::vector<std::string> t;
        for (const FamilySpec& f : kFamilies) {
            t.emplace_back(f.model_type);
            for (std::string_view alias : f.aliases)
                if (!alias.empty()) t.emplace_back(alias);
            if (!f.text_config_of.empty()) t.emplace_back(f.text_config_of);
        }
        return t;
    }();
    return types;
}

namespace {

// The MoE layers a selection picks, held without walking the layers: either
// an explicit sorted list, or an arithmetic progression (first `a0`, step
// `period`, below L) less a sorted list of dense layers lying on it.
class MoeLayerSet {
public:
    MoeLayerSet(int64_t L, const MoeLayerSelection& k) : L_(L) {
        if (k.moe_layers) {
            explicit_ = sortedWithin(*k.moe_layers, 0);
            return;
        }
        const int64_t fkd = k.first_k_dense_replace, f1 = k.moe_layer_freq, step = k.decoder_sparse_step;
        // Layers i >= fkd with i % f1 == 0 and (i + 1) % step == 0: the first
        // is found within step multiples of f1 (the pattern repeats after
        // lcm(f1, step)), the rest follow every lcm(f1, step) layers.
        period_ = std::lcm(f1, step);  // both are at most 2^24 here
        int64_t i = (fkd + f1 - 1) / f1 * f1;
        for (int64_t tries = 0; tries < step && i < L && (i + 1) % step != 0; ++tries) i += f1;
        a0_ = i < L && (i + 1) % step == 0 ? i : L;
        count_ = a0_ < L ? (L - 1 - a0_) / period_ + 1 : 0;
        for (int64_t d : sortedWithin(k.mlp_only_layers, a0_))
            if ((d - a0_) % period_ == 0) removed_.push_back(d);
        count_ -= static_cast<int64_t>(removed_.size());
    }

    int64_t size() const { return explicit_ ? static_cast<int64_t>(explicit_->size()) : count_; }

    // The n-th MoE layer (n < size()), in at most n + |removed| steps.
    int64_t at(int64_t n) const {
        if (explicit_) return (*explicit_)[static_cast<size_t>(n)];
        int64_t layer = a0_;
        size_t r = 0;
        for (int64_t seen = 0;; layer += period_) {
            while (r < removed_.size() && removed_[r] < layer) ++r;
            if (r < removed_.size() && removed_[r] == layer) continue;
            if (seen++ == n) return layer;
        }
    }

    // Whether the set is exactly {first, first + freq, ...} below L, where
    // first is its smallest layer.
    bool isProgression(int64_t first, int64_t freq) const {
        const int64_t n = (L_ - 1 - first) / freq + 1;
        if (n != size()) return false;
        if (explicit_) {
            for (int64_t j = 0; j < n; ++j)
                if ((*explicit_)[static_cast<size_t>(j)] != first + j * freq) return false;
            return true;
        }
        // Equal sizes, so the progression must lie inside the set: on the
        // selection's own progression and off every removed layer.
        if (n >= 2 && freq % period_ != 0) return false;
        return std::none_of(removed_.begin(), removed_.end(),
                            [&](int64_t d) { return d >= first && (d - first) % freq == 0; });
    }

private:
    // The list's distinct layers in [from, L), sorted.
    std::vector<int64_t> sortedWithin(const std::vector<int64_t>& list, int64_t from) const {
        std::vector<int64_t> out;
        for (int64_t x : list)
            if (x >= from && x < L_) out.push_back(x);
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }

    int64_t L_;
    std::optional<std::vector<int64_t>> explicit_;
    int64_t a0_ = 0, period_ = 1, count_ = 0;
    std::vector<int64_t> removed_;
};

}  // namespace

MoeLayerFit fitMoeLayers(int64_t L, const MoeLayerSelection& k) {
    const int64_t fkd = k.first_k_dense_replace;
    const int64_t f1 = k.moe_layer_freq;
    const int64_t step = k.decoder_sparse_step;
    if (!k.moe_layers) {
        // Non-positive values are reported by validate() under their own key.
        if (f1 <= 0) return {{fkd, f1}, true};
        if (step <= 0) return {{0, step}, true};
        if (fkd < 0) return {{fkd, f1}, true};
        if (k.mlp_only_layers.empty() && step == 1) {
            // DeepSeek's rule: the first MoE layer is the first multiple of the
            // frequency at or after first_k_dense_replace.
            const int64_t first = (fkd + f1 - 1) / f1 * f1;
            if (fkd > L) return {{fkd, f1}, true};  // validate() rejects it
            return {{first > L ? L : first, f1}, true};
        }
        if (k.mlp_only_layers.empty() && fkd == 0 && f1 == 1) {
            // Qwen2-MoE's rule: layers step-1, 2*step-1, ...
            return {{step - 1 > L ? L : step - 1, step}, true};
        }
    }
    const MoeLayerSet moe(L, k);
    const int64_t rule_step = k.moe_layers ? 1 : step;
    if (moe.size() == 0) return {{L, !k.moe_layers && f1 > 1 ? f1 : rule_step}, true};
    const int64_t first = moe.at(0);
    const int64_t candidates[] = {moe.size() > 1 ? moe.at(1) - first : rule_step, rule_step, f1, L - first};
    for (int64_t freq : candidates)
        if (freq >= 1 && moe.isProgression(first, freq)) return {{first, freq}, true};
    return {{first, 1}, false};
}

}  // namespace trainmem
