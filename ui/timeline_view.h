#pragma once
// The step timeline on screen: paints a TimelineDrawing (timeline_plot.h)
// and says, under the pointer, what is alive at that moment.
#include <optional>

#include <QImage>
#include <QWidget>

#include "ui/painting_export.h"
#include "ui/timeline_plot.h"

namespace trainmem::ui {

class TimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TimelineView(QWidget* parent = nullptr);

    void setDrawing(TimelineDrawing drawing);
    const TimelineDrawing& drawing() const { return drawing_; }

    // The current drawing laid out to fill `target`: the same picture as on
    // screen, for exports and the clipboard.
    void render(QPainter& painter, const QRectF& target) const;
    QImage renderImage(QSize size, qreal scale = 1.0) const;
    ExportResult exportTo(const QString& path, QSize size, qreal scale = 1.0) const;

    // What the tooltip says at a point of the widget; empty outside the plot.
    QString tooltipAt(QPointF point) const;
    int paintCount() const { return paint_count_; }

    QSize sizeHint() const override { return {900, 520}; }
    QSize minimumSizeHint() const override { return {420, 300}; }

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    TimelineDrawing drawing_;
    std::optional<size_t> hover_;
    int paint_count_ = 0;
};

// Writes a drawing as PNG, SVG or PDF (by suffix) without a widget.
ExportResult exportTimeline(const TimelineDrawing& drawing, const QString& path, QSize size, qreal scale = 1.0);

// The headless export (trainmem --view timeline): the heaviest stage of a
// scenario, with a snapshot over it when `snapshot_path` is not empty. Bad
// scenarios and unreadable snapshots fail with the reason.
ExportResult exportScenarioTimeline(const Scenario& scenario, const QString& snapshot_path, const QString& path, QSize size,
                                    qreal scale = 1.0);

}  // namespace trainmem::ui
