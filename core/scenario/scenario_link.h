#pragma once
// A scenario, with the desktop app's Compare pins, as one line to paste in a
// chat, an issue or a design doc: a `trainmem:` URI. The app writes it (Edit >
// Copy as Link) and opens it (`trainmem 'trainmem:…'`, Edit > Paste, a click
// where the desktop entry registers the scheme); `trainmem-cli … --scenario
// 'trainmem:…'` reads it like a scenario file.
//
//   trainmem:1:<base64url of the scenario file's JSON, minified>
//
// Compact without a compressor: each pin is stored as the JSON merge patch
// (RFC 7386) that turns the link's scenario into the pin's, so six pins that
// differ in one setting each cost a few dozen bytes apiece.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/base/error.h"

namespace trainmem {

inline constexpr std::string_view kScenarioLinkPrefix = "trainmem:";

bool isScenarioLink(std::string_view text);

// `document`: a scenario file's JSON (scenarioToOrderedJson, with "pins" as
// the app saves them, or none).
std::string scenarioLink(const nlohmann::json& document);

// The scenario file's JSON back, pins whole again; an error naming "link"
// and what is wrong (not a trainmem link, another version, bad characters,
// cut short, not JSON, too large). Spaces and line breaks a mail client put
// in are skipped.
Expected<nlohmann::json> readScenarioLink(std::string_view link);

}  // namespace trainmem
