// Preset files: presets/models/NAME.json (Hugging Face config.json files) and
// presets/scenarios/NAME.json (scenario files).
#include "core/scenario/presets.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <system_error>

#include "core/model/hf_config.h"
#include "core/model/parameters.h"
#include "core/report/report.h"
#include "core/scenario/scenario_fields.h"

namespace trainmem {

namespace {

namespace fs = std::filesystem;

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

// Preset names are file stems; refusing separators keeps a name from
// reaching outside the presets folder.
bool isPlainName(const std::string& name) {
    if (name.empty() || name.front() == '.') return false;
    return std::all_of(name.begin(), name.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '-' || c == '_' || c == '.';
    });
}

std::vector<fs::path> jsonFiles(const fs::path& dir) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".json" && it->is_regular_file(ec)) files.push_back(it->path());
    std::sort(files.begin(), files.end());
    return files;
}

std::vector<std::string> presetNames() {
    std::vector<std::string> names;
    for (const char* kind : {"models", "scenarios"})
        for (const auto& file : jsonFiles(presetsDirectory() / kind)) names.push_back(file.stem().string());
    return names;
}

std::string unknownPresetMessage(const std::string& what, const std::string& name) {
    std::string message = "unknown " + what + " \"" + name + "\"";
    const auto names = presetNames();
    const std::vector<std::string_view> views(names.begin(), names.end());
    if (auto near = closestName(name, views); !near.empty()) message += " (did you mean " + std::string(near) + "?)";
    return message + "; list the presets with: trainmem-cli presets";
}

std::string modelDescription(const fs::path& file) {
    auto config = readJsonFile(file);
    if (!config) return "unreadable: " + config.error().text();
    auto imported = importHuggingFaceConfig(*config);
    if (!imported) return "invalid: " + imported.error().text();
    const ModelConfig& m = imported->model;
    const std::string name = m.name.empty() ? file.stem().string() : m.name;
    return name + ", " + formatCount(countParameters(m).total) + " parameters";
}

std::string scenarioDescription(const fs::path& file) {
    auto doc = readJsonFile(file);
    if (!doc) return "unreadable: " + doc.error().text();
    if (doc->is_object())
        if (auto it = doc->find("description"); it != doc->end() && it->is_string()) return it->get<std::string>();
    return "";
}

}  // namespace

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

std::vector<PresetInfo> listPresets() {
    std::vector<PresetInfo> presets;
    const fs::path root = presetsDirectory();
    for (const auto& file : jsonFiles(root / "models"))
        presets.push_back({file.stem().string(), PresetKind::Model, modelDescription(file), file});
    for (const auto& file : jsonFiles(root / "scenarios"))
        presets.push_back({file.stem().string(), PresetKind::Scenario, scenarioDescription(file), file});
    return presets;
}

Expected<ModelConfig> loadModelPreset(const std::string& name) {
    const fs::path root = presetsDirectory();
    if (!isPlainName(name)) return Error{"model.preset", unknownPresetMessage("model preset", name)};
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

Expected<Scenario> loadPreset(const std::string& name) {
    const fs::path root = presetsDirectory();
    if (!isPlainName(name)) return Error{"preset", unknownPresetMessage("preset", name)};
    std::error_code ec;
    const fs::path scenario_file = root / "scenarios" / (name + ".json");
    const bool is_scenario = fs::exists(scenario_file, ec);
    const bool is_model = fs::exists(root / "models" / (name + ".json"), ec);
    if (is_scenario && is_model)
        return Error{"preset", "\"" + name + "\" names both a model and a scenario preset; rename one of them"};
    if (is_scenario) return loadScenarioFile(scenario_file);
    if (!is_model) return Error{"preset", unknownPresetMessage("preset", name)};
    auto model = loadModelPreset(name);
    if (!model) return model.error();
    return scenarioForModel(*model, name);
}

}  // namespace trainmem
