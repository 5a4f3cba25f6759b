#include "ui/cli_command.h"

#include <algorithm>
#include <map>

#include <QRegularExpression>

#include "core/scenario/presets.h"
#include "core/scenario/scenario_file.h"

namespace trainmem::ui {

namespace {

void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, nlohmann::json>& out) {
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
    } else {
        out[prefix] = j;
    }
}

// A value as --set takes it: strings bare, lists comma-separated, the rest as JSON.
std::string settingValue(const nlohmann::json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_array()) {
        std::string joined;
        for (const auto& item : v) joined += (joined.empty() ? "" : ",") + settingValue(item);
        return joined;
    }
    if (v.is_null()) return "null";
    return v.dump();
}

// Single-quoted for a POSIX shell when it holds anything but plain characters.
QString shellWord(const QString& word) {
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_./:=,+-]+$"));
    if (plain.match(word).hasMatch()) return word;
    QString quoted = word;
    quoted.replace('\'', QStringLiteral("'\\''"));
    return '\'' + quoted + '\'';
}

// Scenarios equal in everything the estimate reads (names and notes aside).
bool sameSettings(Scenario a, const Scenario& b) {
    a.name = b.name;
    a.description = b.description;
    a.warnings = b.warnings;
    a.model.name = b.model.name;
    a.model_preset = b.model_preset;
    return a == b;
}

Expected<QString> commandFrom(const Scenario& base, const QString& source, const Scenario& target) {
    std::map<std::string, nlohmann::json> from, to;
    flatten(scenarioToJson(base), {}, from);
    flatten(scenarioToJson(target), {}, to);
    const std::vector<std::string>& keys = settingKeys();
    std::vector<std::string> settings;
    for (const auto& [key, value] : to) {
        const auto it = from.find(key);
        if (it != from.end() && it->second == value) continue;
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) continue;  // name, description, format
        settings.push_back(key + "=" + settingValue(value));
    }
    Scenario check = base;
    if (Status st = applySettings(check, settings); !st) return st.error();
    if (!sameSettings(check, target)) return Error{"source", "the --set edits do not reproduce the scenario"};
    QString line = QStringLiteral("trainmem-cli estimate ") + source;
    for (const std::string& s : settings) line += QStringLiteral(" --set ") + shellWord(QString::fromStdString(s));
    return line;
}

}  // namespace

Expected<QString> cliCommand(const Scenario& scenario, const QString& path) {
    std::vector<std::pair<Expected<Scenario>, QString>> sources;
    if (!scenario.name.empty())
        sources.emplace_back(loadPreset(scenario.name), QStringLiteral("--preset ") + shellWord(QString::fromStdString(scenario.name)));
    if (!scenario.model_preset.empty())
        sources.emplace_back(loadPreset(scenario.model_preset),
                             QStringLiteral("--preset ") + shellWord(QString::fromStdString(scenario.model_preset)));
    if (!path.isEmpty())
        sources.emplace_back(loadScenarioFile(path.toStdString()), QStringLiteral("--scenario ") + shellWord(path));
    Error last{"source", "no preset or file to start from: save the scenario, then copy the command"};
    for (const auto& [base, source] : sources) {
        if (!base) continue;
        Expected<QString> line = commandFrom(*base, source, scenario);
        if (line) return line;
        last = line.error();
    }
    return last;
}

}  // namespace trainmem::ui
