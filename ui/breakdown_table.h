#pragma once
// The breakdown as a table under the chart: component, bytes, share of the
// device total and the formula behind it, then the three totals.
#include <QLabel>
#include <QTableWidget>

#include "core/report/report.h"
#include "ui/scenario_document.h"

namespace trainmem::ui {

class BreakdownTable : public QTableWidget {
    Q_OBJECT
public:
    explicit BreakdownTable(ScenarioDocument* document, QWidget* parent = nullptr);
    void setUnits(Units units);
    // Shows pipeline stage `stage` (0-based) at its own peak instead of the
    // heaviest; -1 goes back to the heaviest. Kept across edits while the
    // scenario still has that stage.
    void showStage(int stage);
    int shownStage() const { return stage_; }

private:
    void refresh();

    ScenarioDocument* document_;
    Units units_ = Units::GiB;
    int stage_ = -1;
};

// One line under the table: total, fits or not with headroom, warnings, and
// the error that makes the result stale.
class EstimateStatus : public QLabel {
    Q_OBJECT
public:
    explicit EstimateStatus(ScenarioDocument* document, QWidget* parent = nullptr);
    void setUnits(Units units);
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

private:
    void refresh();

    ScenarioDocument* document_;
    Units units_ = Units::GiB;
    mutable int hint_width_ = -1;
    mutable int hint_height_ = 0;
    mutable QString hint_text_;
};

}  // namespace trainmem::ui
