// The activation account of one transformer block. The op table is
// activation_block.h; terms and sources: docs/memory-model.md.
#include "core/base/byte_count.h"
#include "core/activations/activations.h"

#include <algorithm>
#include <cmath>

#include "core/activations/activation_block.h"
#include "core/activations/activation_shape.h"

namespace trainmem {
namespace {

struct BlockSums {
    int64_t saved = 0;
    int64_t core = 0;
    void operator()(std::string_view, std::string_view, int64_t bytes, bool attention_core) {
        saved = addBytes(saved, bytes);  // saturating: a row may be kTooLargeBytes
        if (attention_core) core = addBytes(core, bytes);
    }
};

// The hybrid mixers' backward (docs/hybrid-activations.md, Backward).
// Fused (read from the kernels, not measurable on the CPU): fla's
// chunk_gated_delta_rule_bwd recomputes the per-chunk states h (compute
// dtype) and makes their fp32 gradients dh beside dq, dk, dv (and w, u
// recomputed); mamba_ssm's combined backward recomputes the conv output and
// writes the gradient of in_proj's whole output; the causal conv writes the
// gradient of its input. Torch fallbacks: Mamba-2's from its broadcast
// products (below); the Gated DeltaNet's two C x C blocks per chunk and head
// beside three per-token fp32 tensors, which holds 6-182% more than the
// measured backward (validation/hybrid_backward_truth.py).
double mixerBackwardTransient(const ActivationShape& a) {
    const double act = a.act_bytes;
    const double T = static_cast<double>(a.tokens), b = static_cast<double>(a.b);
    switch (a.mixer) {
        case MixerKind::GatedDeltaNet: {
            const double HV = static_cast<double>(a.gdn_value_heads), dk = static_cast<double>(a.gdn_key_dim),
                         dv = static_cast<double>(a.gdn_value_dim);
            const double chunks = static_cast<double>((a.s + 63) / 64);
            if (a.mixer_fused)
                return act * b * HV * chunks * dk * dv + 4.0 * b * HV * chunks * dk * dv +
                       act * T * HV * (2 * dk + 2 * dv) + act * T * HV * (dk + dv);
            return 2.0 * 4.0 * b * HV * chunks * 64.0 * 64.0 + 3.0 * 4.0 * T * HV * std::max(dk, dv);
        }
        case MixerKind::Mamba2: {
            const double nh = static_cast<double>(a.mamba_heads), hd = static_cast<double>(a.mamba_head_dim),
                         N = static_cast<double>(a.mamba_state), G = static_cast<double>(a.mamba_groups);
            const double I = nh * hd, P = 2 * I + 2 * G * N + nh, CD = I + 2 * G * N;
            const double L = static_cast<double>(std::max<int64_t>(a.mamba_chunk, 1));
            const double chunks = std::ceil(static_cast<double>(a.s) / L);
            if (a.mixer_fused) return act * T * (P + CD) + 2.0 * 4.0 * b * nh * chunks * hd * N;
            // torch_forward's SSD multiplies broadcast fp32 tensors and sums
            // them: C·B (G), M·x (Y_diag), B_decay·x and C·states (chunk
            // states), decay_chunk·states (state passing). MulBackward0 makes
            // both operands' full-size gradients before the engine reduces
            // them to their shapes (sum_to in validate_outputs): two of the
            // largest product. Measured (validation/hybrid_backward_truth.py):
            // the backward's peak is 75-91% of it, saved tensors freed by then.
            const double gram = chunks * L * L * std::max(N, hd);
            const double chunk_states = chunks * L * hd * N;
            const double passing = (chunks + 1) * (chunks + 1) * hd * N;
            return 2.0 * 4.0 * b * nh * std::max({gram, chunk_states, passing});
        }
        case MixerKind::ShortConv:
            return 3.0 * act * T * static_cast<double>(a.conv_channels);
        case MixerKind::None:
        case MixerKind::ParallelAttentionMamba2:  // refused before (validateHybridTraining)
        case MixerKind::Mamba1:
        case MixerKind::KimiDeltaAttention:
            return 0;
        case MixerKind::Attention:
            break;
    }
    return 0;
}

// The largest transient of one block's backward, beside the gradients of
// the residual stream. Not measured by the CPU ground truth (it records saved
// tensors only); each term is the set of gradient buffers one backward op
// holds at once.
double backwardTransient(const ActivationShape& a) {
    const double act = a.act_bytes;
    const double T = static_cast<double>(a.tokens);
    double attn = 0;
    if (a.mixer != MixerKind::Attention) {
        attn = mixerBackwardTransient(a);
    } else if (a.flash) {
        // flash_attn mha_bwd: dq, dk, dv, an fp32 dq accumulator and fp32
        // softmax_d; with GQA, dk and dv are first computed for every head.
        const double qd = T * static_cast<double>(a.heads * a.head_dim);
        const double kvd = T * static_cast<double>(a.kv_heads * a.head_dim);
        attn = act * (qd + 2 * kvd) + 4 * qd + 4 * static_cast<double>(a.b * a.heads * a.s);
        if (a.kv_heads < a.heads) attn += 2 * act * qd;
    } else {
        // Softmax backward holds the gradient of its output and of its
        // input: fp32 in HF's upcast softmax, the compute dtype otherwise.
        const double scores = static_cast<double>(a.b * a.heads * a.s * a.s_kv);
        const bool upcast = a.profile != KernelProfile::Megatron && a.softmax_fp32;
        attn = (upcast ? 8.0 : 2.0 * act) * scores;
    }
    double mlp = 0;
    if (!a.ffn_half) return attn;
    const double mid = a.mlp == MlpKind::Gated ? 3.0 : 2.0;  // gradients of gate, up and their product
    if (a.moe) {
        // Llama 4's eager experts take every token (one bmm for all experts).
        const double routed = a.every_expert ? T * static_cast<double>(a.experts)
                                             : T * static_cast<double>(a.top_k) * a.capacity;
        const double width = static_cast<double>(a.expert_ffn);
        // The HF loop runs one expert's backward at a time; grouped GEMMs all at once.
        const bool hf_loop = a.profile == KernelProfile::Eager || a.profile == KernelProfile::Compile;
        const double per_expert = hf_loop && a.experts > 0 && !a.every_expert
                                      ? routed / static_cast<double>(a.experts) : routed;
        mlp = mid * act * per_expert * width + act * routed * static_cast<double>(a.h);
        mlp = std::max(mlp, mid * act * T * static_cast<double>(a.shared_ffn));
    } else {
        // The down projection's backward runs first and frees the input it
        // saved (the product, T·f) before mul's backward makes the gradients
        // of gate and up: that saved tensor is already counted in the block's
        // saved bytes, so the net transient is one T·f smaller (measured:
        // validation/step_truth.py, recomputed Llama blocks).
        const bool down_input_freed = a.mlp == MlpKind::Gated && a.profile == KernelProfile::Eager &&
                                      a.keepsInput(LinearRole::Down);
        mlp = (down_input_freed ? mid - 1.0 : mid) * act * T * static_cast<double>(a.ffn);
    }
    double ring = 0;
    if (a.cp > 1 && a.mixer == MixerKind::Attention) {
        // Ring attention (TE's P2P context parallelism) circulates K and V
        // chunks in backward with their gradients: send + receive buffers.
        ring = 4.0 * 2.0 * act * T * static_cast<double>(a.kv_heads * a.head_dim);
    }
    return std::max(attn, mlp) + ring;
}

LayerActivations accountLayer(const ActivationShape& a) {
    BlockSums sums;
    visitBlockTensors(a, sums);
    LayerActivations out;
    out.saved = sums.saved;
    out.saved_selective = sums.saved - sums.core;
    // torch.utils.checkpoint / Megatron full recomputation keep the block
    // input: the residual stream, split over tensor ranks with SP.
    out.checkpoint_input = tensorBytes(a.hiddenTokens(), a.stream_bytes);
    // The gradient arriving from the block above and the one accumulating
    // for this block's input, plus the block's largest op transient.
    const double residual = 2.0 * static_cast<double>(a.hiddenTokens()) * a.stream_bytes;
    out.backward_working = saturatedBytes(residual + backwardTransient(a));
    return out;
}

}  // namespace

// activations_op_policy.cpp
void accountOpPolicy(const ActivationShape& a, const ModelConfig& model, const TrainingConfig& training,
                     bool moe_layer, LayerActivations& out);
// activations_offload.cpp
void accountBlockOffload(const ActivationShape& a, const TrainingConfig& training, LayerActivations& out);
void accountBlockDeepspeed(const ActivationShape& a, const TrainingConfig& training, LayerActivations& out);

namespace {
LayerKind attentionLayer(bool moe_layer) { return {MixerKind::Attention, moe_layer ? FfnKind::Moe : FfnKind::Dense}; }
}  // namespace

std::vector<SavedTensor> blockSavedTensors(const ModelConfig& model, const TrainingConfig& training,
                                           const ParallelConfig& parallel, bool moe_layer, bool rope_layer) {
    return blockSavedTensors(model, training, parallel, attentionLayer(moe_layer), rope_layer);
}

LayerActivations layerActivations(const ModelConfig& model, const TrainingConfig& training,
                                  const ParallelConfig& parallel, bool moe_layer, bool rope_layer) {
    return layerActivations(model, training, parallel, attentionLayer(moe_layer), rope_layer);
}

std::vector<SavedTensor> blockSavedTensors(const ModelConfig& model, const TrainingConfig& training,
                                           const ParallelConfig& parallel, LayerKind kind, bool rope_layer) {
    std::vector<SavedTensor> out;
    const ActivationShape shape = activationShape(model, training, parallel, kind, rope_layer);
    visitBlockTensors(shape, [&](std::string_view op, std::string_view tensor, int64_t bytes, bool core) {
        out.push_back(SavedTensor{std::string(op), std::string(tensor), bytes, core});
    });
    return out;
}

LayerActivations layerActivations(const ModelConfig& model, const TrainingConfig& training,
                                  const ParallelConfig& parallel, LayerKind kind, bool rope_layer) {
    const ActivationShape shape = activationShape(model, training, parallel, kind, rope_layer);
    LayerActivations out = accountLayer(shape);
    if (training.checkpointing == Checkpointing::Op)
        accountOpPolicy(shape, model, training, kind.ffn == FfnKind::Moe, out);
    if (training.activation_offloading != ActivationOffloading::None) accountBlockOffload(shape, training, out);
    if (training.deepspeed_partition_activations || training.deepspeed_cpu_checkpointing)
        accountBlockDeepspeed(shape, training, out);
    return out;
}

BlockKindActivations blockKindActivations(const ModelConfig& model, const TrainingConfig& training,
                                          const ParallelConfig& parallel) {
    BlockKindActivations k;
    if (model.isHybrid()) {
        // One account per kind the model uses; dense and moe stay empty.
        k.hybrid = true;
        std::array<bool, kLayerKinds> used{};
        for (const LayerKind& kind : model.layer_kinds) used[hybridKindIndex(kind)] = true;
        for (size_t i = 0; i < kLayerKinds; ++i)
            if (used[i]) k.kinds[i] = layerActivations(model, training, parallel, hybridKindAt(i));
        return k;
    }
    k.dense = layerActivations(model, training, parallel, false);
    k.moe = model.isMoe() ? layerActivations(model, training, parallel, true) : k.dense;
    // NoPE variants only where a layer is one (an interval past the depth names none).
    const bool nope = model.no_rope_layer_interval > 0 && model.no_rope_layer_interval <= model.num_layers;
    k.nope_dense = nope ? layerActivations(model, training, parallel, false, false) : k.dense;
    k.nope_moe = nope && model.isMoe() ? layerActivations(model, training, parallel, true, false)
                 : nope                ? k.nope_dense
                                       : k.moe;
    return k;
}

namespace {
// The stage's blocks of each kind: rotary dense, rotary MoE, NoPE dense, NoPE MoE.
struct KindCounts {
    int64_t dense, moe, nope_dense, nope_moe;
};
KindCounts kindCounts(const PipelineStage& st) {
    const int64_t nope_moe = st.num_nope_moe_layers;
    const int64_t nope_dense = st.num_nope_layers - nope_moe;
    const int64_t moe = st.num_moe_layers - nope_moe;
    return {st.num_layers - moe - nope_moe - nope_dense, moe, nope_dense, nope_moe};
}
double times(int64_t n, int64_t per_block) { return static_cast<double>(n) * static_cast<double>(per_block); }
}  // namespace

double BlockKindActivations::sum(const PipelineStage& st, int64_t LayerActivations::*field) const {
    if (hybrid) {
        double v = 0;
        for (size_t i = 0; i < kLayerKinds; ++i) v += times(st.hybrid_layers[i], kinds[i].*field);
        return v;
    }
    const KindCounts n = kindCounts(st);
    return times(n.dense, dense.*field) + times(n.moe, moe.*field) + times(n.nope_dense, nope_dense.*field) +
           times(n.nope_moe, nope_moe.*field);
}

double BlockKindActivations::largest(const PipelineStage& st, int64_t LayerActivations::*field) const {
    double v = 0;
    if (hybrid) {
        for (size_t i = 0; i < kLayerKinds; ++i)
            if (st.hybrid_layers[i] > 0) v = std::max(v, static_cast<double>(kinds[i].*field));
        return v;
    }
    const KindCounts n = kindCounts(st);
    if (n.dense > 0) v = std::max(v, static_cast<double>(dense.*field));
    if (n.moe > 0) v = std::max(v, static_cast<double>(moe.*field));
    if (n.nope_dense > 0) v = std::max(v, static_cast<double>(nope_dense.*field));
    if (n.nope_moe > 0) v = std::max(v, static_cast<double>(nope_moe.*field));
    return v;
}

}  // namespace trainmem
