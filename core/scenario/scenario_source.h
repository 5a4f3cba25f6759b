#pragma once
// Where a scenario comes from, for every front end: exactly one of a preset,
// a Hugging Face config.json or a scenario file, then --set edits in order.
// The CLI (cli/scenario_source.cpp) and the app (ui/launch_options.cpp) fill
// a ScenarioSource from their command lines and build the scenario here, so
// the same flags give the same scenario, warnings and errors in both.
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/scenario/scenario.h"

namespace trainmem {

struct ScenarioSource {
    enum class Kind { None, Preset, ModelConfig, ScenarioFile };
    Kind kind = Kind::None;
    std::string value;                  // preset name or file path
    std::vector<std::string> settings;  // "training.micro_batch_size=4", applied in order

    // Records --preset, --model-config or --scenario; a second one is an error.
    Status set(std::string_view flag, std::string value);
};

// The scenario, not yet validated (estimate() does that). With no source,
// `fallback` when given, else an error saying which flags there are.
Expected<Scenario> scenarioFromSource(const ScenarioSource& source, const Scenario* fallback = nullptr);

}  // namespace trainmem
