#pragma once
// The op table of one transformer block: every tensor autograd keeps for
// backward, op by op, for each KernelProfile. One template walks the table
// for both the listing (blockSavedTensors, which allocates) and the sums of
// the hot path (layerActivations, which must not): the visitor is called as
//   visit(std::string_view op, std::string_view tensor, int64_t bytes, bool attention_core)
// Sources for every row: docs/memory-model.md. Internal to the core.
#include <algorithm>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "core/activations/activation_mixers.h"
#include "core/activations/activation_norm.h"
#include "core/activations/activation_shape.h"

namespace trainmem {

// Op names of one MLP, so the dense MLP, the shared expert and the routed
// experts read apart in listings without building strings.
struct MlpOpNames {
    std::string_view input, act, mul, down;
};
inline constexpr MlpOpNames kDenseMlpOps{"gate_proj / up_proj", "mlp act_fn", "mlp act_fn * up", "down_proj"};
inline constexpr MlpOpNames kSharedExpertOps{"shared expert gate_proj / up_proj", "shared expert act_fn",
                                             "shared expert act_fn * up", "shared expert down_proj"};
inline constexpr MlpOpNames kRoutedExpertOps{"expert dispatch", "expert act_fn", "expert act_fn * up",
                                             "expert down_proj"};

template <class Visit>
class BlockTable {
public:
    BlockTable(const ActivationShape& a, Visit& visit) : a_(a), visit_(visit) {}

    void run() {
        switch (a_.mixer) {
            case MixerKind::Attention:
                if (a_.mla)
                    latentAttention();
                else
                    attention();
                break;
            case MixerKind::GatedDeltaNet: mixers::gatedDeltaNet(*this, a_); break;
            case MixerKind::Mamba2: mixers::mamba2(*this, a_); break;
            case MixerKind::ShortConv: mixers::shortConv(*this, a_); break;
            case MixerKind::None: break;  // Nemotron-H's MLP and MoE layers
            // Read and counted, not accounted: validateHybridTraining refuses
            // an estimate of them before any block is walked.
            case MixerKind::ParallelAttentionMamba2:
            case MixerKind::Mamba1:
            case MixerKind::KimiDeltaAttention: break;
        }
        if (a_.ffn_half) mlpHalf();
    }

    // The table's rules, public for the hybrid mixers' rows
    // (activation_mixers.h): one row, a norm, the input of the linears that
    // read the norm output, LoRA adapters.
    void emit(std::string_view op, std::string_view tensor, int64_t elements, double bytes_per_element,
              bool core = false) {
        if (elements > 0 && bytes_per_element > 0) visit_(op, tensor, tensorBytes(elements, bytes_per_element), core);
    }
    // A row whose element count is a product that may pass int64 (a
    // hybrid's chunked algebra at absurd sizes): counted in double,
    // saturating at kTooLargeBytes (byte_count.h).
    void emitLarge(std::string_view op, std::string_view tensor, double elements, double bytes_per_element) {
        if (elements > 0 && bytes_per_element > 0) visit_(op, tensor, saturatedBytes(elements * bytes_per_element), false);
    }

    void norm(std::string_view op, int64_t n, int64_t norm_rows, bool on_stream = true, int64_t view_storage = 0) {
        if (compiled()) {
            compiledNorm(op, n, norm_rows, on_stream);
            return;
        }
        normTensors(a_, op, n, norm_rows, [&](std::string_view o, std::string_view t, int64_t e, double b) {
            emit(o, t, e, b);
        }, on_stream, view_storage);
    }

private:
    using Roles = uint32_t;
    static constexpr Roles kQ = static_cast<Roles>(LinearRole::Q);
    static constexpr Roles kK = static_cast<Roles>(LinearRole::K);
    static constexpr Roles kV = static_cast<Roles>(LinearRole::V);
    static constexpr Roles kO = static_cast<Roles>(LinearRole::O);
    static constexpr Roles kGate = static_cast<Roles>(LinearRole::Gate);
    static constexpr Roles kUp = static_cast<Roles>(LinearRole::Up);
    static constexpr Roles kDown = static_cast<Roles>(LinearRole::Down);

    bool eager() const { return a_.profile == KernelProfile::Eager; }
    bool megatron() const { return a_.profile == KernelProfile::Megatron; }
    bool compiled() const { return a_.profile == KernelProfile::Compile; }
    // The Hugging Face modules' own code runs (eagerly or traced by torch.compile).
    bool hfCode() const { return eager() || compiled(); }
    int64_t rows() const { return a_.tokens / a_.sp; }  // token rows of a replicated tensor

    // torch.compile (AOTAutograd's min-cut partitioner, functorch 1.13,
    // measured: validation/compile_truth.py): the norm's input and its fp32
    // statistics are saved (a reduction is never worth recomputing: the 4x
    // rule of ban_recomputation), the normalised tensor and its casts are
    // recomputed from them (pointwise, fusible). `on_stream`: the input is the
    // residual stream (fp32 under AMP), else a matmul output in the compute
    // dtype. LayerNorm keeps mean and rstd (native_layer_norm's outputs).
    void compiledNorm(std::string_view op, int64_t n, int64_t norm_rows, bool on_stream, bool keep_input = true) {
        const bool ln = a_.norm == NormKind::LayerNorm;
        if (keep_input) emit(op, on_stream ? "input" : "input (a matmul output)", n, on_stream ? a_.stream_bytes : a_.act_bytes);
        emit(op, ln ? "mean and rstd (fp32)" : "rstd (fp32)", ln ? 2 * norm_rows : norm_rows, 4.0);
    }

public:
    // The input of linears that read the norm output (or the tokens gathered
    // for the experts). One storage, kept when any of the linears keeps it;
    // under AMP that input is fp32 and every linear keeps its own 16-bit cast
    // (adapters included), because autocast caches casts of leaf weights only.
    // `linears`: how many modules share the roles (fused: 1; MLA: q_a and
    // kv_a for three roles); 0 = one per role.
    void streamInput(std::string_view op, std::string_view what, Roles roles, int64_t linears, int64_t in,
                     int64_t adapter_rows) {
        const ActivationShape& a = a_;
        const int64_t modules = linears > 0 ? linears : a.roleCount(roles);
        const int64_t adapted = std::min(a.roleCount(roles & a.lora_roles), modules);
        if (compiled()) {
            // One tensor whatever the number of linears: the matmuls' weight
            // gradients need it (compute-intensive users in backward), and
            // under AMP the traced graph casts it once (CSE), not per linear.
            if (a.keepsInput(roles)) emit(op, a.amp ? "input cast to compute dtype (one for all linears)" : what, in,
                                          a.linear_in_bytes);
        } else if (!a.amp) {
            if (a.keepsInput(roles)) emit(op, what, in, a.linear_in_bytes);
        } else {
            int64_t casts = a.frozen_base ? 0 : modules;
            if (a.frozen_base && a.lora_rank > 0 && a.lora_dropout == 0) casts += adapted;
            emit(op, "input cast to compute dtype (one per linear)", casts * in, a.act_bytes);
        }
        adapters(op, roles, linears > 0 ? adapted : 0, in, adapter_rows);
    }

    // LoRA adapters (PEFT lora.Linear): lora_A keeps its input (a dropped
    // copy and a 1-byte mask when lora_dropout > 0), lora_B keeps the rank-r
    // intermediate. `in_elems`: the adapted layer's input elements.
    void adapters(std::string_view op, Roles roles, int64_t count, int64_t in_elems, int64_t adapter_rows) {
        if (!a_.frozen_base || a_.lora_rank <= 0) return;
        int64_t n = 0;
        for (Roles bit = 1; bit <= kLastLinearRole; bit <<= 1)
            if ((roles & bit) && a_.adapted(static_cast<LinearRole>(bit))) ++n;
        if (n == 0) return;
        if (count > 0) n = count;  // fused modules carry one adapter for all their roles
        if (a_.lora_dropout > 0) {
            emit(op, "LoRA dropout masks", n * in_elems, 1);
            emit(op, "LoRA dropped inputs", n * in_elems, a_.act_bytes);
        }
        emit(op, "LoRA rank-r intermediates", n * adapter_rows * a_.lora_rank, a_.act_bytes);
    }

private:
    void attention() {
        const ActivationShape& a = a_;
        const int64_t n = a.hiddenTokens();
        const int64_t T = a.tokens;
        const int64_t q = T * a.heads * a.head_dim;
        const int64_t kv = T * a.kv_heads * a.head_dim;
        const int64_t out = T * a.heads * a.v_head_dim;
        if (!a.post_norm) norm("input_layernorm", n, rows());

        // Post-norm blocks (OLMo 2) project the residual stream itself.
        streamInput(a.fused_qkv ? "qkv projection" : "q_proj / k_proj / v_proj",
                    a.post_norm ? "input (residual stream)" : "input (norm output)", kQ | kK | kV,
                    a.fused_qkv ? 1 : 0, n, T);
        if (a.qk_norm && a.qk_norm_l2) {
            l2Norm("q_norm (L2, after the rotary)", q, T * a.heads);
            l2Norm("k_norm (L2, after the rotary)", kv, T * a.kv_heads);
        } else if (a.qk_norm) {
            // Per head: one rstd per token and head; over the projection: per token.
            // Qwen3-Next's query is a view of q_proj's doubled output (query
            // and gate): in fp32 the norm's pow keeps that whole storage.
            norm("q_norm", q, a.qk_norm_per_head ? T * a.heads : T, false, a.output_gate ? 2 * q : 0);
            norm("k_norm", kv, a.qk_norm_per_head ? T * a.kv_heads : T, false);
        }
        // Llama 4's NoPE layers: (q * attn_scales).to(q.dtype); the product
        // keeps the (1, s, 1, 1) fp32 scales, expanded over the batch.
        if (a.temperature_scales) emit("attention temperature", "per-position scales (fp32)", a.s, 4);
        if (a.flash) {
            // Phi-3's value is a slice of the fused qkv output and flash_attn
            // keeps it as it is (stride 1 in its last dim), so the whole qkv
            // storage stays alive; q and k are the rotary's new tensors.
            // (GPT-2's q, k and v are all slices: together that same storage.)
            const bool value_pins_qkv = a.fused_qkv && a.rope;
            flashCore(q, kv, value_pins_qkv ? q + kv + T * a.kv_heads * a.v_head_dim : T * a.kv_heads * a.v_head_dim,
                      out);
            // Qwen3NextAttention: attn_output * sigmoid(gate); the kernel
            // already keeps the output, the product keeps the sigmoid, and
            // o_proj the gated product.
            if (a.output_gate) {
                emit("output gate", "sigmoid(gate)", out, a.act_bytes);
                if (a.keepsInput(kO)) emit("o_proj", "input (gated output)", out, a.linear_in_bytes);
            }
        } else {
            // Eager: matmul keeps q and the keys, matmul with the probabilities
            // keeps the values. HF's repeat_kv (and Megatron's repeat_interleave)
            // materialise H-wide keys and values, which are what matmul keeps.
            emit("attention scores", "query", q, a.act_bytes);
            emit("attention scores", "key (repeated to every head)", T * a.heads * a.head_dim, a.act_bytes);
            eagerCore();
            emit("attention over values", "value (repeated to every head)", out, a.act_bytes);
            if (a.output_gate) {
                emit("output gate", "attention output", out, a.act_bytes);
                emit("output gate", "sigmoid(gate)", out, a.act_bytes);
                if (a.keepsInput(kO)) emit("o_proj", "input (gated output)", out, a.linear_in_bytes);
            } else if (a.keepsInput(kO)) {
                emit("o_proj", "input (attention output)", out, a.linear_in_bytes);
            }
        }
        adapters("o_proj", kO, 0, out, T);
        if (a.hidden_dropout > 0) emit("attention output dropout", "mask", n, 1);
        // (Under compile its input is o_proj's output, a matmul output.)
        if (a.norms_per_block >= 4) norm("post_attention_layernorm", n, rows(), /*on_stream=*/!compiled());
        // OLMo 2: the norm reads o_proj's output, not the residual stream.
        if (a.post_norm) norm("post_attention_layernorm", n, rows(), /*on_stream=*/false);
    }

    // Llama4TextL2Norm (modeling_llama4.py at transformers commit 000c33fd):
    // x.float() * rsqrt(mean(x^2) + eps), cast back, no weight: pow keeps the
    // fp32 input (a copy, or in fp32 the rotary's own output), rsqrt its
    // result, one per head and token.
    void l2Norm(std::string_view op, int64_t n, int64_t norm_rows) {
        // Compile: the fp32 copy is a cast, recomputed; its source is kept.
        if (compiled()) {
            compiledNorm(op, n, norm_rows, /*on_stream=*/false);
            return;
        }
        emit(op, "input as fp32", n, 4.0);
        emit(op, "rstd (fp32)", norm_rows, 4.0);
    }

    // flash_attn FlashAttnFunc.forward: ctx.save_for_backward(q, k, v,
    // out_padded, softmax_lse, rng_state); k and v keep their KV heads; the
    // output is also o_proj's input (the same storage).
    void flashCore(int64_t q, int64_t k, int64_t v, int64_t out) {
        const ActivationShape& a = a_;
        emit("flash attention", "query", q, a.act_bytes);
        emit("flash attention", "key", k, a.act_bytes);
        emit("flash attention", "value", v, a.act_bytes);
        emit("flash attention", "output (also o_proj's input)", out, a.act_bytes);
        emit("flash attention", "logsumexp (fp32)", a.b * a.heads * a.s, 4);
        emit("flash attention", "rng state", 2, 8);
        // With fp8, o_proj keeps its own fp8 cast of that output.
        if (a.linear_in_bytes < a.act_bytes && a.keepsInput(kO)) emit("o_proj", "input (fp8 cast)", out, a.linear_in_bytes);
    }

    // The s x s part: scores, softmax, dropout. attention_core = true.
    void eagerCore() {
        const ActivationShape& a = a_;
        const int64_t scores = a.b * a.heads * a.s * a.s_kv;
        if (a.attention_sinks && !megatron()) {
            sinkCore(scores);
            return;
        }
        if (a.attn_softcap) emit("attention softcap", "tanh output", scores, a.act_bytes, true);
        // CUDA autocast runs softmax in fp32 whatever the family writes.
        if (!megatron() && (a.softmax_fp32 || a.amp)) {
            // softmax(w, dtype=float32).to(query.dtype): the fp32 output is kept
            // by softmax; its 16-bit cast by the matmul with the values, unless
            // dropout comes between (then the dropout output is kept instead).
            // Compile, 16-bit, soft-capped: the min cut recomputes the fp32
            // softmax from the kept tanh output (measured, Gemma 2).
            if (!(compiled() && a.attn_softcap && !a.fp32_compute))
                emit("attention softmax", "output (fp32)", scores, 4, true);
            if (!a.fp32_compute && a.attention_dropout <= 0)
                emit("attention softmax", "probabilities cast to compute dtype", scores, a.act_bytes, true);
        } else {
            emit("attention softmax", "output", scores, a.act_bytes, true);
        }
        if (a.attention_dropout > 0) {
            emit("attention dropout", "mask", scores, 1, true);
            emit("attention dropout", "output", scores, a.act_bytes, true);
        }
    }

    // gpt-oss (modeling_gpt_oss.py eager_attention_forward, transformers
    // commit 6edf5b31): cat([scores, sinks]) minus its row max (max keeps its
    // int64 indices), softmax(dtype=the logits' dtype) over s_kv + 1 columns
    // (fp32 under AMP: the fp32 mask promotes), the sink column sliced off
    // for the matmul with the values (a 16-bit cast of it under AMP).
    void sinkCore(int64_t scores) {
        const ActivationShape& a = a_;
        const double logits = a.amp ? 4.0 : a.act_bytes;
        emit("attention sinks", "row max indices (int64)", a.b * a.heads * a.s, 8, true);
        emit("attention softmax", "output with the sink column", a.b * a.heads * a.s * (a.s_kv + 1), logits, true);
        if (a.amp && a.attention_dropout <= 0)
            emit("attention softmax", "probabilities cast to compute dtype", scores, a.act_bytes, true);
        if (a.attention_dropout > 0) {
            emit("attention dropout", "mask", scores, 1, true);
            emit("attention dropout", "output", scores, a.act_bytes, true);
        }
    }

    // DeepSeek-V2/V3 multi-head latent attention as modeling_deepseek_v3.py
    // writes it (DeepseekV3Attention). Not covered by the CPU ground truth.
    void latentAttention() {
        const ActivationShape& a = a_;
        const int64_t n = a.hiddenTokens();
        const int64_t T = a.tokens;
        norm("input_layernorm", n, rows());
        streamInput("q_a_proj / kv_a_proj", "input (norm output)", kQ | kK | kV, 2, n, T);
        if (a.q_lora > 0) {
            norm("q_a_layernorm", T * a.q_lora, T, false);
            if (a.keepsInput(kQ)) emit("q_b_proj", "input (q_a_layernorm output)", T * a.q_lora, a.linear_in_bytes);
        }
        // kv_a_layernorm reads a slice of kv_a's output: in fp32 the slice
        // itself (the whole storage) is what pow keeps.
        norm("kv_a_layernorm", T * a.kv_lora, T, false, T * (a.kv_lora + a.rope_dim));
        if (a.keepsInput(kK | kV)) emit("kv_b_proj", "input (kv_a_layernorm output)", T * a.kv_lora, a.linear_in_bytes);
        const int64_t qk = T * a.heads * a.head_dim;
        const int64_t out = T * a.heads * a.v_head_dim;
        if (a.flash) {
            // HF pads the values to the query head dim for flash-attn, then
            // slices the output and makes it contiguous for o_proj.
            flashCore(qk, qk, qk, qk);
            if (a.keepsInput(kO) && a.linear_in_bytes >= a.act_bytes)
                emit("o_proj", "input (attention output sliced to v_head_dim)", out, a.linear_in_bytes);
        } else {
            emit("attention scores", "query (nope and rope concatenated)", qk, a.act_bytes);
            emit("attention scores", "key (nope and rope concatenated)", qk, a.act_bytes);
            eagerCore();
            emit("attention over values", "value (contiguous copy)", out, a.act_bytes);
            if (a.keepsInput(kO)) emit("o_proj", "input (attention output)", out, a.linear_in_bytes);
        }
        adapters("o_proj", kO, 0, out, T);
        if (a.hidden_dropout > 0) emit("attention output dropout", "mask", n, 1);
    }

    void mlpHalf() {
        const ActivationShape& a = a_;
        const int64_t n = a.hiddenTokens();
        if (compiled() && !a.post_norm && a.norms_per_block >= 4) {
            // Sandwich norms: the residual sum this norm reads is recomputed
            // from the block input and the post-attention norm; only rstd stays.
            compiledNorm("pre_feedforward_layernorm", n, rows(), true, /*keep_input=*/false);
        } else if (compiled() && !a.post_norm) {
            // The min-cut keeps o_proj's output (compute dtype) and recomputes
            // the residual sum from it and the block input, which the first
            // norm keeps anyway: equal bytes in fp32 and bf16, half under AMP.
            // With dropout on that branch the sum itself is kept (the stream's
            // dtype): the dropout is random, never recomputed (measured, GPT-2).
            compiledNorm("post_attention_layernorm", n, rows(), /*on_stream=*/a.hidden_dropout > 0);
        } else if (!a.post_norm) {
            norm(a.norms_per_block >= 4 ? "pre_feedforward_layernorm" : "post_attention_layernorm", n, rows());
        }
        if (a.moe)
            moe();
        else
            mlp(kDenseMlpOps, a.tokens, a.ffn, /*input_listed=*/false, /*input_is_norm_output=*/true);
        if (a.hidden_dropout > 0) emit("mlp output dropout", "mask", n, 1);
        if (a.norms_per_block >= 4) norm("post_feedforward_layernorm", n, rows(), /*on_stream=*/!compiled());
        if (a.post_norm) norm("post_feedforward_layernorm", n, rows(), /*on_stream=*/false);
    }

    // One MLP over `r` token rows of width w (already / t). The input is the
    // norm output for dense and shared MLPs (possibly already listed by the
    // router; / t with sequence parallelism), the gathered tokens for routed
    // experts.
    void mlp(const MlpOpNames& op, int64_t r, int64_t w, bool input_listed, bool input_is_norm_output) {
        const ActivationShape& a = a_;
        const int64_t in = input_is_norm_output ? a.hiddenTokens() : r * a.h;
        const int64_t mid = r * w;
        const bool gated = a.mlp == MlpKind::Gated;
        const Roles in_roles = gated ? (kGate | kUp) : kUp;
        // Phi-3's gate_up_proj is one module: one AMP cast, one adapter (and
        // so are fused 3-D experts' gate_up weights).
        const bool fused = input_is_norm_output ? a.fused_gate_up : a.fused_expert_gate_up;
        const int64_t linears = gated && fused ? 1 : 0;
        if (input_listed && !a.amp)
            adapters(op.input, in_roles, linears, in, r);
        else
            streamInput(op.input, input_is_norm_output ? "input (norm output)" : "tokens routed to the experts",
                        in_roles, linears, in, r);
        if (megatron()) {
            // Korthikanti et al. 2022 §4.1 (GeLU input and output, 8sbh each
            // at 4h); gated: bias_swiglu keeps fc1's 2f-wide output.
            if (gated)
                emit(op.act, "fc1 output (gate and up)", 2 * mid, a.act_bytes);
            else
                emit(op.act, "fc1 output (GeLU input)", mid, a.act_bytes);
            if (a.keepsInput(kDown)) emit(op.down, "input (activation output)", mid, a.linear_in_bytes);
        } else if (compiled() && !gated) {
            // fc1's output is kept (compute-intensive, and the activation's
            // backward reads it); gelu_new's tanh output too (its chain is
            // fp32 under AMP); fc2's input is recomputed from them (pointwise).
            // ReLU keeps its output instead of its input (threshold_backward).
            emit(op.act, a.act == ActivationFn::Relu ? "act_fn output" : "fc1 output (act_fn input)", mid, a.act_bytes);
            if (a.act == ActivationFn::GeluNew) emit(op.act, "tanh output", mid, a.amp ? 4.0 : a.act_bytes);
        } else if (gated) {
            if (eager()) {
                activationFn(op.act, mid);
                emit(op.mul, "act_fn output", mid, a.act_bytes);
            } else {
                // Liger LigerSiLUMulFunction / LigerGELUMulFunction keep the gate
                // and up projections and recompute the activation in backward.
                // Compile: the same two matmul outputs (compute-intensive, never
                // recomputed); act_fn(gate) is recomputed (pointwise), the
                // product is kept for down_proj's weight gradient (measured).
                emit(op.act, "gate projection", mid, a.act_bytes);
            }
            emit(op.mul, "up projection", mid, a.act_bytes);
            if (a.keepsInput(kDown)) emit(op.down, "input (act_fn output * up)", mid, a.linear_in_bytes);
        } else {
            if (eager()) activationFn(op.act, mid); else emit(op.act, "fc1 output (act_fn input)", mid, a.act_bytes);
            // ReLU keeps its output already; otherwise fc2 keeps it for its weight.
            if (!(eager() && a.act == ActivationFn::Relu) && a.keepsInput(kDown))
                emit(op.down, "input (act_fn output)", mid, a.linear_in_bytes);
        }
        adapters(op.down, kDown, 0, mid, r);
    }

    // What the activation function's own autograd graph keeps (Eager).
    void activationFn(std::string_view op, int64_t mid) {
        const ActivationShape& a = a_;
        switch (a.act) {
            case ActivationFn::Fused:  // SiluBackward / GeluBackward keep the input
                emit(op, "input", mid, a.act_bytes);
                break;
            case ActivationFn::Relu:  // ReluBackward keeps the result
                emit(op, "output", mid, a.act_bytes);
                break;
            case ActivationFn::Relu2:
                // ReLUSquaredActivation: relu keeps its result; square is
                // pow(x, 2), which keeps its input: the same tensor, except
                // under CUDA autocast, where pow (on the fp32 list) keeps an
                // fp32 copy. The square is down_proj's input (listed there).
                emit(op, "relu output", mid, a.act_bytes);
                if (a.amp) emit(op, "relu output cast to fp32 (pow)", mid, 4.0);
                break;
            case ActivationFn::GeluNew: {
                // 0.5*x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))): pow keeps
                // x, tanh its result, the last product both of its factors.
                // CUDA autocast runs pow in fp32 (on an fp32 copy of x), and the
                // chain after it follows in fp32 by type promotion.
                const double chain = a.amp ? 4.0 : a.act_bytes;
                emit(op, a.amp ? "input cast to fp32 (pow)" : "input", mid, chain);
                emit(op, "tanh output", mid, chain);
                emit(op, "0.5 * input", mid, a.act_bytes);
                emit(op, "1 + tanh", mid, chain);
                break;
            }
        }
    }

    void moe() {
        const ActivationShape& a = a_;
        const int64_t n = a.hiddenTokens();
        const int64_t T = rows();
        // Every token visits top_k experts; dropping implementations pad each
        // expert's batch to capacity_factor x its even share.
        const int64_t routed = static_cast<int64_t>(static_cast<double>(a.tokens * a.top_k) * a.capacity + 0.5);
        const bool shared = a.shared_ffn > 0;
        // The router (and the shared expert) read the norm output.
        const bool router_keeps = !a.frozen_base;
        const bool shared_keeps = shared && a.keepsInput(a.mlp == MlpKind::Gated ? (kGate | kUp) : kUp);
        // DeepSeek's router runs F.linear(x.float(), weight.float()): its own
        // fp32 copy of the input unless that already is fp32.
        const bool own_router_copy = a.amp || (hfCode() && a.fp32_router && !a.fp32_compute);
        if (own_router_copy) {
            if (router_keeps) emit("router", a.amp ? "input cast to compute dtype" : "input cast to fp32", n,
                                   a.amp ? a.act_bytes : 4.0);
        } else if (router_keeps || shared_keeps) {
            emit("router", "input (norm output)", n, a.linear_in_bytes);
        }
        // DeepSeek-V3's router scores are fp32 unless autocast turns its
        // linear 16-bit; Mixtral's softmax(dtype=float) and DeepSeek-V2's
        // softmax(dtype=torch.float32) are fp32 always.
        const double scores = a.fp32_router && a.amp && !a.sorted_dispatch ? a.act_bytes : 4.0;
        if (hfCode() && a.topk_softmax_router) {
            gptOssExperts(routed);
            return;
        }
        if (a.every_expert) {
            llama4Experts();
            if (shared) mlp(kSharedExpertOps, a.tokens, a.shared_ffn, /*input_listed=*/!own_router_copy, true);
            return;
        }
        if (hfCode()) {
            // modeling_mixtral.py MixtralSparseMoeBlock: softmax(dtype=float),
            // topk, in-place renormalisation, then a loop over the experts
            // gathering their tokens with torch.where indices. DeepSeek-V3
            // (DeepseekV3TopkRouter / DeepseekV3MoE): sigmoid, gather of the
            // top-k scores, the same renormalisation and loop. Qwen2/3-MoE and
            // DeepSeek renormalise only with norm_topk_prob.
            emit(a.fp32_router && !a.sorted_dispatch ? "router sigmoid" : "router softmax", "output", T * a.experts,
                 scores);
            if (a.routing_groups > 0) {
                // DeepSeek-V2 group_limited_greedy: the best score of each
                // group (max keeps its indices), the top topk_group groups
                // (topk keeps its indices), the other groups' experts masked
                // to 0 (masked_fill keeps the bool mask).
                emit("router group-limited top-k", "group max indices (int64)", T * a.routing_groups, 8);
                emit("router group-limited top-k", "group top-k indices (int64)", T * a.routing_groups_kept, 8);
                emit("router group-limited top-k", "expert mask outside the groups (bool)", T * a.experts, 1);
            }
            emit("router top-k", "indices (int64)", T * a.top_k, 8);
            if (a.norm_topk_prob) {
                emit("routing weight renormalisation", "top-k weights (copy)", T * a.top_k, scores);
                emit("routing weight renormalisation", "their sum (fp32)", T, 4);
            }
            emit("expert dispatch", "token and slot indices (int64)", 2 * routed, 8);
        } else {
            // Grouped-GEMM MoE (Megatron-Core, TE): softmax/top-k router,
            // permute tokens by expert, unpermute weighted by the probabilities.
            emit("router softmax", "output (fp32)", T * a.experts, 4);
            emit("router top-k", "indices (int64)", T * a.top_k, 8);
            emit("router top-k", "probabilities (fp32)", T * a.top_k, 4);
        }
        mlp(kRoutedExpertOps, routed, a.expert_ffn, false, false);
        if (hfCode() && a.sorted_dispatch) {
            sortedCombine(routed);
        } else {
            indexAddCombine(routed, scores);
        }
        if (shared) {
            mlp(kSharedExpertOps, a.tokens, a.shared_ffn, /*input_listed=*/!own_router_copy, true);
            if (a.shared_gate) {
                // Qwen2-MoE: sigmoid(shared_expert_gate(x)) * shared_expert(x);
                // under AMP the gate's Linear keeps its own 16-bit cast of x.
                if (a.amp && !a.frozen_base) emit("shared expert gate", "input cast to compute dtype", n, a.act_bytes);
                emit("shared expert gate", "sigmoid output", T, a.act_bytes);
                emit("shared expert gate", "shared expert output", n, a.act_bytes);
            }
        }
    }

    // DeepSeek-V2 (DeepseekV2MoE.moe, transformers commit 03eac6f6): the
    // expert outputs, scattered back into slot order (index_put_ keeps the
    // sort order, counted with the dispatch indices), cast to fp32 and
    // multiplied in place by the fp32 routing weights: the product keeps both
    // (the fp32 outputs as a copy: mul_ overwrites them); the sum over slots
    // keeps nothing.
    void sortedCombine(int64_t routed) {
        const ActivationShape& a = a_;
        emit("expert combine", "expert outputs in fp32 (copy kept by the in-place product)", routed * a.h, 4);
        emit("expert combine", "routing weight per slot (fp32)", routed, 4);
    }

    // Mixtral, Qwen-MoE, DeepSeek-V3: each expert's output times its tokens'
    // routing weights, index_add_ into the output.
    void indexAddCombine(int64_t routed, double scores) {
        const ActivationShape& a = a_;
        emit("expert combine", "expert output (routing weight gradient)", routed * a.h, a.act_bytes);
        // Mixtral casts the routing weights to the hidden states' dtype (fp32
        // under AMP); DeepSeek keeps its scores' dtype, and so do its weighted outputs.
        const double weights = a.fp32_router ? scores : a.stream_bytes;
        emit("expert combine", "routing weight per token", routed, hfCode() ? weights : a.act_bytes);
        // index_add_'s derivative for its source reads source.dim() and
        // expand_as(source), so autograd keeps the weighted expert output too.
        if (hfCode()) emit("expert combine", "weighted expert output (index_add_ source)", routed * a.h, weights);
    }

    // gpt-oss, eager (modeling_gpt_oss.py GptOssTopKRouter and GptOssExperts'
    // training loop, transformers commit 6edf5b31): top-k of the biased
    // logits, softmax over the k in the logits' dtype; per expert hit, the
    // gathered tokens times one fused gate_up slice plus its bias, gate and
    // up clamped (each keeps the gate_up storage), sigmoid(alpha * gate), and
    // two products; under AMP the fp32 expert biases make that chain fp32.
    // The per-expert 16-bit weight slices autocast makes are weight copies.
    void gptOssExperts(int64_t routed) {
        const ActivationShape& a = a_;
        const int64_t T = rows();
        const int64_t mid = routed * a.expert_ffn;
        const double chain = a.amp ? 4.0 : a.act_bytes;
        emit("router top-k", "indices (int64)", T * a.top_k, 8);
        emit("router softmax", "top-k weights", T * a.top_k, a.act_bytes);
        emit("expert dispatch", "token and slot indices (int64)", 2 * routed, 8);
        streamInput("expert gate_up_proj", "tokens routed to the experts", kGate | kUp, 1, routed * a.h, routed);
        emit("expert clamped SwiGLU", "gate and up projections (clamp input)", 2 * mid, chain);
        emit("expert clamped SwiGLU", "clamped gate", mid, chain);
        emit("expert clamped SwiGLU", "sigmoid output", mid, chain);
        emit("expert clamped SwiGLU", "up + 1", mid, chain);
        emit("expert clamped SwiGLU", "glu", mid, chain);
        if (a.keepsInput(kDown))
            emit("expert down_proj", "input (clamped SwiGLU output)", mid, a.amp ? a.act_bytes : a.linear_in_bytes);
        emit("expert combine", "expert output (routing weight gradient)", routed * a.h, chain);
        emit("expert combine", "routing weight per token", routed, a.act_bytes);
        emit("expert combine", "weighted expert output (index_add_ source)", routed * a.h, chain);
    }

    // Llama 4, eager (modeling_llama4.py Llama4Router and Llama4TextMoe at
    // transformers commit 000c33fd): top-k of the logits, the rest -inf,
    // sigmoid on an fp32 copy; the input repeated once per expert and scaled
    // by its score (the product keeps both: the scores as an E x T copy in
    // the logits' dtype); one bmm per projection over all experts (the
    // experts are 3-D parameters, never LoRA targets); the outputs summed
    // over experts, which keeps nothing.
    void llama4Experts() {
        const ActivationShape& a = a_;
        const int64_t T = rows();
        const int64_t every = a.tokens * a.experts;
        const int64_t mid = every * a.expert_ffn;
        emit("router top-k", "indices (int64)", T * a.top_k, 8);
        emit("router sigmoid", "output (fp32)", T * a.experts, 4);
        if (!a.frozen_base) emit("expert dispatch", "tokens repeated for every expert", every * a.h, a.stream_bytes);
        emit("expert dispatch", "routing scores, one per token and expert (copy)", every, a.act_bytes);
        if (!a.frozen_base)
            emit("expert gate_up bmm", a.amp ? "scaled tokens cast to compute dtype" : "scaled tokens",
                 every * a.h, a.amp ? a.act_bytes : a.linear_in_bytes);
        emit("expert act_fn", "gate and up projections (act_fn input; up for the product)", 2 * mid, a.act_bytes);
        emit("expert act_fn * up", "act_fn output", mid, a.act_bytes);
        if (!a.frozen_base) emit("expert down_proj bmm", "input (act_fn output * up)", mid, a.linear_in_bytes);
    }

    const ActivationShape& a_;
    Visit& visit_;
};

template <class Visit>
void visitBlockTensors(const ActivationShape& shape, Visit&& visit) {
    BlockTable<std::remove_reference_t<Visit>> table(shape, visit);
    table.run();
}

}  // namespace trainmem
