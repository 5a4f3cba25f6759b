#pragma once
// What importing a training stack's run config did with each of its keys:
// read into a trainmem key, taken from the stack's default (with the stack's
// source), unknown (trainmem needs it and the files do not say), not
// representable (the run does something trainmem cannot count), or ignored
// (no effect on memory, or not a key the stack reads). Every entry names the
// file, the key or flag and its line, and the trainmem key it is about.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/runconfig/config_document.h"
#include "core/scenario/scenario.h"

namespace trainmem::runconfig {

struct ReportEntry {
    std::string file;          // "" for a default: the file does not have it
    std::string key;           // the stack's key or flag
    int line = 0;              // 1-based; 0 = none
    std::string value;         // as the file wrote it (or the default's value)
    std::string trainmem_key;  // "training.micro_batch_size"; "" when none
    std::string trainmem_value;
    std::string source;  // for a default: the stack's file and release that define it
    std::string note;    // why, in words
};

struct RunConfigReport {
    std::vector<ReportEntry> read;
    std::vector<ReportEntry> defaults;
    std::vector<ReportEntry> unknown;
    std::vector<ReportEntry> not_representable;
    std::vector<ReportEntry> ignored;
};

struct RunConfigImport {
    std::string stack;   // "torchtitan", "deepspeed", ...
    std::string format;  // "torchtitan job-config TOML (v0.2.2)"
    Scenario scenario;
    bool has_model = false;  // false: scenario.model is a placeholder (reported unknown)
    RunConfigReport report;
};

// {"scenario": ..., "report": {...}}; "model" is null without a model.
nlohmann::ordered_json importToJson(const RunConfigImport& result);
// The report as text, one line per entry, by category.
std::string reportToText(const RunConfigImport& result);

// Builds the scenario and the report together: each set() applies one
// scenario key (through applySetting, so its checks and names hold) and
// records where the value came from.
class ImportRecorder {
public:
    ImportRecorder(RunConfigImport& out) : out_(out) {}

    // A key of the file read into a trainmem key.
    Status set(const ConfigValue& from, const std::string& trainmem_key, const std::string& value,
               const std::string& note = {});
    // A key the file does not set, taken from the stack's default.
    Status setDefault(const std::string& stack_key, const std::string& trainmem_key, const std::string& value,
                      const std::string& source, const std::string& note = {});
    // A key the file sets that only confirms or informs (no trainmem key of its own).
    void readOnly(const ConfigValue& from, const std::string& note, const std::string& trainmem_key = {});
    void unknown(const std::string& file, const std::string& stack_key, int line, const std::string& trainmem_key,
                 const std::string& note);
    void notRepresentable(const ConfigValue& from, const std::string& note, const std::string& trainmem_key = {});
    // Every value of `doc` no importer took: ignored, with `note`.
    void ignoreRest(const ConfigDocument& doc, const std::string& note);
    // Whether the importer set this trainmem key (from the file or a default).
    bool wasSet(const std::string& trainmem_key) const;

    RunConfigImport& result() { return out_; }

private:
    RunConfigImport& out_;
    std::vector<std::string> set_keys_;
};

std::string valueText(const nlohmann::json& value);

}  // namespace trainmem::runconfig
