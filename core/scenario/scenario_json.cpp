// Scenario <-> JSON (format "trainmem-scenario", version 2). Loading is
// strict: an unknown key anywhere is an error naming its dotted path, since a
// misspelt key silently falling back to its default is the worst failure a
// calculator can have. Missing keys take the documented defaults.
#include <algorithm>
#include <exception>

#include "core/model/hf_config.h"
#include "core/scenario/frameworks.h"
#include "core/scenario/model_presets.h"
#include "core/scenario/scenario_file.h"
#include "core/scenario/scenario_fields.h"

namespace trainmem {

namespace {

using nlohmann::json;

constexpr std::string_view kFormatName = "trainmem-scenario";
// "pins": the desktop app's pinned comparisons, each a scenario document of
// its own; the app reads them (ui/scenario_pins), the scenario does not.
const std::vector<std::string_view> kTopLevelKeys = {"format",   "version",     "name",     "description", "model",
                                                     "training", "parallelism", "hardware", "pins"};
const std::vector<std::string_view> kSections = {"training", "parallelism", "hardware"};

Error unknownKey(const std::string& path, std::string_view key, const std::vector<std::string_view>& allowed) {
    std::string message = "unknown key";
    if (auto near = closestName(key, allowed); !near.empty()) message += " (did you mean " + std::string(near) + "?)";
    message += "; allowed keys: " + joinNames(allowed);
    return Error{path, message};
}

Status readHeader(const json& doc) {
    if (auto it = doc.find("format"); it != doc.end()) {
        if (!it->is_string() || it->get<std::string>() != kFormatName)
            return Error{"format", "expected \"trainmem-scenario\" (got " + describeValue(*it) + ")"};
    }
    if (auto it = doc.find("version"); it != doc.end()) {
        if (!it->is_number_integer()) return Error{"version", "expected an integer (got " + describeValue(*it) + ")"};
        // Past 2^63 the number is unsigned: compared as given, never wrapped (it was "got -1").
        const bool newer = it->is_number_unsigned() ? it->get<uint64_t>() > uint64_t{kScenarioFormatVersion}
                                                    : it->get<int64_t>() > kScenarioFormatVersion;
        if (!newer && it->get<int64_t>() < 1) return Error{"version", "must be at least 1 (got " + describeValue(*it) + ")"};
        if (newer)
            return Error{"version", "version " + describeValue(*it) + " is newer than this trainmem reads (" +
                                        std::to_string(kScenarioFormatVersion) + "); update trainmem"};
    }
    return ok();
}

Status readText(const json& doc, const char* key, std::string& out) {
    auto it = doc.find(key);
    if (it == doc.end()) return ok();
    if (!it->is_string()) return Error{key, "expected a string (got " + describeValue(*it) + ")"};
    out = it->get<std::string>();
    return ok();
}

// {"preset": NAME} or a Hugging Face config.json object.
Status readModel(const json& model, Scenario& s) {
    if (!model.is_object())
        return Error{"model", "expected {\"preset\": NAME} or a Hugging Face config.json object (got " +
                                  describeValue(model) + ")"};
    if (auto it = model.find("preset"); it != model.end()) {
        if (model.size() != 1)
            return Error{"model.preset",
                         "a preset model takes no other keys; change the model with --set model.KEY=VALUE or give a "
                         "whole config.json object instead"};
        if (!it->is_string()) return Error{"model.preset", "expected a preset name (got " + describeValue(*it) + ")"};
        const auto name = it->get<std::string>();
        auto loaded = loadModelPreset(name);
        if (!loaded) return loaded.error();
        s.model = std::move(loaded.value());
        s.model_preset = name;
        return ok();
    }
    auto imported = importHuggingFaceConfig(model);
    if (!imported) return imported.error();
    s.model = std::move(imported->model);
    s.model_preset.clear();
    s.warnings.insert(s.warnings.end(), imported->warnings.begin(), imported->warnings.end());
    return ok();
}

Status readSection(const json& doc, std::string_view section, Scenario& s) {
    auto it = doc.find(std::string(section));
    if (it == doc.end()) return ok();
    if (!it->is_object())
        return Error{std::string(section), "expected an object of keys (got " + describeValue(*it) + ")"};
    // training.framework first: it sets defaults that the file's other keys
    // then override, whatever order the file lists them in.
    auto readKey = [&](const std::string& key, const json& value) -> Status {
        const ScenarioField* field = findField(section, key);
        if (!field) return unknownKey(std::string(section) + "." + key, key, sectionKeys(section));
        if (auto checked = checkValue(*field, value); !checked) return checked;
        return field->set(s, value);
    };
    const bool training = section == "training";
    if (auto fw = it->find("framework"); training && fw != it->end())
        if (auto r = readKey("framework", *fw); !r) return r;
    for (const auto& [key, value] : it->items()) {
        if (training && key == "framework") continue;
        if (auto r = readKey(key, value); !r) return r;
    }
    return ok();
}

Expected<Scenario> readScenario(const json& doc) {
    if (!doc.is_object()) return Error{"", "a scenario must be a JSON object (got " + describeValue(doc) + ")"};
    for (const auto& [key, value] : doc.items())
        if (std::find(kTopLevelKeys.begin(), kTopLevelKeys.end(), key) == kTopLevelKeys.end())
            return unknownKey(key, key, kTopLevelKeys);
    if (auto header = readHeader(doc); !header) return header.error();

    Scenario s;
    if (auto r = readText(doc, "name", s.name); !r) return r.error();
    if (auto r = readText(doc, "description", s.description); !r) return r.error();
    auto model = doc.find("model");
    if (model == doc.end())
        return Error{"model", "missing; give {\"preset\": NAME} (names: trainmem-cli presets) or a Hugging Face "
                              "config.json object"};
    if (auto r = readModel(*model, s); !r) return r.error();
    for (auto section : kSections)
        if (auto r = readSection(doc, section, s); !r) return r.error();
    // The framework's keys that follow the layout, now that the layout is
    // read (core/scenario/frameworks.h); the file's own keys win.
    if (auto training = doc.find("training"); training != doc.end() && training->contains("framework"))
        applyFrameworkLayoutDefaults(s, [&](std::string_view path) {
            const size_t dot = path.find('.');
            auto section = doc.find(std::string(path.substr(0, dot)));
            return section != doc.end() && section->is_object() && section->contains(std::string(path.substr(dot + 1)));
        });
    // Version 1 had no loss apart from the kernel profile: kernels=fused
    // meant Liger's fused linear cross-entropy whatever training.loss said,
    // so such a file keeps its numbers (docs/scenario-format.md).
    const auto version = doc.find("version");
    if (version != doc.end() && version->get<int64_t>() < 2 && s.training.kernels == KernelProfile::Fused)
        s.training.loss = LossImpl::FusedLinear;
    return s;
}

// The model is written as its preset name only while it still is that
// preset, so a file never claims a preset whose numbers it does not hold.
nlohmann::ordered_json modelJson(const Scenario& s) {
    if (!s.model_preset.empty()) {
        auto preset = loadModelPreset(s.model_preset);
        if (preset && preset.value() == s.model) return {{"preset", s.model_preset}};
    }
    return nlohmann::ordered_json(exportHuggingFaceConfig(s.model));
}

}  // namespace

nlohmann::ordered_json scenarioToOrderedJson(const Scenario& s) {
    nlohmann::ordered_json doc;
    doc["format"] = kFormatName;
    doc["version"] = kScenarioFormatVersion;
    doc["name"] = s.name;
    doc["description"] = s.description;
    doc["model"] = modelJson(s);
    for (auto section : kSections) {
        nlohmann::ordered_json values = nlohmann::ordered_json::object();
        for (const auto& field : scenarioFields())
            if (field.section == section) values[std::string(field.key)] = nlohmann::ordered_json(field.get(s));
        doc[std::string(section)] = std::move(values);
    }
    return doc;
}

Expected<Scenario> scenarioFromJson(const json& doc) {
    // Every access above is checked first; this only guards against a
    // library exception escaping the core's error-as-value contract.
    try {
        return readScenario(doc);
    } catch (const std::exception& e) {
        return Error{"", std::string("cannot read scenario: ") + e.what()};
    }
}

json scenarioToJson(const Scenario& s) { return json(scenarioToOrderedJson(s)); }

}  // namespace trainmem
