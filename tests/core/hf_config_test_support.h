#pragma once
// Helpers shared by the config.json import tests (hf_config_test.cpp,
// hf_config_input_test.cpp, hf_config_roundtrip_test.cpp): reading fixtures
// and presets, and small config builders.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/model/hf_config.h"

namespace trainmem::hf_test {

using nlohmann::json;

inline const std::filesystem::path kRoot =
    std::filesystem::path(TRAINMEM_TEST_DATA_DIR).parent_path().parent_path();

inline json readJson(const std::filesystem::path& path) {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << path;
    return json::parse(in);
}

inline ImportedModel importFixture(const std::string& name) {
    const Expected<ImportedModel> r = importHuggingFaceConfig(readJson(kRoot / "tests" / "data" / "hf" / name));
    EXPECT_TRUE(r.ok()) << name << ": " << (r.ok() ? "" : r.error().text());
    return r.ok() ? r.value() : ImportedModel{};
}

inline ModelConfig importPreset(const std::string& name) {
    const Expected<ImportedModel> r =
        importHuggingFaceConfig(readJson(kRoot / "presets" / "models" / (name + ".json")));
    EXPECT_TRUE(r.ok()) << name << ": " << (r.ok() ? "" : r.error().text());
    return r.ok() ? r->model : ModelConfig{};
}

inline std::vector<std::string> presetNames() {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(kRoot / "presets" / "models"))
        if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
    std::sort(names.begin(), names.end());
    return names;
}

inline Error importError(const json& config) {
    const Expected<ImportedModel> r = importHuggingFaceConfig(config);
    EXPECT_FALSE(r.ok()) << config.dump();
    return r.ok() ? Error{} : r.error();
}

inline bool mentions(const std::vector<std::string>& warnings, const std::string& text) {
    for (const std::string& w : warnings)
        if (w.find(text) != std::string::npos) return true;
    return false;
}

// A complete Llama-2-7B config.json, for tests that change one key.
inline json llamaConfig() {
    return {{"model_type", "llama"},         {"hidden_size", 4096},        {"intermediate_size", 11008},
            {"num_hidden_layers", 32},       {"num_attention_heads", 32}, {"num_key_value_heads", 32},
            {"vocab_size", 32000}};
}

inline json with(json c, const std::string& key, json value) {
    c[key] = std::move(value);
    return c;
}

}  // namespace trainmem::hf_test
