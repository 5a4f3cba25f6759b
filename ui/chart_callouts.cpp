#include "ui/chart_callouts.h"

#include <algorithm>

#include <QFontMetricsF>
#include <QGraphicsPathItem>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QPainterPath>
#include <QPen>

#include "ui/chart_spec.h"
#include "ui/chart_style.h"

namespace trainmem::ui {

namespace {

QFont titleFont() { return pixelFont(12, true); }
QFont detailFont() { return pixelFont(11); }
QFont legendFont() { return pixelFont(11); }
constexpr double kCalloutGap = 5;

}  // namespace

namespace {
QString spareKey(const QString& text, const QFont& font) { return fontTag(font) + text; }
}  // namespace

void ChartOverlay::clear() {
    finish();
    // Texts stay where they are, shown, until finish(): hiding and showing
    // one again would throw away its cached pixels.
    for (QGraphicsItem* item : items_) {
        if (auto* t = qgraphicsitem_cast<QGraphicsSimpleTextItem*>(item)) {
            if (!t->toolTip().isEmpty()) t->setToolTip(QString());
            spare_.insert(spareKey(t->text(), t->font()), t);
        } else {
            delete item;
        }
    }
    items_.clear();
    texts_.clear();
}

void ChartOverlay::finish() {
    for (QGraphicsSimpleTextItem* t : std::as_const(spare_)) delete t;  // not reused by this layout
    spare_.clear();
}

void ChartOverlay::add(QGraphicsItem* item, double z) {
    item->setZValue(z);
    scene_.addItem(item);
    items_.push_back(item);
}

QGraphicsSimpleTextItem* ChartOverlay::text(const QString& s, const QFont& font, const QColor& color) {
    QGraphicsSimpleTextItem* item = nullptr;
    if (const auto it = spare_.find(spareKey(s, font)); it != spare_.end()) {
        item = *it;
        spare_.erase(it);
        if (item->brush().color() != color) item->setBrush(color);
        items_.push_back(item);
    } else {
        item = new QGraphicsSimpleTextItem(s);
        item->setFont(font);
        item->setBrush(color);
        if (cached_) item->setCacheMode(QGraphicsItem::ItemCoordinateCache);
        add(item, 10);
    }
    texts_ << s;
    return item;
}

QGraphicsSimpleTextItem* ChartOverlay::centeredText(const QString& s, const QFont& font, const QColor& color, double cx,
                                                    double top) {
    auto* item = text(s, font, color);
    item->setPos(cx - item->boundingRect().width() / 2, top);
    return item;
}

QString elided(const QString& s, const QFont& font, double width) {
    // Most texts fit: their cached width says so without shaping them again.
    if (textWidth(s, font) <= std::max(10.0, width)) return s;
    return QFontMetricsF(font).elidedText(s, Qt::ElideRight, std::max(10.0, width));
}

namespace {

// Every line of `text` wrapped to `width`, with no limit on their number.
// Each word is measured once and lines are summed from their words, instead
// of measuring every candidate line, which made wrapping the call-outs cost
// three times as much (about 0.9 ms per edit in a debug build, now 0.3 ms).
// A pixel of slack covers what the sum misses (kerning, rounding).
QStringList wrapAll(const QString& text, const QFont& font, double width) {
    const double space = textWidth(QStringLiteral(" "), font);
    const double limit = width - 1;
    struct Word {
        QString text;
        double width;
        bool opens_part;  // first word after a double space
    };
    std::vector<Word> words;
    for (const QString& part : text.split(QStringLiteral("  "), Qt::SkipEmptyParts)) {
        bool first = true;
        for (const QString& w : part.split(' ', Qt::SkipEmptyParts)) {
            words.push_back({w, textWidth(w, font), first});
            first = false;
        }
    }
    QStringList lines;
    QString line;
    double line_width = 0;
    for (size_t i = 0; i < words.size(); ++i) {
        if (!line.isEmpty()) {
            if (words[i].opens_part) {
                size_t end = i + 1;
                double part_width = words[i].width;
                for (; end < words.size() && !words[end].opens_part; ++end) part_width += space + words[end].width;
                if (line_width + 2 * space + part_width <= limit) {
                    line += QStringLiteral("  ") + words[i].text;
                    for (size_t k = i + 1; k < end; ++k) line += ' ' + words[k].text;
                    line_width += 2 * space + part_width;
                    i = end - 1;
                    continue;
                }
            } else if (line_width + space + words[i].width <= limit) {
                line += ' ' + words[i].text;
                line_width += space + words[i].width;
                continue;
            }
            lines << line;
        }
        line = words[i].text;
        line_width = words[i].width;
        if (line_width > limit) line = elided(line, font, width);  // one word wider than a line
    }
    if (!line.isEmpty()) lines << line;
    return lines;
}

// `lines` cut to `max_lines`, the last one shown holding the rest, elided.
QStringList atMost(const QStringList& lines, int max_lines, const QFont& font, double width) {
    if (max_lines <= 0) return {};
    if (lines.size() <= max_lines) return lines;
    return lines.mid(0, max_lines - 1) << elided(lines.mid(max_lines - 1).join(' '), font, width);
}

}  // namespace

QStringList wrapLines(const QString& text, const QFont& font, double width, int max_lines) {
    return atMost(wrapAll(text, font, width), max_lines, font, width);
}

std::vector<PlacedCallout> layoutCallouts(const std::vector<Callout>& items, double area_top, double area_bottom,
                                          double width) {
    const size_t n = items.size();
    std::vector<PlacedCallout> placed(n);
    if (n == 0) return placed;
    const double title_h = QFontMetricsF(titleFont()).height();
    const double detail_h = QFontMetricsF(detailFont()).height();
    const double room = area_bottom - area_top;

    // How many detail lines each call-out shows: all of them if they fit,
    // else the most every call-out can have alike, then the rest one line at
    // a time from the top, so a long formula is cut only when it must be.
    std::vector<QStringList> full(n);
    for (size_t i = 0; i < n; ++i)
        if (!items[i].capacity && !items[i].detail.isEmpty())
            full[i] = wrapAll(items[i].detail, detailFont(), width);
    std::vector<int> lines(n);
    const auto total = [&] {
        double sum = 0;
        for (size_t i = 0; i < n; ++i) sum += title_h + lines[i] * detail_h + kCalloutGap;
        return sum;
    };
    int most = 0;
    for (size_t i = 0; i < n; ++i) most = std::max(most, static_cast<int>(full[i].size()));
    int cap = most;
    for (; cap >= 1; --cap) {
        for (size_t i = 0; i < n; ++i) lines[i] = std::min(cap, static_cast<int>(full[i].size()));
        if (total() <= room) break;
    }
    if (cap == 0) std::fill(lines.begin(), lines.end(), 0);
    for (bool grew = cap > 0; grew;) {
        grew = false;
        for (size_t i = 0; i < n; ++i)
            if (lines[i] < full[i].size() && total() + detail_h <= room) {
                ++lines[i];
                grew = true;
            }
    }
    for (size_t i = 0; i < n; ++i) {
        placed[i].detail_lines = atMost(full[i], lines[i], detailFont(), width);
        placed[i].height = title_h + lines[i] * detail_h;
    }

    // Each at its anchor, pushed down past the one above, then up from the
    // bottom of the area. Only when not even the titles fit are the slots
    // squeezed, and titles overlap.
    const double squeezed = total() > room ? room / static_cast<double>(n) : 0;
    const auto slot = [&](size_t i) {
        const double h = placed[i].height + kCalloutGap;
        return squeezed > 0 ? std::min(h, squeezed) : h;
    };
    double next_free = area_top;
    for (size_t i = 0; i < n; ++i) {
        placed[i].top = std::max(items[i].anchor_y - title_h / 2, next_free);
        next_free = placed[i].top + slot(i);
    }
    double limit = area_bottom;
    for (size_t i = n; i-- > 0;) {
        placed[i].top = std::min(placed[i].top, limit - slot(i));
        limit = placed[i].top;
    }
    return placed;
}

void placeCallouts(ChartOverlay& overlay, const std::vector<Callout>& items, double area_top, double area_bottom,
                   double bar_right, double plot_right, double text_x, double text_width) {
    const std::vector<PlacedCallout> placed = layoutCallouts(items, area_top, area_bottom, text_width);
    const QFont title_font = titleFont();
    const QFont detail_font = detailFont();
    const double title_h = QFontMetricsF(title_font).height();
    const double detail_h = QFontMetricsF(detail_font).height();
    for (size_t i = 0; i < items.size(); ++i) {
        const Callout& c = items[i];
        const PlacedCallout& p = placed[i];
        const QColor ink = textInk(c.color);
        auto* title = overlay.text(elided(c.title, title_font, text_width), title_font, ink);
        title->setPos(text_x, p.top);
        title->setToolTip(c.detail.isEmpty() ? c.title : c.title + "\n" + c.detail);
        for (int k = 0; k < p.detail_lines.size(); ++k) {
            auto* detail = overlay.text(p.detail_lines[k], detail_font, ink);
            detail->setPos(text_x, p.top + title_h + k * detail_h);
            detail->setToolTip(c.detail);
        }
        QPainterPath path;
        const double start_x = c.capacity ? plot_right : bar_right;
        path.moveTo(start_x, c.anchor_y);
        path.lineTo(std::max(start_x, text_x - 28), c.anchor_y);
        path.lineTo(text_x - 6, p.top + title_h / 2);
        auto* leader = overlay.own(new QGraphicsPathItem(path));
        QPen pen(c.color.darker(110));
        pen.setWidthF(c.capacity ? 2.0 : 1.2);
        if (c.capacity) pen.setStyle(Qt::DashLine);
        leader->setPen(pen);
    }
}

namespace {

std::vector<LegendRow> legendLayout(const std::vector<const ChartLayer*>& layers, double width) {
    std::vector<QString> names;
    for (const ChartLayer* layer : layers) names.push_back(layer->name);
    return legendRows(names, legendFont(), width);
}

}  // namespace

double legendHeight(const std::vector<const ChartLayer*>& layers, double width) {
    return static_cast<double>(legendLayout(layers, width).size()) * (QFontMetricsF(legendFont()).height() + 4);
}

void placeLegend(ChartOverlay& overlay, const std::vector<const ChartLayer*>& layers, double left, double top, double width) {
    const QFont f = legendFont();
    const QFontMetricsF fm(f);
    double y = top - (fm.height() + 4);
    for (const LegendRow& row : legendLayout(layers, width)) {  // rows centred
        y += fm.height() + 4;
        double row_width = 0;
        for (const auto& [index, w] : row) row_width += w;
        double cx = left + (width - row_width) / 2;
        for (const auto& [index, w] : row) {
            const ChartLayer* layer = layers[static_cast<size_t>(index)];
            auto* swatch = overlay.own(new QGraphicsRectItem(cx, y + (fm.height() - 11) / 2, 11, 11));
            swatch->setBrush(layer->color);
            swatch->setPen(QPen(layer->color.darker(120), 0.8));
            overlay.text(layer->name, f, chartInks().ink)->setPos(cx + 16, y);
            cx += w;
        }
    }
}

}  // namespace trainmem::ui
