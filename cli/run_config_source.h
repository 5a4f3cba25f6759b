#pragma once
// --run-config: a training stack's own file as the scenario source
// (core/runconfig/), shared by import, estimate, fit and export-run.
#include <string>
#include <vector>

#include "cli/arguments.h"
#include "core/runconfig/run_config.h"

namespace trainmem::cli {

// --run-config, --companion, --run-format, --override; --gpus when the command has none of its own.
std::vector<FlagSpec> runConfigFlags(bool with_gpus);
extern const char* const kRunConfigHelp;

// Imports `file` (with its companions) as the arguments say: --gpus, the
// model from --preset / --model-config, --run-format, --override.
Expected<runconfig::RunConfigImport> importFromArguments(const ArgumentList& args, const std::string& file,
                                                         const std::vector<std::string>& companions);

// The scenario of --run-config with every --set applied; an error while any
// value stays unknown (a --set of its key, or --preset/--model-config for
// the model, settles it).
Expected<Scenario> scenarioFromRunConfig(const ArgumentList& args);

}  // namespace trainmem::cli
