#pragma once
// Hugging Face config.json <-> ModelConfig, per model_type, with each family's
// defaults for keys its config files leave out (the defaults of the
// transformers configuration classes).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/model/hf_families.h"
#include "core/model/model_config.h"

namespace trainmem {

struct ImportedModel {
    ModelConfig model;
    std::vector<std::string> warnings;  // e.g. unknown model_type read with generic keys
};

// Errors name the config key ("model.num_attention_heads: ...").
Expected<ImportedModel> importHuggingFaceConfig(const nlohmann::json& config);
// A config.json that importHuggingFaceConfig reads back to the same ModelConfig
// (defined in hf_config_export.cpp).
nlohmann::json exportHuggingFaceConfig(const ModelConfig& model);
// The model as the block code reads it (sizes, family traits, which layers
// have experts), for `estimate --format json` and validation/ (defined in
// model_description.cpp).
nlohmann::json describeModel(const ModelConfig& model);
// supportedModelTypes() and supportedActivations(), what a front end may
// offer, are the catalogue's: core/model/hf_families.h.

}  // namespace trainmem
