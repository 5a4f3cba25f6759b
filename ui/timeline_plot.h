#pragma once
// The step timeline painted with QPainter (not Qt Charts, which stays inside
// MemoryChart): one step of one pipeline stage as stacked areas by
// component, phase bands along the top, the capacity line, the peak, and a
// measured snapshot's curves over it. The same code paints the widget and
// the PNG, SVG and PDF exports.
#include <optional>

#include <QPointF>
#include <QRectF>
#include <QVector>

#include "ui/timeline_drawing.h"

class QPainter;

namespace trainmem::ui {

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
    QStringList subtitleLines() const;  // the subtitle wrapped to the width, at most two lines
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
