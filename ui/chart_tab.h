#pragma once
// A tab that shows one chart of the open scenario. Redraws when the document
// changes, but only while visible: hidden tabs catch up when shown, so an
// edit costs one chart redraw however many tabs there are.
#include <QWidget>

#include "core/report/report.h"
#include "ui/chart_spec.h"
#include "ui/scenario_document.h"

class QVBoxLayout;

namespace trainmem::ui {

class MemoryChart;

class ChartTab : public QWidget {
    Q_OBJECT
public:
    ChartTab(ScenarioDocument* document, QWidget* parent = nullptr);

    void setUnits(Units units);
    Units units() const { return units_; }
    // The spec as drawn now, brought up to date first (for export).
    ChartSpec currentSpec();
    // The spec for a figure on its own (export, clipboard): what the tab
    // explains beside the chart on screen must be in it.
    virtual ChartSpec figureSpec() { return currentSpec(); }
    MemoryChart* chart() const { return chart_; }
    // Draws again with the current inks (the colour scheme changed).
    void restyle() { redrawSoon(); }

protected:
    virtual ChartSpec buildSpec() const = 0;
    // Controls above the chart go here.
    QVBoxLayout* column() const { return column_; }
    // And below it.
    QVBoxLayout* below() const { return below_; }
    void redrawSoon();  // now if visible, else when next shown
    void showEvent(QShowEvent* event) override;
    virtual void unitsChanged() {}  // after setUnits changed them
    ScenarioDocument* document_;

private:
    void redraw();

    MemoryChart* chart_;
    QVBoxLayout* column_;
    QVBoxLayout* below_;
    Units units_ = Units::GiB;
    bool outdated_ = true;
};

// "Stale: fix the marked field (training.micro_batch_size: must be ...)"
QString staleNotice(const ScenarioDocument& document);

}  // namespace trainmem::ui
