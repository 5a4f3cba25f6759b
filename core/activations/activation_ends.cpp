// The model's ends: embedding, final norm, logits and loss, per micro-batch
// on the stage that holds them. Terms and sources: docs/memory-model.md.
#include <algorithm>

#include "core/activations/activation_norm.h"
#include "core/activations/activation_shape.h"
#include "core/activations/activations.h"
#include "core/model/hf_families.h"

namespace trainmem {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : a; }

int64_t nextPowerOfTwo(int64_t x) {
    int64_t p = 1;
    while (p < x) p <<= 1;
    return p;
}

struct Sum {
    int64_t bytes = 0;
    void operator()(std::string_view, std::string_view, int64_t elements, double per_element) {
        bytes += tensorBytes(elements, per_element);
    }
};

// Liger's fused linear cross-entropy (liger_kernel/ops/fused_linear_cross_entropy.py):
// rows of logits per chunk, so that a chunk's logits are about b*s*h elements.
int64_t fusedLossChunkRows(int64_t tokens, int64_t vocab, int64_t h) {
    const int64_t inc_factor = ceilDiv(vocab, std::max<int64_t>(h, 1));
    return std::min(tokens, nextPowerOfTwo(ceilDiv(tokens, std::max<int64_t>(inc_factor, 1))));
}

}  // namespace

namespace {

EndActivations endsWithoutOffloading(const ModelConfig& model, const TrainingConfig& training,
                                     const ParallelConfig& parallel) {
    const ActivationShape a = activationShape(model, training, parallel, LayerKind{});
    const bool megatron = a.profile == KernelProfile::Megatron;
    // The loss is its own key (training.loss); kernels=fused no longer implies
    // the fused linear cross-entropy (version-1 scenario files: scenario_json.cpp).
    const bool fused = training.loss == LossImpl::FusedLinear;
    const double act = a.act_bytes;
    const int64_t T = a.tokens;
    const int64_t n = a.hiddenTokens();
    const int64_t V = ceilDiv(model.vocab_size, a.tp);  // vocab-parallel embedding, LM head and loss
    const int64_t TV = T * V;
    EndActivations e;

    // Embedding. Korthikanti et al. 2022 §4.3 count only its dropout mask.
    if (!megatron && !a.frozen_base) {
        e.embedding_saved += 8 * T;  // EmbeddingBackward keeps the int64 token ids
        if (model.learned_positions) e.embedding_saved += 8 * a.s;  // GPT-2 position ids (1 x s)
    }
    if (model.embedding_dropout > 0) e.embedding_saved += n;  // 1-byte mask
    if (!megatron && a.rope) {
        // cos and sin, computed once per forward in the compute dtype and kept
        // by every block's rotary products: owned here, not by any block.
        // Width: MLA's rope dims, partial_rotary_factor; Gemma 3 a second pair
        // for its sliding layers; Llama 4 one complex fp32 table.
        e.embedding_saved += rotaryTableBytes(model, T, a.stream_bytes);  // x.dtype: fp32 under AMP
    }
    const bool recompute = training.checkpointing == Checkpointing::Full || training.checkpointing == Checkpointing::Op ||
                           checkpointsSomeLayers(training.checkpointing);
    if (!megatron && !a.flash && a.additive_mask && recompute) {
        // HF's eager attention takes a 4-D additive causal mask (b, 1, s, s);
        // a reentrant checkpoint keeps it as an input of every block. Models
        // that mix sliding-window and global layers build one mask per kind.
        const int64_t masks = causalMasks(model);
        e.embedding_saved += masks * tensorBytes(a.b * a.s * a.s_kv, a.stream_bytes);
    }

    // Final norm and what the LM head keeps of its output.
    Sum norm;
    normTensors(a, "final norm", n, T / a.sp, norm);
    e.final_norm_saved = norm.bytes;
    if (!a.frozen_base && !fused) e.final_norm_saved += tensorBytes(n, a.linear_in_bytes);  // LM head input

    if (fused) {
        // Liger fused linear cross-entropy (src/liger_kernel/ops/
        // fused_linear_cross_entropy.py at 00eba634): the gradient of the
        // head's input (and of its weight when it trains) is computed chunk by
        // chunk in the forward and kept until backward; logits never exist in
        // full. Measured: validation/step_truth_losses.py.
        const int64_t chunk = fusedLossChunkRows(T, V, a.h);
        e.logits_saved = tensorBytes(T * a.h, act);
        if (!a.frozen_base) e.logits_saved += tensorBytes(V * a.h, bytesOf(planPrecision(training).weights));
        e.loss_peak = e.logits_saved + tensorBytes(chunk * V, act) + 4 * T;
        e.loss_backward_peak = e.logits_saved;
        return e;
    }
    if (training.loss == LossImpl::Chunked) {
        // The compute-dtype logits are kept (or overwritten by their gradient);
        // the fp32 upcast and log-softmax exist one chunk of s/k rows at a time.
        const int64_t chunk_rows = ceilDiv(T, std::max<int64_t>(training.loss_chunks, 1));
        const int64_t chunk_fp32 = 2 * 4 * chunk_rows * V;
        e.logits_saved = tensorBytes(TV, act) + 4 * T + 8 * T;  // logits, fp32 logsumexp, labels
        e.loss_peak = e.logits_saved + chunk_fp32;
        e.loss_backward_peak = e.logits_saved + tensorBytes(TV, act) + chunk_fp32;
        return e;
    }
    if (training.loss == LossImpl::ChunkedOutput) {
        // torchtune CEWithChunkedOutputLoss (torchtune/modules/loss/
        // ce_chunked_output_loss.py at 10ff7cd2): the head runs chunk by
        // chunk, so the logits exist as k chunks in the compute dtype; each
        // is upcast and its fp32 log-softmax kept for backward (eager, not
        // compiled), the upcast freed before the next chunk; the recipe drops
        // the logits once the loss exists. Backward runs one chunk at a time.
        const int64_t k = std::max<int64_t>(training.loss_chunks, 1);
        const int64_t chunk_rows = ceilDiv(T, k);
        const int64_t upcast_chunk = a.fp32_compute ? 0 : 4 * chunk_rows * V;
        e.logits_saved = 4 * TV + 8 * T;  // every chunk's fp32 log-softmax, the shifted labels
        e.loss_peak = e.logits_saved + tensorBytes(TV, act) + upcast_chunk;
        // The first chunk's backward: its nll and log-softmax gradients beside
        // every saved log-softmax. A trained head's weight gets one gradient
        // per chunk, summed by autograd's input buffer: at the second chunk's
        // sum the running sum and the new one exist (summed in place: current
        // PyTorch's input_buffer.cpp, can_accumulate_inplace), and the
        // log-softmax outputs of two chunks have been freed.
        const int64_t chunk_log_softmax = 4 * chunk_rows * V;
        e.loss_backward_peak = e.logits_saved + 2 * chunk_log_softmax;
        if (!a.frozen_base && k > 1) {
            const int64_t head_gradient = tensorBytes(V * a.h, bytesOf(planPrecision(training).gradients));
            e.loss_backward_peak =
                std::max(e.loss_backward_peak, e.logits_saved - 2 * chunk_log_softmax + 2 * head_gradient);
        }
        return e;
    }
    if (training.loss == LossImpl::VocabParallel || (megatron && training.loss == LossImpl::Standard)) {
        // Megatron-LM's vocab-parallel cross-entropy (megatron/core/tensor_parallel/
        // cross_entropy.py; with --cross-entropy-loss-fusion the same steps in
        // megatron/core/fusions/fused_cross_entropy.py, core_v0.15.0rc7-2333):
        // .float() copies the logits to fp32 (no copy when they are fp32),
        // max, exp and the division by the sum run in place on that copy, so
        // the softmax is the one V-wide buffer kept for backward, beside the
        // bool target mask and the int64 masked targets. The 16-bit logits
        // die with the model's forward. Backward writes the gradient into the
        // softmax buffer and casts it to the logits' dtype (the fused path in
        // its own code, the unfused one in autograd's engine), both alive.
        // Under kernels=megatron, `standard` is this loss (the profile's own
        // before the loss was a key).
        const int64_t logits16 = a.fp32_compute ? 0 : tensorBytes(TV, act);  // beside their fp32 copy
        const int64_t targets = T + 8 * T;  // target_mask, masked_target_1d
        e.logits_saved = 4 * TV + targets;
        e.loss_peak = e.logits_saved + logits16;
        // Backward: the fp32 gradient written over the softmax and its cast
        // to 16 bits, both alive (the head's matmul backward after it holds
        // less: a*T*V + a*T*h, its weight gradient counted with the
        // gradients). With fp32 logits there is no cast: the softmax buffer
        // is the logits' gradient and lives through the head's matmul
        // backward, beside its input's gradient and, when the head trains,
        // its weight's (counted here even where gradients already exist:
        // high by V*h*g then).
        if (a.fp32_compute) {
            e.loss_backward_peak = 4 * TV + tensorBytes(n, act);
            if (!a.frozen_base) e.loss_backward_peak += tensorBytes(V * a.h, bytesOf(planPrecision(training).gradients));
        } else {
            e.loss_backward_peak = e.logits_saved + logits16;
        }
        return e;
    }
    // transformers ForCausalLMLoss: logits.float(), then cross_entropy, whose
    // log_softmax keeps its fp32 output and nll_loss the shifted labels
    // (labels padded by one and sliced: with b = 1 the slice is already
    // contiguous, so the padded storage of s + 1 labels is what is kept).
    e.logits_saved = 4 * TV + 8 * (T + (a.b == 1 ? 1 : 0));
    int64_t softcap = 0;
    if (familyOf(model.family).final_logit_softcap) softcap = tensorBytes(TV, act);  // tanh(logits / cap) kept by tanh
    e.logits_saved += softcap;
    const int64_t upcast = a.fp32_compute ? 0 : 4 * TV;  // .float() is a copy unless already fp32
    e.loss_peak = e.logits_saved + tensorBytes(TV, act) + upcast + softcap;
    // nll_loss backward's fp32 gradient and log_softmax backward's fp32
    // result, beside the kept log-softmax output; the compute-dtype logits
    // were dropped with the model output before backward (HF Trainer).
    e.loss_backward_peak = e.logits_saved + 8 * TV;
    return e;
}

}  // namespace

// activations_offload.cpp
void accountEndsOffload(const ActivationShape& a, const ModelConfig& model, const TrainingConfig& training,
                        EndActivations& ends);

EndActivations endActivations(const ModelConfig& model, const TrainingConfig& training,
                              const ParallelConfig& parallel) {
    EndActivations e = endsWithoutOffloading(model, training, parallel);
    if (training.activation_offloading != ActivationOffloading::None)
        accountEndsOffload(activationShape(model, training, parallel, LayerKind{}), model, training, e);
    return e;
}

}  // namespace trainmem
