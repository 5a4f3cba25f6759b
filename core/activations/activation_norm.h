#pragma once
// What a norm keeps for backward, for each KernelProfile but compile (whose
// rule is the block table's, core/activations/activation_block.h): shared by the block
// table and the model's ends (the final norm, core/activations/activation_ends.cpp).
// Sources: docs/memory-model.md. Internal to the core.
#include <cstdint>
#include <string_view>

#include "core/activations/activation_shape.h"

namespace trainmem {

// A norm over n elements in `rows` rows. Its output is kept by the layers
// that read it, which list it as their input. `on_stream`: the input is the
// residual stream (fp32 under AMP), not a matmul output (q/k norms, MLA's
// latent norms). `fp32_storage`: in fp32, the input is a view of a larger
// tensor whose whole storage stays alive.
template <class Emit>
void normTensors(const ActivationShape& a, std::string_view op, int64_t n, int64_t rows, Emit&& emit,
                 bool on_stream = true, int64_t fp32_storage = 0) {
    const double input_bytes = on_stream ? a.stream_bytes : a.act_bytes;
    if (a.profile == KernelProfile::Megatron) {
        // Korthikanti et al. 2022 §4.1: 2sbh per LayerNorm input, statistics neglected.
        emit(op, "input", n, input_bytes);
        return;
    }
    if (a.profile == KernelProfile::Fused || a.norm == NormKind::LayerNorm) {
        // Fused kernels (Liger LigerRMSNormFunction, Apex, TE) and aten's
        // native_layer_norm keep the input and fp32 statistics, whether or
        // not the weight trains.
        const bool ln = a.norm == NormKind::LayerNorm;
        emit(op, "input", n, input_bytes);
        emit(op, ln ? "mean and rstd (fp32)" : "rstd (fp32)", ln ? 2 * rows : rows, 4.0);
        return;
    }
    // LlamaRMSNorm / GemmaRMSNorm: x.to(float32); pow(2) keeps the fp32 input;
    // rsqrt keeps its fp32 result; x * rstd needs both; the weight product
    // keeps the normalised tensor for the weight's gradient (Llama: cast back
    // to the input's dtype first; Gemma: still fp32). Under AMP the input is
    // the fp32 residual stream, so nothing is upcast.
    if (input_bytes == 4.0)
        emit(op, "input", fp32_storage > 0 ? fp32_storage : n, 4.0);
    else
        emit(op, "input upcast to fp32", n, 4.0);
    emit(op, "rstd (fp32)", rows, 4.0);
    if (!a.frozen_base) emit(op, "normalised input (weight gradient)", n, a.norm_weight_fp32 ? 4.0 : input_bytes);
}

}  // namespace trainmem
