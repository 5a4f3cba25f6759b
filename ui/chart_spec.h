#pragma once
// What a chart shows, as plain values: the tabs build one from an estimate
// (chart_views.h) and MemoryChart draws it on screen or into any QPainter.
// Keeping this free of Qt Charts types is what lets a later move to Qt Graphs
// stay inside chart_scene.cpp.
#include <algorithm>
#include <optional>

#include <QColor>
#include <QString>
#include <QStringList>
#include <QVector>

namespace trainmem::ui {

// One stacked layer across all bars (a component, or an optimizer buffer).
struct ChartLayer {
    QString key;              // "optimizer_states": stable id for tests and exports
    QString name;             // "Optimizer states": legend and call-out title
    QColor color;
    QVector<double> values;   // one per bar, in the chart's value unit; 0 = not drawn
    QStringList inside;       // text inside each bar's segment when it fits; empty = `name`
    QString callout;          // single-bar charts: first line beside the segment ("Optimizer states: 24.1 GiB")
    QString calloutDetail;    // second line: how it scales ("AdamW: 2x params, fp32")
};

struct ChartSpec {
    QString title;
    QString subtitle;
    QString valueAxisTitle;   // "GiB per GPU", "extra memory (x params)"
    int valueDecimals = 0;    // axis tick label precision
    QStringList categories;   // one per bar; lines after the first are smaller
    QStringList shortCategories;   // first lines to use when a bar's slot is too narrow ("S2" for "Stage 2")
    int highlightedCategory = -1;  // label drawn in the accent colour (the peak stage)
    QStringList barTopLabels; // above each bar (total, "2x"); may be empty
    QVector<ChartLayer> layers;  // bottom to top
    std::optional<double> capacity;  // horizontal line, in the value unit
    QString capacityLabel;
    bool callouts = false;    // call-outs beside the bar (one-bar breakdown, like the seed figure)
    bool legend = true;       // legend under the plot (multi-bar views)
    bool segmentSeparators = false;  // white lines between segments of one colour (x params view)
    QStringList footer;       // lines in a box under the chart (worked example, differences)
    QString staleNotice;      // non-empty: a grey banner saying the result is out of date
    QString emptyNotice;      // shown instead of bars when there is nothing to draw

    bool empty() const { return categories.isEmpty() || layers.isEmpty(); }
    // Largest stacked total, for the value axis.
    double largestStack() const {
        double top = 0;
        for (int i = 0; i < categories.size(); ++i) {
            double sum = 0;
            for (const auto& layer : layers)
                if (i < layer.values.size() && layer.values[i] > 0) sum += layer.values[i];
            top = std::max(top, sum);
        }
        return top;
    }
};

}  // namespace trainmem::ui
