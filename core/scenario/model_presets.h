#pragma once
// Where the preset files live, and the model presets (presets/models/NAME.json,
// Hugging Face config.json files). A scenario file's {"preset": NAME} model is
// read through here; scenario presets, which are scenario files, are in
// presets.h above the scenario file format.
#include <filesystem>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/model/model_config.h"

namespace trainmem {

// $TRAINMEM_PRESETS if set; else <exe>/../share/trainmem/presets when installed;
// else the source tree's presets/ (compiled in).
std::filesystem::path presetsDirectory();
void setPresetsDirectory(std::filesystem::path dir);  // tests and the GUI's command line

Expected<ModelConfig> loadModelPreset(const std::string& name);

// Preset names are file stems; refusing separators keeps a name from
// reaching outside the presets folder.
bool isPresetName(const std::string& name);
// The regular *.json files of a presets folder, sorted.
std::vector<std::filesystem::path> presetFiles(const std::filesystem::path& dir);
// "unknown preset \"x\" (did you mean y?); list the presets with: ..."
std::string unknownPresetMessage(const std::string& what, const std::string& name);

}  // namespace trainmem
