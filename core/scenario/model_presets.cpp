// Where the preset files live, and the model presets: presets/models/NAME.json
// (Hugging Face config.json files). Scenario presets, which are scenario
// files and may name a model preset, are one level up: presets.cpp.
#include "core/scenario/model_presets.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <system_error>

#include "core/base/json_input.h"
#include "core/model/hf_config.h"
#include "core/scenario/scenario_fields.h"  // closestName

namespace trainmem {

namespace fs = std::filesystem;

namespace {

std::mutex& directoryMutex() {
    static std::mutex m;
    return m;
}

fs::path& overrideDirectory() {
    static fs::path dir;
    return dir;
}

// <prefix>/bin/trainmem-cli -> <prefix>/share/trainmem/presets
fs::path installedDirectory() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec || exe.empty()) return {};
    const fs::path dir = exe.parent_path().parent_path() / TRAINMEM_INSTALL_DATADIR / "trainmem" / "presets";
    return fs::is_directory(dir, ec) ? dir : fs::path{};
}

}  // namespace

bool isPresetName(const std::string& name) {
    if (name.empty() || name.front() == '.') return false;
    return std::all_of(name.begin(), name.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '-' || c == '_' || c == '.';
    });
}

std::vector<fs::path> presetFiles(const fs::path& dir) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".json" && it->is_regular_file(ec)) files.push_back(it->path());
    std::sort(files.begin(), files.end());
    return files;
}

namespace {

std::vector<std::string> presetNames() {
    std::vector<std::string> names;
    for (const char* kind : {"models", "scenarios"})
        for (const auto& file : presetFiles(presetsDirectory() / kind)) names.push_back(file.stem().string());
    return names;
}

}  // namespace

std::string unknownPresetMessage(const std::string& what, const std::string& name) {
    std::string message = "unknown " + what + " \"" + name + "\"";
    const auto names = presetNames();
    const std::vector<std::string_view> views(names.begin(), names.end());
    if (auto near = closestName(name, views); !near.empty()) message += " (did you mean " + std::string(near) + "?)";
    return message + "; list the presets with: trainmem-cli presets";
}



fs::path presetsDirectory() {
    {
        std::lock_guard lock(directoryMutex());
        if (!overrideDirectory().empty()) return overrideDirectory();
    }
    if (const char* env = std::getenv("TRAINMEM_PRESETS"); env && *env) return fs::path(env);
    if (auto installed = installedDirectory(); !installed.empty()) return installed;
    return fs::path(TRAINMEM_SOURCE_PRESETS_DIR);
}

void setPresetsDirectory(fs::path dir) {
    std::lock_guard lock(directoryMutex());
    overrideDirectory() = std::move(dir);
}

Expected<ModelConfig> loadModelPreset(const std::string& name) {
    const fs::path root = presetsDirectory();
    if (!isPresetName(name)) return Error{"model.preset", unknownPresetMessage("model preset", name)};
    const fs::path file = root / "models" / (name + ".json");
    std::error_code ec;
    if (!fs::exists(file, ec)) {
        if (fs::exists(root / "scenarios" / (name + ".json"), ec))
            return Error{"model.preset", "\"" + name + "\" is a scenario preset, not a model; use --preset " + name};
        return Error{"model.preset", unknownPresetMessage("model preset", name)};
    }
    auto config = readJsonFile(file);
    if (!config) return config.error();
    auto imported = importHuggingFaceConfig(*config);
    if (!imported) {
        Error e = imported.error();
        e.message += " (in " + file.string() + ")";
        return e;
    }
    ModelConfig model = std::move(imported->model);
    if (model.name.empty()) model.name = name;
    return model;
}

}  // namespace trainmem
