#include "ui/launch_options.h"

#include <cstdio>
#include <cstring>

#include <QUrl>

#include "core/account/estimate.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario_link.h"
#include "core/scenario/scenario_source.h"
#include "ui/chart_export.h"
#include "ui/export_size_dialog.h"
#include "ui/run_config_files.h"
#include "ui/scenario_files.h"
#include "ui/step_time_views.h"
#include "ui/timeline_view.h"
#include "core/base/json_input.h"

namespace trainmem::ui {

QString launchUsage() {
    return QStringLiteral(
        "usage: trainmem [--preset NAME | --model-config FILE | --scenario FILE|LINK | FILE | LINK] [--set key=value]...\n"
        "                [--snapshot SNAPSHOT.pickle] [--run-config FILE]\n"
        "                [--export OUT.png|OUT.svg|OUT.pdf [--view breakdown|stages|steptime|steptime-stages|optimizers|compare|timeline]\n"
        "                 [--size column|page|slide | --width W --height H] [--scale S]] [--presets DIR]\n"
        "       trainmem --help | --version\n"
        "Without --export the window opens on the given scenario (default: the first scenario preset).\n"
        "LINK is a trainmem: link (Edit > Copy as Link), with its pins.\n"
        "--size: a document column (16 cm: 454 x 340 pt, 640 x 480 px), a full page (17 x 24 cm) or a 16:9 slide;\n"
        "SVG and PDF sizes are in points (a physical size), PNG sizes in pixels.\n"
        "--snapshot sets a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot) over the timeline view.\n"
        "--run-config opens a training stack's run config (a torchtitan .toml, a torchtune, axolotl, LLaMA-Factory or\n"
        "Accelerate .yaml, a DeepSpeed .json, a Megatron-LM script or log) over the scenario, in the window only;\n"
        "a bare FILE of those kinds does the same.\n");
}

bool wantsHeadlessExport(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--export") == 0 || std::strncmp(argv[i], "--export=", 9) == 0) return true;
    return false;
}

namespace {

Error optionError(const QString& option, const QString& message) {
    return Error{option.toStdString(), message.toStdString()};
}

}  // namespace

Expected<LaunchOptions> parseLaunchOptions(const QStringList& arguments) {
    LaunchOptions o;
    ScenarioSource source;  // core's check that only one source flag is given
    bool sized = false;     // --width or --height given
    for (int i = 0; i < arguments.size(); ++i) {
        QString option = arguments[i];
        QString value;
        bool inline_value = false;
        if (option.startsWith("--") && option.contains('=')) {  // --width=800
            value = option.section('=', 1);
            option = option.section('=', 0, 0);
            inline_value = true;
        }
        if (option == "--help" || option == "-h") {
            o.help = true;
            continue;
        }
        // A bare argument is what a desktop passes (Exec=trainmem %u): a
        // trainmem: link, a file:// URL or a path, read as a scenario or, by
        // its content, a config.json.
        if (!option.startsWith('-') && !inline_value) {
            QString where = option;
            if (where.startsWith(QStringLiteral("file:"))) where = QUrl(where).toLocalFile();
            // A training stack's own file: opened over the scenario with its
            // report, as File > Open Run Config does.
            if (!isScenarioLink(where.toStdString()) && isRunConfigFile(where)) {
                o.run_config = where;
                continue;
            }
            LaunchOptions::Source kind = LaunchOptions::Source::ScenarioFile;
            if (!isScenarioLink(where.toStdString())) {
                const Expected<nlohmann::json> json = readJsonFile(where.toStdString());
                if (json && classifyJson(*json) == JsonFileKind::ModelConfig) kind = LaunchOptions::Source::ModelConfig;
            }
            const char* flag = kind == LaunchOptions::Source::ModelConfig ? "--model-config" : "--scenario";
            if (Status st = source.set(flag, where.toStdString()); !st)
                return optionError(option, QString::fromStdString(st.error().message));
            o.source = kind;
            o.source_value = where;
            continue;
        }
        static const QStringList kTakesValue = {"--preset", "--model-config", "--scenario", "--set", "--export",
                                                "--view", "--width", "--height", "--scale", "--presets", "--snapshot", "--run-config",
                                                "--size"};
        if (!kTakesValue.contains(option))
            return optionError(option, QStringLiteral("unknown option; see --help"));
        if (!inline_value) {
            if (i + 1 >= arguments.size()) return optionError(option, QStringLiteral("needs a value"));
            value = arguments[++i];
        }
        if (option == "--preset" || option == "--model-config" || option == "--scenario") {
            if (Status st = source.set(option.toStdString(), value.toStdString()); !st)
                return optionError(option, QString::fromStdString(st.error().message));
            o.source = option == "--preset" ? LaunchOptions::Source::Preset
                       : option == "--model-config" ? LaunchOptions::Source::ModelConfig
                                                    : LaunchOptions::Source::ScenarioFile;
            o.source_value = value;
        } else if (option == "--set") {
            if (!value.contains('=')) return optionError(option, QStringLiteral("expects key=value, got \"%1\"").arg(value));
            o.settings << value;
        } else if (option == "--export") {
            if (!exportFormatFor(value))
                return optionError(option, QStringLiteral("\"%1\": the file name must end in .png, .svg or .pdf").arg(value));
            o.export_path = value;
        } else if (option == "--view") {
            const std::optional<ChartView> view = parseChartView(value);
            if (!view) return optionError(option, QStringLiteral("\"%1\": must be breakdown, stages, steptime, steptime-stages, optimizers, compare or timeline").arg(value));
            o.view = *view;
        } else if (option == "--width" || option == "--height") {
            bool ok = false;
            const int v = value.toInt(&ok);
            const int low = option == "--width" ? 100 : 80;
            if (!ok || v < low || v > 20000)
                return optionError(option, QStringLiteral("\"%1\": must be a whole number of pixels, %2-20000").arg(value).arg(low));
            (option == "--width" ? o.size.rwidth() : o.size.rheight()) = v;
        } else if (option == "--scale") {
            bool ok = false;
            const double v = value.toDouble(&ok);
            if (!ok || v < 0.25 || v > 8) return optionError(option, QStringLiteral("\"%1\": must be a number 0.25-8").arg(value));
            o.scale = v;
        } else if (option == "--presets") {
            o.presets_dir = value;
        } else if (option == "--run-config") {
            o.run_config = value;
        } else if (option == "--snapshot") {
            o.snapshot_path = value;
        } else if (option == "--size") {
            o.size_preset = value;
        }
        if (option == "--width" || option == "--height") sized = true;
    }
    // --size after the loop: whether it is pixels or points depends on
    // --export's suffix, which may come later on the line.
    if (!o.size_preset.isEmpty()) {
        if (sized) return optionError(QStringLiteral("--size"), QStringLiteral("give either --size or --width/--height, not both"));
        QStringList keys;
        const ExportSizePreset* chosen = nullptr;
        for (const ExportSizePreset& p : exportSizePresets()) {
            keys << p.key;
            if (p.key == o.size_preset) chosen = &p;
        }
        if (!chosen)
            return optionError(QStringLiteral("--size"), QStringLiteral("\"%1\": must be %2").arg(o.size_preset, keys.join(QStringLiteral(", "))));
        const std::optional<ExportFormat> format = exportFormatFor(o.export_path);
        o.size = format && *format != ExportFormat::Png ? chosen->vector : chosen->raster;
    }
    return o;
}

Expected<Scenario> launchScenario(const LaunchOptions& o) {
    // The CLI's scenario source (core/scenario/scenario_source.h): the same flags give
    // the same scenario, warnings and errors in both.
    ScenarioSource source;
    switch (o.source) {
        case LaunchOptions::Source::Default: break;
        case LaunchOptions::Source::Preset: source.kind = ScenarioSource::Kind::Preset; break;
        case LaunchOptions::Source::ModelConfig: source.kind = ScenarioSource::Kind::ModelConfig; break;
        case LaunchOptions::Source::ScenarioFile: source.kind = ScenarioSource::Kind::ScenarioFile; break;
    }
    source.value = o.source_value.toStdString();
    for (const QString& setting : o.settings) source.settings.push_back(setting.toStdString());
    if (source.kind != ScenarioSource::Kind::None) return scenarioFromSource(source);
    const Expected<Scenario> fallback = defaultScenario();
    if (!fallback) return fallback;
    return scenarioFromSource(source, &*fallback);
}

int runHeadlessExport(const LaunchOptions& o) {
    auto fail = [](const QString& message) {
        std::fprintf(stderr, "trainmem: %s\n", message.simplified().toLocal8Bit().constData());
        return 2;
    };
    // A run config's unknowns are settled in the window (its panel); a
    // figure is made from a scenario: trainmem-cli import writes one.
    if (!o.run_config.isEmpty())
        return fail(QStringLiteral("--run-config: opens in the window only; for a figure, save the scenario "
                                   "(trainmem-cli import FILE --format json) and give it with --scenario"));
    Expected<Scenario> scenario = launchScenario(o);
    if (!scenario) return fail(QString::fromStdString(scenario.error().text()));
    Expected<Estimate> estimated = estimate(*scenario);
    if (!estimated) return fail(QString::fromStdString(estimated.error().text()));

    if (o.view == ChartView::Timeline) {
        const ExportResult written = exportScenarioTimeline(*scenario, o.snapshot_path, o.export_path, o.size, o.scale);
        return written ? 0 : fail(written.error);
    }
    ChartSpec spec;
    switch (o.view) {
        case ChartView::Breakdown: spec = breakdownChart(*scenario, *estimated, Units::GiB); break;
        case ChartView::Stages: {
            Expected<std::vector<StageEstimate>> stages = estimateStages(*scenario);
            if (!stages) return fail(QString::fromStdString(stages.error().text()));
            spec = stagesChart(*scenario, *estimated, *stages, Units::GiB);
            break;
        }
        case ChartView::StepTime:
        case ChartView::StepTimeStages: {
            // The step time the window's Step time tab draws; a GPU without
            // published rates cannot be timed, which is said, not drawn empty.
            Expected<StepTimeModel> model = prepareStepTime(*scenario);
            if (!model) return fail(QString::fromStdString(model.error().text()));
            const StepTime time = stepTime(*model, *scenario);
            spec = o.view == ChartView::StepTime
                       ? stepTimeChart(*scenario, *model, time)
                       : stageTimesChart(*scenario, *model, time, stageTimes(*model, *scenario));
            break;
        }
        case ChartView::Optimizers:
            spec = optimizerChart(*scenario, estimateEveryOptimizer(*scenario), OptimizerScale::Bytes, Units::GiB);
            break;
        case ChartView::Compare: {
            // The pins saved in a scenario file, as the window would show
            // them, with the table under the plot; a file without pins (or
            // another source) is its scenario alone. A pin that cannot be
            // read fails the export: a figure must not drop a column silently.
            std::vector<PinnedScenario> pins;
            if (o.source == LaunchOptions::Source::ScenarioFile) {
                const std::string source = o.source_value.toStdString();
                Expected<nlohmann::json> json = isScenarioLink(source) ? readScenarioLink(source) : readJsonFile(source);
                if (!json) return fail(QString::fromStdString(json.error().text()));
                LoadedPins loaded = pinsFromJson(*json, 6);
                if (!loaded.errors.isEmpty())
                    return fail(QStringLiteral("%1: %2").arg(o.source_value, loaded.errors.join(QStringLiteral("; "))));
                pins = std::move(loaded.pins);
            }
            if (pins.empty()) pins.push_back({QStringLiteral("A"), *scenario, *estimated});
            spec = compareChart(pins, Units::GiB, 0, true);
            break;
        }
        case ChartView::Timeline: break;  // exported above
    }
    const ExportResult written = exportChart(spec, o.export_path, o.size, o.scale);
    if (!written) return fail(written.error);
    return 0;
}

}  // namespace trainmem::ui
