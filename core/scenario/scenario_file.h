#pragma once
// The scenario document: the versioned JSON format (docs/scenario-format.md)
// that the CLI reads and the app saves and opens, its files, and
// "section.key=value" settings. Built on the scenario's fields
// (scenario_fields.h): every key is read, written and named through them.
// JSON in scenario_json.cpp, settings in scenario_setting.cpp, files in
// scenario_file.cpp.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/json_input.h"  // readJsonFile
#include "core/scenario/scenario.h"

namespace trainmem {

// JSON <-> Scenario. fromJson rejects unknown keys and wrong types with the
// key's dotted path. A {"preset": NAME} model is resolved through model_presets.h.
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

}  // namespace trainmem
