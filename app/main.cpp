// The desktop app's entry point: the window, or a headless chart export when
// --export is given (see ui/launch_options.h for the command line).
#include <cstdio>
#include <cstring>

#include <QApplication>
#include <QStatusBar>

#include "core/scenario/presets.h"
#include "core/scenario/scenario_link.h"
#include "ui/launch_options.h"
#include "ui/main_window.h"
#include "ui/scenario_files.h"
#include "ui/timeline_tab.h"

namespace {

bool hasArgument(int argc, char** argv, const char* name) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], name) == 0) return true;
    return false;
}

bool asksForHelp(int argc, char** argv) { return hasArgument(argc, argv, "--help") || hasArgument(argc, argv, "-h"); }

}  // namespace

int main(int argc, char** argv) {
    // Before Qt exists: no display, no platform plugin, nothing else on the output.
    if (hasArgument(argc, argv, "--version")) {
        std::printf("trainmem %s\n", TRAINMEM_VERSION);
        return 0;
    }
    const bool headless = trainmem::ui::wantsHeadlessExport(argc, argv);
    // Decided before QApplication exists: that is when the platform is chosen.
    // Help and exports need no display; a window does, and without one Qt
    // would abort with a plugin error instead of saying what is missing.
    const bool platform_chosen = !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
    if ((headless || asksForHelp(argc, argv)) && !platform_chosen) qputenv("QT_QPA_PLATFORM", "offscreen");
    else if (!platform_chosen && qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")) {
        std::fputs("trainmem: no display (DISPLAY and WAYLAND_DISPLAY are unset): run it on a desktop or under "
                   "xvfb-run, or export a chart without a window with --export FILE\n",
                   stderr);
        return 2;
    }

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("trainmem"));
    QApplication::setOrganizationName(QStringLiteral("trainmem"));
    QApplication::setApplicationVersion(QStringLiteral(TRAINMEM_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("trainmem"));

    const trainmem::Expected<trainmem::ui::LaunchOptions> options = trainmem::ui::parseLaunchOptions(app.arguments().mid(1));
    if (!options) {
        std::fprintf(stderr, "trainmem: %s\n", options.error().text().c_str());
        return 2;
    }
    if (options->help) {
        std::fputs(trainmem::ui::launchUsage().toLocal8Bit().constData(), stdout);
        return 0;
    }
    if (!options->presets_dir.isEmpty()) trainmem::setPresetsDirectory(options->presets_dir.toStdString());
    if (headless) return trainmem::ui::runHeadlessExport(*options);

    trainmem::ui::MainWindow window;
    const trainmem::Expected<trainmem::Scenario> scenario = trainmem::ui::launchScenario(*options);
    // With nothing on the command line, the window goes on where it was left.
    const bool restored = options->source == trainmem::ui::LaunchOptions::Source::Default &&
                          options->settings.isEmpty() && options->run_config.isEmpty() && window.restoreSession();
    if (restored) {
        // its scenario, file, pins and tab are back
    } else if (scenario) {
        // A trainmem: link is no file to save back to.
        const bool file = options->source == trainmem::ui::LaunchOptions::Source::ScenarioFile;
        const bool link = file && trainmem::isScenarioLink(options->source_value.toStdString());
        window.document()->replace(*scenario, file && !link ? options->source_value : QString());
        if (link)
            window.loadLinkPins(options->source_value);
        else if (file)
            window.loadPins(options->source_value);
    } else {
        // Bad arguments still open the window, on the default scenario, saying why.
        const trainmem::Expected<trainmem::Scenario> fallback = trainmem::ui::defaultScenario();
        if (fallback) window.document()->replace(*fallback);
        window.statusBar()->showMessage(QString::fromStdString(scenario.error().text()), 15000);
    }
    // A run config opens over that scenario, as one undoable step with its report.
    if (!options->run_config.isEmpty()) window.openRunConfigFile(options->run_config);
    if (!restored) window.showView(options->view);
    // A snapshot that cannot be read says why in the Timeline tab.
    if (!options->snapshot_path.isEmpty()) window.timelineTab()->openSnapshot(options->snapshot_path);
    window.show();
    return app.exec();
}
