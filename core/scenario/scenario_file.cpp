// Scenario files: read through the bounded JSON reader, written atomically.
// The JSON mapping is in scenario_json.cpp, --set in scenario_setting.cpp.
#include "core/scenario/scenario_file.h"

#include "core/base/file_output.h"
#include "core/scenario/scenario_fields.h"
#include "core/base/json_input.h"

namespace trainmem {

namespace fs = std::filesystem;

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
