#include "ui/memory_chart.h"

#include <cmath>

#include <QBarSet>
#include <QCursor>
#include <QEvent>
#include <QFontMetricsF>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsView>
#include <QPainter>
#include <QResizeEvent>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtCharts>

#include "ui/chart_callouts.h"
#include "ui/chart_style.h"
#include "ui/component_palette.h"
#include "ui/painting_export.h"

namespace trainmem::ui {

// The scene behind a chart: a QChart for axes, bars and the capacity line, and
// plain graphics items laid over it for what Qt Charts cannot place (titles,
// call-outs beside a segment, labels inside segments, legend, footer).
class ChartScene {
public:
    ChartScene() {
        chart_ = new QChart();
        chart_->setAnimationOptions(QChart::NoAnimation);  // every edit redraws; exports must be complete at once
        chart_->legend()->hide();
        chart_->setBackgroundRoundness(0);
        chart_->setMargins(QMargins(0, 0, 0, 0));
        chart_->setBackgroundBrush(Qt::white);
        chart_->setBackgroundPen(Qt::NoPen);
        scene_.addItem(chart_);

        value_axis_ = new QValueAxis();
        value_axis_->setLabelsFont(pixelFont(11));
        value_axis_->setTitleFont(pixelFont(12));
        value_axis_->setLabelsColor(kMutedInk);
        value_axis_->setTitleBrush(kMutedInk);
        value_axis_->setGridLineColor(QColor(0xe3, 0xe3, 0xe3));
        value_axis_->setLinePenColor(QColor(0x99, 0x99, 0x99));
        category_axis_ = new QBarCategoryAxis();
        category_axis_->setLabelsVisible(false);  // drawn by us: wrapped and elided to the bar's slot
        category_axis_->setGridLineVisible(false);
        category_axis_->setLinePenColor(QColor(0x99, 0x99, 0x99));
        chart_->addAxis(value_axis_, Qt::AlignLeft);
        chart_->addAxis(category_axis_, Qt::AlignBottom);
    }

    QGraphicsScene& scene() { return scene_; }
    const ChartSpec& spec() const { return spec_; }
    const QStringList& texts() const { return overlay_.texts(); }
    // The text item that is `prefix`, else the first that starts with it, in
    // scene coordinates.
    QRectF textRect(const QString& prefix) const {
        QRectF first;
        for (QGraphicsItem* item : scene_.items())
            if (auto* t = qgraphicsitem_cast<QGraphicsSimpleTextItem*>(item); t && t->text().startsWith(prefix)) {
                if (t->text() == prefix) return t->sceneBoundingRect();
                if (first.isNull()) first = t->sceneBoundingRect();
            }
        return first;
    }

    // A spec's bars become one QBarSet per layer (Qt's stacked-bar idiom).
    void setSpec(const ChartSpec& spec) {
        const bool same_shape = sameShape(spec);
        spec_ = spec;
        if (same_shape)
            updateValues();  // an edit usually changes numbers only: keep Qt's items
        else
            rebuildSeries();
        if (spec_.empty()) return;
        const AxisTicks ticks = niceTicks(std::max(spec_.largestStack(), spec_.capacity.value_or(0)) * 1.06);
        value_max_ = ticks.max;
        value_axis_->setRange(0, ticks.max);
        value_axis_->setTickCount(ticks.count);
        value_axis_->setLabelFormat(QStringLiteral("%.%1f").arg(spec_.valueDecimals));
        value_axis_->setTitleText(spec_.valueAxisTitle);
        bars_->setOpacity(spec_.staleNotice.isEmpty() ? 1.0 : 0.45);
    }

private:
    // Same layers (key, colour), bars and capacity line as what is drawn?
    bool sameShape(const ChartSpec& next) const {
        if (!bars_ || next.empty() || next.categories.size() != spec_.categories.size() ||
            next.layers.size() != spec_.layers.size() || next.capacity.has_value() != spec_.capacity.has_value() ||
            next.segmentSeparators != spec_.segmentSeparators)
            return false;
        for (int l = 0; l < next.layers.size(); ++l)
            if (next.layers[l].key != spec_.layers[l].key || next.layers[l].color != spec_.layers[l].color ||
                next.layers[l].name != spec_.layers[l].name)
                return false;
        return true;
    }

    void updateValues() {
        // Each QBarSet::replace re-lays out the series, so a set whose values
        // changed is refilled in two calls instead of one per bar.
        const QList<QBarSet*> sets = bars_->barSets();
        const int n = static_cast<int>(spec_.categories.size());
        for (int l = 0; l < spec_.layers.size(); ++l) {
            QList<qreal> values(n, 0.0);
            bool changed = false;
            for (int i = 0; i < n; ++i) {
                if (i < spec_.layers[l].values.size()) values[i] = std::max(0.0, spec_.layers[l].values[i]);
                changed = changed || sets[l]->at(i) != values[i];
            }
            if (!changed) continue;
            if (n == 1) {
                sets[l]->replace(0, values[0]);
            } else {
                sets[l]->remove(0, n);
                sets[l]->append(values);
            }
        }
        if (capacity_ && capacity_->at(0).y() != *spec_.capacity) {
            capacity_->replace(0, -0.5, *spec_.capacity);
            capacity_->replace(1, spec_.categories.size() - 0.5, *spec_.capacity);
        }
    }

    void rebuildSeries() {
        chart_->removeAllSeries();  // deletes the old series and their bar sets
        bars_ = nullptr;
        capacity_ = nullptr;
        if (spec_.empty()) return;

        bars_ = new QStackedBarSeries();
        for (int l = 0; l < spec_.layers.size(); ++l) {
            const ChartLayer& layer = spec_.layers[l];
            auto* set = new QBarSet(layer.name);
            for (int i = 0; i < spec_.categories.size(); ++i)
                set->append(i < layer.values.size() ? std::max(0.0, layer.values[i]) : 0.0);
            set->setColor(layer.color);
            set->setBorderColor(spec_.segmentSeparators ? QColor(Qt::white) : layer.color.darker(115));
            QPen pen(set->borderColor());
            pen.setWidthF(spec_.segmentSeparators ? 2.0 : 0.8);
            set->setPen(pen);
            QObject::connect(set, &QBarSet::hovered, set, [this, l](bool on, int index) { showTip(on, l, index); });
            bars_->append(set);
        }
        chart_->addSeries(bars_);
        QStringList slot_names;
        for (int i = 0; i < spec_.categories.size(); ++i) slot_names << QString::number(i);
        category_axis_->setCategories(slot_names);
        bars_->attachAxis(category_axis_);
        bars_->attachAxis(value_axis_);

        if (spec_.capacity) {
            capacity_ = new QLineSeries();
            capacity_->append(-0.5, *spec_.capacity);
            capacity_->append(spec_.categories.size() - 0.5, *spec_.capacity);
            QPen pen(kCapacity);
            pen.setWidthF(2.0);
            pen.setStyle(Qt::DashLine);
            capacity_->setPen(pen);
            chart_->addSeries(capacity_);
            capacity_->attachAxis(category_axis_);
            capacity_->attachAxis(value_axis_);
        }
    }

public:
    void layout(QSizeF size) {
        overlay_.clear();
        size_ = size;
        scene_.setSceneRect(QRectF(QPointF(0, 0), size));
        chart_->setGeometry(QRectF(QPointF(0, 0), size));

        const double width = size.width();
        double y = kPad;
        y = placeTitle(y);

        const bool axes = !spec_.empty();
        value_axis_->setVisible(axes);
        category_axis_->setVisible(axes);

        const double footer_height = footerHeight();
        const double legend_height = axes && spec_.legend ? legendHeight(legendLayers(), width - 2 * kPad) : 0;
        const double category_height = axes ? categoryLabelHeight() : 0;
        category_height_ = category_height;
        const bool room_above = !spec_.barTopLabels.isEmpty() || spec_.capacity.has_value();
        // Qt Charts places the plot inside the margins, after its own axis
        // labels; we steer it with margins and then read where it went.
        // (QChart::setPlotArea is not used: in Qt 6.4 it moves the series but
        // leaves the axes where the automatic layout put them.)
        // Multi-bar charts with a capacity line keep one more row above the
        // plot: where its label goes when every place on the line is taken.
        const double top = y + (room_above ? 24 : 8) + (spec_.capacity && !spec_.callouts ? 16 : 0);
        const double bottom = kPad + (footer_height > 0 ? footer_height + 10 : 0) +
                              (legend_height > 0 ? legend_height + 6 : 0) + category_height;
        double right = kPad + 8;
        if (spec_.callouts) {
            const double left_guess = kPad + 64;
            right = width - (left_guess + std::clamp((width - left_guess) * 0.34, 110.0, 330.0));
        }
        chart_->setMargins(QMargins(static_cast<int>(kPad), static_cast<int>(top), static_cast<int>(right),
                                    static_cast<int>(std::min(bottom, size.height() - top - 40))));
        if (chart_->layout()) chart_->layout()->activate();
        plot_ = chart_->plotArea();
        if (bars_) bars_->setBarWidth(barWidthFraction());

        if (!axes) {
            placeEmptyNotice();
        } else {
            placeCategoryLabels();
            placeInsideLabels();
            placeTopLabels();
            if (spec_.callouts)
                placeBarCallouts();
            else
                placeCapacityLabel();
            if (spec_.legend) placeLegend(overlay_, legendLayers(), kPad, plot_.bottom() + category_height + 4, width - 2 * kPad);
        }
        placeFooter(size.height() - kPad - footer_height, width - 2 * kPad);
        placeStaleNotice();
    }

private:
    // --- geometry of the bars, from the axis ranges we set ourselves --------
    double barCenterX(int i) const {
        const int n = static_cast<int>(spec_.categories.size());
        return plot_.left() + (i + 0.5) * plot_.width() / n;
    }
    double slotWidth() const { return plot_.width() / std::max<qsizetype>(1, spec_.categories.size()); }
    double barWidthFraction() const {
        // Wide single bars look like the seed figure; many bars stay slim.
        return std::min(spec_.callouts ? 0.62 : 0.7, 130.0 / std::max(1.0, slotWidth()));
    }
    double barPixelWidth() const { return slotWidth() * barWidthFraction(); }
    double valueY(double v) const { return plot_.bottom() - v / value_max_ * plot_.height(); }
    // Segment [bottom, top] in values of layer `l` in bar `i`.
    std::pair<double, double> segment(int l, int i) const {
        double bottom = 0;
        for (int k = 0; k < l; ++k)
            if (i < spec_.layers[k].values.size()) bottom += std::max(0.0, spec_.layers[k].values[i]);
        const double v = i < spec_.layers[l].values.size() ? std::max(0.0, spec_.layers[l].values[i]) : 0.0;
        return {bottom, bottom + v};
    }

    // --- overlay items (chart_callouts.h) -----------------------------------
    QGraphicsSimpleTextItem* text(const QString& s, const QFont& font, const QColor& color) { return overlay_.text(s, font, color); }
    QGraphicsSimpleTextItem* centeredText(const QString& s, const QFont& font, const QColor& color, double cx, double top) {
        return overlay_.centeredText(s, font, color, cx, top);
    }
    template <class Item>
    Item* own(Item* item, double z = 5) {
        return overlay_.own(item, z);
    }

    double placeTitle(double y) {
        const double width = size_.width() - 2 * kPad;
        if (!spec_.title.isEmpty()) {
            const QFont f = pixelFont(17, true);
            y += centeredText(elided(spec_.title, f, width), f, kInk, size_.width() / 2, y)->boundingRect().height();
        }
        if (!spec_.subtitle.isEmpty()) {
            const QFont f = pixelFont(12);
            for (const QString& line : spec_.subtitle.split('\n'))
                y += centeredText(elided(line, f, width), f, kMutedInk, size_.width() / 2, y + 2)->boundingRect().height() + 2;
        }
        return y;
    }

    // A bar's label as drawn in a slot `slot` pixels wide: its short form
    // when the first line does not fit, then a smaller font, then each line
    // broken at spaces ("AdamW" / "8-bit"); an ellipsis only for a single word
    // that fits in no font, so three columns never all read "Ada…". When
    // even a 10 px name is wider than its slot, the labels are staggered: odd
    // bars' labels one line lower, so each may use the width of two slots.
    struct LabelLine {
        QString text;  // empty: the staggered labels' spacer line
        QFont font;
        bool first;    // a line of the category's first (bold) line
        double room;   // width it may use, centred on its bar
    };
    bool staggered(double slot) const {
        const QFontMetricsF fm(pixelFont(10, true));
        for (const QString& c : spec_.categories)
            for (const QString& word : c.section('\n', 0, 0).split(' ', Qt::SkipEmptyParts))
                if (fm.horizontalAdvance(word) > slot - 4) return true;
        return false;
    }
    // `stagger`: staggered(slot), computed once per layout by the caller.
    std::vector<LabelLine> categoryLines(int i, double slot, bool stagger) const {
        QStringList given = spec_.categories[i].split('\n');
        const double room = std::max(10.0, stagger ? 2 * slot - 8 : slot - 4);
        if (i < spec_.shortCategories.size() && QFontMetricsF(pixelFont(12, true)).horizontalAdvance(given[0]) > room)
            given[0] = spec_.shortCategories[i];
        int px = 12;
        auto widest = [&](int size) {
            double w = 0;
            for (int k = 0; k < given.size(); ++k)
                for (const QString& word : given[k].split(' ', Qt::SkipEmptyParts))
                    w = std::max(w, QFontMetricsF(pixelFont(k == 0 ? size : size - 1, k == 0)).horizontalAdvance(word));
            return w;
        };
        while (px > 9 && widest(px) > room) --px;
        std::vector<LabelLine> out;
        if (stagger && i % 2 == 1) out.push_back({QString(), pixelFont(px, true), true, room});
        for (int k = 0; k < given.size(); ++k) {
            const QFont f = pixelFont(k == 0 ? px : px - 1, k == 0);
            for (const QString& line : wrapLines(given[k], f, room, 3)) out.push_back({line, f, k == 0, room});
        }
        return out;
    }
    // Before the plot is laid out its width is a guess: a narrower slot than
    // the real one, so the height reserved is never too small.
    double estimatedSlotWidth() const {
        return (size_.width() - 2 * kPad - 90) / std::max<qsizetype>(1, spec_.categories.size());
    }
    double categoryLabelHeight() const {
        double height = QFontMetricsF(pixelFont(12)).height();
        const double slot = estimatedSlotWidth();
        const bool stagger = spec_.categories.size() > 1 && staggered(slot);
        for (int i = 0; i < spec_.categories.size(); ++i) {
            double h = 0;
            for (const LabelLine& l : categoryLines(i, slot, stagger)) h += QFontMetricsF(l.font).height();
            height = std::max(height, h);
        }
        return height + 8;
    }
    void placeCategoryLabels() {
        const double bottom = plot_.bottom() + category_height_;
        const bool stagger = spec_.categories.size() > 1 && staggered(slotWidth());
        for (int i = 0; i < spec_.categories.size(); ++i) {
            double y = plot_.bottom() + 5;
            for (const LabelLine& l : categoryLines(i, slotWidth(), stagger)) {
                const double lh = QFontMetricsF(l.font).height();
                if (y + lh > bottom + 1) break;  // the real slot is never narrower than the estimate; this is a guard
                const QColor ink = i == spec_.highlightedCategory ? kCapacity : l.first ? kInk : kMutedInk;
                if (!l.text.isEmpty()) centeredText(elided(l.text, l.font, l.room + 2), l.font, ink, barCenterX(i), y);
                y += lh;
            }
        }
    }

    // A segment's name inside it when it fits: bold, else smaller, else not at all.
    void placeInsideLabels() {
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
                    if (pixels < fm.height() + 2 || fm.horizontalAdvance(s) > barPixelWidth() - 6) continue;
                    centeredText(s, f, textColorOn(layer.color), barCenterX(i),
                                 (valueY(bottom) + valueY(top)) / 2 - fm.height() / 2);
                    break;
                }
            }
        }
    }

    void placeTopLabels() {
        const QFont f = pixelFont(12, true);
        for (int i = 0; i < spec_.barTopLabels.size() && i < spec_.categories.size(); ++i) {
            double top = 0;
            for (const auto& layer : spec_.layers)
                if (i < layer.values.size()) top += std::max(0.0, layer.values[i]);
            QColor color = kInk;
            if (spec_.segmentSeparators)  // one colour per bar: label it in the bar's colour, like the seed
                for (const auto& layer : spec_.layers)
                    if (i < layer.values.size() && layer.values[i] > 0)
                        color = layer.color.lightnessF() > 0.7 ? layer.color.darker(135) : layer.color;
            // Narrow slots drop the unit ("30.27"), then round ("30").
            QString label = spec_.barTopLabels[i];
            const QFontMetricsF fm(f);
            if (fm.horizontalAdvance(label) > slotWidth() - 4 && label.contains(' ')) label = label.section(' ', 0, 0);
            if (fm.horizontalAdvance(label) > slotWidth() - 4 && label.contains('.')) label = label.section('.', 0, 0);
            auto* item = text(elided(label, f, slotWidth() - 2), f, color);
            item->setToolTip(spec_.barTopLabels[i]);
            item->setPos(barCenterX(i) - item->boundingRect().width() / 2,
                         valueY(top) - item->boundingRect().height() - 3);
        }
    }

public:
    // A bar with the label above it, in scene coordinates.
    QRectF barRect(int i) const {
        double top = 0;
        for (const auto& layer : spec_.layers)
            if (i < layer.values.size()) top += std::max(0.0, layer.values[i]);
        const double label = i < spec_.barTopLabels.size() ? QFontMetricsF(pixelFont(12, true)).height() + 3 : 0;
        return QRectF(barCenterX(i) - barPixelWidth() / 2, valueY(top) - label, barPixelWidth(),
                      plot_.bottom() - valueY(top) + label);
    }

private:
    // The capacity label sits on its line where no bar or bar label is: right
    // end above the line, below it, left end above, below; only when every
    // place is taken does it go on a white backing at the right.
    void placeCapacityLabel() {
        if (!spec_.capacity || spec_.capacityLabel.isEmpty()) return;
        const QFont f = pixelFont(11, true);
        auto* item = text(elided(spec_.capacityLabel, f, plot_.width() - 8), f, kCapacity);
        const QRectF r = item->boundingRect();
        const double line = valueY(*spec_.capacity);
        const QPointF places[] = {{plot_.right() - r.width() - 4, line - r.height() - 2},
                                  {plot_.right() - r.width() - 4, line + 3},
                                  {plot_.left() + 4, line - r.height() - 2},
                                  {plot_.left() + 4, line + 3}};
        auto clear = [&](QPointF at) {
            const QRectF box(at, r.size());
            if (box.top() < plot_.top() - 20 || box.bottom() > plot_.bottom()) return false;
            for (int i = 0; i < spec_.categories.size(); ++i)
                if (barRect(i).adjusted(-2, -2, 2, 0).intersects(box)) return false;
            return true;
        };
        // Above the bars' own labels, in the row kept for it.
        QPointF at(plot_.right() - r.width() - 4, plot_.top() - 20 - r.height());
        for (const QPointF& p : places)
            if (clear(p)) {
                at = p;
                break;
            }
        item->setPos(at);
        auto* backing = own(new QGraphicsRectItem(item->pos().x() - 2, item->pos().y(), r.width() + 4, r.height()), 9);
        backing->setBrush(QColor(255, 255, 255, 210));
        backing->setPen(Qt::NoPen);
    }

    // Call-outs to the right of the single bar, each at its segment's height,
    // pushed apart where segments are thinner than their text. The capacity
    // line gets one too, so its label never sits on the bar.
    void placeBarCallouts() {
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
    std::vector<const ChartLayer*> legendLayers() const {
        std::vector<const ChartLayer*> out;
        for (const auto& layer : spec_.layers)
            if (anyPositive(layer)) out.push_back(&layer);
        return out;
    }
    static bool anyPositive(const ChartLayer& layer) {
        return std::any_of(layer.values.begin(), layer.values.end(), [](double v) { return v > 0; });
    }

    static constexpr int kMaxFooterLines = 8;
    double footerHeight() const {
        if (spec_.footer.isEmpty()) return 0;
        const int lines = std::min<int>(kMaxFooterLines, spec_.footer.size());
        return lines * QFontMetricsF(pixelFont(12)).height() + 14;
    }
    void placeFooter(double top, double width) {
        if (spec_.footer.isEmpty()) return;
        const QFont f = pixelFont(12);
        const double lh = QFontMetricsF(f).height();
        auto* box = own(new QGraphicsRectItem(0, 0, width, footerHeight()), 1);
        box->setPos(kPad, top);
        box->setBrush(QColor(0xf5, 0xf5, 0xf5));
        box->setPen(QPen(kInk, 1));
        const QStringList lines = atMostLines(spec_.footer, kMaxFooterLines);
        for (int k = 0; k < lines.size(); ++k)
            centeredText(elided(lines[k], f, width - 16), f, kInk, kPad + width / 2, top + 7 + k * lh);
    }

    void placeEmptyNotice() {
        const QFont f = pixelFont(14);
        const QString s = spec_.emptyNotice.isEmpty() ? QStringLiteral("Nothing to draw") : spec_.emptyNotice;
        centeredText(elided(s, f, size_.width() - 2 * kPad), f, kMutedInk, size_.width() / 2, plot_.center().y());
    }

    // Over the plot only: beside a single bar the call-outs start right of
    // it, and a banner across the whole width hid the top ones. The message
    // wraps in that width instead of being cut.
    void placeStaleNotice() {
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

    void showTip(bool on, int layer, int index) {
        if (!on) {
            QToolTip::hideText();
            return;
        }
        const ChartLayer& l = spec_.layers[layer];
        QString tip = QStringLiteral("<b>%1</b>").arg(l.name.toHtmlEscaped());
        if (index < spec_.categories.size()) tip += " — " + spec_.categories[index].section('\n', 0, 0).toHtmlEscaped();
        if (index < l.values.size()) tip += QStringLiteral("<br>%1 %2").arg(l.values[index], 0, 'f', 2).arg(spec_.valueAxisTitle.toHtmlEscaped());
        if (!l.calloutDetail.isEmpty()) tip += "<br>" + l.calloutDetail.toHtmlEscaped();
        QToolTip::showText(QCursor::pos(), tip);
    }

    QGraphicsScene scene_;
    QChart* chart_ = nullptr;  // owned by scene_
    QValueAxis* value_axis_ = nullptr;
    QBarCategoryAxis* category_axis_ = nullptr;
    QStackedBarSeries* bars_ = nullptr;
    QLineSeries* capacity_ = nullptr;
    ChartOverlay overlay_{scene_};  // after scene_, which owns its items
    ChartSpec spec_;
    QSizeF size_;
    QRectF plot_;
    double value_max_ = 1;
    double category_height_ = 0;  // of the labels under the bars, this layout
};

MemoryChart::MemoryChart(QWidget* parent) : QWidget(parent), scene_(std::make_unique<ChartScene>()) {
    view_ = new QGraphicsView(&scene_->scene(), this);
    view_->setRenderHint(QPainter::Antialiasing);  // once, here, for every chart
    view_->setRenderHint(QPainter::TextAntialiasing);
    view_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    view_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    view_->setFrameShape(QFrame::NoFrame);
    view_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    // An edit moves most items; repainting the whole view is cheaper than
    // tracking each item's old and new region.
    view_->setViewportUpdateMode(QGraphicsView::FullViewportUpdate);
    viewport_ = view_->viewport();
    viewport_->installEventFilter(this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view_);
    setMinimumSize(360, 280);
}

MemoryChart::~MemoryChart() {
    // The view's teardown still sends events to its viewport; by then the view
    // is half destroyed, so stop filtering before deleting it (UBSan caught
    // the filter calling into the dying QAbstractScrollArea).
    viewport_->removeEventFilter(this);
    viewport_ = nullptr;
    delete view_;  // before the scene it shows
    view_ = nullptr;
}

void MemoryChart::setSpec(const ChartSpec& spec) {
    scene_->setSpec(spec);
    scene_->layout(QSizeF(view_->viewport()->size()));
    view_->viewport()->update();
}

const ChartSpec& MemoryChart::spec() const { return scene_->spec(); }

QStringList MemoryChart::visibleTexts() const { return scene_->texts(); }
QRectF MemoryChart::textRect(const QString& prefix) const { return scene_->textRect(prefix); }
QRectF MemoryChart::barRect(int bar) const { return scene_->barRect(bar); }

void MemoryChart::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    scene_->layout(QSizeF(view_->viewport()->size()));
}

bool MemoryChart::eventFilter(QObject* watched, QEvent* event) {
    if (watched == viewport_ && event->type() == QEvent::Paint) ++paint_count_;
    return QWidget::eventFilter(watched, event);
}

void MemoryChart::render(const ChartSpec& spec, QPainter& painter, const QRectF& target, QSizeF logicalSize) {
    ChartScene scene;
    scene.setSpec(spec);
    scene.layout(logicalSize);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    scene.scene().render(&painter, target, QRectF(QPointF(0, 0), logicalSize));
}

QImage MemoryChart::renderImage(const ChartSpec& spec, QSize size, qreal scale) {
    return paintingImage([&spec](QPainter& painter, const QRectF& target) { render(spec, painter, target, target.size()); },
                         size, scale);
}

}  // namespace trainmem::ui
