// Preset files: presets/models/NAME.json (Hugging Face config.json files) and
// presets/scenarios/NAME.json (scenario files).
#include "core/scenario/presets.h"

#include <system_error>

#include "core/base/json_input.h"
#include "core/base/units.h"
#include "core/model/hf_config.h"
#include "core/model/parameters.h"
#include "core/scenario/scenario_file.h"

namespace trainmem {

namespace {

namespace fs = std::filesystem;

std::string modelDescription(const fs::path& file) {
    auto config = readJsonFile(file);
    if (!config) return "unreadable: " + config.error().text();
    auto imported = importHuggingFaceConfig(*config);
    if (!imported) return "invalid: " + imported.error().text();
    const ModelConfig& m = imported->model;
    const std::string name = m.name.empty() ? file.stem().string() : m.name;
    return name + ", " + formatCount(countParameters(m).total) + " parameters";
}

std::string scenarioDescription(const fs::path& file) {
    auto doc = readJsonFile(file);
    if (!doc) return "unreadable: " + doc.error().text();
    if (doc->is_object())
        if (auto it = doc->find("description"); it != doc->end() && it->is_string()) return it->get<std::string>();
    return "";
}

}  // namespace

std::vector<PresetInfo> listPresets() {
    std::vector<PresetInfo> presets;
    const fs::path root = presetsDirectory();
    for (const auto& file : presetFiles(root / "models"))
        presets.push_back({file.stem().string(), PresetKind::Model, modelDescription(file), file});
    for (const auto& file : presetFiles(root / "scenarios"))
        presets.push_back({file.stem().string(), PresetKind::Scenario, scenarioDescription(file), file});
    return presets;
}

Expected<Scenario> loadPreset(const std::string& name) {
    const fs::path root = presetsDirectory();
    if (!isPresetName(name)) return Error{"preset", unknownPresetMessage("preset", name)};
    std::error_code ec;
    const fs::path scenario_file = root / "scenarios" / (name + ".json");
    const bool is_scenario = fs::exists(scenario_file, ec);
    const bool is_model = fs::exists(root / "models" / (name + ".json"), ec);
    if (is_scenario && is_model)
        return Error{"preset", "\"" + name + "\" names both a model and a scenario preset; rename one of them"};
    if (is_scenario) return loadScenarioFile(scenario_file);
    if (!is_model) return Error{"preset", unknownPresetMessage("preset", name)};
    auto model = loadModelPreset(name);
    if (!model) return model.error();
    return scenarioForModel(*model, name);
}

}  // namespace trainmem
