#pragma once
// The sizes one GPU sees when it runs one transformer block for one
// micro-batch, resolved once from the configuration so that the op tables
// (activation_block.h, activation_ends.cpp) read like the papers' formulas.
// Internal to the core.
#include <cstdint>
#include <string_view>

#include "core/base/byte_count.h"
#include "core/model/model_config.h"
#include "core/training/parallel_config.h"
#include "core/training/training_config.h"

namespace trainmem {

// Activation functions by what their autograd graph keeps.
enum class ActivationFn {
    Fused,    // one op that keeps its input: SiLU, GELU (erf or tanh), PytorchGELUTanh
    Relu,     // keeps its output
    GeluNew,  // transformers' NewGELUActivation written op by op (GPT-2's gelu_new)
    Relu2,    // ReLUSquaredActivation (Nemotron-H): relu keeps its output, square (pow) its input
};
ActivationFn activationFn(std::string_view hidden_act);

// Linear layers of a block by role; fused modules (GPT-2 c_attn, Phi-3
// qkv_proj / gate_up_proj) answer to every role they fuse.
// MixerIn / MixerOut: the input and output projections of a hybrid's
// Gated DeltaNet, Mamba-2 and short-convolution mixers.
enum class LinearRole : uint32_t { Q = 1, K = 2, V = 4, O = 8, Gate = 16, Up = 32, Down = 64, MixerIn = 128, MixerOut = 256 };
inline constexpr uint32_t kLastLinearRole = 256;

struct ActivationShape {
    KernelProfile profile = KernelProfile::Eager;
    bool flash = true;
    // Family conventions of the Hugging Face modeling files.
    bool softmax_fp32 = true;    // eager softmax(dtype=float32) then cast back (all but GPT-2)
    bool fused_qkv = false;      // one qkv matmul (GPT-2 c_attn, Phi-3 qkv_proj)
    bool fused_gate_up = false;  // one gate_up matmul, chunked (Phi-3 gate_up_proj, Granite's shared MLP)
    // Routed experts as 3-D parameters with one gate_up weight (Qwen3-Next,
    // Granite 4.0-H): one matmul, so one autocast cast of the routed tokens.
    bool fused_expert_gate_up = false;
    bool norm_weight_fp32 = false;  // the norm weight multiplies in fp32 (Gemma, OLMo 2): the fp32 normalised tensor is kept
    bool attn_softcap = false;   // Gemma-2 tanh soft-capping of the attention logits
    bool attention_sinks = false;  // gpt-oss: a sink logit column joins the scores before softmax
    bool rope = true;            // rotary embedding (all but GPT-2)
    bool additive_mask = true;   // eager attention adds a 4-D causal mask (GPT-2 uses its bool buffer)
    NormKind norm = NormKind::RMSNorm;
    int64_t norms_per_block = 2;
    bool qk_norm = false;
    bool post_norm = false;        // norms on the outputs of attention and MLP only (OLMo 2)
    bool qk_norm_per_head = true;  // RMSNorm(head_dim) per head (Qwen3), else over the projection (OLMo 2)
    bool qk_norm_l2 = false;       // Llama 4: weightless L2 norm per head (qk_norm is false on NoPE layers)
    bool temperature_scales = false;  // Llama 4 NoPE layer: the query times an fp32 per-position scale
    MlpKind mlp = MlpKind::Gated;
    ActivationFn act = ActivationFn::Fused;

    // The layer's kind (ModelConfig::layerKind; issue 23): its token mixer,
    // and whether it has a feed-forward half (Nemotron-H's layers have one
    // half each). Attention layers may gate their output (Qwen3-Next).
    MixerKind mixer = MixerKind::Attention;
    bool ffn_half = true;
    bool output_gate = false;
    // Gated DeltaNet, Mamba-2 and short convolutions run their fused training
    // kernels (flash-linear-attention, mamba_ssm, causal-conv1d) with the
    // `flash` setting and under Megatron or fused kernels; with `eager`,
    // transformers' torch fallbacks (docs/hybrid-activations.md).
    bool mixer_fused = true;
    // Gated DeltaNet on this GPU: heads / t.
    int64_t gdn_key_heads = 0, gdn_value_heads = 0, gdn_key_dim = 0, gdn_value_dim = 0, gdn_conv = 0;
    bool gdn_split_projections = false;  // Qwen3.5: in_proj_qkv, _z, _b, _a (FamilySpec)
    // Mamba-2 on this GPU: heads and groups / t.
    int64_t mamba_heads = 0, mamba_head_dim = 0, mamba_state = 0, mamba_groups = 0, mamba_conv = 0, mamba_chunk = 0;
    // LFM2's short convolution: its kernel and channels (h / t).
    int64_t conv_kernel = 0, conv_channels = 0;

    // Sizes on this GPU (after tensor and context parallel division).
    int64_t b = 1;
    int64_t s = 1;          // local sequence length: sequence_length / context
    int64_t s_kv = 1;       // keys one query row sees over a ring pass: the full sequence
    int64_t tokens = 1;     // b * s
    int64_t h = 0;
    int64_t heads = 0;      // query heads / t
    int64_t kv_heads = 0;   // KV heads / t (at least 1: Megatron replicates KV groups when t > KV)
    int64_t head_dim = 0;   // d of q and k
    int64_t v_head_dim = 0; // d of v (differs with MLA)
    int64_t ffn = 0;        // dense MLP width / t
    int64_t tp = 1;
    int64_t cp = 1;
    int64_t sp = 1;         // divisor of the replicated b*s*h tensors: t with sequence parallelism

    double act_bytes = 2;     // a saved activation element (compute dtype)
    // torch.autocast (AMP) with the Eager or Compile profile: fp32 weights make the
    // residual stream, the norms and their outputs fp32; every matmul keeps
    // its own 16-bit cast of an fp32 input (autocast caches only leaf weights).
    bool amp = false;
    double stream_bytes = 2;  // residual stream and norm tensors: 4 under AMP, else act_bytes
    double linear_in_bytes = 2;  // a saved matmul input (1 with fp8 training)
    bool fp32_compute = false;   // act_bytes == 4: upcasts are no-ops

    bool frozen_base = false;    // LoRA / QLoRA: base weights get no gradient
    int64_t lora_rank = 0;
    double lora_dropout = 0;
    uint32_t lora_roles = 0;     // LinearRole bits with an adapter

    double attention_dropout = 0;
    double hidden_dropout = 0;

    // Routed experts (a MoE block).
    bool moe = false;
    int64_t experts = 0;
    int64_t top_k = 0;
    int64_t expert_ffn = 0;      // / t
    int64_t shared_ffn = 0;      // / t; 0 = no shared expert
    bool shared_gate = false;    // Qwen2-MoE sigmoid gate on the shared expert
    bool norm_topk_prob = true;  // the top-k routing weights are divided by their sum
    bool sorted_dispatch = false;  // DeepSeek-V2: softmax router, tokens sorted by expert, fp32 combine
    int64_t routing_groups = 0;    // DeepSeek-V2 group_limited_greedy: n_group (0 = greedy)
    int64_t routing_groups_kept = 0;
    bool fp32_router = false;    // DeepSeek: router on an fp32 copy of its input, fp32 routing weights
    bool topk_softmax_router = false;  // gpt-oss: top-k of the logits, then softmax over the k
    bool clamped_swiglu = false;       // gpt-oss: fused gate_up with biases, clamped SwiGLU
    bool every_expert = false;   // Llama 4 (eager): every expert runs on every token, weighted by sigmoid scores
    double capacity = 1;         // capacity_factor when > 0 (padded expert batches), else 1

    // Multi-head latent attention.
    bool mla = false;
    int64_t q_lora = 0;
    int64_t kv_lora = 0;
    int64_t rope_dim = 0;

    bool adapted(LinearRole r) const { return (lora_roles & static_cast<uint32_t>(r)) != 0; }
    // The base layer keeps its input for its weight gradient; a LoRA adapter
    // without dropout keeps the same tensor for its own.
    bool keepsInput(LinearRole r) const { return !frozen_base || (adapted(r) && lora_dropout == 0); }
    bool keepsInput(uint32_t roles) const {
        for (uint32_t bit = 1; bit <= kLastLinearRole; bit <<= 1)
            if ((roles & bit) && keepsInput(static_cast<LinearRole>(bit))) return true;
        return false;
    }
    int64_t roleCount(uint32_t roles) const {
        int64_t n = 0;
        for (uint32_t bit = 1; bit <= kLastLinearRole; bit <<= 1)
            if (roles & bit) ++n;
        return n;
    }
    int64_t hiddenTokens() const { return tokens * h / sp; }  // elements of a replicated b*s*h tensor
};

// kind: the layer's mixer and FFN (ModelConfig::layerKind); rope_layer:
// whether the block applies the rotary embedding (Llama 4's NoPE layers do
// not: ModelConfig::isRopeLayer).
ActivationShape activationShape(const ModelConfig& model, const TrainingConfig& training,
                                const ParallelConfig& parallel, LayerKind kind, bool rope_layer = true);

}  // namespace trainmem
