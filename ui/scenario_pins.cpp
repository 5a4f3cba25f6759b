#include "ui/scenario_pins.h"

#include <algorithm>

#include "core/base/json_input.h"
#include "core/account/estimate.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_fields.h"  // describeValue
#include "core/scenario/scenario_file.h"

namespace trainmem::ui {

nlohmann::json pinsToJson(const std::vector<PinnedScenario>& pins) {
    nlohmann::json out = nlohmann::json::array();
    for (const PinnedScenario& p : pins)
        out.push_back({{"name", p.label.toStdString()}, {"scenario", scenarioToJson(p.scenario)}});
    return out;
}

LoadedPins pinsFromJson(const nlohmann::json& document, int max_pins) {
    LoadedPins out;
    const auto found = document.find("pins");
    if (found == document.end() || found->is_null()) return out;
    out.present = true;
    auto fail = [&](const std::string& field, const std::string& message) {
        out.errors << QString::fromStdString(field + ": " + message);
    };
    if (!found->is_array()) {
        fail("pins", "expected a list of {\"name\": …, \"scenario\": {…}} (got " + describeValue(*found) + ")");
        return out;
    }
    for (size_t i = 0; i < found->size(); ++i) {
        const nlohmann::json& entry = (*found)[i];
        const std::string at = "pins[" + std::to_string(i) + "]";
        if (static_cast<int>(out.pins.size()) >= max_pins) {
            fail(at, "at most " + std::to_string(max_pins) + " pins; this one and the rest are left out");
            break;
        }
        if (!entry.is_object()) {
            fail(at, "expected {\"name\": …, \"scenario\": {…}} (got " + describeValue(entry) + ")");
            continue;
        }
        bool known_keys = true;
        for (const auto& [key, value] : entry.items())
            if (key != "name" && key != "scenario") {
                fail(at + "." + key, "unknown key; allowed keys: name, scenario");
                known_keys = false;
            }
        if (!known_keys) continue;
        const auto name = entry.find("name");
        if (name == entry.end() || !name->is_string() || QString::fromStdString(name->get<std::string>()).simplified().isEmpty()) {
            fail(at + ".name", "expected a non-empty string (got " + (name == entry.end() ? std::string("nothing") : describeValue(*name)) + ")");
            continue;
        }
        const QString label = QString::fromStdString(name->get<std::string>()).simplified();
        if (std::any_of(out.pins.begin(), out.pins.end(), [&](const PinnedScenario& p) { return p.label == label; })) {
            fail(at + ".name", "\"" + label.toStdString() + "\" names an earlier pin too; pin names are unique");
            continue;
        }
        const auto scenario_json = entry.find("scenario");
        if (scenario_json == entry.end()) {
            fail(at + ".scenario", "missing; give a scenario document");
            continue;
        }
        Expected<Scenario> scenario = scenarioFromJson(*scenario_json);
        if (!scenario) {
            fail(at + ".scenario" + (scenario.error().field.empty() ? "" : "." + scenario.error().field), scenario.error().message);
            continue;
        }
        Expected<Estimate> estimated = estimate(*scenario);
        if (!estimated) {
            fail(at + ".scenario" + (estimated.error().field.empty() ? "" : "." + estimated.error().field),
                 estimated.error().message);
            continue;
        }
        out.pins.push_back({label, std::move(scenario).value(), std::move(estimated).value()});
    }
    return out;
}

}  // namespace trainmem::ui
