#pragma once
// A scenario: model + training + parallelism + hardware. The JSON scenario
// format (versioned) is what the CLI reads and the GUI saves and opens.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/training/hardware.h"
#include "core/base/json_input.h"  // readJsonFile
#include "core/model/model_config.h"
#include "core/training/parallel_config.h"
#include "core/training/training_config.h"

namespace trainmem {

constexpr int kScenarioFormatVersion = 2;  // 2: training.loss apart from training.kernels

struct Scenario {
    std::string name;
    std::string description;
    std::string model_preset;  // preset the model came from; empty when from a config.json
    ModelConfig model;
    TrainingConfig training;
    ParallelConfig parallelism;
    HardwareConfig hardware;
    std::vector<std::string> warnings;  // from import (unknown model_type, ...), not an error

    bool operator==(const Scenario&) const = default;
};

// Whole-scenario checks: every field and every combination (degrees dividing
// heads, KV heads, layers and experts, GPU count, ...). Errors name the field.
Status validate(const Scenario& scenario);

// Capacity of the chosen GPU (catalogue or custom memory).
Expected<int64_t> capacityBytes(const HardwareConfig& hardware);

// JSON <-> Scenario. fromJson rejects unknown keys and wrong types with the
// key's dotted path. A {"preset": NAME} model is resolved through presets.h.
Expected<Scenario> scenarioFromJson(const nlohmann::json& json);
nlohmann::json scenarioToJson(const Scenario& scenario);

Expected<Scenario> loadScenarioFile(const std::filesystem::path& path);
// Written to a temporary file in the same folder, then renamed over the
// target, so a crash never leaves a half-written scenario.
// `pins`, when not null, is written as the top-level "pins" key (the desktop
// app's pinned comparisons, docs/scenario-format.md).
Status saveScenarioFile(const Scenario& scenario, const std::filesystem::path& path,
                        const nlohmann::json& pins = nullptr);

// "training.micro_batch_size=4", "model.num_hidden_layers=40" (model keys are
// HF config keys). Parses the value by the key's type; errors name the key.
Status applySetting(Scenario& scenario, std::string_view key_equals_value);
Status applySetting(Scenario& scenario, std::string_view key, std::string_view value);
// Several "section.key=value" settings, all or nothing. The model.* keys are
// applied together as one config.json edit (their order does not matter:
// n_embd=128 before n_head=4 is as good as after), then the others in order.
Status applySettings(Scenario& scenario, const std::vector<std::string>& settings);
// Every key applySetting accepts, "section.key", for help texts and completion.
const std::vector<std::string>& settingKeys();

// A default scenario around a model: the defaults of TrainingConfig etc.
Scenario scenarioForModel(const ModelConfig& model, std::string preset_name = {});

}  // namespace trainmem
