#include "ui/scenario_files.h"

#include <QDir>
#include <QFileInfo>

#include "core/base/json_input.h"
#include "core/account/estimate.h"
#include "core/model/hf_config.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario_file.h"

namespace trainmem::ui {

JsonFileKind classifyJson(const nlohmann::json& json) {
    if (!json.is_object()) return JsonFileKind::ModelConfig;
    const auto format = json.find("format");
    if (format != json.end() && format->is_string() && format->get<std::string>() == "trainmem-scenario")
        return JsonFileKind::Scenario;
    return json.contains("training") ? JsonFileKind::Scenario : JsonFileKind::ModelConfig;
}

Expected<OpenedFile> openJsonFile(const QString& path, const Scenario& current, int max_pins) {
    const std::filesystem::path file = path.toStdString();
    Expected<nlohmann::json> json = readJsonFile(file);
    if (!json) return json.error();
    if (classifyJson(*json) == JsonFileKind::Scenario) {
        Expected<Scenario> s = scenarioFromJson(*json);
        if (!s) return Error{s.error().field, path.toStdString() + ": " + s.error().message};
        return OpenedFile{std::move(s).value(), JsonFileKind::Scenario, pinsFromJson(*json, max_pins)};
    }
    Expected<ImportedModel> imported = importHuggingFaceConfig(*json);
    if (!imported) return Error{imported.error().field, path.toStdString() + ": " + imported.error().message};
    Scenario next = current;
    next.model = imported->model;
    if (next.model.name.empty()) {
        // config.json says nothing about its name; its folder usually does.
        const QFileInfo info(path);
        next.model.name = (info.completeBaseName() == "config" ? info.dir().dirName() : info.completeBaseName()).toStdString();
    }
    next.model_preset.clear();
    next.warnings = imported->warnings;
    return OpenedFile{std::move(next), JsonFileKind::ModelConfig, {}};
}

Expected<Scenario> defaultScenario() {
    // A first start should show a current model that fits its GPU: Llama
    // 3.1 8B fully fine-tuned with FSDP on one 8 x H100 node (the first
    // preset by name was a 2019 GPT-2 on V100s); else the first scenario
    // preset (by name) that fits its GPU, else the first that loads.
    if (Expected<Scenario> s = loadPreset(std::string(kFirstLaunchPreset)); s)
        if (Expected<Estimate> e = estimate(*s); e && e->fits) return s;
    std::optional<Scenario> first_loaded;
    for (const PresetInfo& p : listPresets())
        if (p.kind == PresetKind::Scenario) {
            Expected<Scenario> s = loadPreset(p.name);
            if (!s) continue;
            if (Expected<Estimate> e = estimate(*s); e && e->fits) return s;
            if (!first_loaded) first_loaded = *s;
        }
    if (first_loaded) return *first_loaded;
    return loadPreset("llama-3.1-8b");
}

}  // namespace trainmem::ui
