#pragma once
// Presets: public models as config.json files (presets/models/NAME.json) and
// named scenarios (presets/scenarios/NAME.json). Names are file stems and are
// unique across both kinds.
#include <filesystem>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/scenario/model_presets.h"  // presetsDirectory, loadModelPreset
#include "core/scenario/scenario.h"

namespace trainmem {

enum class PresetKind { Model, Scenario };

struct PresetInfo {
    std::string name;
    PresetKind kind;
    std::string description;  // scenario "description", or the model's display name and size
    std::filesystem::path path;
};

std::vector<PresetInfo> listPresets();
// A model preset gives a default scenario around it; a scenario preset the whole scenario.
Expected<Scenario> loadPreset(const std::string& name);

}  // namespace trainmem
