// Call-outs beside the breakdown bar: their second line wraps instead of
// being cut at the chart's edge, and they never overlap; when room is short
// they show fewer lines, then titles alone.
#include <QFontMetricsF>

#include "ui/breakdown_tab.h"
#include "ui/chart_callouts.h"
#include "ui/chart_style.h"
#include "ui/memory_chart.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

const QString kEllipsis = QString(QChar(0x2026));

// The detail of the Activations call-out of Llama-3.1-8B, FSDP on 8 x H100.
const QString kLongDetail = QStringLiteral(
    "varies with batch × sequence; saved for backward; checkpointing full  "
    "[32 layers × 1 micro-batch in flight × (b=2, s=8192) = 13.50 GiB (118.07 GiB without recomputation)]");

TEST(WrapLines, KeepsEveryWordWithinTheWidth) {
    const QFont font = pixelFont(11);
    const QStringList lines = wrapLines(kLongDetail, font, 260, 100);
    ASSERT_GE(lines.size(), 3);
    for (const QString& line : lines) {
        EXPECT_LE(QFontMetricsF(font).horizontalAdvance(line), 260) << line.toStdString();
        EXPECT_FALSE(line.contains(kEllipsis)) << line.toStdString();
    }
    EXPECT_EQ(lines.join(' ').simplified(), kLongDetail.simplified());
}

TEST(WrapLines, TheBracketedFormulaStartsItsOwnLineWhenItFitsOnOne) {
    const QFont font = pixelFont(11);
    const QString text = QStringLiteral("1× params, fp32 (4 B each) ÷ 8 (ZeRO-3)  [1.00B × 4 B = 3.74 GiB]");
    const double formula = QFontMetricsF(font).horizontalAdvance(QStringLiteral("[1.00B × 4 B = 3.74 GiB]"));
    const double whole = QFontMetricsF(font).horizontalAdvance(text);
    const QStringList lines = wrapLines(text, font, (formula + whole) / 2, 10);
    ASSERT_EQ(lines.size(), 2);
    EXPECT_EQ(lines[1], QStringLiteral("[1.00B × 4 B = 3.74 GiB]"));
    EXPECT_EQ(wrapLines(text, font, whole + 1, 10), QStringList{text});  // one line when it fits
}

TEST(WrapLines, MoreThanTheLinesAllowedEndsInAnEllipsis) {
    const QFont font = pixelFont(11);
    const QStringList lines = wrapLines(kLongDetail, font, 200, 2);
    ASSERT_EQ(lines.size(), 2);
    EXPECT_TRUE(lines[1].endsWith(kEllipsis));
    EXPECT_TRUE(wrapLines(kLongDetail, font, 200, 0).isEmpty());
}

// Twelve call-outs whose segments are thin and crowded together, as on a bar
// with many small components.
std::vector<Callout> crowded() {
    std::vector<Callout> items;
    for (int i = 0; i < 12; ++i)
        items.push_back({QStringLiteral("Component %1: 1.00 GiB").arg(i), i % 3 == 0 ? kLongDetail : QStringLiteral("short detail"),
                         Qt::blue, 300.0 + i * 3});
    items.push_back({QStringLiteral("H100-80GB capacity 79.65 GiB"), QString(), Qt::red, 340, true});
    return items;
}

void expectApartAndInside(const std::vector<PlacedCallout>& placed, double top, double bottom) {
    for (size_t i = 0; i < placed.size(); ++i) {
        EXPECT_GE(placed[i].top, top - 1e-9) << i;
        EXPECT_LE(placed[i].top + placed[i].height, bottom + 1e-9) << i;
        if (i + 1 < placed.size()) {
            EXPECT_LE(placed[i].top + placed[i].height, placed[i + 1].top + 1e-9) << i;
        }
    }
}

TEST(LayoutCallouts, WithRoomEveryDetailIsWholeAndNoneOverlap) {
    const std::vector<Callout> items = crowded();
    const std::vector<PlacedCallout> placed = layoutCallouts(items, 0, 1000, 300);
    ASSERT_EQ(placed.size(), items.size());
    expectApartAndInside(placed, 0, 1000);
    for (size_t i = 0; i < items.size(); ++i)
        EXPECT_EQ(placed[i].detail_lines.join(' ').simplified(), items[i].detail.simplified()) << i;
    EXPECT_GT(placed[0].detail_lines.size(), 1);  // the long one wrapped
}

TEST(LayoutCallouts, ShortOfRoomTheyShowFewerLinesButStillDoNotOverlap) {
    const std::vector<Callout> items = crowded();
    const double title_h = QFontMetricsF(pixelFont(12, true)).height();
    const double detail_h = QFontMetricsF(pixelFont(11)).height();
    // Room for one detail line each and a little more, not for everything.
    const double room = items.size() * (title_h + detail_h + 5) + 2 * detail_h;
    const std::vector<PlacedCallout> placed = layoutCallouts(items, 100, 100 + room, 300);
    expectApartAndInside(placed, 100, 100 + room);
    for (size_t i = 0; i + 1 < items.size(); ++i) EXPECT_GE(placed[i].detail_lines.size(), 1) << i;
    EXPECT_TRUE(placed[0].detail_lines.last().endsWith(kEllipsis));

    // Less than a detail line each: titles alone, still apart.
    const double titles = items.size() * (title_h + 5) + 10;
    const std::vector<PlacedCallout> bare = layoutCallouts(items, 100, 100 + titles, 300);
    expectApartAndInside(bare, 100, 100 + titles);
    for (const PlacedCallout& p : bare) EXPECT_TRUE(p.detail_lines.isEmpty());
}

TEST(LayoutCallouts, EachSitsAtItsAnchorWhenNothingIsInTheWay) {
    const double title_h = QFontMetricsF(pixelFont(12, true)).height();
    const std::vector<Callout> items = {{"A: 1 GiB", "a", Qt::blue, 100}, {"B: 1 GiB", "b", Qt::blue, 400}};
    const std::vector<PlacedCallout> placed = layoutCallouts(items, 0, 600, 300);
    EXPECT_DOUBLE_EQ(placed[0].top, 100 - title_h / 2);
    EXPECT_DOUBLE_EQ(placed[1].top, 400 - title_h / 2);
}

// The call-outs that used to be cut at the right edge of the default window
// ("Logits and loss: …", "Activations … [32 layers × …") show whole.
TEST(BreakdownCallouts, AtTheDefaultWindowSizeNoDetailIsCut) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    MemoryChart* chart = window->breakdownTab()->chart();
    const QStringList texts = chart->visibleTexts();
    const QString all = texts.join(' ').simplified();
    for (const QString& t : texts) EXPECT_FALSE(t.contains(kEllipsis)) << t.toStdString();
    for (const ChartLayer& layer : chart->spec().layers) {
        if (layer.calloutDetail.isEmpty()) continue;
        EXPECT_TRUE(all.contains(layer.calloutDetail.simplified())) << layer.calloutDetail.toStdString();
    }
}

}  // namespace
}  // namespace trainmem::ui
