#pragma once
// The window: panels on the left, chart tabs on the right, the breakdown
// table and status line under them; menus for files, export and clipboard;
// drag and drop of scenarios and config.json files.
#include <QMainWindow>
#include <QPointer>

#include "core/report/report.h"
#include "ui/app_settings.h"
#include "ui/chart_views.h"
#include "ui/scenario_document.h"

#include <nlohmann/json.hpp>

class QActionGroup;
class QTimer;
class QDockWidget;
class QMenu;
class QScrollArea;
class QSplitter;
class QTabWidget;

namespace trainmem::ui {

class BreakdownTab;
class BreakdownTable;
class ChartTab;
class CompareTab;
class LayoutFinderPanel;
class EstimateStatus;
class FieldBindings;
class HardwarePanel;
class ModelPanel;
class OptimizerTab;
class PresetPicker;
class RunConfigPanel;
class StepTimeTab;
class TimelineTab;

// `window` made to fit `available` (a screen's available geometry): no larger
// than it unless `minimum` is, and moved onto it.
QRect fitToScreen(QRect window, const QRect& available, QSize minimum);

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    ScenarioDocument* document() { return document_; }
    BreakdownTab* breakdownTab() { return breakdown_; }
    StepTimeTab* stepTimeTab() { return step_time_; }
    OptimizerTab* optimizerTab() { return optimizers_; }
    CompareTab* compareTab() { return compare_; }
    TimelineTab* timelineTab() { return timeline_; }
    LayoutFinderPanel* layoutFinder() { return layout_finder_; }
    QDockWidget* undoHistory() { return history_dock_; }
    QWidget* unitsToggle() { return units_toggle_; }
    QTabWidget* tabs() { return tabs_; }
    PresetPicker* presetPicker() { return presets_; }
    HardwarePanel* hardwarePanel() { return hardware_; }
    ModelPanel* modelPanel() { return model_panel_; }
    FieldBindings& fieldBindings() { return *bindings_; }
    ChartTab* currentChartTab() const;

    // Opens a scenario file or a config.json (decided by content); false and a
    // message in the status bar when it cannot be read.
    bool openFile(const QString& path);
    // Opens a training stack's run config (ui/run_config_files.h) as one
    // undoable step and shows its report in the Run config panel; false,
    // changing nothing, with the file's error in the status bar.
    bool openRunConfigFile(const QString& path);
    RunConfigPanel* runConfigPanel() { return run_config_panel_; }
    QDockWidget* runConfigDock() { return run_config_dock_; }
    // Brings the field that edits `trainmem_key` into view and focuses it
    // ("model": the preset search).
    void showField(const QString& trainmem_key);
    bool saveTo(const QString& path);
    void setUnits(Units units);
    // Brings a view to the front: its tab (stages = Breakdown, one bar per stage).
    void showView(ChartView view);
    // The last session, as closing the window (or, after a crash, the last
    // autosave) left it: the scenario with its unsaved edits (undoable back
    // to its file), the file, the pins and the tab. False, changing nothing,
    // when there is none; a session that cannot be read or applied is put
    // aside (sessionFilePath() + ".rejected"), and the status bar says so.
    bool restoreSession();
    // The Compare pins of a scenario file, as openFile reads them (for a
    // scenario given on the command line); false when some could not be read.
    bool loadPins(const QString& scenario_path);
    // How the session being saved ends: still running (the autosave: a
    // start that finds it offers it back as work recovered from a crash),
    // closed, or closed with its unsaved edits discarded (the next start
    // opens the file as saved; an unsaved new scenario is dropped).
    enum class SessionEnd { Running, Closed, EditsDiscarded };
    // What restoreSession() reads: written atomically to sessionFilePath(),
    // kAutosaveDelayMs after a change while editing, and when the window
    // closes. False, with a message, when it cannot be written.
    bool saveSession(SessionEnd end = SessionEnd::Closed);
    QString sessionFilePath() const;
    static constexpr int kAutosaveDelayMs = 2000;
    // Where the settings could not be used or a session not restored, the
    // last message said about it (empty when all went well).
    QString sessionProblem() const { return session_problem_; }
    // A trainmem: link (core/scenario/scenario_link.h): its scenario replaces the
    // open one (asking about unsaved changes first), its pins the tab's.
    // False, changing nothing, with the reason in the status bar.
    bool openLink(const QString& link);
    // The pins of a link whose scenario is already open (--scenario LINK).
    bool loadLinkPins(const QString& link);
    // Edit > Paste: a trainmem: link, a scenario's JSON or a config.json's.
    bool pasteText(const QString& text);
    // Edit > Copy as Link: the scenario and its pins as a trainmem: link.
    QString scenarioLinkText() const;
    // Edit > Copy as Run Config > TARGET (runconfig::exportTargets():
    // torchtitan, torchtune, deepspeed, megatron, accelerate): the scenario
    // as that stack's own file or flags, which Open Run Config reads back.
    // False, with what the target cannot express in the status bar.
    bool copyRunConfig(const QString& target);

protected:
    void closeEvent(QCloseEvent* event) override;
    void changeEvent(QEvent* event) override;
    void showEvent(QShowEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    // main_window.cpp: panels, tabs, menus; main_window_files.cpp: open,
    // save, export, clipboard, drops; main_window_session.cpp: the last
    // session; main_window_help.cpp: the Help menu.
    void buildMenus();
    void buildHelpMenu();
    void newScenario();
    void openScenarioDialog();
    void openConfigDialog();
    void openRunConfigDialog();
    bool save();
    bool saveAs();
    void exportChartDialog();
    void copyChart();
    void copyTable(bool markdown);
    void rebuildRecentMenu();
    void updateTitle();
    void onDocumentChanged();
    bool confirmDiscard();  // false when the user cancels; discarded_ tells whether the answer was Discard
    bool applySession(const nlohmann::json& session, std::string& why);
    void scheduleAutosave();
    void followColourScheme();  // chart inks from the palette: dark or light
    // The fields of a run config's unknowns not set yet, bordered in amber
    // (the error's red mark wins where both apply).
    void markUnknownFields();

public:
    // Where file dialogs start: the last scenario's folder, else Documents.
    QString documentFolder() const;
    // The scenario as a file name: "llama3.1-8b-fsdp-8xh100", "llama-3.1-8b-edited".
    QString scenarioFileStem() const;
    // The Export dialog's suggestion, without suffix: folder/stem-view.
    QString suggestedExportPath() const;
    // Help > Keyboard Shortcuts: every menu entry with a shortcut, by menu (HTML).
    QString shortcutList() const;
    // Help > Documentation: opens a docs page (ui/help_docs.h) in the
    // desktop's viewer; says where it looked when the docs are not found.
    bool openDocPage(const QString& file);

private:

    AppSettings settings_;
    QTimer* autosave_ = nullptr;
    std::string last_session_text_;  // what the session file holds, to skip writing it again
    bool discarded_ = false;
    bool session_checked_ = false;  // the session file found at start was restored or put aside
    QString session_problem_;
    ScenarioDocument* document_;
    FieldBindings* bindings_;
    PresetPicker* presets_ = nullptr;
    HardwarePanel* hardware_ = nullptr;
    ModelPanel* model_panel_ = nullptr;
    QScrollArea* panels_ = nullptr;
    QSplitter* splitter_ = nullptr;
    QSplitter* right_ = nullptr;
    QList<int> under_sizes_;  // the tabs' and the table's heights before the Compare tab hid the table
    QTabWidget* tabs_ = nullptr;
    BreakdownTab* breakdown_ = nullptr;
    StepTimeTab* step_time_ = nullptr;
    OptimizerTab* optimizers_ = nullptr;
    CompareTab* compare_ = nullptr;
    TimelineTab* timeline_ = nullptr;
    LayoutFinderPanel* layout_finder_ = nullptr;
    QDockWidget* layout_dock_ = nullptr;
    QDockWidget* history_dock_ = nullptr;
    RunConfigPanel* run_config_panel_ = nullptr;
    QDockWidget* run_config_dock_ = nullptr;
    QList<QPointer<QWidget>> unknown_fields_;  // every field markUnknownFields has bordered
    BreakdownTable* table_ = nullptr;
    EstimateStatus* status_ = nullptr;
    QMenu* recent_menu_ = nullptr;
    QActionGroup* units_group_ = nullptr;
    QWidget* units_toggle_ = nullptr;  // GiB | GB at the right of the tab bar: units_group_'s actions as buttons
    Units units_ = Units::GiB;
    bool charts_styled_ = false;
};

}  // namespace trainmem::ui
