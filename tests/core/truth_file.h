#pragma once
// A ground-truth JSON file of validation/ (activations/saved_tensors.json,
// step_truth/step_truth.json): the path an environment variable names (CTest
// points it at freshly generated output) or the committed file, read once.
// A missing or malformed file reads as null, which each test reports.
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace trainmem {

inline std::string truthFilePath(const char* env_var, const std::string& committed) {
    if (const char* env = std::getenv(env_var); env && *env) return env;
    return committed;
}

inline nlohmann::json readTruthFile(const std::string& path) {
    std::ifstream in(path);
    if (!in) return nlohmann::json();
    return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

}  // namespace trainmem
