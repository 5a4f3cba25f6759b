#include "core/training/pipeline.h"

#include <algorithm>
#include <numeric>

namespace trainmem {

std::array<int32_t, kLayerKinds> hybridLayersIn(const ModelConfig& model, int64_t first, int64_t count) {
    std::array<int32_t, kLayerKinds> n{};
    const int64_t end = std::min<int64_t>(first + count, static_cast<int64_t>(model.layer_kinds.size()));
    for (int64_t i = std::max<int64_t>(first, 0); i < end; ++i) ++n[hybridKindIndex(model.layer_kinds[static_cast<size_t>(i)])];
    return n;
}

int64_t moeLayersIn(const ModelConfig& model, int64_t first, int64_t count) {
    if (!model.isMoe() || count <= 0) return 0;
    if (model.isHybrid()) {
        const auto n = hybridLayersIn(model, first, count);
        int64_t moe = 0;
        for (size_t k = 0; k < kLayerKinds; ++k)
            if (hybridKindAt(k).ffn == FfnKind::Moe) moe += n[k];
        return moe;
    }
    const int64_t f = model.moe->first_dense_layers;
    const int64_t k = std::max<int64_t>(model.moe->layer_frequency, 1);
    // MoE blocks among [0, x): f, f + k, f + 2k, ... below x.
    auto before = [&](int64_t x) { return x <= f ? int64_t{0} : (x - f + k - 1) / k; };
    return before(first + count) - before(first);
}

int64_t nopeLayersIn(const ModelConfig& model, int64_t first, int64_t count) {
    const int64_t k = model.no_rope_layer_interval;
    if (k <= 0 || count <= 0) return 0;
    // Layer i is NoPE when (i + 1) % k == 0: the multiples of k in [first + 1, first + count].
    return (first + count) / k - first / k;
}

int64_t nopeMoeLayersIn(const ModelConfig& model, int64_t first, int64_t count) {
    if (!model.isMoe() || model.no_rope_layer_interval <= 0 || count <= 0) return 0;
    const int64_t f = model.moe->first_dense_layers;
    int64_t lo = std::max(first, f);
    const int64_t hi = first + count;
    if (lo >= hi) return 0;
    auto both = [&](int64_t a, int64_t b) {
        int64_t n = 0;
        for (int64_t i = a; i < b; ++i) n += (model.isMoeLayer(i) && !model.isRopeLayer(i)) ? 1 : 0;
        return n;
    };
    // From f on, both patterns repeat every lcm(k, frequency) layers.
    const int64_t period = std::lcm(model.no_rope_layer_interval, std::max<int64_t>(model.moe->layer_frequency, 1));
    if (hi - lo <= 2 * period) return both(lo, hi);
    const int64_t periods = (hi - lo) / period;
    const int64_t per_period = both(lo, lo + period);
    lo += periods * period;
    return periods * per_period + both(lo, hi);
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
    s.num_nope_layers = nopeLayersIn(model, s.first_layer, s.num_layers);
    s.num_nope_moe_layers = nopeMoeLayersIn(model, s.first_layer, s.num_layers);
    if (model.isHybrid()) s.hybrid_layers = hybridLayersIn(model, s.first_layer, s.num_layers);
    const bool last = (i == p - 1);
    s.has_embedding = (i == 0) || (last && model.tied_embeddings && p > 1);
    s.has_lm_head = last;
    s.has_final_norm = last;
    setStageInFlight(s, par, m);
    return s;
}

}  // namespace trainmem
