#include "ui/main_window.h"

#include <QAbstractScrollArea>
#include <QActionGroup>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QUndoStack>
#include <QUndoView>
#include <QVBoxLayout>

#include "ui/breakdown_tab.h"
#include "ui/breakdown_table.h"
#include "ui/chart_style.h"
#include "core/scenario/scenario_fields.h"
#include "ui/cli_command.h"
#include "ui/compare_tab.h"
#include "ui/field_bindings.h"
#include "ui/hardware_panel.h"
#include "ui/layout_finder_panel.h"
#include "ui/memory_chart.h"
#include "ui/model_panel.h"
#include "ui/optimizer_tab.h"
#include "ui/parallelism_panel.h"
#include "ui/preset_picker.h"
#include "ui/run_config_panel.h"
#include "ui/scenario_files.h"
#include "ui/step_time_tab.h"
#include "ui/timeline_tab.h"
#include "ui/training_panel.h"
#include "ui/undo_keys.h"
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
    // Find a Layout first: its handler of an edit then runs before every other
    // panel's and starts the search, which runs beside their work for the
    // edit (Qt calls a signal's slots in the order they were connected).
    layout_finder_ = new LayoutFinderPanel(document_);

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
    // Where the time goes, beside where the memory goes (issue 26).
    step_time_ = new StepTimeTab(document_);
    tabs_->addTab(step_time_, tr("Step time"));
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

    // What an opened run config gave: read, defaulted, unknown, not representable.
    run_config_panel_ = new RunConfigPanel(document_);
    run_config_dock_ = new QDockWidget(tr("Run config"), this);
    run_config_dock_->setObjectName(QStringLiteral("run_config_report"));
    run_config_dock_->setWidget(run_config_panel_);
    addDockWidget(Qt::BottomDockWidgetArea, run_config_dock_);
    run_config_dock_->hide();
    connect(run_config_panel_, &RunConfigPanel::fieldRequested, this, &MainWindow::showField);

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
    connect(step_time_, &StepTimeTab::docPageRequested, this, &MainWindow::openDocPage);

    // A chart is a QGraphicsView, which takes every drag for its scene and
    // then ignores the drop: a config.json dropped on the chart was refused.
    // Without it the drag goes up to the window (dropEvent below).
    for (QAbstractScrollArea* view : tabs_->findChildren<QAbstractScrollArea*>())
        if (view->acceptDrops() || view->viewport()->acceptDrops()) {
            view->setAcceptDrops(false);
            view->viewport()->setAcceptDrops(false);
        }

    buildMenus();
    sendUndoKeysToWindow(this);
    followColourScheme();
    connect(document_, &ScenarioDocument::changed, this, &MainWindow::onDocumentChanged);
    // Unsaved work is kept safe while editing (issue 27, item 7): every
    // change, pins' included (they are undo steps), schedules an autosave.
    autosave_ = new QTimer(this);
    autosave_->setSingleShot(true);
    connect(autosave_, &QTimer::timeout, this, [this] { saveSession(SessionEnd::Running); });
    connect(document_, &ScenarioDocument::changed, this, &MainWindow::scheduleAutosave);
    connect(document_->undoStack(), &QUndoStack::indexChanged, this, &MainWindow::scheduleAutosave);
    connect(document_, &ScenarioDocument::fileStateChanged, this, &MainWindow::updateTitle);
    connect(presets_, &PresetPicker::openConfigRequested, this, &MainWindow::openConfigDialog);
    connect(presets_, &PresetPicker::failed, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });

    setUnits(settings_.units());
    if (!settings_.problem().isEmpty()) {
        session_problem_ = settings_.problem();
        statusBar()->showMessage(session_problem_, 20000);
    }
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

MainWindow::~MainWindow() {
    // The document is a child: QWidget's destructor deletes it after this
    // one has run, and its undo stack's clear() then signals indexChanged.
    // Nothing of this window may answer by then (UBSan: a call on a
    // MainWindow already destroyed).
    disconnect(document_->undoStack(), nullptr, this, nullptr);
    disconnect(document_, nullptr, this, nullptr);
    delete bindings_;
}

ChartTab* MainWindow::currentChartTab() const { return qobject_cast<ChartTab*>(tabs_->currentWidget()); }

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&New"), QKeySequence::New, this, &MainWindow::newScenario);
    file->addAction(tr("&Open Scenario…"), QKeySequence::Open, this, &MainWindow::openScenarioDialog);
    file->addAction(tr("Open &config.json…"), QKeySequence(tr("Ctrl+Shift+O")), this, &MainWindow::openConfigDialog);
    file->addAction(tr("Open R&un Config…"), QKeySequence(tr("Ctrl+Alt+O")), this, &MainWindow::openRunConfigDialog)
        ->setToolTip(tr("A torchtitan TOML, torchtune, axolotl, LLaMA-Factory or Accelerate YAML, DeepSpeed JSON, "
                        "Megatron-LM launch script or its rank-0 log"));
    file->addAction(tr("Open Memory S&napshot…"), this, [this] {
        tabs_->setCurrentWidget(timeline_);
        timeline_->openSnapshotDialog();
    });
    recent_menu_ = file->addMenu(tr("Open &Recent"));
    rebuildRecentMenu();
    file->addSeparator();
    file->addAction(tr("&Save"), QKeySequence::Save, this, &MainWindow::save);
    // QKeySequence::SaveAs is empty on X11 desktops other than GNOME/KDE: name it.
    file->addAction(tr("Save &As…"), QKeySequence(tr("Ctrl+Shift+S")), this, &MainWindow::saveAs);
    file->addSeparator();
    file->addAction(tr("&Export Chart…"), QKeySequence(tr("Ctrl+E")), this, &MainWindow::exportChartDialog);
    // The pins' bars with the table of settings and changes under them, one
    // figure for a design doc (the Compare tab's Export Chart is the same).
    file->addAction(tr("Export Co&mparison…"), this, [this] {
        if (compare_->pins().empty()) {
            statusBar()->showMessage(tr("Nothing to export: pin scenarios in the Compare tab first (Ctrl+Shift+P)"), 6000);
            return;
        }
        tabs_->setCurrentWidget(compare_);
        exportChartDialog();
    });
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
    // The scenario and its pins as one line for a chat, an issue or a design
    // doc; the app (and trainmem-cli --scenario) opens it (core/scenario/scenario_link.h).
    edit->addAction(tr("Copy as &Link"), QKeySequence(tr("Ctrl+Alt+L")), this, [this] {
        const QString link = scenarioLinkText();
        QApplication::clipboard()->setText(link);
        statusBar()->showMessage(tr("Link copied (%1 characters%2): paste it into trainmem, or give it to trainmem-cli --scenario")
                                     .arg(link.size())
                                     .arg(compare_->pins().empty() ? QString() : tr(", with %1 pin(s)").arg(compare_->pins().size())),
                                 6000);
    });
    // A link, a scenario's JSON or a config.json's, from the clipboard.
    // Ctrl+V reaches it when no text field has focus (a field pastes into
    // itself: QLineEdit claims the key); Ctrl+Shift+V from anywhere.
    QAction* paste = edit->addAction(tr("&Paste Link or Scenario"), this, [this] { pasteText(QApplication::clipboard()->text()); });
    paste->setShortcuts({QKeySequence::Paste, QKeySequence(tr("Ctrl+Shift+V"))});
    // The scenario as a training stack's own file (issue 25): a layout
    // found here goes to the run as the stack reads it.
    QMenu* as_run = edit->addMenu(tr("Copy as R&un Config"));
    const std::pair<const char*, QString> targets[] = {{"torchtitan", tr("torchtitan TOML")},
                                                       {"torchtune", tr("torchtune YAML")},
                                                       {"deepspeed", tr("DeepSpeed JSON")},
                                                       {"megatron", tr("Megatron-LM flags")},
                                                       {"accelerate", tr("Accelerate YAML")}};
    for (const auto& [target, label] : targets)
        as_run->addAction(label, this, [this, t = QString::fromLatin1(target)] { copyRunConfig(t); });
    // The scenario as its file would hold it (without pins), for an issue,
    // a chat or a file of one's own: trainmem-cli --scenario reads it back.
    edit->addAction(tr("Copy Scenario as &JSON"), this, [this] {
        QApplication::clipboard()->setText(QString::fromStdString(scenarioToOrderedJson(document_->scenario()).dump(2)) + "\n");
        statusBar()->showMessage(tr("Scenario copied as JSON"), 3000);
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
        else if (static_cast<int>(compare_->pins().size()) >= CompareTab::kMaxPins)  // say the reason that holds
            statusBar()->showMessage(tr("Cannot pin: the Compare tab holds %1 pins already; remove one first")
                                         .arg(CompareTab::kMaxPins), 6000);
        else
            statusBar()->showMessage(tr("Cannot pin: fix the marked field first"), 6000);
    });
    tools->addAction(tr("&Find a Layout…"), QKeySequence(tr("Ctrl+L")), this, [this] {
        layout_finder_->takeScenarioDefaults();
        if (layout_dock_->isFloating() && !layout_dock_->isVisible())
            layout_dock_->move(geometry().center() - layout_dock_->rect().center());
        layout_dock_->show();
        layout_dock_->raise();
    });

    buildHelpMenu();
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
        case ChartView::StepTime:
        case ChartView::StepTimeStages:
            step_time_->setPerStage(view == ChartView::StepTimeStages);
            tabs_->setCurrentWidget(step_time_);
            break;
        case ChartView::Optimizers: tabs_->setCurrentWidget(optimizers_); break;
        case ChartView::Compare: tabs_->setCurrentWidget(compare_); break;
        case ChartView::Timeline: tabs_->setCurrentWidget(timeline_); break;
    }
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

void MainWindow::markUnknownFields() {
    const QStringList unset = run_config_panel_->unsetUnknowns();
    QList<QWidget*> wanted;
    for (const QString& key : unset)
        if (QWidget* w = bindings_->widgetFor(key)) wanted << w;
    for (QWidget* w : wanted)
        if (!unknown_fields_.contains(w)) unknown_fields_ << w;
    for (const QPointer<QWidget>& w : unknown_fields_) {
        if (!w || w == bindings_->marked()) continue;  // the error's mark keeps its style
        w->setStyleSheet(wanted.contains(w.data())
                             ? QStringLiteral("%1 { border: 2px solid #e0a000; border-radius: 3px; }")
                                   .arg(QString::fromLatin1(w->metaObject()->className()))
                             : QString());
    }
}

void MainWindow::onDocumentChanged() {
    QWidget* marked = bindings_->show(document_->error());
    // A marked field inside the collapsed architecture: open it, then mark
    // again so the field is scrolled into view.
    if (marked && model_panel_->isAncestorOf(marked) && !model_panel_->architectureShown()) {
        model_panel_->setArchitectureShown(true);
        bindings_->show(document_->error());
    }
    markUnknownFields();
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
    // "Discard" means discarded: the next start does not bring the edits
    // back (issue 27, item 6).
    autosave_->stop();
    saveSession(discarded_ ? SessionEnd::EditsDiscarded : SessionEnd::Closed);
    settings_.setWindowGeometry(saveGeometry());
    settings_.setWindowState(saveState());
    settings_.sync();
    event->accept();
}

}  // namespace trainmem::ui
