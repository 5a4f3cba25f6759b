#include "ui/chart_scene.h"
#include "ui/chart_views.h"

#include <algorithm>

#include <QCursor>
#include <QFontMetricsF>
#include <QGraphicsSimpleTextItem>
#include <QToolTip>
#include <QtCharts>

#include "ui/chart_figure_table.h"
#include "ui/chart_style.h"

namespace trainmem::ui {

ChartScene::ChartScene() {
    chart_ = new QChart();
    chart_->setAnimationOptions(QChart::NoAnimation);  // every edit redraws; exports must be complete at once
    chart_->legend()->hide();
    chart_->setBackgroundRoundness(0);
    chart_->setMargins(QMargins(0, 0, 0, 0));
    chart_->setBackgroundPen(Qt::NoPen);
    scene_.addItem(chart_);

    value_axis_ = new QValueAxis();
    value_axis_->setLabelsFont(pixelFont(11));
    value_axis_->setTitleFont(pixelFont(12));
    category_axis_ = new QBarCategoryAxis();
    category_axis_->setLabelsVisible(false);  // drawn by us: wrapped and elided to the bar's slot
    category_axis_->setGridLineVisible(false);
    chart_->addAxis(value_axis_, Qt::AlignLeft);
    chart_->addAxis(category_axis_, Qt::AlignBottom);
}

QRectF ChartScene::textRect(const QString& prefix) const {
    QRectF first;
    for (QGraphicsItem* item : scene_.items())
        if (auto* t = qgraphicsitem_cast<QGraphicsSimpleTextItem*>(item); t && t->isVisible() && t->text().startsWith(prefix)) {
            if (t->text() == prefix) return t->sceneBoundingRect();
            if (first.isNull()) first = t->sceneBoundingRect();
        }
    return first;
}

QList<std::pair<QString, QRectF>> ChartScene::textRects() const {
    QList<std::pair<QString, QRectF>> out;
    for (QGraphicsItem* item : scene_.items())
        if (auto* t = qgraphicsitem_cast<QGraphicsSimpleTextItem*>(item); t && t->isVisible() && !t->text().isEmpty())
            out.append({t->text(), t->sceneBoundingRect()});
    return out;
}

void ChartScene::setSpec(const ChartSpec& spec) {
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

// Same layers (key, colour), bars and capacity line as what is drawn?
bool ChartScene::sameShape(const ChartSpec& next) const {
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

void ChartScene::updateValues() {
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

void ChartScene::rebuildSeries() {
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
        set->setBorderColor(spec_.segmentSeparators ? chartInks().background : layer.color.darker(115));
        QPen pen(set->borderColor());
        pen.setWidthF(spec_.segmentSeparators ? 2.0 : 0.8);
        set->setPen(pen);
        QObject::connect(set, &QBarSet::hovered, set, [this, l](bool on, int index) { showTip(on, l, index); });
        QObject::connect(set, &QBarSet::clicked, set, [this](int index) {
            if (on_bar_clicked_) on_bar_clicked_(index);
        });
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

void ChartScene::applyInks() {
    // Set on every layout (cheap when unchanged): the scheme may have changed
    // since, and an export lays out with light inks.
    const ChartInks& inks = chartInks();
    if (inks.dark == inks_dark_ && inks_set_) return;
    inks_set_ = true;
    inks_dark_ = inks.dark;
    chart_->setBackgroundBrush(inks.background);
    value_axis_->setLabelsColor(inks.muted);
    value_axis_->setTitleBrush(inks.muted);
    value_axis_->setGridLineColor(inks.grid);
    value_axis_->setLinePenColor(inks.axis);
    category_axis_->setLinePenColor(inks.axis);
    if (bars_ && spec_.segmentSeparators)
        for (QBarSet* set : bars_->barSets()) {
            set->setBorderColor(inks.background);
            QPen pen = set->pen();
            pen.setColor(inks.background);
            set->setPen(pen);
        }
}

void ChartScene::layout(QSizeF size) {
    applyInks();
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

    double footer_height = footerHeight(width - 2 * kPad);
    double legend_height = axes && spec_.legend ? legendHeight(legendLayers(), width - 2 * kPad) : 0;
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
    // A table under the plot (the Compare figure) names every component
    // with its colour, so it stands for the legend.
    const bool with_table = axes && !spec_.table.empty();
    FigureTableLayout table_layout;
    if (with_table) {
        table_layout = layoutFigureTable(spec_.table, width - 2 * kPad, false);
        legend_height = 0;
    }
    auto bottomMargin = [&] {
        return kPad + (footer_height > 0 ? footer_height + 10 : 0) + (legend_height > 0 ? legend_height + 6 : 0) +
               (with_table ? table_layout.height + 4 : 0) + category_height;
    };
    // A small figure (a 16 cm document column, text at 8 pt or more) keeps
    // a plot a third of its height: the footer box goes first (its text is
    // the table's), then the legend (the segments name themselves inside
    // where they have room), rather than bars a few pixels tall. A table
    // first gives up its component rows for the legend's few lines; its
    // settings, totals and fits stay.
    const double plot_wanted = std::max(60.0, size.height() / 3);
    if (axes && size.height() - top - bottomMargin() < plot_wanted) footer_height = 0;
    if (with_table && size.height() - top - bottomMargin() < plot_wanted) {
        table_layout = layoutFigureTable(spec_.table, width - 2 * kPad, true);
        legend_height = legendHeight(legendLayers(), width - 2 * kPad);
    }
    if (axes && size.height() - top - bottomMargin() < plot_wanted) legend_height = 0;
    const double bottom = bottomMargin();
    double right = kPad + 8;
    if (spec_.callouts) {
        const double left_guess = kPad + 64;
        // A narrow figure (a 16 cm document column) gives the call-outs a
        // larger share: their titles carry the sizes and must stay whole.
        const double share = width < 640 ? 0.26 : 0.34;
        right = width - (left_guess + std::clamp((width - left_guess) * share, 90.0, 330.0));
    }
    // Qt Charts keeps a band above and below the plot for axis labels: the
    // value axis's half-line above, the category labels (hidden: we draw our
    // own in category_height) below. Both bands were empty paper, ~16 px
    // each, a tenth of a document-column figure's height: give them back.
    auto placePlot = [&](double plot_top) {
        const int top_margin = static_cast<int>(plot_top);
        const int bottom_margin = static_cast<int>(std::min(bottom, size.height() - plot_top - 40));
        chart_->setMargins(QMargins(static_cast<int>(kPad), top_margin, static_cast<int>(right), bottom_margin));
        if (chart_->layout()) chart_->layout()->activate();
        plot_ = chart_->plotArea();
        const int spare_top = std::clamp(static_cast<int>(plot_.top()) - top_margin, 0, top_margin);
        const int spare_bottom = std::clamp(static_cast<int>(size.height() - bottom_margin - plot_.bottom()), 0, bottom_margin);
        if (!axes || (spare_top == 0 && spare_bottom == 0)) return;
        chart_->setMargins(QMargins(static_cast<int>(kPad), top_margin - spare_top, static_cast<int>(right), bottom_margin - spare_bottom));
        if (chart_->layout()) chart_->layout()->activate();
        plot_ = chart_->plotArea();
    };
    placePlot(top);
    // The row above the plot is kept for labels that might not fit inside
    // it; when every bar label and the capacity label fit, it goes (a
    // taller plot only gives them more room). Call-outs keep it: they may
    // climb into it.
    if (axes && room_above && !spec_.callouts && !rowAboveNeeded()) placePlot(y + 8);
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
        double under = plot_.bottom() + category_height + 4;
        if (with_table) {
            placeFigureTable(overlay_, spec_.table, table_layout, kPad, under, width - 2 * kPad);
            under += table_layout.height + 4;
        }
        if (legend_height > 0) placeLegend(overlay_, legendLayers(), kPad, under, width - 2 * kPad);
    }
    if (footer_height > 0 || !axes) placeFooter(size.height() - kPad - footerHeight(width - 2 * kPad), width - 2 * kPad);
    placeStaleNotice();
    overlay_.finish();
}

// --- geometry of the bars, from the axis ranges we set ourselves --------
double ChartScene::barCenterX(int i) const {
    const int n = static_cast<int>(spec_.categories.size());
    return plot_.left() + (i + 0.5) * plot_.width() / n;
}

double ChartScene::barWidthFraction() const {
    // Wide single bars look like the seed figure; many bars stay slim.
    return std::min(spec_.callouts ? 0.62 : 0.7, 130.0 / std::max(1.0, slotWidth()));
}

// Segment [bottom, top] in values of layer `l` in bar `i`.
std::pair<double, double> ChartScene::segment(int l, int i) const {
    double bottom = 0;
    for (int k = 0; k < l; ++k)
        if (i < spec_.layers[k].values.size()) bottom += std::max(0.0, spec_.layers[k].values[i]);
    const double v = i < spec_.layers[l].values.size() ? std::max(0.0, spec_.layers[l].values[i]) : 0.0;
    return {bottom, bottom + v};
}

QRectF ChartScene::barRect(int i) const {
    double top = 0;
    for (const auto& layer : spec_.layers)
        if (i < layer.values.size()) top += std::max(0.0, layer.values[i]);
    const double label = i < spec_.barTopLabels.size() ? QFontMetricsF(pixelFont(12, true)).height() + 3 : 0;
    return QRectF(barCenterX(i) - barPixelWidth() / 2, valueY(top) - label, barPixelWidth(),
                  plot_.bottom() - valueY(top) + label);
}

void ChartScene::showTip(bool on, int layer, int index) {
    if (!on) {
        QToolTip::hideText();
        return;
    }
    const ChartLayer& l = spec_.layers[layer];
    QString tip = QStringLiteral("<b>%1</b>").arg(l.name.toHtmlEscaped());
    if (index < spec_.categories.size()) tip += " — " + spec_.categories[index].section('\n', 0, 0).toHtmlEscaped();
    if (index < l.values.size()) tip += QStringLiteral("<br>%1 %2").arg(numberText(l.values[index], 2), spec_.valueAxisTitle.toHtmlEscaped());
    const QString detail = index < l.details.size() && !l.details[index].isEmpty() ? l.details[index] : l.calloutDetail;
    if (!detail.isEmpty()) tip += "<br>" + detail.toHtmlEscaped();
    QToolTip::showText(QCursor::pos(), tip);
}

}  // namespace trainmem::ui
