#pragma once
// What the Timeline tab draws, as plain values, and the drawing itself with
// QPainter (not Qt Charts, which stays inside MemoryChart): one step of one
// pipeline stage as stacked areas by component, phase bands along the top,
// the capacity line, the peak, and a measured snapshot's curves over it.
// The same code paints the widget and the PNG, SVG and PDF exports.
#include <optional>

#include <QPointF>
#include <QRectF>
#include <QString>
#include <QVector>

#include "core/error.h"
#include "core/report.h"
#include "core/scenario.h"
#include "core/timeline.h"
#include "ui/snapshot_overlay.h"

class QPainter;

namespace trainmem::ui {

struct TimelineDrawing {
    StepTimeline timeline;     // no samples: draw emptyNotice instead
    int64_t stages = 1;        // pipeline stages of the scenario
    Units units = Units::GiB;
    QString title;
    QString subtitle;
    QString capacityLabel;     // "H100-80GB capacity 79.65 GiB"
    QString staleNotice;       // non-empty: the grey banner, data faded
    QString emptyNotice;
    std::optional<MeasuredOverlay> measured;
    QString measuredSummary;   // peakComparison() of the overlay

    bool empty() const { return timeline.samples.empty(); }
};

// The drawing of `stage` (nullopt: the heaviest) of a valid scenario.
Expected<TimelineDrawing> timelineDrawing(const Scenario& scenario, std::optional<int64_t> stage, Units units);

// "peak 54.30 GiB · backward, layer 31, micro-batch 0"
QString peakLabel(const StepTimeline& timeline, Units units);
// Phase, micro-batch, layer, total and the largest components at a sample.
QString sampleTooltip(const TimelineSample& sample, Units units);

// One drawing laid out in one rectangle: painting and hit-testing share it.
class TimelinePlot {
public:
    TimelinePlot(const TimelineDrawing& drawing, const QRectF& area);

    // `hover` draws a cursor line at that sample (on screen only).
    void paint(QPainter& painter, std::optional<size_t> hover = std::nullopt) const;

    const QRectF& plotArea() const { return plot_; }
    // The sample whose time span contains the point's x, if inside the plot.
    std::optional<size_t> sampleAt(QPointF point) const;
    double xOf(double time) const;
    double yOf(double bytes) const;
    double axisMaxBytes() const { return y_max_; }
    bool capacityOnScale() const { return capacity_on_scale_; }

private:
    struct LegendEntry;
    QVector<LegendEntry> legendEntries() const;
    double legendHeight(double width) const;
    void paintTitles(QPainter& p) const;
    void paintPhaseBands(QPainter& p) const;
    void paintAxes(QPainter& p) const;
    void paintAreas(QPainter& p) const;
    void paintMeasured(QPainter& p) const;
    void paintCapacity(QPainter& p) const;
    void paintPeak(QPainter& p) const;
    void paintLegend(QPainter& p) const;
    void paintStale(QPainter& p) const;
    double spanStart(size_t sample) const;

    const TimelineDrawing& d_;
    QRectF area_;
    QRectF plot_;
    QRectF bands_;          // the phase strip above the plot
    double legend_top_ = 0;
    double title_bottom_ = 0;
    double step_end_ = 1;
    double y_max_ = 1;
    double y_step_ = 1;
    bool capacity_on_scale_ = true;
};

}  // namespace trainmem::ui
