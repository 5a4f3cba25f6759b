#pragma once
// Shared by the UI tests: loading presets, finding the widget that edits a
// field, reading the numbers a chart was given, dropping a file on the
// window, running the app headless.
#include <gtest/gtest.h>

#include <QApplication>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QProcess>
#include <QSpinBox>
#include <QString>
#include <QStringList>
#include <QUrl>

#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "ui/chart_spec.h"
#include "ui/field_bindings.h"
#include "ui/main_window.h"

namespace trainmem::ui::test {

inline Scenario presetScenario(const std::string& name) {
    Expected<Scenario> s = loadPreset(name);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().text());
    return s.ok() ? *s : Scenario{};
}

// A shown window on `scenario`, laid out at a realistic size.
inline std::unique_ptr<MainWindow> openWindow(const Scenario& scenario) {
    auto window = std::make_unique<MainWindow>();
    window->resize(1500, 940);
    window->document()->replace(scenario);
    window->show();
    QApplication::processEvents();
    return window;
}

template <class W = QWidget>
W* fieldWidget(MainWindow& window, const char* field) {
    W* w = qobject_cast<W*>(window.fieldBindings().widgetFor(QString::fromLatin1(field)));
    EXPECT_NE(w, nullptr) << "no " << W::staticMetaObject.className() << " edits " << field;
    return w;
}

// The value of one stacked layer in one bar, or 0 when the layer is absent.
inline double layerValue(const ChartSpec& spec, const QString& key, int bar = 0) {
    for (const ChartLayer& l : spec.layers)
        if (l.key == key && bar < l.values.size()) return l.values[bar];
    return 0.0;
}

constexpr double kGiBd = 1024.0 * 1024.0 * 1024.0;

// Drags `path` over the window's centre and drops it, as a file manager
// does; true when the window accepted both the enter and the drop.
inline bool dropFile(MainWindow& window, const QString& path) {
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(path)});
    const QPoint centre = window.rect().center();
    QDragEnterEvent enter(centre, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &enter);
    if (!enter.isAccepted()) return false;
    QDropEvent drop(QPointF(centre), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &drop);
    return drop.isAccepted();
}

// The app run as a user runs it (trainmem ARGS), its exit status and what
// it printed on stderr.
struct AppRun {
    int status;
    QString err;
};

inline AppRun runApp(const QStringList& args) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("QT_QPA_PLATFORM");  // the app must choose offscreen by itself
    env.insert("TRAINMEM_PRESETS", TRAINMEM_PRESETS_DIR);
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(TRAINMEM_APP_EXE), args);
    EXPECT_TRUE(p.waitForFinished(60000));
    QString err;
    for (const QString& line : QString::fromLocal8Bit(p.readAllStandardError()).split('\n', Qt::SkipEmptyParts))
        if (!line.startsWith("QStandardPaths:")) err += line + '\n';  // harmless Qt noise without XDG_RUNTIME_DIR
    return {p.exitCode(), err};
}

}  // namespace trainmem::ui::test
