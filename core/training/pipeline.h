#pragma once
// Which blocks a pipeline rank holds and how many micro-batches of
// activations it keeps in flight under each schedule.
#include <algorithm>
#include <array>
#include <cstdint>

#include "core/model/model_config.h"
#include "core/training/parallel_config.h"

namespace trainmem {

struct PipelineStage {
    int64_t index = 0;
    int64_t first_layer = 0;
    int64_t num_layers = 0;
    int64_t num_moe_layers = 0;
    int64_t num_nope_layers = 0;      // Llama 4's NoPE blocks (ModelConfig::isRopeLayer false) ...
    int64_t num_nope_moe_layers = 0;  // ... and those of them that are MoE blocks
    // Hybrids (ModelConfig::layer_kinds): the stage's layers of each kind
    // (hybridKindIndex); all zero for other models.
    std::array<int32_t, kLayerKinds> hybrid_layers{};
    bool has_embedding = false;     // first stage (and the last one too when embeddings are tied and p > 1)
    bool has_lm_head = false;       // last stage
    bool has_final_norm = false;    // last stage
    double in_flight = 1;           // micro-batches of this stage's activations alive at once
    double head_in_flight = 1;      // micro-batches whose loss buffers the last stage keeps at once
};

// Layers are split as evenly as possible; the remainder goes to the LAST
// stages, because the first stages hold the most in-flight micro-batches.
PipelineStage pipelineStage(const ModelConfig& model, const ParallelConfig& parallel, int64_t microbatches,
                            int64_t stage);


// MoE blocks among blocks [first, first + count), counted arithmetically
// (ModelConfig::isMoeLayer: every layer_frequency-th block after the
// leading dense ones), so that a stage costs the same whatever its depth.
int64_t moeLayersIn(const ModelConfig& model, int64_t first, int64_t count);
// NoPE blocks among them (ModelConfig::isRopeLayer: every
// no_rope_layer_interval-th), and NoPE blocks that are also MoE blocks:
// both patterns repeat every lcm(interval, layer_frequency) layers after
// the leading dense ones, so the cost is bounded by that period, not the depth.
int64_t nopeLayersIn(const ModelConfig& model, int64_t first, int64_t count);
int64_t nopeMoeLayersIn(const ModelConfig& model, int64_t first, int64_t count);
// A hybrid's layers of each kind among them (one pass over the range: a
// hybrid's pattern is a list, not a rule).
std::array<int32_t, kLayerKinds> hybridLayersIn(const ModelConfig& model, int64_t first, int64_t count);

// Micro-batches of activations stage `stage` holds at its peak:
//  1F1B (PipeDream-Flush, Narayanan et al. 2021): min(p - i, m)
//  interleaved 1F1B with v chunks (Megatron-LM warm-up count + 1):
//    min(2(p - i - 1) + (v - 1)p + 1, m v) chunks of 1/v of the stage
//  GPipe (Huang et al. 2019): m
// Inline: the account sets it for every candidate stage of every layout.
inline double inFlightMicrobatches(PipelineSchedule schedule, int64_t p, int64_t v, int64_t m, int64_t i) {
    if (p <= 1) return 1;
    switch (schedule) {
        case PipelineSchedule::OneFOneB:
            return static_cast<double>(std::min(p - i, m));
        case PipelineSchedule::Interleaved1F1B: {
            const int64_t chunks = std::min(2 * (p - i - 1) + (v - 1) * p + 1, m * v);
            return static_cast<double>(chunks) / static_cast<double>(v);
        }
        case PipelineSchedule::GPipe:
            return static_cast<double>(m);
    }
    return 1;
}

// Sets in_flight and head_in_flight of a stage for the schedule and `m`
// micro-batches per step (pipelineStage does the same).
inline void setStageInFlight(PipelineStage& s, const ParallelConfig& par, int64_t m) {
    const int64_t p = std::max<int64_t>(par.pipeline, 1);
    s.in_flight = inFlightMicrobatches(par.schedule, p, std::max<int64_t>(par.virtual_stages, 1), m, s.index);
    // The loss is computed once per micro-batch on the last stage; with 1F1B
    // its backward follows at once, with GPipe all m are kept until the flush.
    s.head_in_flight = (par.schedule == PipelineSchedule::GPipe && p > 1) ? static_cast<double>(m) : 1.0;
}

}  // namespace trainmem
