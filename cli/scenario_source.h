#pragma once
// Where a command's scenario comes from: one of --preset, --model-config or
// --scenario, then every --set in order.
#include <vector>

#include "cli/arguments.h"
#include "core/scenario/scenario.h"

namespace trainmem::cli {

// --preset, --model-config, --scenario, --set.
std::vector<FlagSpec> scenarioSourceFlags();
extern const char* const kScenarioSourceHelp;  // their lines for --help texts
// Every --set key by section, and the GPU names, wrapped for --help texts.
std::string settingsHelp();

// Builds the scenario (not yet validated: estimate() does that).
Expected<Scenario> scenarioFromArguments(const ArgumentList& args);

}  // namespace trainmem::cli
