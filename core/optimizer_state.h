#pragma once
// What each optimizer keeps per parameter, and what optimizer.step()
// allocates while it runs. Sources in docs/memory-model.md §Optimizers.
#include <cstdint>

#include "core/dtype.h"
#include "core/parameters.h"
#include "core/training_config.h"

namespace trainmem {

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
