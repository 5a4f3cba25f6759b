// The last session, saved when the window closes and restored on a start
// with no arguments, and keeping the window on the screen.
#include "ui/main_window.h"

#include <algorithm>

#include <QStatusBar>
#include <QTabWidget>

#include "ui/breakdown_tab.h"
#include "ui/compare_tab.h"
#include "ui/scenario_files.h"
#include "ui/scenario_pins.h"
#include "core/base/json_input.h"
#include "core/scenario/scenario_file.h"

namespace trainmem::ui {

QRect fitToScreen(QRect window, const QRect& available, QSize minimum) {
    if (!available.isValid()) return window;
    // Smaller than the screen unless the window cannot be (then its minimum,
    // at the screen's top left), and wholly on it.
    window.setWidth(std::max(std::min(window.width(), available.width()), std::min(minimum.width(), window.width())));
    window.setHeight(std::max(std::min(window.height(), available.height()), std::min(minimum.height(), window.height())));
    window.moveLeft(std::clamp(window.left(), available.left(), std::max(available.left(), available.right() + 1 - window.width())));
    window.moveTop(std::clamp(window.top(), available.top(), std::max(available.top(), available.bottom() + 1 - window.height())));
    return window;
}

void MainWindow::saveSession() {
    nlohmann::json session = {{"scenario", scenarioToJson(document_->scenario())},
                              {"path", document_->path().toStdString()},
                              {"dirty", document_->dirty()},
                              {"pins", pinsToJson(compare_->pins())},
                              {"tab", tabs_->currentIndex()},
                              {"per_stage", breakdown_->perStage()}};
    settings_.setSession(QString::fromStdString(session.dump()));
}

bool MainWindow::loadPins(const QString& scenario_path) {
    Expected<nlohmann::json> json = readJsonFile(scenario_path.toStdString());
    if (!json) return false;
    LoadedPins pins = pinsFromJson(*json, CompareTab::kMaxPins);
    if (pins.present) compare_->setPins(std::move(pins.pins));
    if (!pins.errors.isEmpty())
        statusBar()->showMessage(tr("%1 pin(s) not loaded: %2").arg(pins.errors.size()).arg(pins.errors.join(QStringLiteral("; "))), 20000);
    return pins.errors.isEmpty();
}

bool MainWindow::restoreSession() {
    const std::string text = settings_.session().toStdString();
    if (text.empty()) return false;
    const nlohmann::json session = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!session.is_object() || !session.contains("scenario") || !session["scenario"].is_object()) return false;
    // Written by saveSession; a value of another type (a hand-edited
    // settings file) is no session rather than an exception.
    for (const char* key : {"path", "dirty", "pins", "tab", "per_stage"})
        if (!session.contains(key)) return false;
    if (!session["path"].is_string() || !session["dirty"].is_boolean() || !session["tab"].is_number_integer() ||
        !session["per_stage"].is_boolean())
        return false;
    Expected<Scenario> scenario = scenarioFromJson(session["scenario"]);
    if (!scenario) return false;
    const QString path = QString::fromStdString(session.value("path", std::string()));
    Expected<Scenario> on_disk = path.isEmpty() ? Expected<Scenario>(Error{"", "no file"}) : loadScenarioFile(path.toStdString());
    const LoadedPins pins = pinsFromJson(session, CompareTab::kMaxPins);
    if (on_disk && session.value("dirty", false)) {
        // The file as saved, with its own pins, then the session's edits and
        // pins as one undoable step: pins are part of the file, so pins
        // changed and not saved keep the file unsaved too.
        document_->replace(*on_disk, path);
        const Expected<nlohmann::json> file = readJsonFile(path.toStdString());
        compare_->setPins(file ? pinsFromJson(*file, CompareTab::kMaxPins).pins : std::vector<PinnedScenario>());
        const QString what = tr("Unsaved edits from the last session");
        const bool pins_differ = !CompareTab::samePins(compare_->pins(), pins.pins);
        if (pins_differ || !(document_->scenario() == *scenario)) {
            document_->undoStack()->beginMacro(what);
            document_->edit([&](Scenario& s) { s = *scenario; }, what);
            if (pins_differ) compare_->changePinsTo(pins.pins, what);
            document_->undoStack()->endMacro();
        }
    } else {
        document_->replace(*scenario, on_disk ? path : QString());
        compare_->setPins(pins.pins);
    }
    breakdown_->setPerStage(session.value("per_stage", false));
    const int tab = session.value("tab", 0);
    if (tab >= 0 && tab < tabs_->count()) tabs_->setCurrentIndex(tab);
    statusBar()->showMessage(tr("Restored the last session"), 4000);
    return true;
}

}  // namespace trainmem::ui
