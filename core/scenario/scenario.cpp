// Scenario files and the small whole-scenario helpers. The JSON mapping is in
// scenario_json.cpp, --set in scenario_setting.cpp, checks in
// scenario_validate.cpp.
#include "core/scenario/scenario.h"

#include "core/base/file_output.h"
#include "core/scenario/scenario_fields.h"

namespace trainmem {

namespace fs = std::filesystem;

Expected<int64_t> capacityBytes(const HardwareConfig& hardware) {
    if (hardware.memory_bytes) {
        if (*hardware.memory_bytes <= 0) return Error{"hardware.memory_gib", "must be a positive number of GiB"};
        return *hardware.memory_bytes;
    }
    if (hardware.gpu == "custom") return Error{"hardware.memory_gib", "a custom GPU needs its memory size in GiB"};
    if (const GpuSpec* gpu = findGpu(hardware.gpu)) return gpu->memory_bytes;
    return Error{"hardware.gpu", "unknown GPU \"" + hardware.gpu + "\"; see the GPU list in trainmem-cli estimate --help"};
}

Scenario scenarioForModel(const ModelConfig& model, std::string preset_name) {
    Scenario s;
    s.name = preset_name.empty() ? model.name : preset_name;
    s.model = model;
    s.model_preset = std::move(preset_name);
    return s;
}

Expected<Scenario> loadScenarioFile(const fs::path& path) {
    auto doc = readJsonFile(path);
    if (!doc) return doc.error();
    auto scenario = scenarioFromJson(*doc);
    if (!scenario) {
        Error e = scenario.error();
        e.message += " (in " + path.string() + ")";
        return e;
    }
    return scenario;
}

Status saveScenarioFile(const Scenario& scenario, const fs::path& requested, const nlohmann::json& pins) {
    const std::string name = requested.string();
    std::string text;
    try {
        nlohmann::ordered_json doc = scenarioToOrderedJson(scenario);
        if (!pins.is_null()) doc["pins"] = pins;
        text = doc.dump(2) + "\n";
    } catch (const std::exception& e) {
        return Error{"", name + ": cannot be written (" + e.what() + ")"};
    }
    return writeFileAtomically(requested, text);
}

}  // namespace trainmem
