#pragma once
// The memory timeline of one training step on one pipeline stage, like a
// PyTorch memory profile (seed gpu-memory-profile-walkthrough.txt): a
// constant band of weights and optimizer states, a forward ramp block by
// block, the logits and loss, the backward freeing activations while
// gradients grow (with recompute spikes under checkpointing), then the
// optimizer step with its temporaries; repeated per micro-batch and
// interleaved as the pipeline schedule runs them. Its maximum is the peak
// estimate() reports for that stage.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/base/error.h"
#include "core/account/estimate.h"
#include "core/scenario/scenario.h"

namespace trainmem {

struct TimelineSample {
    double time = 0;         // forward of one block = 1, its backward = 2 (3 when recomputed)
    Phase phase = Phase::Forward;
    int64_t microbatch = -1; // 0-based; -1 for the optimizer step
    int64_t layer = -1;      // global block index; -1 outside the blocks (loss, step)
    MemoryBreakdown bytes;   // allocated, by component
};

struct StepTimeline {
    int64_t stage = 0;
    std::vector<TimelineSample> samples;
    size_t peak_index = 0;            // the sample with the most allocated memory
    int64_t microbatches = 1;         // per step
    int64_t capacity_bytes = 0;
    int64_t peak_bytes() const { return samples.empty() ? 0 : samples[peak_index].bytes.total(); }
};

// `stage` defaults to the heaviest one.
Expected<StepTimeline> stepTimeline(const Scenario& scenario, std::optional<int64_t> stage = std::nullopt);

}  // namespace trainmem
