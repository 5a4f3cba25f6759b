// Dark mode: the charts follow the desktop's colour scheme (the palette its
// platform theme sets) and stay readable; exports stay light.
#include <QPalette>

#include "ui/breakdown_tab.h"
#include "ui/chart_style.h"
#include "ui/memory_chart.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

// WCAG 2 contrast ratio of two colours.
double contrast(const QColor& a, const QColor& b) {
    auto lum = [](const QColor& c) {
        auto ch = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
        return 0.2126 * ch(c.redF()) + 0.7152 * ch(c.greenF()) + 0.0722 * ch(c.blueF());
    };
    const double la = lum(a), lb = lum(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QColor pixelAt(const QImage& image, QPoint p) { return image.pixelColor(p); }

TEST(DarkMode, ChartsFollowADarkPaletteReadablyAndExportsStayLight) {
    const QPalette before = QApplication::palette();
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    MemoryChart* chart = window->breakdownTab()->chart();
    const QImage light = chart->grab().toImage();
    EXPECT_GT(pixelAt(light, QPoint(3, 3)).lightness(), 200);  // white background

    QApplication::setPalette(QPalette(QColor(0x35, 0x35, 0x35)));  // a dark desktop
    QApplication::processEvents();
    EXPECT_TRUE(chartInks().dark);
    const QImage dark = chart->grab().toImage();
    EXPECT_LT(pixelAt(dark, QPoint(3, 3)).lightness(), 60);  // the chart's background follows
    // Text and axes stay readable on it (WCAG AA: 4.5:1 for text).
    EXPECT_GE(contrast(chartInks().ink, chartInks().background), 7.0);
    EXPECT_GE(contrast(chartInks().muted, chartInks().background), 4.5);
    // Call-outs are written in their component's colour: every one readable
    // on the dark background (navy Gathered weights and slate cuBLAS were 2:1).
    for (const ChartLayer& layer : chart->spec().layers)
        EXPECT_GE(contrast(textInk(layer.color), chartInks().background), 4.5) << layer.name.toStdString();
    // A figure for a document is light whatever the desktop.
    const QImage exported = MemoryChart::renderImage(chart->spec(), QSize(600, 400));
    EXPECT_GT(pixelAt(exported, QPoint(3, 3)).lightness(), 200);
    EXPECT_TRUE(chartInks().dark);  // and the screen's inks are back after it

    QApplication::setPalette(before);
    QApplication::processEvents();
    EXPECT_FALSE(chartInks().dark);
    EXPECT_GT(pixelAt(chart->grab().toImage(), QPoint(3, 3)).lightness(), 200);
}

// The GiB | GB toggle reads on a light and on a dark desktop: each button's
// text against its own background, chosen or not, at least WCAG AA's 4.5:1.
// (The unchosen button is drawn on the palette's Base, so its text must be
// the palette's Text, not ButtonText, which goes with Button.)
TEST(DarkMode, TheUnitsToggleReadsOnLightAndDark) {
    const QPalette before = QApplication::palette();
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    QPalette dark(QColor(0x3a, 0x3a, 0x3d), QColor(0x2d, 0x2d, 0x30));
    dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
    dark.setColor(QPalette::Text, QColor(0xe6, 0xe6, 0xe6));
    dark.setColor(QPalette::ButtonText, QColor(0xe6, 0xe6, 0xe6));
    dark.setColor(QPalette::WindowText, QColor(0xe6, 0xe6, 0xe6));
    // A theme whose buttons are light on a dark base: ButtonText alone is
    // not enough to read on Base.
    QPalette mixed = dark;
    mixed.setColor(QPalette::ButtonText, QColor(0x30, 0x30, 0x30));
    for (const QPalette& palette : {before, dark, mixed}) {
        QApplication::setPalette(palette);
        QApplication::processEvents();
        for (const char* name : {"units_GiB", "units_GB"}) {
            auto* button = window->unitsToggle()->findChild<QWidget*>(QString::fromLatin1(name));
            ASSERT_NE(button, nullptr) << name;
            const QImage image = button->grab().toImage();
            const QColor background = image.pixelColor(4, image.height() / 2);
            double best = 1;
            for (int y = 0; y < image.height(); ++y)
                for (int x = 3; x < image.width() - 3; ++x) best = std::max(best, contrast(image.pixelColor(x, y), background));
            EXPECT_GE(best, 4.5) << name << " on " << background.name().toStdString();
        }
    }
    QApplication::setPalette(before);
    QApplication::processEvents();
}

}  // namespace
}  // namespace trainmem::ui
