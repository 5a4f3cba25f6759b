#include "core/pipeline.h"

#include <algorithm>

namespace trainmem {

double inFlightMicrobatches(PipelineSchedule schedule, int64_t p, int64_t v, int64_t m, int64_t i) {
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

void setStageInFlight(PipelineStage& s, const ParallelConfig& par, int64_t m) {
    const int64_t p = std::max<int64_t>(par.pipeline, 1);
    s.in_flight = inFlightMicrobatches(par.schedule, p, std::max<int64_t>(par.virtual_stages, 1), m, s.index);
    // The loss is computed once per micro-batch on the last stage; with 1F1B
    // its backward follows at once, with GPipe all m are kept until the flush.
    s.head_in_flight = (par.schedule == PipelineSchedule::GPipe && p > 1) ? static_cast<double>(m) : 1.0;
}

int64_t moeLayersIn(const ModelConfig& model, int64_t first, int64_t count) {
    if (!model.isMoe() || count <= 0) return 0;
    const int64_t f = model.moe->first_dense_layers;
    const int64_t k = std::max<int64_t>(model.moe->layer_frequency, 1);
    // MoE blocks among [0, x): f, f + k, f + 2k, ... below x.
    auto before = [&](int64_t x) { return x <= f ? int64_t{0} : (x - f + k - 1) / k; };
    return before(first + count) - before(first);
}

PipelineStage pipelineStage(const ModelConfig& model, const ParallelConfig& par, int64_t m, int64_t i) {
    const int64_t p = std::max<int64_t>(par.pipeline, 1);
    const int64_t L = model.num_layers;
    const int64_t base = L / p;
    const int64_t extra = L % p;  // the last `extra` stages take one more block
    PipelineStage s;
    s.index = i;
    const int64_t extra_before = std::max<int64_t>(0, i - (p - extra));
    s.first_layer = i * base + extra_before;
    s.num_layers = base + (i >= p - extra ? 1 : 0);
    s.num_moe_layers = moeLayersIn(model, s.first_layer, s.num_layers);
    const bool last = (i == p - 1);
    s.has_embedding = (i == 0) || (last && model.tied_embeddings && p > 1);
    s.has_lm_head = last;
    s.has_final_norm = last;
    setStageInFlight(s, par, m);
    return s;
}

}  // namespace trainmem
