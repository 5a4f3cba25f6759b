#pragma once
// The Compare tab's pins in a scenario file, under the top-level "pins" key:
//   "pins": [{"name": "A", "scenario": {…a scenario document…}}, …]
// in the tab's order. A file without the key has no pins; a bad pin is left
// out with a message naming it, and never costs the scenario or the others.
#include <vector>

#include <QStringList>

#include <nlohmann/json.hpp>

#include "ui/pinned_scenario.h"

namespace trainmem::ui {

nlohmann::json pinsToJson(const std::vector<PinnedScenario>& pins);

struct LoadedPins {
    bool present = false;  // the file has a "pins" key
    std::vector<PinnedScenario> pins;
    QStringList errors;  // "pins[1].scenario.training.micro_batch_size: must be at least 1"
};
// `document`: the whole scenario file. At most `max_pins` are kept.
LoadedPins pinsFromJson(const nlohmann::json& document, int max_pins);

}  // namespace trainmem::ui
