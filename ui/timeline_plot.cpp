#include "ui/timeline_plot.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <QFontMetricsF>
#include <QObject>
#include <QPainter>
#include <QPainterPath>
#include <QPolygonF>

#include "core/account/estimate.h"
#include "ui/chart_callouts.h"
#include "ui/chart_style.h"
#include "ui/chart_views.h"
#include "ui/component_palette.h"

namespace trainmem::ui {

namespace {

QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// The measured snapshot's curves: near black, or the light ink on dark charts.
QColor measuredInk() { return chartInks().dark ? chartInks().ink : QColor(0x11, 0x11, 0x11); }
constexpr double kBandHeight = 18;

// 1, 2, 2.5 or 5 times a power of ten, about `intervals` of them up to `top`.
double niceStep(double top, double intervals) {
    if (!(top > 0)) return 1;
    const double raw = top / std::max(1.0, intervals);
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (magnitude * m >= raw) return magnitude * m;
    return magnitude * 10;
}

int decimalsFor(double step) {
    if (step >= 1) return 0;
    return std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 1, 3);
}

QColor lightPhaseColor(Phase phase) {
    switch (phase) {
        case Phase::Forward: return QColor(0xd6, 0xea, 0xf8);
        case Phase::Loss: return QColor(0xfa, 0xdb, 0xd8);
        case Phase::Backward: return QColor(0xd5, 0xf5, 0xe3);
        case Phase::OptimizerStep: return QColor(0xe8, 0xda, 0xef);
    }
    return Qt::lightGray;
}

// The same hues as faint bands on a dark background, under light labels.
QColor phaseColor(Phase phase) {
    const QColor light = lightPhaseColor(phase);
    return chartInks().dark ? light.darker(420) : light;
}

// Longest first: the band shows the first that fits its width.
QStringList phaseLabels(Phase phase, int64_t microbatch, bool numbered) {
    const QString n = numbered && microbatch >= 0 ? QString::number(microbatch + 1) : QString();  // from 1, as stages
    auto with = [&](const QString& s, const QString& sep) { return n.isEmpty() ? s : s + sep + n; };
    switch (phase) {
        case Phase::Forward: return {with("forward", " "), with("fwd", " "), with("F", "")};
        case Phase::Loss: return {with("loss", " "), with("L", "")};
        case Phase::Backward: return {with("backward", " "), with("bwd", " "), with("B", "")};
        case Phase::OptimizerStep: return {"optimizer step", "step", "S"};
    }
    return {};
}

// The step's stacked columns: one per sample, or, when samples outnumber
// pixels, the heaviest sample of each pixel column (so the peak survives).
struct Column {
    double t0, t1;
    const MemoryBreakdown* bytes;
};

// A step line through measured points: each value holds until the next
// event. Past three points per pixel, each pixel column keeps its range.
QPainterPath stepPath(const QVector<QPointF>& points, const TimelinePlot& plot) {
    QPainterPath path;
    if (points.isEmpty()) return path;
    const double width = std::max(1.0, plot.plotArea().width());
    const bool bucket = points.size() > 3 * width;
    double y_prev = plot.yOf(points.front().y());
    path.moveTo(plot.xOf(points.front().x()), y_prev);
    int i = 1;
    while (i < points.size()) {
        const double x = plot.xOf(points[i].x());
        if (!bucket) {
            const double y = plot.yOf(points[i].y());
            path.lineTo(x, y_prev);
            path.lineTo(x, y);
            y_prev = y;
            ++i;
            continue;
        }
        const double column = std::floor(x);
        double lo = plot.yOf(points[i].y()), hi = lo, last = lo;
        path.lineTo(x, y_prev);
        for (; i < points.size() && std::floor(plot.xOf(points[i].x())) == column; ++i) {
            last = plot.yOf(points[i].y());
            lo = std::min(lo, last);
            hi = std::max(hi, last);
        }
        path.lineTo(x, lo);
        path.lineTo(x, hi);
        path.lineTo(x, last);
        y_prev = last;
    }
    path.lineTo(plot.xOf(points.back().x()), y_prev);
    return path;
}

double largestMeasured(const std::optional<MeasuredOverlay>& m) {
    double top = 0;
    if (!m) return top;
    for (const QPointF& p : m->allocated) top = std::max(top, p.y());
    for (const QPointF& p : m->reserved) top = std::max(top, p.y());
    return top;
}

}  // namespace

struct TimelinePlot::LegendEntry {
    QString name;
    QColor color;
    enum Kind { Area, Line, DashedLine } kind = Area;
};

TimelinePlot::TimelinePlot(const TimelineDrawing& drawing, const QRectF& area) : d_(drawing), area_(area) {
    const QFontMetricsF title(pixelFont(17, true)), sub(pixelFont(12)), small(pixelFont(11));
    double y = area.top() + kPad;
    if (!d_.title.isEmpty()) y += title.height();
    // The subtitle wraps onto a second line in a narrow window rather than
    // losing its end (the recomputation it names).
    if (!d_.subtitle.isEmpty()) y += (2 + sub.height()) * subtitleLines().size();
    if (!d_.measuredSummary.isEmpty()) y += 2 + sub.height();
    if (d_.measured && !d_.measured->alignment.isEmpty()) y += 2 + small.height();
    title_bottom_ = y;
    y += 8;
    bands_ = QRectF(0, y, 0, kBandHeight);
    y += kBandHeight + 2;

    const double legend_h = legendHeight(area.width() - 2 * kPad);
    legend_top_ = area.bottom() - kPad - legend_h;
    const double bottom = legend_top_ - 8 - small.height() - 4 - small.height() - 6;

    // The value axis: the stack, the measured curves, and the capacity when
    // it is near enough to be worth the squeeze (else it is named off scale).
    const double unit = unitBytes(d_.units);
    double top = static_cast<double>(d_.timeline.peak_bytes());
    top = std::max(top, largestMeasured(d_.measured));
    const double capacity = static_cast<double>(d_.timeline.capacity_bytes);
    capacity_on_scale_ = capacity > 0 && capacity <= 3 * std::max(top, 1.0);
    if (capacity_on_scale_) top = std::max(top, capacity);
    top *= 1.12;  // room for the peak's label
    if (!(top > 0)) top = unit;
    y_step_ = niceStep(top / unit, 6);
    y_max_ = std::ceil(top / unit / y_step_ - 1e-9) * y_step_ * unit;

    double label_w = 0;
    const int decimals = decimalsFor(y_step_);
    for (double v = 0; v <= y_max_ / unit + 1e-9; v += y_step_)
        label_w = std::max(label_w, small.horizontalAdvance(QString::number(v, 'f', decimals)));
    const double left = area.left() + kPad + sub.height() + 8 + label_w + 6;
    const double right = area.right() - kPad - 6;
    plot_ = QRectF(QPointF(left, y), QPointF(right, std::max(y + 40, bottom)));
    bands_.setLeft(plot_.left());
    bands_.setRight(plot_.right());
    step_end_ = d_.empty() ? 1.0 : std::max(1e-9, d_.timeline.samples.back().time);
}

double TimelinePlot::xOf(double time) const { return plot_.left() + time / step_end_ * plot_.width(); }
double TimelinePlot::yOf(double bytes) const { return plot_.bottom() - bytes / y_max_ * plot_.height(); }

double TimelinePlot::spanStart(size_t i) const { return i == 0 ? 0.0 : d_.timeline.samples[i - 1].time; }

std::optional<size_t> TimelinePlot::sampleAt(QPointF point) const {
    if (d_.empty() || !plot_.adjusted(0, -bands_.height() - 2, 0, 0).contains(point)) return std::nullopt;
    const double time = (point.x() - plot_.left()) / plot_.width() * step_end_;
    const auto& samples = d_.timeline.samples;
    // Sample i covers (time[i-1], time[i]]: the first whose end is at or past `time`.
    const auto it = std::lower_bound(samples.begin(), samples.end(), time,
                                     [](const TimelineSample& s, double t) { return s.time < t; });
    return static_cast<size_t>(std::min<ptrdiff_t>(it - samples.begin(), static_cast<ptrdiff_t>(samples.size()) - 1));
}

void TimelinePlot::paint(QPainter& p, std::optional<size_t> hover) const {
    p.save();
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setRenderHint(QPainter::TextAntialiasing, true);
    p.fillRect(area_, chartInks().background);
    paintTitles(p);
    if (d_.empty()) {
        p.setFont(pixelFont(14));
        p.setPen(chartInks().muted);
        p.drawText(plot_, Qt::AlignCenter | Qt::TextWordWrap,
                   d_.emptyNotice.isEmpty() ? QObject::tr("Nothing to draw") : d_.emptyNotice);
        p.restore();
        return;
    }
    paintAxes(p);
    p.save();
    if (!d_.staleNotice.isEmpty()) p.setOpacity(0.45);
    paintPhaseBands(p);
    paintAreas(p);
    paintMeasured(p);
    p.restore();
    paintCapacity(p);
    if (hover && *hover < d_.timeline.samples.size()) {
        const double x0 = xOf(spanStart(*hover)), x1 = xOf(d_.timeline.samples[*hover].time);
        p.fillRect(QRectF(x0, plot_.top(), std::max(1.0, x1 - x0), plot_.height()), QColor(0, 0, 0, 28));
    }
    paintPeak(p);
    paintLegend(p);
    paintStale(p);
    p.restore();
}

QStringList TimelinePlot::subtitleLines() const {
    if (d_.subtitle.isEmpty()) return {};
    return wrapLines(d_.subtitle, pixelFont(12), area_.width() - 2 * kPad, 2);
}

void TimelinePlot::paintTitles(QPainter& p) const {
    const double width = area_.width() - 2 * kPad;
    double y = area_.top() + kPad;
    auto line = [&](const QString& text, const QFont& font, const QColor& ink) {
        const QFontMetricsF fm(font);
        p.setFont(font);
        p.setPen(ink);
        p.drawText(QRectF(area_.left() + kPad, y, width, fm.height()), Qt::AlignHCenter | Qt::AlignTop,
                   fm.elidedText(text, Qt::ElideRight, width));
        y += fm.height() + 2;
    };
    if (!d_.title.isEmpty()) line(d_.title, pixelFont(17, true), chartInks().ink);
    for (const QString& sub : subtitleLines()) line(sub, pixelFont(12), chartInks().muted);
    if (!d_.measuredSummary.isEmpty()) line(d_.measuredSummary, pixelFont(12, true), chartInks().ink);
    if (d_.measured && !d_.measured->alignment.isEmpty())
        line(QObject::tr("Measured: %1, device %2 — %3").arg(d_.measured->source).arg(d_.measured->device).arg(d_.measured->alignment),
             pixelFont(11), chartInks().muted);
}

void TimelinePlot::paintPhaseBands(QPainter& p) const {
    const auto& samples = d_.timeline.samples;
    const bool numbered = d_.timeline.microbatches > 1;
    const QFont font = pixelFont(11);
    const QFontMetricsF fm(font);
    p.setFont(font);
    size_t i = 0;
    while (i < samples.size()) {
        size_t j = i;
        while (j + 1 < samples.size() && samples[j + 1].phase == samples[i].phase &&
               samples[j + 1].microbatch == samples[i].microbatch)
            ++j;
        const double x0 = xOf(spanStart(i)), x1 = xOf(samples[j].time);
        QColor fill = phaseColor(samples[i].phase);
        // Alternate micro-batches a shade darker, so where one ends shows.
        if (samples[i].microbatch >= 0 && samples[i].microbatch % 2 == 1) fill = fill.darker(112);
        const QRectF band(x0, bands_.top(), x1 - x0, bands_.height());
        p.fillRect(band, fill);
        for (const QString& label : phaseLabels(samples[i].phase, samples[i].microbatch, numbered)) {
            if (fm.horizontalAdvance(label) + 4 <= band.width()) {
                p.setPen(chartInks().ink);
                p.drawText(band, Qt::AlignCenter, label);
                break;
            }
        }
        i = j + 1;
    }
}

void TimelinePlot::paintAxes(QPainter& p) const {
    const double unit = unitBytes(d_.units);
    const QFont font = pixelFont(11);
    const QFontMetricsF fm(font);
    p.setFont(font);
    const int decimals = decimalsFor(y_step_);
    for (double v = 0; v <= y_max_ / unit + 1e-9; v += y_step_) {
        const double y = yOf(v * unit);
        p.setPen(QPen(chartInks().grid, 1));
        p.drawLine(QPointF(plot_.left(), y), QPointF(plot_.right(), y));
        p.setPen(chartInks().muted);
        p.drawText(QRectF(plot_.left() - 60 - 6, y - fm.height() / 2, 60, fm.height()), Qt::AlignRight | Qt::AlignVCenter,
                   QString::number(v, 'f', decimals));
    }
    // The step's time: nice ticks, about one per 90 pixels.
    const double step = niceStep(step_end_, std::max(2.0, plot_.width() / 90));
    const int x_decimals = decimalsFor(step);
    for (double t = 0; t <= step_end_ + 1e-9; t += step) {
        const double x = xOf(t);
        p.setPen(QPen(chartInks().muted, 1));
        p.drawLine(QPointF(x, plot_.bottom()), QPointF(x, plot_.bottom() + 4));
        const QString label = QString::number(t, 'f', x_decimals);
        const double w = fm.horizontalAdvance(label);
        const double lx = std::clamp(x - w / 2, area_.left() + 2, area_.right() - w - 2);
        p.drawText(QRectF(lx, plot_.bottom() + 6, w + 1, fm.height()), Qt::AlignLeft | Qt::AlignTop, label);
    }
    p.setPen(QPen(chartInks().ink, 1));
    p.drawLine(plot_.bottomLeft(), plot_.bottomRight());
    p.drawLine(plot_.bottomLeft(), plot_.topLeft());

    const QFont title_font = pixelFont(12);
    const QFontMetricsF tm(title_font);
    p.setFont(title_font);
    p.setPen(chartInks().ink);
    const double time_y = plot_.bottom() + 6 + fm.height() + 4;
    p.drawText(QRectF(plot_.left(), time_y, plot_.width(), tm.height()), Qt::AlignHCenter | Qt::AlignTop,
               tm.elidedText(QObject::tr("time through the step (one block's forward = 1, its backward = 2, 3 when recomputed)"),
                             Qt::ElideRight, plot_.width()));
    p.save();
    p.translate(area_.left() + kPad, plot_.center().y());
    p.rotate(-90);
    const QString value_title = QObject::tr("%1 allocated per GPU").arg(d_.units == Units::GiB ? "GiB" : "GB");
    p.drawText(QRectF(-plot_.height() / 2, 0, plot_.height(), tm.height()), Qt::AlignHCenter | Qt::AlignTop,
               tm.elidedText(value_title, Qt::ElideRight, plot_.height()));
    p.restore();
}

void TimelinePlot::paintAreas(QPainter& p) const {
    const auto& samples = d_.timeline.samples;
    std::vector<Column> columns;
    columns.reserve(samples.size());
    const bool bucket = static_cast<double>(samples.size()) > 2 * plot_.width();
    for (size_t i = 0; i < samples.size(); ++i) {
        const Column c{spanStart(i), samples[i].time, &samples[i].bytes};
        if (bucket && !columns.empty() && std::floor(xOf(c.t1)) == std::floor(xOf(columns.back().t1))) {
            Column& last = columns.back();
            if (c.bytes->total() > last.bytes->total()) last.bytes = c.bytes;
            last.t1 = c.t1;
            continue;
        }
        columns.push_back(c);
    }
    // Step shapes are axis-aligned: without antialiasing neighbouring areas
    // meet without a light seam.
    p.save();
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(Qt::NoPen);
    std::vector<double> below(columns.size(), 0.0);
    for (Component c : allComponents()) {
        const bool present = std::any_of(columns.begin(), columns.end(), [&](const Column& col) { return (*col.bytes)[c] > 0; });
        if (!present) continue;
        QPolygonF polygon;
        polygon.reserve(static_cast<qsizetype>(4 * columns.size()));
        for (size_t k = 0; k < columns.size(); ++k) {
            const double top = below[k] + static_cast<double>((*columns[k].bytes)[c]);
            polygon << QPointF(xOf(columns[k].t0), yOf(top)) << QPointF(xOf(columns[k].t1), yOf(top));
        }
        for (size_t k = columns.size(); k-- > 0;) {
            polygon << QPointF(xOf(columns[k].t1), yOf(below[k])) << QPointF(xOf(columns[k].t0), yOf(below[k]));
            below[k] += static_cast<double>((*columns[k].bytes)[c]);
        }
        p.setBrush(componentColor(c));
        p.drawPolygon(polygon);
    }
    p.restore();
}

void TimelinePlot::paintMeasured(QPainter& p) const {
    if (!d_.measured) return;
    p.save();
    p.setClipRect(plot_.adjusted(-1, -1, 1, 1));
    p.setBrush(Qt::NoBrush);
    QPen reserved(measuredInk(), 1.4, Qt::DashLine);
    p.setPen(reserved);
    p.drawPath(stepPath(d_.measured->reserved, *this));
    p.setPen(QPen(measuredInk(), 1.8));
    p.drawPath(stepPath(d_.measured->allocated, *this));
    p.restore();
}

void TimelinePlot::paintCapacity(QPainter& p) const {
    const double capacity = static_cast<double>(d_.timeline.capacity_bytes);
    if (!(capacity > 0)) return;
    const QFont font = pixelFont(11, true);
    const QFontMetricsF fm(font);
    p.setFont(font);
    p.setPen(chartInks().dark ? textInk(kCapacity) : kCapacity);
    if (!capacity_on_scale_) {
        const QString text = QObject::tr("%1 — above this scale ↑").arg(d_.capacityLabel);
        p.drawText(QRectF(plot_.left() + 4, plot_.top() + 2, plot_.width() - 8, fm.height()), Qt::AlignRight | Qt::AlignTop,
                   fm.elidedText(text, Qt::ElideLeft, plot_.width() - 8));
        return;
    }
    const double y = yOf(capacity);
    p.setPen(QPen(kCapacity, 2, Qt::DashLine));
    p.drawLine(QPointF(plot_.left(), y), QPointF(plot_.right(), y));
    p.setPen(chartInks().dark ? textInk(kCapacity) : kCapacity);
    p.drawText(QRectF(plot_.left() + 4, y - fm.height() - 2, plot_.width() - 8, fm.height()), Qt::AlignRight | Qt::AlignBottom,
               d_.capacityLabel);
}

void TimelinePlot::paintPeak(QPainter& p) const {
    const StepTimeline& t = d_.timeline;
    const size_t i = t.peak_index;
    const QPointF dot((xOf(spanStart(i)) + xOf(t.samples[i].time)) / 2, yOf(static_cast<double>(t.peak_bytes())));
    p.setPen(QPen(chartInks().background, 1.5));
    p.setBrush(kCapacity);
    p.drawEllipse(dot, 4.5, 4.5);

    const QFont font = pixelFont(12, true);
    const QFontMetricsF fm(font);
    const QString text = peakLabel(t, d_.units);
    const QSizeF size(fm.horizontalAdvance(text) + 10, fm.height() + 4);
    // Above the dot, else right of it, else left of it: the first that lies
    // inside the plot; failing all, the first pulled inside.
    const QPointF candidates[] = {{dot.x() - size.width() / 2, dot.y() - size.height() - 7},
                                  {dot.x() + 9, dot.y() - size.height() / 2},
                                  {dot.x() - 9 - size.width(), dot.y() - size.height() / 2}};
    const QRectF inside = plot_.adjusted(2, 1, -2, -1);
    QPointF corner = candidates[0];
    for (const QPointF& c : candidates) {
        if (inside.contains(QRectF(c, size))) {
            corner = c;
            break;
        }
    }
    corner.setX(std::clamp(corner.x(), inside.left(), std::max(inside.left(), inside.right() - size.width())));
    corner.setY(std::clamp(corner.y(), inside.top(), std::max(inside.top(), inside.bottom() - size.height())));
    const QRectF box(corner, size);
    p.setPen(QPen(kCapacity, 1));
    QColor backing = chartInks().background;
    backing.setAlpha(235);
    p.setBrush(backing);
    p.drawRoundedRect(box, 3, 3);
    p.setFont(font);
    p.setPen(chartInks().ink);
    p.drawText(box, Qt::AlignCenter, text);
}

QVector<TimelinePlot::LegendEntry> TimelinePlot::legendEntries() const {
    QVector<LegendEntry> entries;
    for (Component c : allComponents()) {
        const bool present = std::any_of(d_.timeline.samples.begin(), d_.timeline.samples.end(),
                                         [&](const TimelineSample& s) { return s.bytes[c] > 0; });
        if (present) entries.push_back({q(componentName(c)), componentColor(c), LegendEntry::Area});
    }
    if (d_.measured) {
        entries.push_back({QObject::tr("Measured allocated"), measuredInk(), LegendEntry::Line});
        entries.push_back({QObject::tr("Measured reserved"), measuredInk(), LegendEntry::DashedLine});
    }
    return entries;
}

double TimelinePlot::legendHeight(double width) const {
    const QFontMetricsF fm(pixelFont(11));
    int rows = 0;
    double x = width + 1;
    for (const LegendEntry& e : legendEntries()) {
        const double w = 22 + fm.horizontalAdvance(e.name) + 14;
        if (x + w > width) {
            ++rows;
            x = 0;
        }
        x += w;
    }
    return rows * (fm.height() + 4);
}

void TimelinePlot::paintLegend(QPainter& p) const {
    const QFont font = pixelFont(11);
    const QFontMetricsF fm(font);
    const double width = area_.width() - 2 * kPad;
    std::vector<std::vector<std::pair<LegendEntry, double>>> rows;
    double x = width + 1;
    for (const LegendEntry& e : legendEntries()) {
        const double w = 22 + fm.horizontalAdvance(e.name) + 14;
        if (x + w > width) {
            rows.emplace_back();
            x = 0;
        }
        rows.back().push_back({e, w});
        x += w;
    }
    p.setFont(font);
    double y = legend_top_;
    for (const auto& row : rows) {
        double row_width = 0;
        for (const auto& entry : row) row_width += entry.second;
        double cx = area_.left() + kPad + (width - row_width) / 2;
        for (const auto& [e, w] : row) {
            const double mid = y + fm.height() / 2;
            if (e.kind == LegendEntry::Area) {
                p.setPen(QPen(e.color.darker(120), 0.8));
                p.setBrush(e.color);
                p.drawRect(QRectF(cx, mid - 5.5, 16, 11));
            } else {
                p.setPen(QPen(e.color, e.kind == LegendEntry::Line ? 1.8 : 1.4,
                              e.kind == LegendEntry::Line ? Qt::SolidLine : Qt::DashLine));
                p.drawLine(QPointF(cx, mid), QPointF(cx + 16, mid));
            }
            p.setPen(chartInks().ink);
            p.drawText(QRectF(cx + 22, y, w - 22, fm.height()), Qt::AlignLeft | Qt::AlignVCenter, e.name);
            cx += w;
        }
        y += fm.height() + 4;
    }
}

void TimelinePlot::paintStale(QPainter& p) const {
    if (d_.staleNotice.isEmpty()) return;
    const QFont font = pixelFont(12, true);
    const QFontMetricsF fm(font);
    const QRectF banner(plot_.left(), plot_.top() + 4, plot_.width(), fm.height() + 10);
    p.fillRect(banner, QColor(0x70, 0x70, 0x70, 225));
    p.setFont(font);
    p.setPen(Qt::white);
    p.drawText(banner, Qt::AlignCenter, fm.elidedText(d_.staleNotice, Qt::ElideRight, banner.width() - 12));
}

}  // namespace trainmem::ui
