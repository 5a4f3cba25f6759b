// The GiB | GB toggle on the tab bar: one click changes the units of the
// chart, the table and the status line, the View menu shows the same choice,
// and the choice is still there in the next window.
#include <QMenu>
#include <QComboBox>
#include <QMenuBar>
#include <QTableWidget>
#include <QTest>
#include <QToolButton>

#include "ui/app_settings.h"
#include "ui/breakdown_tab.h"
#include "ui/breakdown_table.h"
#include "ui/hardware_panel.h"
#include "ui/memory_chart.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

QToolButton* toggleButton(MainWindow& window, const QString& text) {
    EXPECT_NE(window.unitsToggle(), nullptr);
    if (!window.unitsToggle()) return nullptr;
    for (QToolButton* b : window.unitsToggle()->findChildren<QToolButton*>())
        if (b->text() == text) return b;
    ADD_FAILURE() << "no toggle button " << text.toStdString();
    return nullptr;
}

// The View menu's entry whose text names `unit` ("Units: G&B (10⁹ bytes)").
QAction* menuAction(MainWindow& window, const QString& unit) {
    for (QAction* top : window.menuBar()->actions()) {
        if (!top->menu() || top->text().remove('&') != QStringLiteral("View")) continue;
        for (QAction* a : top->menu()->actions())
            if (a->isCheckable() && a->text().remove('&').startsWith(QStringLiteral("Units: ") + unit + " "))
                return a;
    }
    ADD_FAILURE() << "no View menu entry for " << unit.toStdString();
    return nullptr;
}

// The Memory column of the table's first row ("3.74 GiB").
QString firstTableSize(MainWindow& window) {
    auto* table = window.findChild<BreakdownTable*>();
    if (!table || table->rowCount() == 0 || !table->item(0, 1)) return {};
    return table->item(0, 1)->text();
}

TEST(UnitsToggle, OneClickSwitchesChartAndTableAndTheMenuFollows) {
    AppSettings().setUnits(Units::GiB);
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    QToolButton* gib = toggleButton(*window, "GiB");
    QToolButton* gb = toggleButton(*window, "GB");
    QAction* menu_gib = menuAction(*window, "GiB");
    QAction* menu_gb = menuAction(*window, "GB");
    ASSERT_TRUE(gib && gb && menu_gib && menu_gb);
    ASSERT_TRUE(gb->isVisible());
    EXPECT_TRUE(gib->isChecked());
    EXPECT_TRUE(menu_gib->isChecked());
    const ChartSpec before = window->breakdownTab()->currentSpec();
    ASSERT_TRUE(before.valueAxisTitle.startsWith("GiB"));
    ASSERT_TRUE(firstTableSize(*window).endsWith(" GiB"));

    QTest::mouseClick(gb, Qt::LeftButton);

    const ChartSpec after = window->breakdownTab()->currentSpec();
    EXPECT_TRUE(after.valueAxisTitle.startsWith("GB")) << after.valueAxisTitle.toStdString();
    // 1 GiB = 1.073741824 GB: the same bytes, a larger number.
    EXPECT_NEAR(layerValue(after, "weights") / layerValue(before, "weights"), 1.073741824, 1e-9);
    EXPECT_TRUE(firstTableSize(*window).endsWith(" GB")) << firstTableSize(*window).toStdString();
    EXPECT_TRUE(menu_gb->isChecked());
    EXPECT_FALSE(menu_gib->isChecked());
    EXPECT_TRUE(gb->isChecked());
    EXPECT_FALSE(gib->isChecked());

    // The menu drives the toggle the same way.
    menu_gib->trigger();
    EXPECT_TRUE(gib->isChecked());
    EXPECT_FALSE(gb->isChecked());
    EXPECT_TRUE(window->breakdownTab()->currentSpec().valueAxisTitle.startsWith("GiB"));
    EXPECT_TRUE(firstTableSize(*window).endsWith(" GiB"));

    // Clicking the unit already chosen keeps it (one of two, never none).
    QTest::mouseClick(gib, Qt::LeftButton);
    EXPECT_TRUE(gib->isChecked());
    EXPECT_TRUE(menu_gib->isChecked());
}

TEST(UnitsToggle, TheChoiceIsSavedAndTheNextWindowOpensWithIt) {
    AppSettings().setUnits(Units::GiB);
    {
        auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
        QToolButton* gb = toggleButton(*window, "GB");
        ASSERT_NE(gb, nullptr);
        QTest::mouseClick(gb, Qt::LeftButton);
    }
    EXPECT_EQ(AppSettings().units(), Units::GB);

    auto next = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    EXPECT_TRUE(next->breakdownTab()->currentSpec().valueAxisTitle.startsWith("GB"));
    EXPECT_TRUE(firstTableSize(*next).endsWith(" GB"));
    QToolButton* gb = toggleButton(*next, "GB");
    QAction* menu_gb = menuAction(*next, "GB");
    ASSERT_TRUE(gb && menu_gb);
    EXPECT_TRUE(gb->isChecked());
    EXPECT_TRUE(menu_gb->isChecked());

    next->setUnits(Units::GiB);  // leave the default for the other tests
    EXPECT_EQ(AppSettings().units(), Units::GiB);
}

// The issue: in GB mode the formulas stayed in GiB ("Weights: 3.12 GB … = 2.90
// GiB"), the GPU list was always in GiB and the worked example always in GB.
TEST(UnitsToggle, OneUnitEverywhereAsChosen) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    const QRegularExpression gib(QStringLiteral("\\bGiB\\b")), gb(QStringLiteral("\\bGB\\b"));
    for (Units units : {Units::GB, Units::GiB}) {
        window->setUnits(units);
        QApplication::processEvents();
        const QRegularExpression& wrong = units == Units::GB ? gib : gb;
        const QRegularExpression& right = units == Units::GB ? gb : gib;
        const ChartSpec spec = window->breakdownTab()->chart()->spec();
        for (const ChartLayer& layer : spec.layers) {
            EXPECT_FALSE(layer.callout.contains(wrong)) << layer.callout.toStdString();
            EXPECT_FALSE(layer.calloutDetail.contains(wrong)) << layer.calloutDetail.toStdString();
        }
        ASSERT_FALSE(spec.footer.isEmpty());
        EXPECT_TRUE(spec.footer.front().contains(right)) << spec.footer.front().toStdString();
        EXPECT_FALSE(spec.footer.front().contains(wrong)) << spec.footer.front().toStdString();
        auto* table = window->findChild<BreakdownTable*>();
        ASSERT_NE(table, nullptr);
        for (int row = 0; row < table->rowCount(); ++row)
            for (int column = 0; column < table->columnCount(); ++column)
                if (table->item(row, column)) {
                    EXPECT_FALSE(table->item(row, column)->text().contains(wrong)) << table->item(row, column)->text().toStdString();
                }
        QComboBox* gpus = window->hardwarePanel()->gpuList();
        const int h100 = gpus->findData(QStringLiteral("H100-80GB"));
        ASSERT_GE(h100, 0);
        // 81,559 MiB (cudaMemGetInfo on an H100 SXM5) = 79.6 GiB = 85.5 GB
        EXPECT_TRUE(gpus->itemText(h100).contains(units == Units::GB ? QStringLiteral("85.5 GB") : QStringLiteral("79.6 GiB")))
            << gpus->itemText(h100).toStdString();
    }
}

}  // namespace
}  // namespace trainmem::ui
