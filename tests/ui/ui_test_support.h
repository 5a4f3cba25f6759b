#pragma once
// Shared by the UI tests: loading presets, finding the widget that edits a
// field, reading the numbers a chart was given.
#include <gtest/gtest.h>

#include <QApplication>
#include <QSpinBox>
#include <QString>

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

}  // namespace trainmem::ui::test
