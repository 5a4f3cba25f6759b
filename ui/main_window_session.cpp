// The last session: written atomically to its own file while editing (at
// most kAutosaveDelayMs old) and when the window closes, restored on a start
// with no arguments, and keeping the window on the screen. A session is
// input like any file: read through the core's bounded reader (size,
// nesting, non-regular files refused), and one that cannot be used is put
// aside with a message, never silently dropped or overwritten.
#include "ui/main_window.h"

#include <algorithm>

#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>

#include "core/base/file_output.h"
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

namespace {

// Written by the autosave of a window that never closed: a crash, a kill.
bool wasLeftOpen(const nlohmann::json& session) {
    const auto closed = session.find("closed");
    return closed != session.end() && closed->is_boolean() && !closed->get<bool>();
}

}  // namespace

QString MainWindow::sessionFilePath() const { return settings_.folder() + QStringLiteral("/session.json"); }

void MainWindow::scheduleAutosave() {
    // Not restarted by later changes: the file is never more than the delay
    // behind the window while someone keeps typing.
    if (!autosave_->isActive()) autosave_->start(kAutosaveDelayMs);
}

bool MainWindow::saveSession(SessionEnd end) {
    const QString file = sessionFilePath();
    if (!session_checked_) {
        // A start with arguments restores nothing; the work a crash left is
        // moved aside rather than overwritten by this run's first autosave.
        session_checked_ = true;
        if (const Expected<nlohmann::json> left = readJsonFile(file.toStdString()); left && wasLeftOpen(*left)) {
            const QString aside = file + QStringLiteral(".unrecovered");
            QFile::remove(aside);
            if (QFile::rename(file, aside))
                statusBar()->showMessage(
                    tr("The unsaved work of a session that did not close was kept as %1").arg(aside), 20000);
        }
    }
    if (end == SessionEnd::EditsDiscarded && document_->path().isEmpty()) {
        // A new scenario whose edits were discarded is gone: start afresh.
        QFile::remove(file);
        last_session_text_.clear();
        return true;
    }
    nlohmann::json session = {{"scenario", scenarioToJson(document_->scenario())},
                              {"path", document_->path().toStdString()},
                              {"dirty", document_->dirty()},
                              {"pins", pinsToJson(compare_->pins())},
                              {"tab", tabs_->currentIndex()},
                              {"per_stage", breakdown_->perStage()}};
    if (end == SessionEnd::EditsDiscarded) {
        // The file as saved, with its own pins.
        Expected<Scenario> on_disk = loadScenarioFile(document_->path().toStdString());
        const Expected<nlohmann::json> json = readJsonFile(document_->path().toStdString());
        if (on_disk) session["scenario"] = scenarioToJson(*on_disk);
        session["pins"] = json ? pinsToJson(pinsFromJson(*json, CompareTab::kMaxPins).pins) : nlohmann::json::array();
        session["dirty"] = false;
    }
    // "closed" false: the window was still open when this was written; a
    // start that finds it so offers it back as work recovered from a crash.
    session["closed"] = end != SessionEnd::Running;
    const std::string text = session.dump();
    if (text == last_session_text_) return true;
    session["saved_at"] = QDateTime::currentDateTime().toString(Qt::ISODate).toStdString();
    const Status written = writeFileAtomically(file.toStdString(), session.dump() + "\n");
    if (!written) {
        session_problem_ = tr("Unsaved work is not kept safe: %1").arg(QString::fromStdString(written.error().message));
        statusBar()->showMessage(session_problem_, 15000);
        return false;
    }
    last_session_text_ = text;
    return true;
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

bool MainWindow::applySession(const nlohmann::json& session, std::string& why) {
    if (!session.is_object()) {
        why = "must be a JSON object";
        return false;
    }
    // Written by saveSession; a value of another type (a hand-edited file)
    // is refused by name rather than misread.
    const auto has = [&](const char* key, bool (nlohmann::json::*is)() const noexcept) {
        const auto it = session.find(key);
        if (it != session.end() && ((*it).*is)()) return true;
        why = std::string("\"") + key + "\" is missing or of the wrong type";
        return false;
    };
    if (!has("scenario", &nlohmann::json::is_object) || !has("path", &nlohmann::json::is_string) ||
        !has("dirty", &nlohmann::json::is_boolean) || !has("tab", &nlohmann::json::is_number_integer) ||
        !has("per_stage", &nlohmann::json::is_boolean) || !session.contains("pins"))
        return false;
    Expected<Scenario> scenario = scenarioFromJson(session["scenario"]);
    if (!scenario) {
        why = "scenario: " + scenario.error().text();
        return false;
    }
    const QString path = QString::fromStdString(session["path"].get<std::string>());
    Expected<Scenario> on_disk = path.isEmpty() ? Expected<Scenario>(Error{"", "no file"}) : loadScenarioFile(path.toStdString());
    const LoadedPins pins = pinsFromJson(session, CompareTab::kMaxPins);
    if (on_disk && session["dirty"].get<bool>()) {
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
    breakdown_->setPerStage(session["per_stage"].get<bool>());
    const int tab = session["tab"].get<int>();
    if (tab >= 0 && tab < tabs_->count()) tabs_->setCurrentIndex(tab);
    return true;
}

bool MainWindow::restoreSession() {
    session_checked_ = true;
    const QString file = sessionFilePath();
    const QFileInfo info(file);
    Expected<nlohmann::json> session = Error{"", ""};
    QString rejected_text;  // a session from the settings file that cannot be used, to put aside
    if (info.exists() || info.isSymLink()) {
        session = readJsonFile(file.toStdString());
    } else {
        // Releases before the session file kept it in the settings, read
        // with no nesting limit: a deep value crashed every start (issue
        // 28, N02). Read once, through the same bounded parser as any file.
        const QString legacy = settings_.legacySession();
        if (legacy.isEmpty()) return false;
        settings_.removeLegacySession();
        session = parseJsonText(legacy.toStdString(), "the settings' session/last");
        rejected_text = legacy;
    }
    std::string why;
    if (session && applySession(*session, why)) {
        const bool crashed = wasLeftOpen(*session);
        const auto saved_at = session->find("saved_at");
        const QDateTime at = saved_at != session->end() && saved_at->is_string()
                                 ? QDateTime::fromString(QString::fromStdString(saved_at->get<std::string>()), Qt::ISODate)
                                 : QDateTime();
        const QString when = at.isValid() ? at.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) : tr("an unknown time");
        // Undo goes back to the file only when there is one to go back to.
        const QString undo = document_->path().isEmpty() || !document_->dirty() ? QString()
                                                                                 : tr("; Edit > Undo goes back to the file");
        statusBar()->showMessage(crashed ? tr("Recovered the unsaved work of a session that did not close (as of %1)%2")
                                               .arg(when, undo)
                                         : tr("Restored the last session"),
                                 crashed ? 20000 : 4000);
        if (rejected_text.isEmpty()) last_session_text_.clear();
        return true;
    }
    if (!session) why = session.error().text();
    // Put aside, never overwritten by this run's session, and said.
    const QString aside = file + QStringLiteral(".rejected");
    QFile::remove(aside);
    bool kept = false;
    if (rejected_text.isEmpty()) {
        kept = QFile::rename(file, aside);
    } else {
        const QByteArray bytes = rejected_text.toUtf8();
        kept = writeFileAtomically(aside.toStdString(), std::string_view(bytes.constData(), size_t(bytes.size()))).ok();
    }
    session_problem_ = tr("The last session could not be restored (%1); %2")
                           .arg(QString::fromStdString(why).left(300),
                                kept ? tr("it was kept as %1").arg(aside) : tr("it could not be kept aside"));
    statusBar()->showMessage(session_problem_, 30000);
    return false;
}

}  // namespace trainmem::ui
