#include "core/scenario/batch.h"

#include <cmath>

namespace trainmem {


BatchPlan planBatch(const Scenario& s) {
    BatchPlan b;
    b.effective_batch = s.training.micro_batch_size * microbatchesPerStep(s) * s.parallelism.data;
    b.tokens_per_step = b.effective_batch * s.training.sequence_length;
    b.warmup_steps = s.training.warmup_steps;
    if (s.training.base_batch_size && s.training.base_learning_rate && *s.training.base_batch_size > 0) {
        const double ratio = static_cast<double>(b.effective_batch) / static_cast<double>(*s.training.base_batch_size);
        b.lr_linear = *s.training.base_learning_rate * ratio;        // Goyal et al. 2017
        b.lr_sqrt = *s.training.base_learning_rate * std::sqrt(ratio); // square-root rule (Granziol et al.)
    }
    return b;
}

double warmupLearningRate(double lr_max, int64_t step, int64_t warmup_steps) {
    if (warmup_steps <= 0 || step >= warmup_steps) return lr_max;
    return lr_max * static_cast<double>(step) / static_cast<double>(warmup_steps);
}

}  // namespace trainmem
