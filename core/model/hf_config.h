#pragma once
// Hugging Face config.json <-> ModelConfig, per model_type, with each family's
// defaults for keys its config files leave out (the defaults of the
// transformers configuration classes).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/model/model_config.h"

namespace trainmem {

struct ImportedModel {
    ModelConfig model;
    std::vector<std::string> warnings;  // e.g. unknown model_type read with generic keys
};

// Errors name the config key ("model.num_attention_heads: ...").
Expected<ImportedModel> importHuggingFaceConfig(const nlohmann::json& config);
// A config.json that importHuggingFaceConfig reads back to the same ModelConfig.
nlohmann::json exportHuggingFaceConfig(const ModelConfig& model);
// The model as the block code reads it (sizes, family traits, which layers
// have experts), for `estimate --format json` and validation/.
nlohmann::json describeModel(const ModelConfig& model);
// model_types with known family defaults.
const std::vector<std::string>& supportedModelTypes();
// The hidden_act values the activation account models (aliases included),
// in catalogue order: what a front end may offer.
const std::vector<std::string>& supportedActivations();

}  // namespace trainmem
