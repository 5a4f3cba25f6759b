// trainmem-screenshot: the window as docs/gui.md shows it, written to a PNG.
// Not installed. Run under a real X server (xvfb-run) with a throw-away
// XDG_CONFIG_HOME so no saved session or geometry leaks in:
//   trainmem-screenshot OUT.png WxH [--dark]
//                       [--view breakdown|stages|steptime|steptime-stages|optimizers|compare|timeline]
//                       [--scenario FILE | --preset NAME] [--finder] [--run-config FILE]
// --dark gives the application Fusion's dark palette, as a dark desktop's
// platform theme would (Xvfb here has no desktop and no platform theme);
// everything else is the window as it draws itself. --finder writes the
// Find a Layout window instead; --run-config opens a run config over the
// scenario, as File > Open Run Config does, with its report panel.
#include <cstdio>

#include <QApplication>
#include <QScrollArea>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QGroupBox>
#include <QPalette>
#include <QStyleFactory>
#include <QThread>

#include "core/scenario/presets.h"
#include "ui/launch_options.h"
#include "ui/layout_finder_panel.h"
#include "ui/main_window.h"
#include "ui/model_panel.h"
#include "ui/scenario_files.h"

namespace {

QPalette darkPalette() {
    QPalette p;
    const QColor window(0x2d, 0x2d, 0x30), base(0x1e, 0x1e, 0x1e), text(0xe6, 0xe6, 0xe6), mid(0x5a, 0x5a, 0x5e);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x26, 0x28));
    p.setColor(QPalette::ToolTipBase, window);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9a, 0x9a));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x3a, 0x3a, 0x3d));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::white);
    p.setColor(QPalette::Light, QColor(0x4a, 0x4a, 0x4e));
    p.setColor(QPalette::Midlight, QColor(0x42, 0x42, 0x46));
    p.setColor(QPalette::Mid, mid);
    p.setColor(QPalette::Dark, QColor(0x1a, 0x1a, 0x1c));
    p.setColor(QPalette::Shadow, Qt::black);
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x6f, 0xb5));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x6a, 0xb0, 0xff));
    for (QPalette::ColorRole r : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, r, QColor(0x80, 0x80, 0x80));
    return p;
}

void settle(int ms) {
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < ms) {
        QApplication::processEvents(QEventLoop::AllEvents, 20);
        QThread::msleep(10);
    }
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("trainmem"));
    QApplication::setOrganizationName(QStringLiteral("trainmem"));
    QStringList args = app.arguments().mid(1);
    if (args.size() < 2) {
        std::fputs("usage: trainmem-screenshot OUT.png WxH [--dark] [--finder] [--model-panel] [trainmem options]\n", stderr);
        return 2;
    }
    const QString out = args.takeFirst();
    const QStringList wh = args.takeFirst().split('x');
    const QSize size(wh.value(0).toInt(), wh.value(1).toInt());
    const bool dark = args.removeAll(QStringLiteral("--dark")) > 0;
    const bool finder = args.removeAll(QStringLiteral("--finder")) > 0;
    // The side panel scrolled to the model panel, its architecture open.
    const bool model_panel = args.removeAll(QStringLiteral("--model-panel")) > 0;
    QString run_config;
    if (const qsizetype at = args.indexOf(QStringLiteral("--run-config")); at >= 0 && at + 1 < args.size()) {
        run_config = args.at(at + 1);
        args.remove(at, 2);
    }
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    if (dark) QApplication::setPalette(darkPalette());

    const trainmem::Expected<trainmem::ui::LaunchOptions> options = trainmem::ui::parseLaunchOptions(args);
    if (!options) {
        std::fprintf(stderr, "trainmem-screenshot: %s\n", options.error().text().c_str());
        return 2;
    }
    if (!options->presets_dir.isEmpty()) trainmem::setPresetsDirectory(options->presets_dir.toStdString());
    const trainmem::Expected<trainmem::Scenario> scenario = trainmem::ui::launchScenario(*options);
    if (!scenario) {
        std::fprintf(stderr, "trainmem-screenshot: %s\n", scenario.error().text().c_str());
        return 2;
    }
    trainmem::ui::MainWindow window;
    const bool file = options->source == trainmem::ui::LaunchOptions::Source::ScenarioFile;
    window.document()->replace(*scenario, file ? options->source_value : QString());
    if (file) window.loadPins(options->source_value);
    if (!run_config.isEmpty() && !window.openRunConfigFile(run_config)) {
        std::fprintf(stderr, "trainmem-screenshot: cannot open %s\n", qPrintable(run_config));
        return 2;
    }
    window.showView(options->view);
    window.resize(size);
    window.show();
    settle(600);
    if (model_panel) {
        auto* panel = window.findChild<trainmem::ui::ModelPanel*>();
        panel->setArchitectureShown(true);
        settle(200);
        for (QWidget* w = panel; w; w = w->parentWidget())
            if (auto* scroll = qobject_cast<QScrollArea*>(w)) {
                scroll->ensureWidgetVisible(panel, 0, 0);
                // A hybrid's mixer sizes, at the panel's end.
                for (auto* box : panel->findChildren<QGroupBox*>())
                    if (box->isVisibleTo(panel) && box->title() == QStringLiteral("Hybrid layers"))
                        scroll->ensureWidgetVisible(box, 0, 0);
                break;
            }
        settle(200);
    }
    QWidget* shot = &window;
    if (finder) {
        window.layoutFinder()->takeScenarioDefaults();
        auto* dock = qobject_cast<QDockWidget*>(window.layoutFinder()->parentWidget());
        dock->show();
        dock->resize(size);
        shot = dock;
        settle(2500);  // the live search runs on a worker thread
    }
    if (!shot->grab().save(out)) {
        std::fprintf(stderr, "trainmem-screenshot: cannot write %s\n", qPrintable(out));
        return 1;
    }
    return 0;
}
