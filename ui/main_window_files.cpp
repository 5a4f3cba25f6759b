// The window's file work: open, save, recent files, drag and drop, chart
// export and the clipboard. The reading and writing itself is in
// scenario_files.*, chart_export.* and painting_export.*; here are the
// dialogs and what the window shows of the result.
#include "ui/main_window.h"

#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QDockWidget>
#include <QScrollArea>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>

#include "ui/breakdown_tab.h"
#include "ui/chart_export.h"
#include "ui/chart_tab.h"
#include "ui/compare_tab.h"
#include "ui/export_size_dialog.h"
#include "ui/memory_chart.h"
#include "ui/scenario_files.h"
#include "ui/model_panel.h"
#include "ui/preset_picker.h"
#include "ui/run_config_files.h"
#include "ui/run_config_panel.h"
#include "ui/scenario_pins.h"
#include "ui/step_time_tab.h"
#include "ui/timeline_tab.h"
#include "core/base/json_input.h"
#include "core/scenario/scenario_file.h"

#include "core/model/hf_config.h"
#include "core/scenario/scenario_fields.h"
#include "core/scenario/scenario_link.h"

namespace trainmem::ui {

bool MainWindow::confirmDiscard() {
    discarded_ = false;
    if (!document_->dirty()) return true;
    const auto answer = QMessageBox::question(this, tr("Unsaved changes"), tr("Save the changes to this scenario first?"),
                                              QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Cancel) return false;
    discarded_ = answer == QMessageBox::Discard;
    return discarded_ || save();
}

void MainWindow::newScenario() {
    if (!confirmDiscard()) return;
    Expected<Scenario> s = defaultScenario();
    if (!s) {
        statusBar()->showMessage(QString::fromStdString(s.error().text()), 8000);
        return;
    }
    document_->replace(*s);
}

void MainWindow::openScenarioDialog() {
    if (!confirmDiscard()) return;
    const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario or config.json"), documentFolder(),
                                                      tr("JSON files (*.json);;All files (*)"));
    if (!path.isEmpty()) openFile(path);
}

void MainWindow::openConfigDialog() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a Hugging Face config.json"), documentFolder(),
                                                      tr("config.json (*.json);;All files (*)"));
    if (!path.isEmpty()) openFile(path);
}

void MainWindow::openRunConfigDialog() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open a run config"), documentFolder(),
        tr("Run configs (*.toml *.yaml *.yml *.json *.sh *.bash *.log *.out *.txt);;All files (*)"));
    if (!path.isEmpty()) openRunConfigFile(path);
}

bool MainWindow::openRunConfigFile(const QString& path) {
    Expected<OpenedRunConfig> opened = openRunConfig(path, document_->scenario());
    if (!opened) {
        statusBar()->showMessage(tr("Run config not opened: %1").arg(QString::fromStdString(opened.error().text())), 15000);
        return false;
    }
    // One undoable step, as a preset load: Undo brings back the scenario
    // (and its edits) the run config replaced.
    document_->load(opened->imported.scenario, tr("Run config %1").arg(QFileInfo(path).fileName()));
    run_config_panel_->showImport(*opened);
    markUnknownFields();
    run_config_dock_->show();
    run_config_dock_->raise();
    const size_t unknown = opened->imported.report.unknown.size();
    statusBar()->showMessage(unknown == 0 ? tr("Read %1 as %2").arg(QFileInfo(path).fileName(), QString::fromStdString(opened->imported.format))
                                          : tr("Read %1: %2 value(s) the file does not give, highlighted in the Run config panel")
                                                .arg(QFileInfo(path).fileName())
                                                .arg(unknown),
                             10000);
    return true;
}

bool MainWindow::copyRunConfig(const QString& target) {
    const Expected<std::string> text = runconfig::exportRunConfig(document_->scenario(), target.toStdString());
    if (!text) {
        statusBar()->showMessage(tr("Not copied as %1: %2").arg(target, QString::fromStdString(text.error().text())), 10000);
        return false;
    }
    QApplication::clipboard()->setText(QString::fromStdString(*text));
    statusBar()->showMessage(tr("Copied as %1's own config: Open Run Config reads it back").arg(target), 6000);
    return true;
}

void MainWindow::showField(const QString& trainmem_key) {
    if (trainmem_key == QStringLiteral("model")) {
        presets_->focusSearch();
        return;
    }
    QWidget* w = bindings_->widgetFor(trainmem_key);
    if (!w) return;
    if (model_panel_->isAncestorOf(w) && !model_panel_->architectureShown()) model_panel_->setArchitectureShown(true);
    if (!w->isVisible()) return;  // a field that does not apply to this scenario
    panels_->ensureWidgetVisible(w);
    w->setFocus(Qt::OtherFocusReason);
}

bool MainWindow::openFile(const QString& path) {
    Expected<OpenedFile> opened = openJsonFile(path, document_->scenario(), CompareTab::kMaxPins);
    if (!opened) {
        statusBar()->showMessage(QString::fromStdString(opened.error().text()), 10000);
        return false;
    }
    if (opened->kind == JsonFileKind::Scenario) {
        document_->replace(opened->scenario, path);
        // A file's pins replace the tab's; a file without any (older files)
        // leaves the pins being compared as they are.
        if (opened->pins.present) compare_->setPins(std::move(opened->pins.pins));
        if (!opened->pins.errors.isEmpty())
            statusBar()->showMessage(tr("%1 pin(s) not loaded: %2").arg(opened->pins.errors.size()).arg(opened->pins.errors.join(QStringLiteral("; "))), 20000);
        settings_.addRecentFile(path);
        settings_.setLastScenarioPath(path);
        rebuildRecentMenu();
    } else {
        document_->edit([&](Scenario& s) { s = opened->scenario; }, tr("Model from %1").arg(QFileInfo(path).fileName()));
        statusBar()->showMessage(tr("Model from %1").arg(path), 6000);
    }
    return true;
}

bool MainWindow::save() {
    if (document_->path().isEmpty()) return saveAs();
    return saveTo(document_->path());
}

QString MainWindow::documentFolder() const {
    const QString last = settings_.lastScenarioPath();
    if (!last.isEmpty() && QFileInfo(last).absoluteDir().exists()) return QFileInfo(last).absolutePath();
    // A fresh home has no Documents folder yet: a dialog given a folder that
    // does not exist takes its name for the file name ("Documents").
    const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    return documents.isEmpty() || !QDir(documents).exists() ? QDir::homePath() : documents;
}

QString MainWindow::scenarioFileStem() const {
    const Scenario& s = document_->scenario();
    QString stem = QString::fromStdString(!s.name.empty() ? s.name : s.model.name);
    // A file name from a model name: "Llama-3.1-8B (edited)" -> "llama-3.1-8b-edited".
    stem = stem.toLower().replace(QRegularExpression(QStringLiteral("[^a-z0-9._-]+")), QStringLiteral("-"));
    stem = stem.remove(QRegularExpression(QStringLiteral("^-+|-+$")));
    return stem.isEmpty() ? QStringLiteral("scenario") : stem;
}

bool MainWindow::saveAs() {
    QString suggested = document_->path();
    if (suggested.isEmpty()) suggested = documentFolder() + "/" + scenarioFileStem() + ".json";
    const QString path = QFileDialog::getSaveFileName(this, tr("Save scenario"), suggested, tr("Scenario (*.json)"));
    return !path.isEmpty() && saveTo(path);
}

bool MainWindow::saveTo(const QString& path) {
    // The Compare tab's pins are saved with the scenario, in their order.
    const Status saved = saveScenarioFile(document_->scenario(), path.toStdString(),
                                          compare_->pins().empty() ? nlohmann::json(nullptr) : pinsToJson(compare_->pins()));
    if (!saved) {
        QMessageBox::warning(this, tr("Save failed"), QString::fromStdString(saved.error().text()));
        return false;
    }
    document_->setSavedAs(path);
    settings_.addRecentFile(path);
    settings_.setLastScenarioPath(path);
    rebuildRecentMenu();
    statusBar()->showMessage(tr("Saved %1").arg(path), 4000);
    return true;
}

void MainWindow::rebuildRecentMenu() {
    recent_menu_->clear();
    const QStringList files = settings_.recentFiles();
    for (const QString& f : files)
        recent_menu_->addAction(QFileInfo(f).fileName(), this, [this, f] {
            if (!confirmDiscard()) return;
            if (!openFile(f) && !QFileInfo::exists(f)) {
                settings_.removeRecentFile(f);
                rebuildRecentMenu();
            }
        })->setToolTip(f);
    recent_menu_->setEnabled(!files.isEmpty());
}

void MainWindow::exportChartDialog() {
    ChartTab* tab = currentChartTab();
    const bool timeline = tabs_->currentWidget() == timeline_;
    if (!tab && !timeline) return;
    QString filter = tr("PNG image (*.png)");
    const QString base = suggestedExportPath();
    const QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), base + ".png",
                                                      tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"), &filter);
    if (path.isEmpty()) return;
    const std::optional<ExportFormat> format = exportFormatFor(path);
    if (!format) {
        QMessageBox::warning(this, tr("Export"), tr("The file name must end in .png, .svg or .pdf."));
        return;
    }
    ExportSizeDialog ask(settings_.exportSize(), settings_.exportScale(), *format == ExportFormat::Png, this);
    if (ask.exec() != QDialog::Accepted) return;
    const ExportResult r = timeline ? timeline_->exportTo(path, ask.size(), ask.scale())
                                    : exportChart(tab->figureSpec(), path, ask.size(), ask.scale());
    if (!r) {
        QMessageBox::warning(this, tr("Export failed"), r.error);
        return;
    }
    settings_.setExportFolder(QFileInfo(path).absolutePath());
    settings_.setExportSize(ask.size());
    settings_.setExportScale(ask.scale());
    statusBar()->showMessage(tr("Exported %1").arg(path), 4000);
}

QString MainWindow::suggestedExportPath() const {
    QString folder = settings_.exportFolder();
    if (folder.isEmpty() || !QDir(folder).exists()) folder = documentFolder();
    QString view = tabs_->tabText(tabs_->currentIndex()).toLower();
    if (tabs_->currentWidget() == breakdown_ && breakdown_->perStage()) view = QStringLiteral("stages");
    if (tabs_->currentWidget() == step_time_)
        view = chartViewKey(step_time_->perStage() ? ChartView::StepTimeStages : ChartView::StepTime);
    // "llama3.1-8b-fsdp-8xh100-breakdown": which scenario and which view.
    return folder + "/" + scenarioFileStem() + "-" + view;
}

void MainWindow::copyChart() {
    ChartTab* tab = currentChartTab();
    if (tabs_->currentWidget() == timeline_)
        timeline_->copyImage(devicePixelRatioF());
    else if (tab)
        copyChartImage(tab->figureSpec(), tab->chart()->size(), devicePixelRatioF());
    else
        return;
    statusBar()->showMessage(tr("Chart copied as an image"), 3000);
}

void MainWindow::copyTable(bool markdown) {
    // On the Compare tab the table is the comparison (two pins or more):
    // settings that differ, components and totals with their changes.
    if (tabs_->currentWidget() == compare_ && compare_->pins().size() > 1) {
        const FigureTable table = compare_->comparison();
        QApplication::clipboard()->setText(markdown ? figureTableMarkdown(table) : figureTableCsv(table));
        statusBar()->showMessage(markdown ? tr("Comparison copied as Markdown") : tr("Comparison copied as CSV"), 3000);
        return;
    }
    if (!document_->hasResult()) return;
    if (markdown)
        copyTableMarkdown(document_->resultScenario(), document_->result(), units_);
    else
        copyTableCsv(document_->resultScenario(), document_->result());
    statusBar()->showMessage(markdown ? tr("Table copied as Markdown") : tr("Table copied as CSV"), 3000);
}

QString MainWindow::scenarioLinkText() const {
    // Plain (key-sorted) JSON: a pin is stored as its difference from the
    // scenario, found key by key whatever order each was written in.
    nlohmann::json document = nlohmann::json::parse(scenarioToOrderedJson(document_->scenario()).dump());
    if (!compare_->pins().empty()) document["pins"] = pinsToJson(compare_->pins());
    return QString::fromStdString(scenarioLink(document));
}

namespace {

// The pins of a link's document, as a file's are read.
LoadedPins linkPins(const nlohmann::json& document) { return pinsFromJson(document, CompareTab::kMaxPins); }

}  // namespace

bool MainWindow::loadLinkPins(const QString& link) {
    Expected<nlohmann::json> document = readScenarioLink(link.toStdString());
    if (!document) return false;
    LoadedPins pins = linkPins(*document);
    if (pins.present) compare_->setPins(std::move(pins.pins));
    if (!pins.errors.isEmpty())
        statusBar()->showMessage(tr("%1 pin(s) not loaded: %2").arg(pins.errors.size()).arg(pins.errors.join(QStringLiteral("; "))), 20000);
    return pins.errors.isEmpty();
}

bool MainWindow::openLink(const QString& link) {
    Expected<nlohmann::json> document = readScenarioLink(link.toStdString());
    Expected<Scenario> scenario = document ? scenarioFromJson(*document) : Expected<Scenario>(document.error());
    if (!scenario) {
        statusBar()->showMessage(tr("Not opened: %1").arg(QString::fromStdString(scenario.error().text())), 12000);
        return false;
    }
    if (!confirmDiscard()) return false;
    document_->replace(*scenario);
    LoadedPins pins = linkPins(*document);
    compare_->setPins(std::move(pins.pins));  // a link without pins has none
    if (!pins.errors.isEmpty())
        statusBar()->showMessage(tr("%1 pin(s) not loaded: %2").arg(pins.errors.size()).arg(pins.errors.join(QStringLiteral("; "))), 20000);
    else
        statusBar()->showMessage(tr("Opened the link: %1").arg(QString::fromStdString(scenario->name.empty() ? scenario->model.name : scenario->name)), 6000);
    return true;
}

bool MainWindow::pasteText(const QString& text) {
    const std::string given = text.trimmed().toStdString();
    if (isScenarioLink(given)) return openLink(text);
    Expected<nlohmann::json> json = parseJsonText(given, "the clipboard");
    if (!json || !json->is_object()) {
        statusBar()->showMessage(tr("Nothing to paste: the clipboard holds no trainmem: link and no scenario or config.json JSON%1")
                                     .arg(json ? QString() : QStringLiteral(" (%1)").arg(QString::fromStdString(json.error().text()))),
                                 10000);
        return false;
    }
    if (classifyJson(*json) == JsonFileKind::Scenario) {
        Expected<Scenario> scenario = scenarioFromJson(*json);
        if (!scenario) {
            statusBar()->showMessage(tr("Not pasted: %1").arg(QString::fromStdString(scenario.error().text())), 12000);
            return false;
        }
        if (!confirmDiscard()) return false;
        document_->replace(*scenario);
        LoadedPins pins = pinsFromJson(*json, CompareTab::kMaxPins);
        if (pins.present) compare_->setPins(std::move(pins.pins));
        statusBar()->showMessage(tr("Pasted a scenario"), 4000);
        return true;
    }
    Expected<ImportedModel> imported = importHuggingFaceConfig(*json);
    if (!imported) {
        statusBar()->showMessage(tr("Not pasted: %1").arg(QString::fromStdString(imported.error().text())), 12000);
        return false;
    }
    // As an opened config.json: only the model is replaced, one undo step.
    document_->edit(
        [&](Scenario& s) {
            s.model = imported->model;
            if (s.model.name.empty()) s.model.name = "pasted config.json";
            s.model_preset.clear();
            s.warnings = imported->warnings;
        },
        tr("Model from the clipboard"));
    statusBar()->showMessage(tr("Pasted a config.json: the model is %1").arg(QString::fromStdString(document_->scenario().model.name)), 6000);
    return true;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.size() == 1 && urls.front().isLocalFile()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.size() != 1 || !urls.front().isLocalFile()) return;
    const QString path = urls.front().toLocalFile();
    // A training stack's run config (its name, or a DeepSpeed JSON's keys):
    // an undoable step with its report, as File > Open Run Config.
    if (isRunConfigFile(path)) {
        if (openRunConfigFile(path)) event->acceptProposedAction();
        return;
    }
    // A dropped scenario replaces the open one; a config.json only its model.
    Expected<nlohmann::json> json = readJsonFile(path.toStdString());
    if (json && classifyJson(*json) == JsonFileKind::Scenario && !confirmDiscard()) return;
    if (openFile(path)) event->acceptProposedAction();
}

}  // namespace trainmem::ui
