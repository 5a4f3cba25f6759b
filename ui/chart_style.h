#pragma once
// What every chart of the app shares so the tabs read as one: pixel fonts,
// inks, padding, value-axis ticks and legend wrapping. No Qt Charts here.
#include <utility>
#include <vector>

#include <QColor>
#include <QFont>
#include <QString>
#include <QStringList>

namespace trainmem::ui {

// Pixel sizes, not point sizes: the layout must not depend on the DPI of the
// device it is rendered to (screen, 72-dpi PDF page, SVG).
QFont pixelFont(int px, bool bold = false);

// A short key for a font of the charts (family, pixel size, weight, italic).
QString fontTag(const QFont& font);
// QFontMetricsF::horizontalAdvance, remembered per font and text.
double textWidth(const QString& text, const QFont& font);

// The inks a chart is drawn with: dark on white, or light on a dark grey
// when the desktop's colour scheme is dark (MainWindow follows its palette).
// Exports are always light: a figure goes into a document, not the desktop.
struct ChartInks {
    QColor ink;         // titles, labels, footer text
    QColor muted;       // subtitles, axes' labels, secondary lines
    QColor background;  // the chart's and the timeline's
    QColor grid;        // value axis grid
    QColor axis;        // axis lines
    QColor panel;       // the footer box, label backings (with alpha)
    bool dark = false;
};
const ChartInks& chartInks();
void setDarkCharts(bool dark);
// Light inks for as long as it lives (exports, clipboard images).
class LightChartInks {
public:
    LightChartInks();
    ~LightChartInks();
    LightChartInks(const LightChartInks&) = delete;
    LightChartInks& operator=(const LightChartInks&) = delete;

private:
    bool was_dark_;
};

inline const QColor kCapacity(0xc0, 0x39, 0x2b);

// Text in a component's colour, readable on the chart's background: darker
// on white, lighter on dark grey (the navy and slate components were 2:1).
QColor textInk(const QColor& component);
constexpr double kPad = 14;

// Round numbers for a value axis: 1, 2, 2.5 or 5 times a power of ten, at
// most 8 intervals.
struct AxisTicks {
    double max = 1;
    int count = 2;
};
AxisTicks niceTicks(double top);

// Legend entries (index, width) wrapped into rows no wider than `width`:
// a swatch, the name and a gap per entry.
using LegendRow = std::vector<std::pair<int, double>>;
std::vector<LegendRow> legendRows(const std::vector<QString>& names, const QFont& font, double width);

// `lines` cut to at most `max`, the last saying how many more there were.
QStringList atMostLines(const QStringList& lines, int max);

}  // namespace trainmem::ui
