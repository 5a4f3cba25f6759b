#include "ui/timeline_view.h"

#include "ui/chart_style.h"

#include <algorithm>

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include "ui/painting_export.h"

namespace trainmem::ui {

namespace {

Painting paintingOf(const TimelineDrawing& drawing) {
    return [&drawing](QPainter& painter, const QRectF& target) { TimelinePlot(drawing, target).paint(painter); };
}

// The measured allocated value in force at `time` (the last event at or before it).
std::optional<double> measuredAt(const MeasuredOverlay& m, double time) {
    const auto it = std::upper_bound(m.allocated.begin(), m.allocated.end(), time,
                                     [](double t, const QPointF& p) { return t < p.x(); });
    if (it == m.allocated.begin()) return std::nullopt;
    return std::prev(it)->y();
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void TimelineView::setDrawing(TimelineDrawing drawing) {
    drawing_ = std::move(drawing);
    hover_.reset();
    update();
}

void TimelineView::render(QPainter& painter, const QRectF& target) const { TimelinePlot(drawing_, target).paint(painter); }

// Figures for documents are light whatever the desktop's scheme.
QImage TimelineView::renderImage(QSize size, qreal scale) const {
    const LightChartInks light;
    return paintingImage(paintingOf(drawing_), size, scale);
}

ExportResult TimelineView::exportTo(const QString& path, QSize size, qreal scale) const {
    const LightChartInks light;
    return exportTimeline(drawing_, path, size, scale);
}

QString TimelineView::tooltipAt(QPointF point) const {
    const TimelinePlot plot(drawing_, QRectF(rect()));
    const std::optional<size_t> i = plot.sampleAt(point);
    if (!i) return {};
    const TimelineSample& s = drawing_.timeline.samples[*i];
    QString tip = sampleTooltip(s, drawing_.units);
    if (drawing_.measured) {
        if (const std::optional<double> m = measuredAt(*drawing_.measured, s.time))
            tip += tr("<br>measured allocated %1").arg(QString::fromStdString(formatBytes(static_cast<int64_t>(*m), drawing_.units)));
    }
    return tip;
}

void TimelineView::paintEvent(QPaintEvent*) {
    ++paint_count_;
    QPainter painter(this);
    TimelinePlot(drawing_, QRectF(rect())).paint(painter, hover_);
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
    const TimelinePlot plot(drawing_, QRectF(rect()));
    const std::optional<size_t> i = plot.sampleAt(event->position());
    if (i != hover_) {
        hover_ = i;
        update();
    }
    if (!i) {
        QToolTip::hideText();
        return;
    }
    QToolTip::showText(event->globalPosition().toPoint(), tooltipAt(event->position()), this);
}

void TimelineView::leaveEvent(QEvent* event) {
    QWidget::leaveEvent(event);
    if (hover_) {
        hover_.reset();
        update();
    }
}

ExportResult exportTimeline(const TimelineDrawing& drawing, const QString& path, QSize size, qreal scale) {
    return exportPainting(paintingOf(drawing), {drawing.title}, path, size, scale);
}

ExportResult exportScenarioTimeline(const Scenario& scenario, const QString& snapshot_path, const QString& path, QSize size,
                                    qreal scale) {
    Expected<TimelineDrawing> drawing = timelineDrawing(scenario, std::nullopt, Units::GiB);
    if (!drawing) return ExportResult::failure(QString::fromStdString(drawing.error().text()));
    if (!snapshot_path.isEmpty()) {
        Expected<MeasuredSnapshot> measured = loadMeasuredSnapshot(snapshot_path);
        if (!measured) return ExportResult::failure(QString::fromStdString(measured.error().text()));
        addMeasured(*drawing, *measured);
    }
    return exportTimeline(*drawing, path, size, scale);
}

}  // namespace trainmem::ui
