#pragma once
// Opening JSON files by what they contain: a trainmem scenario (a "format":
// "trainmem-scenario" or a "training" key) replaces the scenario; anything
// else is read as a Hugging Face config.json and replaces only the model.
#include <string_view>

#include <QString>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/scenario/scenario.h"
#include "ui/scenario_pins.h"

namespace trainmem::ui {

enum class JsonFileKind { Scenario, ModelConfig };
JsonFileKind classifyJson(const nlohmann::json& json);

struct OpenedFile {
    Scenario scenario;
    JsonFileKind kind;
    LoadedPins pins;  // a scenario file's Compare pins (ui/scenario_pins.h)
};
// `current` supplies training, parallelism and hardware for a model config.
// A scenario file's pins are read too, at most `max_pins`; a bad pin is an
// error in OpenedFile::pins, never of the whole file.
Expected<OpenedFile> openJsonFile(const QString& path, const Scenario& current, int max_pins = 6);

// The scenario the app starts on the first time: kFirstLaunchPreset when it
// fits its GPU, else the first scenario preset (by name) that fits, else the
// first that loads, else the llama-3.1-8b model preset, else the error
// saying why none loaded.
inline constexpr std::string_view kFirstLaunchPreset = "llama3.1-8b-fsdp-8xh100";
Expected<Scenario> defaultScenario();

}  // namespace trainmem::ui
