#pragma once
// The keys of the scenario format, one entry per key: its section, name,
// JSON type and how it reads from and writes into a Scenario. Loading,
// saving, applySetting and settingKeys all walk this one table, so a key
// cannot be readable and not writable, or spelled two ways.
// scenarioToOrderedJson is in scenario_json.cpp, beside the reader.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/scenario/scenario.h"

namespace trainmem {

enum class ValueKind {
    Integer,   // JSON integer
    Number,    // JSON number
    Boolean,   // true / false
    Text,      // free string (checked by validate(), e.g. hardware.gpu)
    Name,      // one of `names`
    NameList,  // array of strings (checked by validate())
};

struct ScenarioField {
    std::string_view section;  // "training", "parallelism", "hardware"
    std::string_view key;      // "micro_batch_size"
    ValueKind kind = ValueKind::Integer;
    bool nullable = false;                // JSON null (command line: auto/none/null) means "not set"
    std::vector<std::string_view> names;  // Name: the allowed spellings
    std::function<nlohmann::json(const Scenario&)> get;
    // Receives a value that passed checkValue(); may still refuse it (range of a unit conversion).
    std::function<Status(Scenario&, const nlohmann::json&)> set;

    std::string path() const;  // "training.micro_batch_size"
};

const std::vector<ScenarioField>& scenarioFields();
const ScenarioField* findField(std::string_view section, std::string_view key);
// Keys of one section, in table order (for "allowed keys" lists).
std::vector<std::string_view> sectionKeys(std::string_view section);

// Type check of a JSON value against the field; the error names the field.
Status checkValue(const ScenarioField& field, const nlohmann::json& value);
// The JSON value a command-line text stands for, by the field's kind.
Expected<nlohmann::json> parseSettingText(const ScenarioField& field, std::string_view text);

// The candidate closest to `word` by edit distance, or empty when none is
// close enough to be a plausible typo.
std::string_view closestName(std::string_view word, const std::vector<std::string_view>& candidates);
// "a, b, c"
std::string joinNames(const std::vector<std::string_view>& names);
// The scenario as saved: keys in the documented order (scenarioToJson's
// nlohmann::json sorts them).
nlohmann::ordered_json scenarioToOrderedJson(const Scenario& scenario);

// A JSON value shortened for error messages: "abc", 12, [..].
std::string describeValue(const nlohmann::json& value);

}  // namespace trainmem
