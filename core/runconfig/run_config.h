#pragma once
// Reading a training stack's own run config into a scenario, and writing a
// scenario back as one (docs/run-configs.md). Each format is read as its
// stack reads it at a named release, with that release's defaults; what the
// files do not say is reported unknown, never guessed.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/runconfig/run_config_options.h"
#include "core/runconfig/run_config_report.h"
#include "core/scenario/scenario.h"

namespace trainmem::runconfig {


// The formats, by their --format names; "auto" detects from the name and content.
const std::vector<std::string_view>& runConfigFormats();

Expected<RunConfigImport> importRunConfig(const std::filesystem::path& file, const RunConfigOptions& options,
                                          std::string_view format = "auto");

// Error when the report has unknowns (estimate and fit need every value):
// lists them with their file, key and trainmem key.
Status requireComplete(const RunConfigImport& result);

// export-run's targets and the stack's file (or flags) for a scenario; an
// error names what the target cannot express.
const std::vector<std::string_view>& exportTargets();
Expected<std::string> exportRunConfig(const Scenario& scenario, std::string_view target);

// The model preset whose config.json's _name_or_path is `hub_id` (case
// insensitive, "meta-llama/Llama-3.1-8B"), or empty.
std::string presetForHubId(std::string_view hub_id);

}  // namespace trainmem::runconfig
