#include "ui/chart_style.h"

#include <cmath>

#include <QFontMetricsF>
#include <QHash>

namespace trainmem::ui {

QFont pixelFont(int px, bool bold) {
    QFont f;
    f.setPixelSize(px);
    f.setBold(bold);
    return f;
}

namespace {
const ChartInks kLight{QColor(0x33, 0x33, 0x33), QColor(0x66, 0x66, 0x66), Qt::white, QColor(0xe3, 0xe3, 0xe3),
                       QColor(0x99, 0x99, 0x99), QColor(0xf5, 0xf5, 0xf5), false};
// Contrast on the background: ink about 12:1, muted 6.4:1 (WCAG AA asks 4.5:1).
const ChartInks kDark{QColor(0xe6, 0xe6, 0xe6), QColor(0xaa, 0xaa, 0xaa), QColor(0x26, 0x28, 0x2b), QColor(0x3a, 0x3d, 0x42),
                      QColor(0x80, 0x80, 0x80), QColor(0x32, 0x35, 0x39), true};
bool dark_charts = false;  // GUI thread only
}  // namespace

const ChartInks& chartInks() { return dark_charts ? kDark : kLight; }
void setDarkCharts(bool dark) { dark_charts = dark; }
LightChartInks::LightChartInks() : was_dark_(dark_charts) { dark_charts = false; }
LightChartInks::~LightChartInks() { dark_charts = was_dark_; }

QColor textInk(const QColor& c) {
    if (!chartInks().dark) return c.lightnessF() > 0.75 ? c.darker(160) : c.darker(115);
    QColor ink = c;
    for (int i = 0; i < 6 && ink.lightnessF() < 0.68; ++i) ink = ink.lighter(125);
    return ink;
}

QString fontTag(const QFont& font) {
    // QFont::key() spells out every attribute and cost as much as the lookup
    // it keys; the charts' fonts differ only in these.
    return font.family() + QChar(0x1f) + QString::number(font.pixelSize()) + QChar(0x1f) +
           QString::number(font.weight()) + (font.italic() ? QStringLiteral("i") : QString()) + QChar(0x1f);
}

double textWidth(const QString& text, const QFont& font) {
    // Shaping a string (HarfBuzz) was about a third of an edit's repaint in
    // callgrind; a chart measures the same names, words and numbers on every
    // edit. GUI thread only, like every QFont use; bounded by clearing.
    static QHash<QString, double> widths;
    const QString key = fontTag(font) + text;
    if (const auto it = widths.constFind(key); it != widths.constEnd()) return *it;
    if (widths.size() > 20000) widths.clear();
    const double w = QFontMetricsF(font).horizontalAdvance(text);
    widths.insert(key, w);
    return w;
}

AxisTicks niceTicks(double top) {
    if (!(top > 0)) return {};
    const double raw = top / 6;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double step = magnitude * 10;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
        if (magnitude * m >= raw) {
            step = magnitude * m;
            break;
        }
    }
    const int intervals = std::max(1, static_cast<int>(std::ceil(top / step - 1e-9)));
    return {intervals * step, intervals + 1};
}

std::vector<LegendRow> legendRows(const std::vector<QString>& names, const QFont& font, double width) {
    std::vector<LegendRow> rows;
    double x = width + 1;  // the first entry opens a row
    for (int i = 0; i < static_cast<int>(names.size()); ++i) {
        const double w = 16 + textWidth(names[i], font) + 14;
        if (x + w > width) {
            rows.emplace_back();
            x = 0;
        }
        rows.back().push_back({i, w});
        x += w;
    }
    return rows;
}

QStringList atMostLines(const QStringList& lines, int max) {
    if (lines.size() <= max) return lines;
    const int hidden = static_cast<int>(lines.size()) - (max - 1);
    return lines.mid(0, max - 1) << QStringLiteral("… and %1 more").arg(hidden);
}

}  // namespace trainmem::ui
