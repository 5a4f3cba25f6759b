#pragma once
// Batch helper from the seed lecture notes: effective batch and learning rates
// under the linear (Goyal et al. 2017) and square-root scaling rules.
#include <algorithm>
#include <cstdint>
#include <optional>

#include "core/scenario/scenario.h"

namespace trainmem {

struct BatchPlan {
    int64_t effective_batch = 0;         // micro x accumulation (or pipeline micro-batches) x data
    int64_t tokens_per_step = 0;         // effective_batch x sequence_length
    std::optional<double> lr_linear;     // base_lr * B / B0
    std::optional<double> lr_sqrt;       // base_lr * sqrt(B / B0)
    int64_t warmup_steps = 0;
};

BatchPlan planBatch(const Scenario& scenario);
// Gradual warmup: lr_t = lr_max * t / T_w for t < T_w, then lr_max.
double warmupLearningRate(double lr_max, int64_t step, int64_t warmup_steps);
// Micro-batches per optimizer step (pipeline micro-batches when PP > 1).
// Inline: the account asks once per layout.
inline int64_t microbatchesPerStep(const Scenario& s) {
    // Megatron-LM: a pipeline step runs num_microbatches = global / (micro x
    // data); without a pipeline the same role is played by accumulation.
    if (s.parallelism.pipeline > 1 && s.parallelism.microbatches > 0) return s.parallelism.microbatches;
    return std::max<int64_t>(1, s.training.gradient_accumulation_steps);
}

}  // namespace trainmem
