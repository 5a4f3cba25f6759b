// One bar per stage: clicking a stage's bar shows that stage in the table
// under the tabs; every bar of every chart answers hovering with its value.
#include <QGraphicsView>
#include <QHeaderView>
#include <QTest>

#include "core/report/report.h"
#include "ui/breakdown_tab.h"
#include "ui/breakdown_table.h"
#include "ui/memory_chart.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

QString tableValue(BreakdownTable* table, const QString& name) {
    for (int r = 0; r < table->rowCount(); ++r)
        if (table->item(r, 0) && table->item(r, 0)->text().startsWith(name)) return table->item(r, 1)->text();
    return {};
}

TEST(StageClick, ClickingAStagesBarShowsThatStageInTheTable) {
    auto window = openWindow(presetScenario("llama3.1-405b-3d"));
    window->showView(ChartView::Stages);
    QApplication::processEvents();
    MemoryChart* chart = window->breakdownTab()->chart();
    auto* table = window->findChild<BreakdownTable*>();
    ASSERT_NE(table, nullptr);
    const auto& stages = window->document()->stages();
    ASSERT_EQ(stages.size(), 16u);
    // The heaviest GPU first: the estimate's peak.
    const QString allocated = QStringLiteral("Allocated");
    EXPECT_EQ(tableValue(table, allocated),
              QString::fromStdString(formatBytes(window->document()->result().peak.allocated_bytes, Units::GiB)));
    // The last stage holds the logits and loss, unlike the first; pick one that
    // differs from the heaviest so the test can tell them apart.
    int pick = 15;
    if (stages[15].allocated_bytes == window->document()->result().peak.allocated_bytes) pick = 0;
    auto* view = chart->findChild<QGraphicsView*>();
    ASSERT_NE(view, nullptr);
    const QRectF bar = chart->barRect(pick);
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, QPoint(int(bar.center().x()), int(bar.bottom() - 10)));
    QApplication::processEvents();
    EXPECT_EQ(table->shownStage(), pick);
    EXPECT_EQ(tableValue(table, allocated), QString::fromStdString(formatBytes(stages[size_t(pick)].allocated_bytes, Units::GiB)));
    EXPECT_EQ(table->horizontalHeaderItem(0)->text(), QStringLiteral("Component: stage %1 of 16").arg(pick + 1));
    // An edit keeps the stage shown, with its new numbers.
    window->document()->edit([](Scenario& s) { s.training.micro_batch_size = 2; });
    QApplication::processEvents();
    EXPECT_EQ(tableValue(table, allocated),
              QString::fromStdString(formatBytes(window->document()->stages()[size_t(pick)].allocated_bytes, Units::GiB)));
    // Back to one bar: the heaviest GPU again.
    window->breakdownTab()->setPerStage(false);
    QApplication::processEvents();
    EXPECT_EQ(table->shownStage(), -1);
    EXPECT_EQ(table->horizontalHeaderItem(0)->text(), QStringLiteral("Component"));
}

}  // namespace
}  // namespace trainmem::ui
