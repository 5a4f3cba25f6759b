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

// A table drawn under the plot: the Compare figure's settings that differ,
// each component and the device total per pin with its change against the
// base pin. The same rows fill the Compare tab's table and its clipboard copy.
struct FigureTableRow {
    QString name;             // "optimizer", "Weights (GiB)"
    QColor swatch;            // the component's colour; invalid: none
    bool bold = false;        // the device total and whether it fits
    bool detail = false;      // a component row: a small figure leaves it out and keeps the legend
    bool off_screen = false;  // in figures and copies only: on screen the bars' labels say it ("(no fit)")
    QStringList cells;        // one per column: "57.94  (+3.20, +6%)"
    QStringList shortCells;   // the same without the change, for a narrow figure; empty: cells
    QVector<bool> emphasised; // cells that differ from the base's
    QVector<double> numbers;  // bytes or NaN, one per column (tests, CSV)
};
struct FigureTable {
    QString corner;           // over the row names
    QStringList columns;      // "A (base)", "B", ...
    QVector<FigureTableRow> rows;
    bool empty() const { return rows.isEmpty(); }
};

// One stacked layer across all bars (a component, or an optimizer buffer).
struct ChartLayer {
    QString key;              // "optimizer_states": stable id for tests and exports
    QString name;             // "Optimizer states": legend and call-out title
    QColor color;
    QVector<double> values;   // one per bar, in the chart's value unit; 0 = not drawn
    QStringList inside;       // text inside each bar's segment when it fits; empty = `name`
    QString callout;          // single-bar charts: first line beside the segment ("Optimizer states: 24.1 GiB")
    QString calloutDetail;    // second line: how it scales ("AdamW: 2x params, fp32")
    // Multi-bar charts: each bar's hover text for this layer (how it scales
    // and its formula, for that bar's scenario); empty: calloutDetail.
    QStringList details;
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
    // The number each bar-top label starts with, in the value unit, when it
    // is a total: a narrow slot drops the unit, then rounds this (never the
    // text) to a whole number, and keeps what follows "(no fit)".
    QVector<double> barTopValues;
    QVector<ChartLayer> layers;  // bottom to top
    std::optional<double> capacity;  // horizontal line, in the value unit
    QString capacityLabel;
    bool callouts = false;    // call-outs beside the bar (one-bar breakdown, like the seed figure)
    bool legend = true;       // legend under the plot (multi-bar views)
    bool segmentSeparators = false;  // white lines between segments of one colour (x params view)
    QStringList footer;       // lines in a box under the chart (worked example, differences)
    QString staleNotice;      // non-empty: a grey banner saying the result is out of date
    QString emptyNotice;      // shown instead of bars when there is nothing to draw
    FigureTable table;        // under the plot, in place of the legend when it has every row

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
