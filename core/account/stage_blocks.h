#pragma once
// The kinds of block a pipeline stage holds, with their parameters: dense
// and MoE blocks, or a hybrid's layer kinds (issue 23). One walk for every
// per-stage sum over blocks (stage_parameters.cpp, qlora_backend.cpp, the
// step time).
#include <cstdint>

#include "core/model/parameters.h"
#include "core/training/pipeline.h"

namespace trainmem {

// Calls f(block, lora_params, count) for each kind of block the stage holds
// (count > 0): ParameterLayout::hybrid_layer by PipelineStage::hybrid_layers
// for a hybrid, else its dense and MoE blocks. `lora_params` are one block's
// adapters (LoraParameters).
template <class F>
void forEachStageBlockKind(const ParameterLayout& lay, const LoraParameters& lora, const PipelineStage& st, F&& f) {
    if (lay.hybrid) {
        for (size_t i = 0; i < kLayerKinds; ++i)
            if (st.hybrid_layers[i] > 0) f(lay.hybrid_layer[i], lora.hybrid_layer[i], int64_t{st.hybrid_layers[i]});
        return;
    }
    if (st.num_layers > st.num_moe_layers) f(lay.dense_layer, lora.dense_layer, st.num_layers - st.num_moe_layers);
    if (st.num_moe_layers > 0) f(lay.moe_layer, lora.moe_layer, st.num_moe_layers);
}

}  // namespace trainmem
