// The steps every format's reader shares (formats.h): the model, the stack's
// training.framework row first, and the report of what the file left to it.
#include "core/runconfig/formats.h"

#include <algorithm>

#include "core/scenario/frameworks.h"
#include "core/scenario/model_presets.h"
#include "core/scenario/scenario_file.h"

namespace trainmem::runconfig {

void ImportContext::modelFromPreset(const std::string& preset, const ConfigValue* from, const std::string& why) {
    if (options.model) {
        if (from) rec.readOnly(*from, why + "; the model given on the command line is used instead", "model");
        return;
    }
    auto model = loadModelPreset(preset);
    if (!model) {
        modelUnknown(from ? from->key : "model", from ? from->line : 0, "preset " + preset + ": " + model.error().text());
        return;
    }
    RunConfigImport& r = rec.result();
    r.scenario.model = *model;
    r.scenario.model_preset = preset;
    r.has_model = true;
    if (from)
        r.report.read.push_back(ReportEntry{from->file, from->key, from->line, valueText(from->value), "model", preset, "", why});
}

void ImportContext::modelUnknown(const std::string& key, int line, const std::string& why) {
    if (options.model) return;
    rec.unknown(file.string(), key, line, "model", why);
}

Status startFramework(ImportContext& ctx, const std::string& framework) {
    if (Status st = applySetting(ctx.rec.result().scenario, "training.framework", framework); !st) return st;
    ctx.rec.result().report.read.push_back(
        ReportEntry{ctx.file.string(), "(the file's format)", 0, ctx.rec.result().format, "training.framework", framework, "",
                    "the stack's defaults first, then every key below"});
    return ok();
}

void finishFramework(ImportContext& ctx, const std::string& release) {
    // The keys the framework row set that no key of the file (nor a default
    // of the release read above) set: say where their values come from.
    const Scenario& s = ctx.rec.result().scenario;
    const FrameworkSpec& spec = frameworkSpec(s.training.framework);
    for (const FrameworkValue& v : frameworkValues(s)) {
        if (ctx.rec.wasSet(v.key)) continue;
        const auto& unknown = ctx.rec.result().report.unknown;
        if (std::any_of(unknown.begin(), unknown.end(), [&](const ReportEntry& e) { return e.trainmem_key == v.key; })) continue;
        ctx.rec.result().report.defaults.push_back(ReportEntry{
            "", "(not in the file)", 0, v.value, v.key, v.value,
            "training.framework row, " + std::string(spec.read) + " (docs/frameworks.md)",
            "not a key of the " + release + " file read here: the stack's behaviour as trainmem's framework row records it"});
    }
}

}  // namespace trainmem::runconfig
