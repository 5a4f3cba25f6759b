// Every text a chart places around its bars: title, labels under, inside and
// above the bars, the capacity label, call-outs, legend, footer and notices.
#include <algorithm>
#include <cmath>

#include <QFontMetricsF>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>

#include "ui/chart_callouts.h"
#include "ui/chart_scene.h"
#include "ui/chart_style.h"
#include "ui/chart_views.h"
#include "ui/component_palette.h"

namespace trainmem::ui {

double ChartScene::placeTitle(double y) {
    const double width = size_.width() - 2 * kPad;
    if (!spec_.title.isEmpty()) {
        const QFont f = pixelFont(17, true);
        y += centeredText(elided(spec_.title, f, width), f, chartInks().ink, size_.width() / 2, y)->boundingRect().height();
    }
    if (!spec_.subtitle.isEmpty()) {
        const QFont f = pixelFont(12);
        // Wrapped, not cut: its end says where the peak is and whether it
        // fits, the words a narrow window must not lose.
        for (const QString& given : spec_.subtitle.split('\n'))
            for (const QString& line : wrapLines(given, f, width, 2))
                y += centeredText(line, f, chartInks().muted, size_.width() / 2, y + 2)->boundingRect().height() + 2;
    }
    return y;
}

// A bar's label as drawn in a slot `slot` pixels wide: its short form
// when the first line does not fit, then a smaller font, then each line
// broken at spaces ("AdamW" / "8-bit"); an ellipsis only for a single word
// that fits in no font, so three columns never all read "Ada…". When
// even a 10 px name is wider than its slot, the labels are staggered: odd
// bars' labels one line lower, so each may use the width of two slots.
bool ChartScene::staggered(double slot) const {
    const QFont f = pixelFont(10, true);
    for (const QString& c : spec_.categories)
        for (const QString& word : c.section('\n', 0, 0).split(' ', Qt::SkipEmptyParts))
            if (textWidth(word, f) > slot - 4) return true;
    return false;
}

// The lower row of staggered labels starts under every line of the upper
// row's: an upper label that wraps ("AdamW" / "8-bit") or has a second line
// ("(current)") would otherwise touch its lower neighbours. Empty lines as
// tall as the tallest upper label.
std::vector<ChartScene::LabelLine> ChartScene::lowerRowSpacer(double slot) const {
    std::vector<LabelLine> spacer;
    double tallest = 0;
    for (int k = 0; k < spec_.categories.size(); k += 2) {
        std::vector<LabelLine> upper = ownLines(k, slot, true);
        double h = 0;
        for (const LabelLine& l : upper) h += QFontMetricsF(l.font).height();
        if (h > tallest) {
            tallest = h;
            spacer = std::move(upper);
        }
    }
    for (LabelLine& l : spacer) l.text.clear();
    return spacer;
}

// `stagger`: staggered(slot), and `spacer` lowerRowSpacer(slot) when
// staggered, computed once per layout by the caller.
std::vector<ChartScene::LabelLine> ChartScene::categoryLines(int i, double slot, bool stagger,
                                                             const std::vector<LabelLine>& spacer) const {
    std::vector<LabelLine> out = ownLines(i, slot, stagger);
    if (stagger && i % 2 == 1) out.insert(out.begin(), spacer.begin(), spacer.end());
    return out;
}

std::vector<ChartScene::LabelLine> ChartScene::ownLines(int i, double slot, bool stagger) const {
    QStringList given = spec_.categories[i].split('\n');
    const double room = std::max(10.0, stagger ? 2 * slot - 8 : slot - 4);
    if (i < spec_.shortCategories.size() && textWidth(given[0], pixelFont(12, true)) > room)
        given[0] = spec_.shortCategories[i];
    int px = 12;
    auto widest = [&](int size) {
        double w = 0;
        for (int k = 0; k < given.size(); ++k)
            for (const QString& word : given[k].split(' ', Qt::SkipEmptyParts))
                w = std::max(w, textWidth(word, pixelFont(k == 0 ? size : size - 1, k == 0)));
        return w;
    };
    // A smaller font before a wrapped name: a name on one line keeps the
    // staggered rows to two lines.
    while (px > 9 && (widest(px) > room || (stagger && textWidth(given[0], pixelFont(px, true)) > room))) --px;
    std::vector<LabelLine> out;
    for (int k = 0; k < given.size(); ++k) {
        const QFont f = pixelFont(k == 0 ? px : px - 1, k == 0);
        for (const QString& line : wrapLines(given[k], f, room, 3)) out.push_back({line, f, k == 0, room});
    }
    return out;
}

// Before the plot is laid out its width is a guess: a narrower slot than
// the real one, so the height reserved is never too small.
double ChartScene::estimatedSlotWidth() const {
    return (size_.width() - 2 * kPad - 90) / std::max<qsizetype>(1, spec_.categories.size());
}

double ChartScene::categoryLabelHeight() const {
    double height = QFontMetricsF(pixelFont(12)).height();
    const double slot = estimatedSlotWidth();
    const bool stagger = spec_.categories.size() > 1 && staggered(slot);
    const std::vector<LabelLine> spacer = stagger ? lowerRowSpacer(slot) : std::vector<LabelLine>();
    for (int i = 0; i < spec_.categories.size(); ++i) {
        double h = 0;
        for (const LabelLine& l : categoryLines(i, slot, stagger, spacer)) h += QFontMetricsF(l.font).height();
        height = std::max(height, h);
    }
    return height + 8;
}

void ChartScene::placeCategoryLabels() {
    const double bottom = plot_.bottom() + category_height_;
    const bool stagger = spec_.categories.size() > 1 && staggered(slotWidth());
    const std::vector<LabelLine> spacer = stagger ? lowerRowSpacer(slotWidth()) : std::vector<LabelLine>();
    for (int i = 0; i < spec_.categories.size(); ++i) {
        double y = plot_.bottom() + 5;
        for (const LabelLine& l : categoryLines(i, slotWidth(), stagger, spacer)) {
            const double lh = QFontMetricsF(l.font).height();
            if (y + lh > bottom + 1) break;  // the real slot is never narrower than the estimate; this is a guard
            const QColor ink = i == spec_.highlightedCategory ? (chartInks().dark ? textInk(kCapacity) : kCapacity) : l.first ? chartInks().ink : chartInks().muted;
            if (!l.text.isEmpty()) centeredText(elided(l.text, l.font, l.room + 2), l.font, ink, barCenterX(i), y);
            y += lh;
        }
    }
}

// A segment's name inside it when it fits: bold, else smaller, else not at all.
void ChartScene::placeInsideLabels() {
    const QFont fonts[] = {pixelFont(spec_.callouts ? 13 : 11, true), pixelFont(10)};
    for (int l = 0; l < spec_.layers.size(); ++l) {
        const ChartLayer& layer = spec_.layers[l];
        for (int i = 0; i < spec_.categories.size(); ++i) {
            const auto [bottom, top] = segment(l, i);
            const double pixels = valueY(bottom) - valueY(top);
            const QString s = i < layer.inside.size() ? layer.inside[i] : layer.name;
            if (s.isEmpty()) continue;
            for (const QFont& f : fonts) {
                const QFontMetricsF fm(f);
                if (pixels < fm.height() + 2 || textWidth(s, f) > barPixelWidth() - 6) continue;
                centeredText(s, f, textColorOn(layer.color), barCenterX(i),
                             (valueY(bottom) + valueY(top)) / 2 - fm.height() / 2);
                break;
            }
        }
    }
}

// A bar's top label in `room` pixels, and its font: as given ("57.94 GiB
// (no fit)"), without the unit ("57.94 (no fit)"), rounded to a whole number
// from the value itself ("58 (no fit)"), the same in 10 px, then the whole
// number alone: never cut at the decimal point, and "(no fit)" kept while
// any form with it fits (the bar then keeps its red ink when none does).
std::pair<QString, QFont> ChartScene::topLabelFor(int i, double room) const {
    const QFont normal = pixelFont(12, true), small = pixelFont(10, true);
    const QString given = spec_.barTopLabels[i];
    if (textWidth(given, normal) <= room || i >= spec_.barTopValues.size() || std::isnan(spec_.barTopValues[i]))
        return {given, normal};
    const int note_at = given.indexOf(QStringLiteral(" ("));
    const QString note = note_at < 0 ? QString() : given.mid(note_at);
    const double value = spec_.barTopValues[i];
    const std::pair<QString, QFont> forms[] = {{numberText(value, 2) + note, normal}, {numberText(value, 0) + note, normal},
                                               {numberText(value, 2) + note, small},  {numberText(value, 0) + note, small},
                                               {numberText(value, 0), normal}};
    for (const auto& form : forms)
        if (textWidth(form.first, form.second) <= room) return form;
    return forms[std::size(forms) - 1];  // elided by the caller
}

void ChartScene::placeTopLabels() {
    for (int i = 0; i < spec_.barTopLabels.size() && i < spec_.categories.size(); ++i) {
        double top = 0;
        for (const auto& layer : spec_.layers)
            if (i < layer.values.size()) top += std::max(0.0, layer.values[i]);
        QColor color = chartInks().ink;
        if (spec_.segmentSeparators)  // one colour per bar: label it in the bar's colour, like the seed
            for (const auto& layer : spec_.layers)
                if (i < layer.values.size() && layer.values[i] > 0)
                    color = layer.color.lightnessF() > 0.7 ? layer.color.darker(135) : layer.color;
        const auto [label, font] = topLabelFor(i, slotWidth() - 4);
        const bool over = spec_.barTopLabels[i].endsWith(QStringLiteral("(no fit)"));
        if (over) color = chartInks().dark ? textInk(kCapacity) : kCapacity;
        auto* item = text(elided(label, font, slotWidth() - 2), font, color);
        item->setToolTip(spec_.barTopLabels[i]);
        item->setPos(barCenterX(i) - item->boundingRect().width() / 2,
                     valueY(top) - item->boundingRect().height() - 3);
    }
}

// Where a capacity label of `size` can sit on its line, clear of every bar
// and bar label, no higher than `ceiling`: right end above the line, below
// it, left end above, below.
std::optional<QPointF> ChartScene::capacityLabelPlace(QSizeF size, double ceiling) const {
    const double line = valueY(*spec_.capacity);
    const QPointF places[] = {{plot_.right() - size.width() - 4, line - size.height() - 2},
                              {plot_.right() - size.width() - 4, line + 3},
                              {plot_.left() + 4, line - size.height() - 2},
                              {plot_.left() + 4, line + 3}};
    for (const QPointF& at : places) {
        const QRectF box(at, size);
        if (box.top() < ceiling || box.bottom() > plot_.bottom()) continue;
        bool clear = true;
        for (int i = 0; i < spec_.categories.size() && clear; ++i)
            clear = !barRect(i).adjusted(-2, -2, 2, 0).intersects(box);
        if (clear) return at;
    }
    return std::nullopt;
}

// Whether the bar-top labels or the capacity label need the row kept above
// the plot, or all of them fit inside it (the row is then empty paper).
bool ChartScene::rowAboveNeeded() const {
    for (int i = 0; i < spec_.barTopLabels.size() && i < spec_.categories.size(); ++i)
        if (barRect(i).top() < plot_.top()) return true;  // barRect includes the label
    if (!spec_.capacity || spec_.capacityLabel.isEmpty()) return false;
    const QFont f = pixelFont(11, true);
    const QSizeF size(std::min(textWidth(spec_.capacityLabel, f), plot_.width() - 8), QFontMetricsF(f).height());
    return !capacityLabelPlace(size, plot_.top()).has_value();
}

// The capacity label sits on its line where no bar or bar label is: right
// end above the line, below it, left end above, below; only when every
// place is taken does it go on a white backing at the right.
void ChartScene::placeCapacityLabel() {
    if (!spec_.capacity || spec_.capacityLabel.isEmpty()) return;
    const QFont f = pixelFont(11, true);
    auto* item = text(elided(spec_.capacityLabel, f, plot_.width() - 8), f, chartInks().dark ? textInk(kCapacity) : kCapacity);
    const QRectF r = item->boundingRect();
    // Above the bars' own labels, in the row kept for it, when no place on the line is clear.
    item->setPos(capacityLabelPlace(r.size(), plot_.top() - 20).value_or(QPointF(plot_.right() - r.width() - 4, plot_.top() - 20 - r.height())));
    auto* backing = own(new QGraphicsRectItem(item->pos().x() - 2, item->pos().y(), r.width() + 4, r.height()), 9);
    QColor backing_color = chartInks().background;
    backing_color.setAlpha(210);
    backing->setBrush(backing_color);
    backing->setPen(Qt::NoPen);
}

// Call-outs to the right of the single bar, each at its segment's height,
// pushed apart where segments are thinner than their text. The capacity
// line gets one too, so its label never sits on the bar.
void ChartScene::placeBarCallouts() {
    std::vector<Callout> items;
    for (int l = static_cast<int>(spec_.layers.size()) - 1; l >= 0; --l) {  // top of the bar first
        const auto [bottom, top] = segment(l, 0);
        const ChartLayer& layer = spec_.layers[l];
        if (top - bottom <= 0 || layer.callout.isEmpty()) continue;
        items.push_back({layer.callout, layer.calloutDetail, layer.color, (valueY(bottom) + valueY(top)) / 2});
    }
    if (spec_.capacity && !spec_.capacityLabel.isEmpty()) {
        items.push_back({spec_.capacityLabel, QString(), kCapacity, valueY(*spec_.capacity), true});
        std::stable_sort(items.begin(), items.end(), [](const Callout& a, const Callout& b) { return a.anchor_y < b.anchor_y; });
    }
    const double bar_right = barCenterX(0) + barPixelWidth() / 2;
    const double text_x = std::max(bar_right, plot_.right()) + 40;
    // Down to the bar's label row too: the call-outs are right of the bar,
    // and every pixel of height saves a wrapped detail from being cut.
    placeCallouts(overlay_, items, plot_.top() - 18, plot_.bottom() + category_height_, bar_right, plot_.right(),
                  text_x, size_.width() - kPad - text_x);
}

// The legend lists the layers that have something to show.
std::vector<const ChartLayer*> ChartScene::legendLayers() const {
    std::vector<const ChartLayer*> out;
    for (const auto& layer : spec_.layers)
        if (anyPositive(layer)) out.push_back(&layer);
    return out;
}

bool ChartScene::anyPositive(const ChartLayer& layer) {
    return std::any_of(layer.values.begin(), layer.values.end(), [](double v) { return v > 0; });
}

// The footer's lines in a box `width` wide: a line longer than the box
// wraps once (a worked example cut at "…" lost its result at a 16 cm
// column), and past kMaxFooterLines the rest are counted, not drawn.
QStringList ChartScene::footerLines(double width) const {
    const QFont f = pixelFont(12);
    QStringList lines;
    for (const QString& line : spec_.footer) lines << wrapLines(line, f, width - 16, 2);
    return atMostLines(lines, kMaxFooterLines);
}

double ChartScene::footerHeight(double width) const {
    if (spec_.footer.isEmpty()) return 0;
    return footerLines(width).size() * QFontMetricsF(pixelFont(12)).height() + 14;
}

void ChartScene::placeFooter(double top, double width) {
    if (spec_.footer.isEmpty()) return;
    const QFont f = pixelFont(12);
    const double lh = QFontMetricsF(f).height();
    auto* box = own(new QGraphicsRectItem(0, 0, width, footerHeight(width)), 1);
    box->setPos(kPad, top);
    box->setBrush(chartInks().panel);
    box->setPen(QPen(chartInks().ink, 1));
    const QStringList lines = footerLines(width);
    for (int k = 0; k < lines.size(); ++k)
        centeredText(elided(lines[k], f, width - 16), f, chartInks().ink, kPad + width / 2, top + 7 + k * lh);
}

void ChartScene::placeEmptyNotice() {
    const QFont f = pixelFont(14);
    const QString s = spec_.emptyNotice.isEmpty() ? QStringLiteral("Nothing to draw") : spec_.emptyNotice;
    centeredText(elided(s, f, size_.width() - 2 * kPad), f, chartInks().muted, size_.width() / 2, plot_.center().y());
}

// Over the plot only: beside a single bar the call-outs start right of
// it, and a banner across the whole width hid the top ones. The message
// wraps in that width instead of being cut.
void ChartScene::placeStaleNotice() {
    if (spec_.staleNotice.isEmpty()) return;
    const QFont f = pixelFont(12, true);
    const double left = plot_.left();
    const double width = plot_.width();
    const QStringList lines = wrapLines(spec_.staleNotice, f, width - 12, 4);
    const double lh = QFontMetricsF(f).height();
    auto* banner = own(new QGraphicsRectItem(left, plot_.top() + 4, width, lines.size() * lh + 10), 20);
    banner->setBrush(QColor(0x70, 0x70, 0x70, 225));
    banner->setPen(Qt::NoPen);
    for (int k = 0; k < lines.size(); ++k)
        centeredText(lines[k], f, Qt::white, left + width / 2, plot_.top() + 9 + k * lh)->setZValue(21);
}

}  // namespace trainmem::ui
