#pragma once
// The config.json key that holds each ModelConfig field, per family, so that
// validation errors name the key a user can see and set ("model.n_head" for
// GPT-2, "model.num_attention_heads" elsewhere). Internal to the core.
#include <string>
#include <string_view>

#include "core/model/model_config.h"

namespace trainmem {

enum class ModelField {
    HiddenSize, NumLayers, NumHeads, NumKvHeads, HeadDim, Intermediate, Vocab, MaxPositions, NormsPerBlock,
    AttentionDropout, HiddenDropout, EmbeddingDropout,
    NumExperts, ExpertsPerToken, ExpertFfn, SharedExperts, SharedExpertFfn, FirstDenseLayers, LayerFrequency,
    CapacityFactor,
    QLoraRank, KvLoraRank, QkNopeHeadDim, QkRopeHeadDim, VHeadDim,
};

// The bare key, e.g. "num_attention_heads" or "n_head".
std::string_view configKey(std::string_view family, ModelField field);
// "model." + configKey(...), the Error::field of validation errors.
std::string modelField(std::string_view family, ModelField field);

}  // namespace trainmem
