#include "core/scenario/scenario_source.h"

#include "core/model/hf_config.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario_file.h"
#include "core/scenario/scenario_link.h"
#include "core/base/json_input.h"

namespace trainmem {

Status ScenarioSource::set(std::string_view flag, std::string v) {
    // The CLI and the app both record their source flags here, so this check
    // and its words exist once. The field is the flag that came second.
    if (kind != Kind::None) return Error{std::string(flag), "give only one of --preset, --model-config and --scenario"};
    if (flag == "--preset")
        kind = Kind::Preset;
    else if (flag == "--model-config")
        kind = Kind::ModelConfig;
    else if (flag == "--scenario")
        kind = Kind::ScenarioFile;
    else
        return Error{std::string(flag), "not a scenario source: use --preset, --model-config or --scenario"};
    value = std::move(v);
    return ok();
}

namespace {

// A config.json: its model with the default training setup around it, and
// the importer's warnings.
Expected<Scenario> scenarioForConfigFile(const std::string& file) {
    auto config = readJsonFile(file);
    if (!config) return config.error();
    if (config->is_object() && config->value("format", "") == "trainmem-scenario")
        return Error{"", file + " is a trainmem scenario file, not a config.json: open it with --scenario"};
    auto imported = importHuggingFaceConfig(*config);
    if (!imported) {
        Error e = imported.error();
        e.message += " (in " + file + ")";
        return e;
    }
    Scenario s = scenarioForModel(imported->model);
    s.warnings = imported->warnings;
    return s;
}

}  // namespace

Expected<Scenario> scenarioFromSource(const ScenarioSource& source, const Scenario* fallback) {
    Expected<Scenario> scenario = Error{};
    switch (source.kind) {
        case ScenarioSource::Kind::None:
            if (!fallback) return Error{"", "no scenario: give --preset NAME, --model-config FILE or --scenario FILE"};
            scenario = *fallback;
            break;
        case ScenarioSource::Kind::Preset: scenario = loadPreset(source.value); break;
        case ScenarioSource::Kind::ModelConfig: scenario = scenarioForConfigFile(source.value); break;
        case ScenarioSource::Kind::ScenarioFile:
            // A trainmem: link (Edit > Copy as Link) holds the file's JSON.
            if (isScenarioLink(source.value)) {
                Expected<nlohmann::json> document = readScenarioLink(source.value);
                if (!document) return document.error();
                scenario = scenarioFromJson(*document);
                if (!scenario) {
                    Error e = scenario.error();
                    e.message += " (in the trainmem: link)";
                    return e;
                }
            } else {
                scenario = loadScenarioFile(source.value);
            }
            break;
    }
    if (!scenario) return scenario;
    if (Status applied = applySettings(*scenario, source.settings); !applied) return applied.error();
    return scenario;
}

}  // namespace trainmem
