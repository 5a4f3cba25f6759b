#pragma once
// Opening JSON files by what they contain: a trainmem scenario (a "format":
// "trainmem-scenario" or a "training" key) replaces the scenario; anything
// else is read as a Hugging Face config.json and replaces only the model.
#include <QString>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/scenario.h"

namespace trainmem::ui {

enum class JsonFileKind { Scenario, ModelConfig };
JsonFileKind classifyJson(const nlohmann::json& json);

struct OpenedFile {
    Scenario scenario;
    JsonFileKind kind;
};
// `current` supplies training, parallelism and hardware for a model config.
Expected<OpenedFile> openJsonFile(const QString& path, const Scenario& current);

// The scenario the app starts on: the first scenario preset, else the
// llama-3.1-8b model preset, else the error saying why neither loaded.
Expected<Scenario> defaultScenario();

}  // namespace trainmem::ui
