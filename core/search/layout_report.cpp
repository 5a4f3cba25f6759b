// What the solver says about a layout: the settings that reproduce it and,
// for one that does not fit, why. These allocate, so they run only on the
// few layouts a search keeps.
#include <cctype>

#include "core/search/layout_search.h"
#include "core/base/units.h"
#include "core/scenario/scenario_fields.h"

namespace trainmem {

namespace {

// Every key applyLayout() writes, in the order a reader scans a layout.
constexpr std::pair<std::string_view, std::string_view> kLayoutKeys[] = {
    {"parallelism", "gpus"},
    {"parallelism", "data"},
    {"parallelism", "tensor"},
    {"parallelism", "pipeline"},
    {"parallelism", "context"},
    {"parallelism", "expert"},
    {"parallelism", "zero_stage"},
    {"parallelism", "shard_group"},
    {"parallelism", "sequence_parallel"},
    {"parallelism", "pipeline_schedule"},
    {"parallelism", "virtual_stages"},
    {"parallelism", "microbatches"},
    {"training", "micro_batch_size"},
    {"training", "gradient_accumulation_steps"},
    {"training", "activation_checkpointing"},
};

// A JSON value as the command line spells it (parseSettingText's inverse).
std::string settingText(const nlohmann::json& value) {
    if (value.is_string()) return value.get<std::string>();
    if (value.is_null()) return "auto";
    return value.dump();
}

}  // namespace

std::vector<std::pair<std::string, std::string>> layoutSettings(const Scenario& s) {
    std::vector<std::pair<std::string, std::string>> settings;
    for (const auto& [section, key] : kLayoutKeys) {
        const ScenarioField* field = findField(section, key);
        if (!field) continue;  // cannot happen: the keys are the scenario format's
        settings.emplace_back(field->path(), settingText(field->get(s)));
    }
    return settings;
}

Rejection rejectionOf(const Estimate& e) {
    Rejection r;
    r.over_bytes = -e.headroom_bytes;
    r.phase = e.peak.peak_phase;
    r.stage = e.peak.stage;
    for (Component c : allComponents()) {
        if (e.peak.at_peak[c] > r.dominant_bytes) {
            r.dominant = c;
            r.dominant_bytes = e.peak.at_peak[c];
        }
    }
    return r;
}

std::string rejectionText(const Rejection& r) {
    std::string component(componentName(r.dominant));
    if (!component.empty()) component[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(component[0])));
    // Stage numbered from 1 for people, as the app and the CLI's tables do.
    return "over by " + formatBytes(r.over_bytes) + " at " + std::string(phaseName(r.phase)) + " on stage " +
           std::to_string(r.stage + 1) + "; " + component + " " + formatBytes(r.dominant_bytes);
}

}  // namespace trainmem
