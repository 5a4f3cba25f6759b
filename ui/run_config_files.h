#pragma once
// Opening a training stack's own run config in the app (File > Open Run
// Config…, or a drop): the core's importer (core/runconfig/run_config.h,
// docs/run-configs.md) as trainmem-cli import runs it, with what a window
// adds: companions resolve from the file's own folder, and what the file
// cannot say (the model when it names none trainmem has, the GPU) stays as
// the open scenario has it, said in the report, never silently.
#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/runconfig/run_config.h"
#include "core/scenario/scenario.h"

namespace trainmem::ui {

// A run config by its name (.toml, .yaml/.yml, .sh/.bash, a Megatron log:
// .log/.out/.txt) or, for .json, by its content (a DeepSpeed config: its
// zero_optimization or batch keys, and no "model_type"/"training").
bool isRunConfigFile(const QString& path);
bool isDeepspeedConfig(const nlohmann::json& json);

// What the window kept of the open scenario, said beside the report.
struct KeptSetting {
    QString trainmem_key;  // "model", "hardware.gpu"
    QString value;         // "Llama-3.1-8B", "H100-80GB"
    QString why;
};

struct OpenedRunConfig {
    runconfig::RunConfigImport imported;  // the scenario and the core's report
    QString path;
    std::vector<KeptSetting> kept;
};

// Imports `path` with `current` standing in for what the file cannot say:
// its model when the file names none trainmem has (the model stays in
// `unknown`, to be chosen), its GPU and interconnect when the report sets
// no hardware key. Errors (syntax, a run the stack refuses, a companion
// that does not exist) name the file and line, as the CLI's.
Expected<OpenedRunConfig> openRunConfig(const QString& path, const Scenario& current);

// The value of a dotted trainmem key in a scenario ("training.micro_batch_size"),
// as its file writes it; "model" is the whole model. Null when absent.
nlohmann::json scenarioValue(const Scenario& scenario, const std::string& key);

}  // namespace trainmem::ui
