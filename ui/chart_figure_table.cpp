#include "ui/chart_figure_table.h"

#include <algorithm>
#include <numeric>

#include <QFontMetricsF>
#include <QGraphicsLineItem>
#include <QGraphicsRectItem>
#include <QPen>

#include "ui/chart_style.h"

namespace trainmem::ui {

namespace {

constexpr double kCellGap = 10;  // between columns
constexpr double kSwatch = 10;

bool shown(const FigureTableRow& row, bool compact) { return !compact || !row.detail; }

QString cellText(const FigureTableRow& row, int column, bool full) {
    const QStringList& cells = full || row.shortCells.isEmpty() ? row.cells : row.shortCells;
    return cells.value(column);
}

}  // namespace

FigureTableLayout layoutFigureTable(const FigureTable& table, double width, bool compact) {
    FigureTableLayout out;
    out.compact = compact;
    // Largest first: 11 px with the changes, 10, 9; then without them.
    for (const bool full : {true, false})
        for (const int px : {11, 10, 9}) {
            const QFont plain = pixelFont(px), bold = pixelFont(px, true);
            std::vector<double> columns(static_cast<size_t>(table.columns.size()), 0.0);
            double names = textWidth(table.corner, bold);
            int rows = 0;
            for (int c = 0; c < table.columns.size(); ++c) columns[static_cast<size_t>(c)] = textWidth(table.columns[c], bold);
            for (const FigureTableRow& row : table.rows) {
                if (!shown(row, compact)) continue;
                ++rows;
                names = std::max(names, textWidth(row.name, row.bold ? bold : plain) + (row.swatch.isValid() ? kSwatch + 4 : 0));
                for (int c = 0; c < table.columns.size(); ++c)
                    columns[static_cast<size_t>(c)] = std::max(columns[static_cast<size_t>(c)], textWidth(cellText(row, c, full), bold));
            }
            const double cells = std::accumulate(columns.begin(), columns.end(), 0.0) + kCellGap * static_cast<double>(columns.size());
            // The names take what the cells leave, at least a third of the width (elided past it).
            const double name_room = std::max(width / 3, width - cells);
            out.px = px;
            out.full_cells = full;
            out.name_width = std::min(names, name_room);
            out.column_widths = columns;
            out.height = (rows + 1) * (QFontMetricsF(plain).height() + 2) + 6;
            if (cells + out.name_width <= width) return out;
        }
    return out;  // the smallest form; the names are elided to their room
}

void placeFigureTable(ChartOverlay& overlay, const FigureTable& table, const FigureTableLayout& layout, double left,
                      double top, double width) {
    const QFont plain = pixelFont(layout.px), bold = pixelFont(layout.px, true);
    const double lh = QFontMetricsF(plain).height() + 2;
    const double cells = std::accumulate(layout.column_widths.begin(), layout.column_widths.end(), 0.0) +
                         kCellGap * static_cast<double>(layout.column_widths.size());
    const double name_width = std::min(layout.name_width, width - cells);
    // Centred when narrower than the figure.
    const double x0 = left + std::max(0.0, (width - name_width - cells) / 2);
    const ChartInks& inks = chartInks();
    auto rightAligned = [&](const QString& s, const QFont& f, const QColor& ink, double right, double y) {
        overlay.text(s, f, ink)->setPos(right - textWidth(s, f), y);
    };
    double y = top;
    overlay.text(elided(table.corner, bold, name_width), bold, inks.muted)->setPos(x0, y);
    double right = x0 + name_width;
    for (int c = 0; c < table.columns.size(); ++c) {
        right += kCellGap + layout.column_widths[static_cast<size_t>(c)];
        rightAligned(table.columns[c], bold, inks.ink, right, y);
    }
    y += lh;
    auto rule = [&](double at) {
        auto* line = overlay.own(new QGraphicsLineItem(x0, at, x0 + name_width + cells, at));
        line->setPen(QPen(inks.axis, 0.8));
    };
    rule(y - 1);
    for (const FigureTableRow& row : table.rows) {
        if (!shown(row, layout.compact)) continue;
        if (row.bold) rule(y + 1);
        const QFont& name_font = row.bold ? bold : plain;
        double x = x0;
        if (row.swatch.isValid()) {
            auto* swatch = overlay.own(new QGraphicsRectItem(x, y + (lh - kSwatch) / 2, kSwatch, kSwatch));
            swatch->setBrush(row.swatch);
            swatch->setPen(QPen(row.swatch.darker(120), 0.8));
            x += kSwatch + 4;
        }
        overlay.text(elided(row.name, name_font, x0 + name_width - x), name_font, inks.ink)->setPos(x, y + 1);
        right = x0 + name_width;
        for (int c = 0; c < table.columns.size(); ++c) {
            right += kCellGap + layout.column_widths[static_cast<size_t>(c)];
            const bool strong = row.bold || row.emphasised.value(c);
            rightAligned(cellText(row, c, layout.full_cells), strong ? bold : plain, inks.ink, right, y + 1);
        }
        y += lh;
    }
}

}  // namespace trainmem::ui
