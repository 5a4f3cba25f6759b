#pragma once
// The app's command line:
//   trainmem [--preset NAME | --model-config F | --scenario F] [--set key=value]...
//            [--snapshot snap.pickle]
//            [--export out.png|out.svg|out.pdf [--view breakdown|stages|optimizers|compare|timeline]
//             [--width W --height H] [--scale S]]
// With --export it renders without a window and exits: 0, or 2 with one line
// on stderr for bad input.
#include <optional>

#include <QSize>
#include <QString>
#include <QStringList>

#include "core/base/error.h"
#include "core/scenario/scenario.h"
#include "ui/chart_views.h"

namespace trainmem::ui {

struct LaunchOptions {
    enum class Source { Default, Preset, ModelConfig, ScenarioFile };
    Source source = Source::Default;
    QString source_value;      // preset name or file path
    QStringList settings;      // "training.micro_batch_size=4", in order
    QString export_path;       // empty: open the window
    ChartView view = ChartView::Breakdown;
    QString snapshot_path;     // --snapshot: a PyTorch memory snapshot over the timeline
    QString run_config;        // --run-config FILE, or a bare run config: opened as File > Open Run Config
    QSize size{1200, 750};
    QString size_preset;       // --size column|page|slide (ui/export_size_dialog.h)
    double scale = 1.0;
    QString presets_dir;       // --presets DIR (tests, portable installs)
    bool help = false;
};

QString launchUsage();

// True when the raw arguments ask for headless export: main() must know
// before QApplication exists, to choose the offscreen platform.
bool wantsHeadlessExport(int argc, char** argv);

// Errors name the option ("--width: must be ...").
Expected<LaunchOptions> parseLaunchOptions(const QStringList& arguments);

// The scenario the options describe: the source, then every --set in order.
Expected<Scenario> launchScenario(const LaunchOptions& options);

// Headless export: returns the process exit status; writes one line to
// stderr on failure.
int runHeadlessExport(const LaunchOptions& options);

}  // namespace trainmem::ui
