#include "core/runconfig/run_config_report.h"

#include <algorithm>

#include "core/base/json_input.h"
#include "core/scenario/scenario_fields.h"
#include "core/scenario/scenario_file.h"

namespace trainmem::runconfig {

using nlohmann::json;
using nlohmann::ordered_json;

std::string valueText(const json& value) {
    if (value.is_string()) return value.get<std::string>();
    return describeJson(value, 80);
}

Status ImportRecorder::set(const ConfigValue& from, const std::string& trainmem_key, const std::string& value,
                           const std::string& note) {
    if (Status st = applySetting(out_.scenario, trainmem_key, value); !st)
        return valueError(from, "gives " + trainmem_key + " = " + value + ", which trainmem refuses: " + st.error().text());
    ReportEntry e{from.file, from.key, from.line, valueText(from.value), trainmem_key, value, "", note};
    out_.report.read.push_back(std::move(e));
    set_keys_.push_back(trainmem_key);
    return ok();
}

Status ImportRecorder::setDefault(const std::string& stack_key, const std::string& trainmem_key, const std::string& value,
                                  const std::string& source, const std::string& note) {
    if (Status st = applySetting(out_.scenario, trainmem_key, value); !st)
        return Error{stack_key, "the stack's default gives " + trainmem_key + " = " + value + ", which trainmem refuses: " +
                                    st.error().text()};
    out_.report.defaults.push_back(ReportEntry{"", stack_key, 0, "", trainmem_key, value, source, note});
    set_keys_.push_back(trainmem_key);
    return ok();
}

void ImportRecorder::readOnly(const ConfigValue& from, const std::string& note, const std::string& trainmem_key) {
    out_.report.read.push_back(ReportEntry{from.file, from.key, from.line, valueText(from.value), trainmem_key, "", "", note});
}

void ImportRecorder::unknown(const std::string& file, const std::string& stack_key, int line,
                             const std::string& trainmem_key, const std::string& note) {
    out_.report.unknown.push_back(ReportEntry{file, stack_key, line, "", trainmem_key, "", "", note});
}

void ImportRecorder::notRepresentable(const ConfigValue& from, const std::string& note, const std::string& trainmem_key) {
    out_.report.not_representable.push_back(
        ReportEntry{from.file, from.key, from.line, valueText(from.value), trainmem_key, "", "", note});
}

void ImportRecorder::ignoreRest(const ConfigDocument& doc, const std::string& note) {
    for (const auto& v : doc.values)
        if (!v.used) {
            v.used = true;
            out_.report.ignored.push_back(ReportEntry{v.file, v.key, v.line, valueText(v.value), "", "", "", note});
        }
}

bool ImportRecorder::wasSet(const std::string& key) const {
    return std::find(set_keys_.begin(), set_keys_.end(), key) != set_keys_.end();
}

namespace {

ordered_json entryJson(const ReportEntry& e) {
    ordered_json j;
    j["file"] = e.file.empty() ? json(nullptr) : json(e.file);
    j["key"] = e.key;
    j["line"] = e.line > 0 ? json(e.line) : json(nullptr);
    j["value"] = e.value;
    j["trainmem_key"] = e.trainmem_key.empty() ? json(nullptr) : json(e.trainmem_key);
    if (!e.trainmem_value.empty()) j["trainmem_value"] = e.trainmem_value;
    if (!e.source.empty()) j["source"] = e.source;
    if (!e.note.empty()) j["note"] = e.note;
    return j;
}

ordered_json entriesJson(const std::vector<ReportEntry>& entries) {
    ordered_json list = ordered_json::array();
    for (const auto& e : entries) list.push_back(entryJson(e));
    return list;
}

std::string entryText(const ReportEntry& e) {
    std::string out = "  ";
    if (!e.file.empty()) out += e.file + (e.line > 0 ? ":" + std::to_string(e.line) : "") + ": ";
    out += e.key;
    if (!e.value.empty()) out += " = " + printableText(e.value);
    if (!e.trainmem_key.empty())
        out += "  ->  " + e.trainmem_key + (e.trainmem_value.empty() ? "" : " = " + printableText(e.trainmem_value));
    if (!e.source.empty()) out += "  [" + e.source + "]";
    if (!e.note.empty()) out += "  (" + printableText(e.note) + ")";
    return out + "\n";
}

}  // namespace

ordered_json importToJson(const RunConfigImport& r) {
    ordered_json doc;
    ordered_json scenario = scenarioToOrderedJson(r.scenario);
    if (!r.has_model) scenario["model"] = nullptr;
    doc["stack"] = r.stack;
    doc["format"] = r.format;
    doc["scenario"] = std::move(scenario);
    ordered_json report;
    report["read"] = entriesJson(r.report.read);
    report["defaults"] = entriesJson(r.report.defaults);
    report["unknown"] = entriesJson(r.report.unknown);
    report["not_representable"] = entriesJson(r.report.not_representable);
    report["ignored"] = entriesJson(r.report.ignored);
    doc["report"] = std::move(report);
    return doc;
}

std::string reportToText(const RunConfigImport& r) {
    std::string out = "Read as " + r.format + "\n";
    const std::pair<const char*, const std::vector<ReportEntry>*> sections[] = {
        {"Read", &r.report.read},
        {"Defaults (the stack's, with their source)", &r.report.defaults},
        {"Unknown (set them with --set, --gpus, --preset or --model-config)", &r.report.unknown},
        {"Not representable (trainmem does not count these)", &r.report.not_representable},
        {"Ignored (no effect on memory, or not read by the stack)", &r.report.ignored},
    };
    for (const auto& [title, entries] : sections) {
        out += "\n" + std::string(title) + ": " + std::to_string(entries->size()) + "\n";
        for (const auto& e : *entries) out += entryText(e);
    }
    return out;
}

}  // namespace trainmem::runconfig
