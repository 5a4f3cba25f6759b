#include "core/optimizer_state.h"

#include <algorithm>

namespace trainmem {
namespace {

// bitsandbytes 8-bit optimizers: one byte per state element plus one fp32
// absmax per block of 256 (blockwise quantization, Dettmers et al. 2022);
// tensors under min_8bit_size = 4096 elements keep fp32 states, which in a
// transformer means the norms and biases (our vector parameters).
constexpr double k8bitBytesPerState = 1.0 + 4.0 / 256.0;

double perElement(double states, DType dtype, int64_t n) { return states * bytesOf(dtype) * static_cast<double>(n); }

}  // namespace

double optimizerStateBytes(OptimizerKind kind, DType dt, const TensorGroup& g, bool embedding_or_head) {
    const int64_t vectors = g.params - g.matrix_params;
    switch (kind) {
        case OptimizerKind::Sgd: return 0;
        case OptimizerKind::SgdMomentum:   // momentum_buffer
        case OptimizerKind::Adagrad:       // state_sum
        case OptimizerKind::Rmsprop:       // square_avg (no momentum, not centered: PyTorch defaults)
        case OptimizerKind::Lion:          // exp_avg (Chen et al. 2023)
            return perElement(1, dt, g.params);
        case OptimizerKind::Adam:
        case OptimizerKind::AdamW:         // exp_avg, exp_avg_sq
            return perElement(2, dt, g.params);
        case OptimizerKind::AdamW8bit:
            return 2.0 * k8bitBytesPerState * static_cast<double>(g.matrix_params) + perElement(2, DType::Fp32, vectors);
        case OptimizerKind::Muon:
            // Muon (Jordan et al. 2024; Moonlight): one momentum buffer for 2-D
            // hidden matrices; embeddings, head, norms and biases use AdamW.
            if (embedding_or_head) return perElement(2, dt, g.params);
            return perElement(1, dt, g.matrix_params) + perElement(2, dt, vectors);
        case OptimizerKind::Adafactor:
            // Shazeer & Stern 2018 / HF Adafactor with beta1=None: a row and a
            // column accumulator per matrix, a full second moment for vectors.
            return perElement(1, dt, g.factored_elems) + perElement(1, dt, vectors);
    }
    return 0;
}

double optimizerBuffersPerParam(OptimizerKind kind) {
    switch (kind) {
        case OptimizerKind::Sgd: return 0;
        case OptimizerKind::Adam:
        case OptimizerKind::AdamW:
        case OptimizerKind::AdamW8bit: return 2;
        case OptimizerKind::Adafactor: return 0;  // factored: rows + cols, ~0 per parameter
        default: return 1;
    }
}

const char* optimizerBufferNames(OptimizerKind kind) {
    switch (kind) {
        case OptimizerKind::Sgd: return "";
        case OptimizerKind::SgdMomentum: return "momentum";
        case OptimizerKind::Adagrad: return "G";
        case OptimizerKind::Rmsprop: return "s";
        case OptimizerKind::Adam:
        case OptimizerKind::AdamW: return "m,v";
        case OptimizerKind::AdamW8bit: return "m8,v8";
        case OptimizerKind::Lion: return "m";
        case OptimizerKind::Muon: return "momentum";
        case OptimizerKind::Adafactor: return "row,col";
    }
    return "";
}

double optimizerStepTransientBytes(OptimizerKind kind, OptimizerImpl impl, DType dt, int64_t params,
                                   int64_t largest) {
    // Fused kernels update in registers: nothing shard-sized is allocated.
    if (impl == OptimizerImpl::Fused || kind == OptimizerKind::AdamW8bit) return 0;
    // The unit of allocation: the whole shard with foreach (torch._foreach_*
    // ops return new tensor lists for every parameter at once), one tensor
    // with the per-tensor loop.
    const double unit = bytesOf(dt) * static_cast<double>(impl == OptimizerImpl::ForEach ? params : largest);
    switch (kind) {
        case OptimizerKind::Sgd:
        case OptimizerKind::SgdMomentum:
            return 0;  // weight_decay = 0 default: momentum updates in place
        case OptimizerKind::Adam:
        case OptimizerKind::AdamW:      // _multi_tensor_adam: exp_avg_sq_sqrt = _foreach_sqrt(exp_avg_sqs)
        case OptimizerKind::Adagrad:    // std = _foreach_sqrt(state_sums)
        case OptimizerKind::Rmsprop:    // avg = _foreach_sqrt(square_avgs)
        case OptimizerKind::Lion:       // update = sign(lerp(m, g)): one temporary
            return unit;
        case OptimizerKind::Muon:
            // Newton-Schulz on the largest matrix: X, X·Xᵀ, and the polynomial
            // terms, in bf16 (Keller Jordan's reference implementation).
            return 4.0 * 2.0 * static_cast<double>(largest);
        case OptimizerKind::Adafactor:
            // HF Adafactor loops per tensor: grad**2 + eps, and the update.
            return 2.0 * 4.0 * static_cast<double>(largest);
        default:
            return 0;
    }
}

}  // namespace trainmem
