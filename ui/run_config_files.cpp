#include "ui/run_config_files.h"

#include <algorithm>

#include <QFileInfo>

#include "core/base/json_input.h"
#include "core/scenario/scenario_fields.h"

namespace trainmem::ui {

namespace {

bool mentions(const runconfig::RunConfigReport& r, const std::string& key) {
    for (const auto* list : {&r.read, &r.defaults, &r.unknown, &r.not_representable})
        if (std::any_of(list->begin(), list->end(), [&](const runconfig::ReportEntry& e) { return e.trainmem_key == key; }))
            return true;
    return false;
}

QString optionalText(const std::optional<double>& v) {
    return v ? QString::number(*v) : QStringLiteral("the GPU's reference system");
}

}  // namespace

bool isDeepspeedConfig(const nlohmann::json& json) {
    if (!json.is_object() || json.contains("model_type") || json.contains("training") || json.contains("format"))
        return false;
    for (const char* key : {"zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size",
                            "zero_allow_untested_optimizer", "gradient_accumulation_steps"})
        if (json.contains(key)) return true;
    return false;
}

bool isRunConfigFile(const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    static const QStringList by_name = {"toml", "yaml", "yml", "sh", "bash", "log", "out", "txt"};
    if (by_name.contains(suffix)) return true;
    if (suffix != QStringLiteral("json")) return false;
    const Expected<nlohmann::json> json = readJsonFile(path.toStdString());
    return json && isDeepspeedConfig(*json);
}

nlohmann::json scenarioValue(const Scenario& scenario, const std::string& key) {
    const nlohmann::ordered_json doc = scenarioToOrderedJson(scenario);
    const nlohmann::ordered_json* at = &doc;
    size_t start = 0;
    while (true) {
        const size_t dot = key.find('.', start);
        const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (!at->is_object() || !at->contains(part)) return nullptr;
        at = &(*at)[part];
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    return nlohmann::json::parse(at->dump());
}

Expected<OpenedRunConfig> openRunConfig(const QString& path, const Scenario& current) {
    runconfig::RunConfigOptions options;
    // A stack resolves the DeepSpeed JSON or Accelerate config a file names
    // from its working directory; a file opened in a window has none, and
    // the files of one run sit together: its own folder.
    options.working_directory = QFileInfo(path).absolutePath().toStdString();
    Expected<runconfig::RunConfigImport> imported = runconfig::importRunConfig(path.toStdString(), options, "auto");
    if (!imported) return imported.error();
    OpenedRunConfig out{std::move(*imported), path, {}};
    Scenario& s = out.imported.scenario;
    const runconfig::RunConfigReport& report = out.imported.report;
    if (!out.imported.has_model) {
        s.model = current.model;
        s.model_preset = current.model_preset;
        out.kept.push_back({QStringLiteral("model"), QString::fromStdString(current.model.name),
                            QStringLiteral("the file names no model trainmem has (unknown below): the open scenario's "
                                           "stands in until you choose one")});
    }
    // Run configs rarely say the GPU and never the machine's links: those
    // of the open scenario stay, unless the file said them.
    if (!mentions(report, "hardware.gpu") && !mentions(report, "hardware.memory_gib")) {
        s.hardware.gpu = current.hardware.gpu;
        s.hardware.memory_bytes = current.hardware.memory_bytes;
        out.kept.push_back({QStringLiteral("hardware.gpu"), QString::fromStdString(current.hardware.gpu),
                            QStringLiteral("a run config does not say the GPU: the open scenario's")});
    }
    if (!mentions(report, "hardware.gpus_per_node") && !mentions(report, "hardware.scale_up_gb_s") &&
        !mentions(report, "hardware.scale_out_gb_s")) {
        s.hardware.gpus_per_node = current.hardware.gpus_per_node;
        s.hardware.scale_up_gb_s = current.hardware.scale_up_gb_s;
        s.hardware.scale_out_gb_s = current.hardware.scale_out_gb_s;
        if (current.hardware.gpus_per_node || current.hardware.scale_up_gb_s || current.hardware.scale_out_gb_s)
            out.kept.push_back({QStringLiteral("hardware.gpus_per_node"),
                                QStringLiteral("%1 per node, %2 / %3 GB/s")
                                    .arg(current.hardware.gpus_per_node ? QString::number(*current.hardware.gpus_per_node)
                                                                        : QStringLiteral("reference"))
                                    .arg(optionalText(current.hardware.scale_up_gb_s), optionalText(current.hardware.scale_out_gb_s)),
                                QStringLiteral("the machine's interconnect: the open scenario's")});
    }
    return out;
}

}  // namespace trainmem::ui
