#pragma once
// The optimizer catalogue: one OptimizerSpec row per OptimizerKind, holding
// everything that differs between optimizers (scenario key, label, colour,
// state buffers, step temporaries, which implementations exist, source), and
// the functions the estimator, the report and the ui read it through. Adding
// an optimizer is the enumerator plus a row (docs/extending.md). Sources in
// docs/memory-model.md §Optimizers.
#include <cstdint>
#include <span>
#include <string_view>

#include "core/base/dtype.h"
#include "core/model/parameters.h"
#include "core/training/training_config.h"

namespace trainmem {

// How the state buffers cover a group of trainable tensors.
enum class StateLayout {
    PerParameter,    // `buffers` full-size buffers for every parameter, in the state dtype
    Blockwise8bit,   // bitsandbytes: 1 byte per state element + an fp32 absmax per 256; vectors keep fp32
    MuonHidden,      // one buffer for hidden matrices; embeddings, head and vectors use AdamW (2)
    Factored,        // Adafactor: a row and a column accumulator per matrix, a full one per vector
};

// What optimizer.step() allocates while it runs (non-fused implementations).
enum class StepTemporary {
    None,             // updates in place
    OneUnit,          // one temporary of the allocation unit (a _foreach_* result, or one tensor)
    NewtonSchulz,     // X, X·Xᵀ and the polynomial terms of the largest matrix in bf16
    PerTensorFp32x2,  // grad**2 + eps and the update, per tensor, in fp32
};

struct OptimizerSpec {
    OptimizerKind kind;
    std::string_view key;      // scenario / CLI name ("adamw")
    std::string_view label;    // for people ("AdamW")
    uint32_t colour;           // 0xRRGGBB of its bars
    double buffers;            // state buffers per parameter for the comparison chart (Adafactor: ~0)
    std::string_view buffer_names;  // "m,v"
    StateLayout layout;
    StepTemporary step;
    bool has_foreach;          // implementations that exist (PyTorch 2.x, or the library that provides it)
    bool has_fused;
    bool has_for_loop;
    bool has_paged;            // bitsandbytes has a Paged* form (training.optimizer_paged; core/account/paged_states.h)
    std::string_view report_phrase;  // the report's description of its states; empty = "N× params (names), dtype"
    std::string_view source;
};

const OptimizerSpec& optimizerSpec(OptimizerKind kind);
std::span<const OptimizerSpec> optimizerCatalogue();
// Whether `impl` exists for `kind`.
bool optimizerHasImpl(OptimizerKind kind, OptimizerImpl impl);
// The implementation a side-by-side comparison runs `kind` with: `preferred`
// (the scenario's) where it exists for `kind`, else PyTorch's default for it,
// foreach where it exists, else the for-loop. Comparing optimizers asks what
// each one costs under the scenario, not whether the scenario's kernel exists
// for it (Lion has no fused kernel: a fused AdamW scenario compares with
// foreach Lion). The chart says which kernel each column ran.
OptimizerImpl comparisonImpl(OptimizerKind kind, OptimizerImpl preferred);

// Optimizer-state bytes for a group of trainable tensors.
// `embedding_or_head` marks groups Muon leaves to its AdamW fallback even
// though they are matrices (token embedding, LM head).
double optimizerStateBytes(OptimizerKind kind, DType state_dtype, const TensorGroup& group,
                           bool embedding_or_head);

// Buffers per parameter in units of "x params" for the comparison chart
// (Adam: 2, SGD+momentum: 1, ...), ignoring shapes.
double optimizerBuffersPerParam(OptimizerKind kind);
// Short names of those buffers ("m", "v"), for labels inside the bars.
const char* optimizerBufferNames(OptimizerKind kind);

// Temporaries alive during optimizer.step(), for a rank whose trainable
// shard holds `params` elements, the largest single tensor being `largest`.
double optimizerStepTransientBytes(OptimizerKind kind, OptimizerImpl impl, DType state_dtype,
                                   int64_t params, int64_t largest);

}  // namespace trainmem
