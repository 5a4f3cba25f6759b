#pragma once
// A training stack's config file as a flat list of dotted keys, each with
// its value and the line it is on, so every report entry and every error can
// name file, key and line. TOML (torchtitan), YAML (torchtune, axolotl) and
// JSON (DeepSpeed) are read by maintained parsers (toml++, yaml-cpp,
// nlohmann_json) into this one shape; the stacks' own readers are Python, so
// YAML scalars are typed as PyYAML types them (YAML 1.1: 500_000 is an
// integer, yes/on are true), not as yaml-cpp's YAML 1.2 would.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/error.h"

namespace trainmem::runconfig {

struct ConfigValue {
    std::string key;       // "parallelism.tensor_parallel_degree", "--tensor-model-parallel-size"
    nlohmann::json value;  // a scalar (null, bool, integer, float, string) or an array of them
    int line = 0;          // 1-based; 0 when the source has no line (a command-line flag)
    std::string file;      // the file it was read from, or "command line"
    mutable bool used = false;  // read by the importer (the rest is reported as ignored)
};

struct ConfigDocument {
    std::string file;  // as given, for messages
    std::vector<ConfigValue> values;

    // The value of a key; marks it read. Null when absent.
    const ConfigValue* take(std::string_view key) const;
    // Without marking it read.
    const ConfigValue* find(std::string_view key) const;
    // Keys under "prefix." (a YAML or TOML table), marked read.
    std::vector<const ConfigValue*> takeUnder(std::string_view prefix) const;
    // Sets or adds a key (command-line overrides: torchtitan's --section.option).
    void set(ConfigValue value);
};

// "FILE:LINE: KEY" for error fields and report entries.
std::string where(const ConfigValue& value);
Error valueError(const ConfigValue& value, const std::string& message);

// Typed access; the errors name file, line and key and what is allowed.
Expected<int64_t> asInteger(const ConfigValue& value);
Expected<double> asNumber(const ConfigValue& value);
Expected<bool> asBoolean(const ConfigValue& value);
Expected<std::string> asText(const ConfigValue& value);

// The readers. Syntax errors name file and line.
Expected<ConfigDocument> readTomlDocument(const std::filesystem::path& path);
Expected<ConfigDocument> readYamlDocument(const std::filesystem::path& path);
Expected<ConfigDocument> readJsonDocument(const std::filesystem::path& path);
// YAML text (tests, and JSON read through YAML for its line numbers).
Expected<ConfigDocument> parseYamlDocument(std::string_view text, const std::string& file);
Expected<ConfigDocument> parseTomlDocument(std::string_view text, const std::string& file);

// A plain scalar as PyYAML's resolver types it (YAML 1.1): null (~, null),
// booleans (true/false/yes/no/on/off in their three spellings), integers with
// underscores (500_000), floats with a dot or exponent after a dot. Also used
// for command-line flag values.
nlohmann::json yaml11Scalar(std::string_view text);

}  // namespace trainmem::runconfig
