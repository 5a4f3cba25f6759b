// Exports write files a viewer can open: PNG at the requested size and scale,
// SVG that parses and names every component drawn as real text, PDF.
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QRegularExpression>
#include <QSet>
#include <QSpinBox>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QXmlStreamReader>

#include "core/account/estimate.h"
#include "ui/chart_export.h"
#include "ui/chart_views.h"
#include "ui/export_size_dialog.h"
#include "ui/component_palette.h"
#include "ui/memory_chart.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

ChartSpec breakdownOf(const std::string& preset) {
    const Scenario s = presetScenario(preset);
    Expected<Estimate> e = estimate(s);
    EXPECT_TRUE(e.ok());
    return breakdownChart(s, *e, Units::GiB);
}

ChartSpec stagesOf(const std::string& preset) {
    const Scenario s = presetScenario(preset);
    Expected<Estimate> e = estimate(s);
    Expected<std::vector<StageEstimate>> st = estimateStages(s);
    EXPECT_TRUE(e.ok() && st.ok());
    return stagesChart(s, *e, *st, Units::GiB);
}

// Every run of text in an SVG document (QSvgGenerator writes one <text> per run).
QString svgText(const QString& path) {
    QFile file(path);
    EXPECT_TRUE(file.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&file);
    QString all;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement() && xml.name() == QLatin1String("text")) all += xml.readElementText(QXmlStreamReader::IncludeChildElements) + "\n";
    }
    EXPECT_FALSE(xml.hasError()) << xml.errorString().toStdString();
    return all;
}

TEST(ChartExport, PngDecodesAtTheRequestedSizeTimesScale) {
    QTemporaryDir dir;
    const QString path = dir.filePath("breakdown.png");
    const ExportResult r = exportPng(breakdownOf("llama3.1-8b-fsdp-8xh100"), path, QSize(900, 600), 2.0);
    ASSERT_TRUE(r.ok) << r.error.toStdString();
    QImage image(path);
    ASSERT_FALSE(image.isNull());
    EXPECT_EQ(image.size(), QSize(1800, 1200));
    // The weights segment is drawn in its palette colour somewhere.
    const QRgb weights = componentColor(Component::Weights).rgb();
    bool found = false;
    for (int y = 0; y < image.height() && !found; y += 2)
        for (int x = 0; x < image.width() && !found; x += 2) found = image.pixel(x, y) == weights;
    EXPECT_TRUE(found);
}

TEST(ChartExport, SvgParsesAndNamesEveryComponentItDraws) {
    QTemporaryDir dir;
    for (const auto& [name, spec] : {std::pair{"breakdown", breakdownOf("llama3.1-405b-3d")},
                                     std::pair{"stages", stagesOf("llama3.1-405b-3d")}}) {
        const QString path = dir.filePath(QString::fromLatin1(name) + ".svg");
        const ExportResult r = exportSvg(spec, path, QSize(1200, 750));
        ASSERT_TRUE(r.ok) << r.error.toStdString();
        EXPECT_TRUE(QSvgRenderer(path).isValid()) << name;
        const QString text = svgText(path);
        ASSERT_FALSE(spec.layers.isEmpty());
        for (const ChartLayer& layer : spec.layers) EXPECT_TRUE(text.contains(layer.name)) << name << ": " << layer.name.toStdString();
        EXPECT_TRUE(text.contains(spec.title)) << name;
    }
}

TEST(ChartExport, PdfStartsWithThePdfSignature) {
    QTemporaryDir dir;
    const QString path = dir.filePath("breakdown.pdf");
    const ExportResult r = exportPdf(breakdownOf("mixtral-8x7b-tp-ep"), path, QSize(1000, 650));
    ASSERT_TRUE(r.ok) << r.error.toStdString();
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    EXPECT_TRUE(file.read(5).startsWith("%PDF-"));
    EXPECT_GT(file.size(), 1000);
}

TEST(ChartExport, UnwritablePathFailsWithAMessageNamingIt) {
    const QString path = QStringLiteral("/nonexistent-folder/chart.png");
    const ExportResult r = exportChart(breakdownOf("llama3.1-8b-fsdp-8xh100"), path, QSize(800, 500));
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(r.error.contains(path));
}

TEST(ChartExport, UnknownSuffixAndAbsurdSizesAreRefused) {
    QTemporaryDir dir;
    const ChartSpec spec = breakdownOf("llama3.1-8b-fsdp-8xh100");
    EXPECT_FALSE(exportChart(spec, dir.filePath("chart.jpg"), QSize(800, 500)).ok);
    EXPECT_FALSE(exportChart(spec, dir.filePath("chart.png"), QSize(10, 10)).ok);
    EXPECT_FALSE(exportPng(spec, dir.filePath("chart.png"), QSize(800, 500), 0.0).ok);
    EXPECT_FALSE(QFile::exists(dir.filePath("chart.png")));
}

// A figure for a document: exported at the "document column" preset
// (454 x 340 pt, 16 x 12 cm) the SVG says its size in physical units, every
// text is at least 8 pt there, and each font names a generic family after
// its own, so a viewer without the font still draws a sans-serif; the PDF's
// page is the same 454 x 340 pt.
TEST(ChartExport, VectorFiguresHaveAPhysicalSizeReadableTextAndAFallbackFont) {
    QTemporaryDir dir;
    const QSize column(454, 340);
    const QString svg = dir.filePath("column.svg");
    ASSERT_TRUE(exportSvg(breakdownOf("llama3.1-8b-fsdp-8xh100"), svg, column).ok);
    QFile file(svg);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&file);
    int texts = 0;
    while (!xml.atEnd()) {
        xml.readNext();
        if (!xml.isStartElement()) continue;
        const QXmlStreamAttributes a = xml.attributes();
        if (xml.name() == QLatin1String("svg")) {
            // 454 pt = 454 / 72 in = 160.2 mm.
            EXPECT_TRUE(a.value("width").endsWith(QLatin1String("mm"))) << a.value("width").toString().toStdString();
            EXPECT_NEAR(a.value("width").chopped(2).toDouble(), 160.2, 0.2);
            EXPECT_NEAR(a.value("height").chopped(2).toDouble(), 340 * 25.4 / 72, 0.2);
            EXPECT_EQ(a.value("viewBox").toString(), QStringLiteral("0 0 454 340"));
        }
        if (a.hasAttribute("font-size")) {
            // One user unit is 1 pt (viewBox 454 wide over 454 pt).
            EXPECT_GE(a.value("font-size").toDouble(), 8.0) << xml.name().toString().toStdString();
            ++texts;
        }
        if (a.hasAttribute("font-family")) {
            const QString family = a.value("font-family").toString();
            EXPECT_TRUE(family.endsWith(QLatin1String("sans-serif"))) << family.toStdString();
        }
    }
    EXPECT_FALSE(xml.hasError()) << xml.errorString().toStdString();
    EXPECT_GT(texts, 10);
    EXPECT_TRUE(QSvgRenderer(svg).isValid());

    const QString pdf = dir.filePath("column.pdf");
    ASSERT_TRUE(exportPdf(breakdownOf("llama3.1-8b-fsdp-8xh100"), pdf, column).ok);
    QFile pdf_file(pdf);
    ASSERT_TRUE(pdf_file.open(QIODevice::ReadOnly));
    const QByteArray bytes = pdf_file.readAll();
    const QRegularExpressionMatch box =
        QRegularExpression(QStringLiteral("/MediaBox \\[0 0 ([0-9.]+) ([0-9.]+)\\]")).match(QString::fromLatin1(bytes));
    ASSERT_TRUE(box.hasMatch());
    EXPECT_DOUBLE_EQ(box.captured(1).toDouble(), 454.0);
    EXPECT_DOUBLE_EQ(box.captured(2).toDouble(), 340.0);
}

// At the document column's size the Optimizers figure keeps its plot (its
// legend, staggered names and footer left the bars 10 px tall) and the
// Breakdown's call-out titles are whole.
TEST(ChartExport, ADocumentColumnFigureKeepsItsPlot) {
    const Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    MemoryChart chart;
    chart.setSpec(optimizerChart(s, estimateEveryOptimizer(s), OptimizerScale::Bytes, Units::GiB));
    chart.show();
    QApplication::processEvents();
    chart.resize(454, 340);  // laid out at the figure's size, as an export lays it out
    QApplication::processEvents();
    ASSERT_EQ(chart.size(), QSize(454, 340));
    double tallest = 0;
    for (int i = 0; i < chart.spec().categories.size(); ++i) tallest = std::max(tallest, chart.barRect(i).height());
    // The bars reach about half the axis (46-54 of 100 GiB): a third of the
    // figure's height for the plot is at least 50 px of bar.
    EXPECT_GE(tallest, 50.0);
    for (const QString& t : chart.visibleTexts()) EXPECT_FALSE(t.endsWith(QStringLiteral("…"))) << t.toStdString();
    // No band of empty paper above or below the plot: the row kept for
    // labels above the bars goes when they fit inside the plot, and Qt
    // Charts' bands for axis labels are given back (together ~70 px of a
    // 340 px figure; the tallest bar was 67 px with them).
    EXPECT_GE(tallest, 85.0);
    double lowest = 0;
    for (const auto& [text, rect] : chart.visibleTextRects()) lowest = std::max(lowest, rect.bottom());
    EXPECT_GE(lowest, 340 - 24) << "the legend ends " << 340 - lowest << " px above the figure's bottom";

    // The Breakdown's call-out titles carry the sizes: whole at this width
    // ("CUDA context + NCCL: 1.07 …" was cut).
    chart.setSpec(breakdownOf("llama3.1-8b-fsdp-8xh100"));
    QApplication::processEvents();
    int titles = 0;
    for (const QString& t : chart.visibleTexts())
        if (t.contains(QStringLiteral(" GiB")) && !t.contains(QStringLiteral(" × "))) {
            ++titles;
            EXPECT_FALSE(t.endsWith(QStringLiteral("…"))) << t.toStdString();
        }
    EXPECT_GE(titles, 10);
    // The worked example under the bar wraps instead of ending in "…" (it
    // lost "… this GPU holds 15.0 GiB of model states" at this width).
    ASSERT_FALSE(chart.spec().footer.isEmpty());
    const QString drawn = chart.visibleTexts().join(' ');
    for (const QString& word : chart.spec().footer.front().split(' ', Qt::SkipEmptyParts))
        EXPECT_TRUE(drawn.contains(word)) << word.toStdString() << " missing from the worked example";
    for (const QString& t : chart.visibleTexts())
        if (t.contains(QStringLiteral("params ×"))) {
            EXPECT_FALSE(t.endsWith(QStringLiteral("…"))) << t.toStdString();
        }
}

TEST(ChartExport, EmptyCompareViewStillExportsItsHint) {
    QTemporaryDir dir;
    const QString path = dir.filePath("compare.svg");
    ASSERT_TRUE(exportSvg(compareChart({}, Units::GiB), path, QSize(800, 500)).ok);
    EXPECT_TRUE(svgText(path).contains("Pin current"));
}

}  // namespace
}  // namespace trainmem::ui

namespace trainmem::ui {
namespace {

TEST(ExportSizeDialog, PresetsSetPhysicalSizesAndEditingMakesItCustom) {
    ExportSizeDialog vector(QSize(800, 500), 1.0, false);
    QComboBox* presets = vector.presets();
    int column = -1;
    for (int i = 0; i < presets->count(); ++i)
        if (presets->itemText(i).startsWith("Document column")) column = i;
    ASSERT_GE(column, 0);
    presets->setCurrentIndex(column);
    emit presets->activated(column);
    // 16 cm = 16 / 2.54 in x 72 pt/in = 453.5 pt.
    EXPECT_EQ(vector.size().width(), 454);
    auto* width = vector.findChild<QSpinBox*>();
    ASSERT_NE(width, nullptr);
    width->setValue(500);
    EXPECT_EQ(presets->currentIndex(), 0);  // "Custom"
}

}  // namespace
}  // namespace trainmem::ui
