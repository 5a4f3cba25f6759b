#pragma once
// Tab: one training step of one pipeline stage through time, by component,
// with a measured PyTorch memory snapshot over it when one is opened.
// Redraws when the document changes, only while visible (like ChartTab);
// an invalid scenario leaves the last valid timeline drawn, marked stale.
#include <optional>

#include <QWidget>

#include "core/report/report.h"
#include "ui/painting_export.h"
#include "ui/scenario_document.h"
#include "ui/snapshot_overlay.h"
#include "ui/timeline_plot.h"

class QComboBox;
class QLabel;
class QPushButton;

namespace trainmem::ui {

class TimelineView;

class TimelineTab : public QWidget {
    Q_OBJECT
public:
    explicit TimelineTab(ScenarioDocument* document, QWidget* parent = nullptr);

    void setUnits(Units units);
    Units units() const { return units_; }

    // Reads a snapshot (torch.cuda.memory._dump_snapshot) and draws it over
    // the estimate; false, with the reason in the tab's status line, when the
    // file cannot be read. The previous snapshot stays in that case.
    bool openSnapshot(const QString& path);
    void openSnapshotDialog();
    void removeSnapshot();
    bool hasSnapshot() const { return snapshot_.has_value(); }

    // Picks a stage; -1 follows the heaviest again.
    void setStage(int stage);

    // The drawing as shown, brought up to date first (export, tests).
    const TimelineDrawing& currentDrawing();
    ExportResult exportTo(const QString& path, QSize size, qreal scale = 1.0);
    QImage renderImage(QSize size, qreal scale = 1.0);
    // The picture at the view's size onto the clipboard (Edit > Copy Chart Image).
    void copyImage(qreal scale = 1.0);

    TimelineView* view() const { return view_; }
    QComboBox* stageSelector() const { return stage_; }
    QString statusText() const;

protected:
    void showEvent(QShowEvent* event) override;

private:
    void redrawSoon();
    void redraw();
    void refreshStages();
    void showStatus(const QString& text, bool error);

    ScenarioDocument* document_;
    QComboBox* stage_;
    QPushButton* open_;
    QPushButton* remove_;
    QLabel* status_;
    TimelineView* view_;
    Units units_ = Units::GiB;
    bool outdated_ = true;
    std::optional<int64_t> chosen_stage_;  // nullopt: the heaviest
    std::optional<MeasuredSnapshot> snapshot_;
    QString snapshot_error_;
};

}  // namespace trainmem::ui
