#include "ui/main_window.h"

#include <QActionGroup>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDesktopServices>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QRegularExpression>
#include <QScreen>
#include <QScrollArea>
#include <QStandardPaths>
#include <QScrollBar>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolButton>
#include <QUndoView>
#include <QVBoxLayout>

#include "ui/breakdown_tab.h"
#include "ui/breakdown_table.h"
#include "ui/chart_export.h"
#include "ui/chart_style.h"
#include "ui/cli_command.h"
#include "ui/compare_tab.h"
#include "ui/export_size_dialog.h"
#include "ui/field_bindings.h"
#include "ui/hardware_panel.h"
#include "ui/help_docs.h"
#include "ui/layout_finder_panel.h"
#include "ui/memory_chart.h"
#include "ui/model_panel.h"
#include "ui/optimizer_tab.h"
#include "ui/parallelism_panel.h"
#include "ui/preset_picker.h"
#include "ui/scenario_files.h"
#include "ui/scenario_pins.h"
#include "ui/timeline_tab.h"
#include "ui/training_panel.h"
#include "ui/units_toggle.h"
#include "ui/wheel_guard.h"

// Resources compiled into a static library must be registered by name, from
// the global namespace.
static void registerResources() { Q_INIT_RESOURCE(trainmem); }

namespace trainmem::ui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), document_(new ScenarioDocument(this)), bindings_(new FieldBindings()) {
    registerResources();
    setWindowIcon(QIcon(QStringLiteral(":/trainmem/trainmem.svg")));
    setAcceptDrops(true);

    // Left: the scrolling column of inputs.
    auto* column_widget = new QWidget();
    auto* column = new QVBoxLayout(column_widget);
    column->setContentsMargins(6, 6, 6, 6);
    presets_ = new PresetPicker(document_, column_widget);
    column->addWidget(presets_);
    // What people change most comes first: the GPU, then training and the
    // parallel layout; the model's architecture last, collapsed.
    hardware_ = new HardwarePanel(document_, bindings_, column_widget);
    column->addWidget(hardware_);
    column->addWidget(new TrainingPanel(document_, bindings_, column_widget));
    column->addWidget(new ParallelismPanel(document_, bindings_, column_widget));
    model_panel_ = new ModelPanel(document_, bindings_, column_widget);
    column->addWidget(model_panel_);
    column->addStretch();
    panels_ = new QScrollArea();
    panels_->setWidget(column_widget);
    panels_->setWidgetResizable(true);
    // A wide model (405B's numbers) can make the column wider than its pane:
    // then it scrolls sideways instead of being cut.
    panels_->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    guardWheel(column_widget);

    // Right: chart tabs over the table and status line.
    tabs_ = new QTabWidget();
    breakdown_ = new BreakdownTab(document_);
    optimizers_ = new OptimizerTab(document_);
    compare_ = new CompareTab(document_);
    tabs_->addTab(breakdown_, tr("Breakdown"));
    tabs_->addTab(optimizers_, tr("Optimizers"));
    tabs_->addTab(compare_, tr("Compare"));
    timeline_ = new TimelineTab(document_);
    tabs_->addTab(timeline_, tr("Timeline"));
    auto* under = new QWidget();
    auto* under_layout = new QVBoxLayout(under);
    under_layout->setContentsMargins(4, 0, 4, 4);
    table_ = new BreakdownTable(document_, under);
    status_ = new EstimateStatus(document_, under);
    under_layout->addWidget(table_, 1);
    under_layout->addWidget(status_);
    right_ = new QSplitter(Qt::Vertical);
    right_->addWidget(tabs_);
    right_->addWidget(under);
    right_->setStretchFactor(0, 3);
    right_->setStretchFactor(1, 1);

    splitter_ = new QSplitter(Qt::Horizontal);
    splitter_->addWidget(panels_);
    splitter_->addWidget(right_);
    splitter_->setStretchFactor(1, 1);
    splitter_->setCollapsible(0, false);
    setCentralWidget(splitter_);

    layout_finder_ = new LayoutFinderPanel(document_);
    layout_dock_ = new QDockWidget(tr("Find a layout"), this);
    layout_dock_->setObjectName(QStringLiteral("layout_finder"));  // saveState() needs a name
    layout_dock_->setWidget(layout_finder_);
    addDockWidget(Qt::RightDockWidgetArea, layout_dock_);
    // Floating at first: its tables want more width than a side dock leaves.
    layout_dock_->setFloating(true);
    layout_dock_->resize(1120, 640);
    layout_dock_->hide();
    guardWheel(layout_finder_);

    // Every step that Undo can take back, clickable to jump to any of them.
    auto* history = new QUndoView(document_->undoStack());
    history->setEmptyLabel(tr("<opened scenario>"));
    history_dock_ = new QDockWidget(tr("Undo history"), this);
    history_dock_->setObjectName(QStringLiteral("undo_history"));
    history_dock_->setWidget(history);
    addDockWidget(Qt::RightDockWidgetArea, history_dock_);
    history_dock_->hide();

    // On the Compare tab its own table gives every pin's components, so the
    // breakdown table under the tabs gives its height to it (at 1000 x 700
    // the comparison showed 3 rows otherwise); the status line stays.
    connect(tabs_, &QTabWidget::currentChanged, this, [this] {
        const bool comparing = tabs_->currentWidget() == compare_;
        if (comparing == table_->isHidden()) return;
        if (comparing) {
            under_sizes_ = right_->sizes();
            table_->hide();
            const int status = right_->widget(1)->minimumSizeHint().height();
            right_->setSizes({under_sizes_[0] + under_sizes_[1] - status, status});
        } else {
            table_->show();
            if (under_sizes_.size() == 2) right_->setSizes(under_sizes_);
        }
    });

    // Click a stage's bar: the table under the tabs shows that stage.
    connect(breakdown_, &BreakdownTab::stageChosen, table_, &BreakdownTable::showStage);

    buildMenus();
    followColourScheme();
    connect(document_, &ScenarioDocument::changed, this, &MainWindow::onDocumentChanged);
    connect(document_, &ScenarioDocument::fileStateChanged, this, &MainWindow::updateTitle);
    connect(presets_, &PresetPicker::openConfigRequested, this, &MainWindow::openConfigDialog);
    connect(presets_, &PresetPicker::failed, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });

    setUnits(settings_.units());
    resize(1500, 940);
    if (!restoreGeometry(settings_.windowGeometry())) resize(1500, 940);
    restoreState(settings_.windowState());
    // A geometry saved on a larger screen, or the default on a small one,
    // must not open past the screen's edge.
    if (const QScreen* screen = this->screen() ? this->screen() : QGuiApplication::primaryScreen()) {
        const QRect fitted = fitToScreen(geometry(), screen->availableGeometry(), minimumSizeHint());
        if (fitted != geometry()) setGeometry(fitted);
    }
    // The charts get most of the height; the table keeps about six rows.
    right_->setSizes({680, 200});
    updateTitle();
}

MainWindow::~MainWindow() { delete bindings_; }

ChartTab* MainWindow::currentChartTab() const { return qobject_cast<ChartTab*>(tabs_->currentWidget()); }

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&New"), QKeySequence::New, this, &MainWindow::newScenario);
    file->addAction(tr("&Open Scenario…"), QKeySequence::Open, this, &MainWindow::openScenarioDialog);
    file->addAction(tr("Open &config.json…"), this, &MainWindow::openConfigDialog);
    file->addAction(tr("Open Memory S&napshot…"), this, [this] {
        tabs_->setCurrentWidget(timeline_);
        timeline_->openSnapshotDialog();
    });
    recent_menu_ = file->addMenu(tr("Open &Recent"));
    rebuildRecentMenu();
    file->addSeparator();
    file->addAction(tr("&Save"), QKeySequence::Save, this, &MainWindow::save);
    file->addAction(tr("Save &As…"), QKeySequence::SaveAs, this, &MainWindow::saveAs);
    file->addSeparator();
    file->addAction(tr("&Export Chart…"), QKeySequence(tr("Ctrl+E")), this, &MainWindow::exportChartDialog);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = document_->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcuts(QKeySequence::Undo);
    QAction* redo = document_->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcuts(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);
    QAction* show_history = history_dock_->toggleViewAction();
    show_history->setText(tr("Undo &History"));
    show_history->setShortcut(QKeySequence(tr("Ctrl+Shift+H")));
    edit->addAction(show_history);
    edit->addSeparator();
    edit->addAction(tr("Copy Chart &Image"), QKeySequence(tr("Ctrl+Shift+C")), this, &MainWindow::copyChart);
    edit->addAction(tr("Copy Table as &Markdown"), this, [this] { copyTable(true); });
    edit->addAction(tr("Copy Table as &CSV"), this, [this] { copyTable(false); });
    edit->addAction(tr("Copy as trainmem-cli Comman&d"), QKeySequence(tr("Ctrl+Alt+C")), this, [this] {
        const Expected<QString> line = cliCommand(document_->scenario(), document_->path());
        if (!line) {
            statusBar()->showMessage(tr("No command line: %1").arg(QString::fromStdString(line.error().text())), 8000);
            return;
        }
        QApplication::clipboard()->setText(*line);
        statusBar()->showMessage(tr("Copied: %1").arg(*line), 6000);
    });

    QMenu* view = menuBar()->addMenu(tr("&View"));
    units_group_ = new QActionGroup(this);
    struct UnitChoice {
        QString label, short_label, tip;
        Units units;
    };
    for (const UnitChoice& u : {UnitChoice{tr("Units: &GiB (1024³ bytes)"), tr("GiB"), tr("Sizes in GiB (1024³ bytes)"), Units::GiB},
                                UnitChoice{tr("Units: G&B (10⁹ bytes)"), tr("GB"), tr("Sizes in GB (10⁹ bytes)"), Units::GB}}) {
        QAction* a = view->addAction(u.label);
        a->setIconText(u.short_label);  // what the toggle on the tab bar shows
        a->setToolTip(u.tip);
        a->setCheckable(true);
        a->setData(static_cast<int>(u.units));
        units_group_->addAction(a);
        connect(a, &QAction::triggered, this, [this, units = u.units] { setUnits(units); });
    }
    // The same two actions as buttons at the right of the tab bar; both go
    // through setUnits, which saves the choice.
    units_toggle_ = new UnitsToggle(units_group_);
    tabs_->setCornerWidget(units_toggle_, Qt::TopRightCorner);
    view->addSeparator();
    view->addAction(tr("&Find a Preset"), QKeySequence::Find, this, [this] { presets_->focusSearch(); });
    view->addSeparator();
    for (int i = 0; i < tabs_->count(); ++i)
        view->addAction(tabs_->tabText(i), QKeySequence(QStringLiteral("Ctrl+%1").arg(i + 1)), this,
                        [this, i] { tabs_->setCurrentIndex(i); });

    QMenu* tools = menuBar()->addMenu(tr("&Tools"));
    // Pinning from anywhere: change a field, pin, change again, without
    // going to the Compare tab between.
    tools->addAction(tr("&Pin to Compare"), QKeySequence(tr("Ctrl+Shift+P")), this, [this] {
        if (compare_->pin())
            statusBar()->showMessage(tr("Pinned as %1 in the Compare tab").arg(compare_->pins().back().label), 4000);
        else
            statusBar()->showMessage(tr("Cannot pin: fix the marked field first, or remove a pin (at most %1)")
                                         .arg(CompareTab::kMaxPins), 6000);
    });
    tools->addAction(tr("&Find a Layout…"), QKeySequence(tr("Ctrl+L")), this, [this] {
        layout_finder_->takeScenarioDefaults();
        if (layout_dock_->isFloating() && !layout_dock_->isVisible())
            layout_dock_->move(geometry().center() - layout_dock_->rect().center());
        layout_dock_->show();
        layout_dock_->raise();
    });

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard Shortcuts"), QKeySequence(tr("F1")), this, [this] {
        QMessageBox box(QMessageBox::NoIcon, tr("Keyboard shortcuts"), shortcutList(), QMessageBox::Close, this);
        box.setTextFormat(Qt::RichText);
        box.exec();
    });
    QMenu* docs = help->addMenu(tr("&Documentation"));
    for (const DocPage& page : docPages())
        docs->addAction(page.title, this, [this, file = page.file] { openDocPage(file); })->setToolTip(page.file);
    help->addAction(tr("&About trainmem"), this, [this] {
        QMessageBox::about(this, tr("About trainmem"),
                           tr("<b>trainmem</b> %1<br>GPU memory of training large transformers, per GPU, by component.<br>"
                              "Every term, its default and its source: docs/memory-model.md.")
                               .arg(QApplication::applicationVersion()));
    });
}

bool MainWindow::openDocPage(const QString& file) {
    const QString dir = docsDirectory(QApplication::applicationDirPath());
    if (dir.isEmpty()) {
        QMessageBox::information(this, tr("Documentation"),
                                 tr("The documentation was not found. It is looked for in:<br>%1<br><br>It is also online "
                                    "with the source, in its docs/ folder.")
                                     .arg(docsCandidates(QApplication::applicationDirPath()).join(QStringLiteral("<br>")).toHtmlEscaped()));
        return false;
    }
    const QString path = dir + "/" + file;
    if (!QDesktopServices::openUrl(QUrl::fromLocalFile(path))) {
        statusBar()->showMessage(tr("No application opens %1; the page is at %2").arg(file, path), 15000);
        return false;
    }
    statusBar()->showMessage(tr("Opened %1").arg(path), 5000);
    return true;
}

QString MainWindow::shortcutList() const {
    // Read from the menus themselves, so the list cannot fall behind them.
    QString rows;
    for (QAction* top : menuBar()->actions()) {
        if (!top->menu()) continue;
        QString entries;
        for (QAction* a : top->menu()->actions())
            if (!a->isSeparator() && !a->shortcut().isEmpty())
                entries += QStringLiteral("<tr><td>%1</td><td style='padding-left:16px'><b>%2</b></td></tr>")
                               .arg(a->text().remove('&').remove(QRegularExpression(QStringLiteral(" “.*”$"))).toHtmlEscaped(),
                                    a->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped());
        if (!entries.isEmpty())
            rows += QStringLiteral("<tr><td colspan=2 style='padding-top:6px'><i>%1</i></td></tr>").arg(top->text().remove('&')) + entries;
    }
    return QStringLiteral("<table>%1</table><p>Inputs: the mouse wheel changes a field only once it has focus (click or "
                          "Tab); elsewhere it scrolls the column.</p>")
        .arg(rows);
}

void MainWindow::setUnits(Units units) {
    units_ = units;
    for (QAction* a : units_group_->actions()) a->setChecked(a->data().toInt() == static_cast<int>(units));
    for (ChartTab* tab : {static_cast<ChartTab*>(breakdown_), static_cast<ChartTab*>(optimizers_), static_cast<ChartTab*>(compare_)})
        tab->setUnits(units);
    timeline_->setUnits(units);
    layout_finder_->setUnits(units);
    hardware_->setUnits(units);
    table_->setUnits(units);
    status_->setUnits(units);
    settings_.setUnits(units);
}

void MainWindow::showView(ChartView view) {
    switch (view) {
        case ChartView::Breakdown:
        case ChartView::Stages:
            breakdown_->setPerStage(view == ChartView::Stages);
            tabs_->setCurrentWidget(breakdown_);
            break;
        case ChartView::Optimizers: tabs_->setCurrentWidget(optimizers_); break;
        case ChartView::Compare: tabs_->setCurrentWidget(compare_); break;
        case ChartView::Timeline: tabs_->setCurrentWidget(timeline_); break;
    }
}

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
    if (on_disk && session.value("dirty", false)) {
        // The file as saved, then the session's edits as one undoable step.
        document_->replace(*on_disk, path);
        document_->edit([&](Scenario& s) { s = *scenario; }, tr("Unsaved edits from the last session"));
    } else {
        document_->replace(*scenario, on_disk ? path : QString());
    }
    const LoadedPins pins = pinsFromJson(session, CompareTab::kMaxPins);
    compare_->setPins(pins.pins);
    breakdown_->setPerStage(session.value("per_stage", false));
    const int tab = session.value("tab", 0);
    if (tab >= 0 && tab < tabs_->count()) tabs_->setCurrentIndex(tab);
    statusBar()->showMessage(tr("Restored the last session"), 4000);
    return true;
}

void MainWindow::followColourScheme() {
    // Qt 6.4 has no QStyleHints::colorScheme (6.5): the desktop's scheme
    // reaches it as the palette its platform theme sets, so a dark window
    // colour is a dark scheme.
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    if (dark == chartInks().dark && charts_styled_) return;
    charts_styled_ = true;
    setDarkCharts(dark);
    for (ChartTab* tab : {static_cast<ChartTab*>(breakdown_), static_cast<ChartTab*>(optimizers_), static_cast<ChartTab*>(compare_)})
        tab->restyle();
    for (QWidget* w : timeline_->findChildren<QWidget*>()) w->update();  // painted with chartInks() each time
}

void MainWindow::changeEvent(QEvent* event) {
    QMainWindow::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange) followColourScheme();
}

void MainWindow::onDocumentChanged() {
    QWidget* marked = bindings_->show(document_->error());
    // A marked field inside the collapsed architecture: open it, then mark
    // again so the field is scrolled into view.
    if (marked && model_panel_->isAncestorOf(marked) && !model_panel_->architectureShown()) {
        model_panel_->setArchitectureShown(true);
        bindings_->show(document_->error());
    }
    updateTitle();  // the title names the scenario or its model, which an edit may change
}

void MainWindow::updateTitle() {
    const QString name = document_->path().isEmpty()
                             ? QString::fromStdString(document_->scenario().name.empty() ? document_->scenario().model.name
                                                                                          : document_->scenario().name)
                             : QFileInfo(document_->path()).fileName();
    setWindowTitle(QStringLiteral("%1[*] — trainmem").arg(name.isEmpty() ? tr("Untitled") : name));
    setWindowModified(document_->dirty());
}

bool MainWindow::confirmDiscard() {
    if (!document_->dirty()) return true;
    const auto answer = QMessageBox::question(this, tr("Unsaved changes"), tr("Save the changes to this scenario first?"),
                                              QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Cancel) return false;
    return answer == QMessageBox::Discard || save();
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
    const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    return documents.isEmpty() ? QDir::homePath() : documents;
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
    if (!document_->hasResult()) return;
    if (markdown)
        copyTableMarkdown(document_->resultScenario(), document_->result(), units_);
    else
        copyTableCsv(document_->resultScenario(), document_->result());
    statusBar()->showMessage(markdown ? tr("Table copied as Markdown") : tr("Table copied as CSV"), 3000);
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    // The column's true minimum is known only once shown (style, fonts):
    // make the scrolling column wide enough that nothing is cut at its edge.
    const int wanted = panels_->widget()->minimumSizeHint().width() + panels_->verticalScrollBar()->sizeHint().width() +
                       2 * panels_->frameWidth() + 4;
    if (panels_->minimumWidth() < wanted) {
        panels_->setMinimumWidth(wanted);
        splitter_->setSizes({wanted, std::max(400, width() - wanted)});
    }
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!confirmDiscard()) {
        event->ignore();
        return;
    }
    saveSession();
    settings_.setWindowGeometry(saveGeometry());
    settings_.setWindowState(saveState());
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.size() == 1 && urls.front().isLocalFile()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.size() != 1 || !urls.front().isLocalFile()) return;
    const QString path = urls.front().toLocalFile();
    // A dropped scenario replaces the open one; a config.json only its model.
    Expected<nlohmann::json> json = readJsonFile(path.toStdString());
    if (json && classifyJson(*json) == JsonFileKind::Scenario && !confirmDiscard()) return;
    if (openFile(path)) event->acceptProposedAction();
}

}  // namespace trainmem::ui
