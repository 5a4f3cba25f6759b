// "section.key=value" edits, for the CLI's --set and the GUI's command line.
// Values parse by the key's type and go through the same checks as a file.
#include <algorithm>
#include <exception>

#include "core/model/hf_config.h"
#include "core/base/json_input.h"
#include "core/scenario/frameworks.h"
#include "core/scenario/scenario_file.h"
#include "core/scenario/scenario_fields.h"

namespace trainmem {

namespace {

using nlohmann::json;

const std::vector<std::string_view> kSettableSections = {"model", "training", "parallelism", "hardware"};

// A model key is a Hugging Face config.json key. The text is read as JSON
// when it is JSON (numbers, true/false, null, arrays, quoted strings), else
// as a bare string ("gelu_pytorch_tanh"). Text that opens a list or an object
// was meant as JSON: a malformed or too deeply nested one is refused, with
// the same limits as a config.json file.
Expected<json> modelValue(const std::string& key, std::string_view text) {
    auto value = parseJsonText(text, "model." + describeText(key, 80));
    if (value) return value;
    const std::string_view trimmed = text.substr(std::min(text.find_first_not_of(" \t"), text.size()));
    if (trimmed.starts_with('[') || trimmed.starts_with('{')) return value.error();
    return json(std::string(text));
}

// Round trip through the config.json form, so any key of any family works
// exactly as it would in a config.json file. Several keys are one edit:
// config.json keys constrain each other (n_head must divide n_embd), so they
// are checked together, in whatever order they were given.
Status applyModelSettings(Scenario& s, const std::vector<std::pair<std::string, std::string_view>>& edits) {
    const json exported = exportHuggingFaceConfig(s.model);
    json config = exported;
    for (const auto& [key, text] : edits) {
        if (key.empty()) return Error{"model.", "missing a config.json key after \"model.\""};
        auto value = modelValue(key, text);
        if (!value) return value.error();
        config[key] = std::move(*value);
    }
    auto imported = importHuggingFaceConfig(config);
    if (!imported) return imported.error();
    // A key the model does not have is refused when it changes nothing: a typo
    // must not pass silently.
    for (const auto& [key, text] : edits) {
        if (exported.contains(key)) continue;
        json without = config;
        without.erase(key);
        auto other = importHuggingFaceConfig(without);
        if (!other || other->model != imported->model) continue;
        std::vector<std::string> keys;
        for (const auto& [k, v] : exported.items()) keys.push_back(k);
        std::vector<std::string_view> views(keys.begin(), keys.end());
        std::string hint;
        if (auto near = closestName(key, views); !near.empty()) hint = " (did you mean model." + std::string(near) + "?)";
        return Error{"model." + describeText(key, 80), "not a config.json key this model uses" + hint + "; keys: " + joinNames(views)};
    }
    if (imported->model != s.model) s.model_preset.clear();  // no longer the preset's numbers
    s.model = std::move(imported->model);
    // What the importer says about the edited config (a default taken for a
    // nulled key, an unknown model_type) is said as for a config.json on disk.
    for (std::string& w : imported->warnings)
        if (std::find(s.warnings.begin(), s.warnings.end(), w) == s.warnings.end()) s.warnings.push_back(std::move(w));
    return ok();
}

Status applyModelSetting(Scenario& s, const std::string& key, std::string_view text) {
    return applyModelSettings(s, {{key, text}});
}

// "key=value" -> (key, value), spaces around the key ignored.
Expected<std::pair<std::string_view, std::string_view>> splitSetting(std::string_view key_equals_value) {
    const auto eq = key_equals_value.find('=');
    if (eq == std::string_view::npos)
        return Error{describeText(key_equals_value, 80), "expected key=value, e.g. training.micro_batch_size=4"};
    std::string_view key = key_equals_value.substr(0, eq);
    while (!key.empty() && key.back() == ' ') key.remove_suffix(1);
    while (!key.empty() && key.front() == ' ') key.remove_prefix(1);
    return std::pair{key, key_equals_value.substr(eq + 1)};
}

Status applyFieldSetting(Scenario& s, const ScenarioField& field, std::string_view text) {
    auto value = parseSettingText(field, text);
    if (!value) return value.error();
    if (auto checked = checkValue(field, *value); !checked) return checked;
    return field.set(s, *value);
}

Status applySettingUnchecked(Scenario& s, std::string_view key, std::string_view text) {
    const auto dot = key.find('.');
    if (dot == std::string_view::npos || dot == 0)
        return Error{describeText(key, 80), "expected section.key=value with a section of: " + joinNames(kSettableSections)};
    const std::string_view section = key.substr(0, dot);
    const std::string_view name = key.substr(dot + 1);
    if (section == "model") return applyModelSetting(s, std::string(name), text);
    if (std::find(kSettableSections.begin(), kSettableSections.end(), section) == kSettableSections.end()) {
        std::string hint;
        if (auto near = closestName(section, kSettableSections); !near.empty())
            hint = " (did you mean " + std::string(near) + "?)";
        return Error{describeText(key, 80), "unknown section \"" + describeText(section) + "\"" + hint +
                                           "; sections: " + joinNames(kSettableSections)};
    }
    const ScenarioField* field = findField(section, name);
    if (!field) {
        const auto keys = sectionKeys(section);
        std::string message = "unknown key";
        if (auto near = closestName(name, keys); !near.empty())
            message += "; did you mean " + std::string(section) + "." + std::string(near) + "?";
        message += " Keys of " + std::string(section) + ": " + joinNames(keys);
        return Error{describeText(key, 80), message};
    }
    return applyFieldSetting(s, *field, text);
}

}  // namespace

Status applySetting(Scenario& s, std::string_view key, std::string_view value) {
    try {
        // Edit a copy, so a refused setting leaves the scenario as it was.
        Scenario edited = s;
        if (auto r = applySettingUnchecked(edited, key, value); !r) return r;
        s = std::move(edited);
        return ok();
    } catch (const std::exception& e) {
        return Error{std::string(key), std::string("cannot apply: ") + e.what()};
    }
}

Status applySetting(Scenario& s, std::string_view key_equals_value) {
    auto split = splitSetting(key_equals_value);
    if (!split) return split.error();
    return applySetting(s, split->first, split->second);
}

Status applySettings(Scenario& s, const std::vector<std::string>& settings) {
    try {
        Scenario edited = s;  // all or nothing
        std::vector<std::pair<std::string, std::string_view>> model_edits;
        std::vector<std::pair<std::string_view, std::string_view>> others;
        for (const auto& text : settings) {
            auto split = splitSetting(text);
            if (!split) return split.error();
            if (split->first.starts_with("model."))
                model_edits.emplace_back(std::string(split->first.substr(6)), split->second);
            else
                others.push_back(*split);
        }
        if (!model_edits.empty())
            if (auto r = applyModelSettings(edited, model_edits); !r) return r;
        // training.framework first, so that the keys it sets can be
        // overridden by the other settings, in whichever order they come.
        std::stable_partition(others.begin(), others.end(),
                              [](const auto& kv) { return kv.first == "training.framework"; });
        for (const auto& [key, value] : others)
            if (auto r = applySettingUnchecked(edited, key, value); !r) return r;
        // The framework's keys that follow the layout, now that the layout
        // settings are in (core/scenario/frameworks.h); explicit settings win.
        if (!others.empty() && others.front().first == "training.framework")
            applyFrameworkLayoutDefaults(edited, [&](std::string_view path) {
                return std::any_of(others.begin(), others.end(), [&](const auto& kv) { return kv.first == path; });
            });
        s = std::move(edited);
        return ok();
    } catch (const std::exception& e) {
        return Error{"", std::string("cannot apply the settings: ") + e.what()};
    }
}

const std::vector<std::string>& settingKeys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> all;
        for (const auto& field : scenarioFields()) all.push_back(field.path());
        return all;
    }();
    return keys;
}

}  // namespace trainmem
