// The optimizer and compare tabs: one column per optimizer (in bytes and in
// buffers per parameter, as in the seed figure), pinned columns with their
// differences.
#include <QGraphicsView>
#include <QTableWidget>
#include <QTest>
#include <QToolTip>

#include "ui/breakdown_tab.h"
#include "ui/compare_tab.h"
#include "ui/memory_chart.h"
#include "ui/display_names.h"
#include "ui/optimizer_tab.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

int categoryOf(const ChartSpec& spec, OptimizerKind kind) {
    for (int i = 0; i < spec.categories.size(); ++i)
        if (spec.categories[i].section('\n', 0, 0) == optimizerLabel(kind)) return i;
    return -1;
}

double stackHeight(const ChartSpec& spec, int bar) {
    double sum = 0;
    for (const ChartLayer& l : spec.layers) sum += l.values.value(bar);
    return sum;
}

TEST(OptimizerTab, ShowsOneColumnPerOptimizer) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    window->optimizerTab()->setScale(OptimizerScale::Bytes);
    const ChartSpec spec = window->optimizerTab()->currentSpec();
    ASSERT_EQ(spec.categories.size(), static_cast<qsizetype>(allOptimizers().size()));
    for (OptimizerKind k : allOptimizers()) EXPECT_GE(categoryOf(spec, k), 0) << optimizerLabel(k).toStdString();
    // The current optimizer's column is the breakdown the Breakdown tab shows.
    const int current = categoryOf(spec, window->document()->scenario().training.optimizer);
    EXPECT_NEAR(stackHeight(spec, current), window->document()->result().peak.device_bytes / kGiBd, 1e-9);
    // Plain SGD keeps no state (PyTorch SGD without momentum); AdamW keeps m and v.
    EXPECT_EQ(layerValue(spec, "optimizer_states", categoryOf(spec, OptimizerKind::Sgd)), 0.0);
    EXPECT_GT(layerValue(spec, "optimizer_states", categoryOf(spec, OptimizerKind::AdamW)), 0.0);
}

TEST(OptimizerTab, TimesParamsViewMatchesTheSeedFigure) {
    // Seed figure optimizer-memory-per-parameter: SGD+M 1x (v), Adagrad 1x (G),
    // RMSprop 1x (s), Adam(W) 2x (m, v), Lion 1x (m), Muon 1x.
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    window->optimizerTab()->setScale(OptimizerScale::TimesParams);
    const ChartSpec spec = window->optimizerTab()->currentSpec();
    ASSERT_EQ(spec.categories.size(), static_cast<qsizetype>(allOptimizers().size()));
    const std::pair<OptimizerKind, double> seed[] = {
        {OptimizerKind::SgdMomentum, 1}, {OptimizerKind::Adagrad, 1}, {OptimizerKind::Rmsprop, 1},
        {OptimizerKind::Adam, 2},        {OptimizerKind::AdamW, 2},   {OptimizerKind::Lion, 1},
        {OptimizerKind::Muon, 1}};
    for (const auto& [kind, buffers] : seed)
        EXPECT_DOUBLE_EQ(stackHeight(spec, categoryOf(spec, kind)), buffers) << optimizerLabel(kind).toStdString();
    // Adam's two buffers are named inside its bar.
    QStringList adam;
    const int a = categoryOf(spec, OptimizerKind::Adam);
    for (const ChartLayer& l : spec.layers)
        if (l.values.value(a) > 0) adam << l.inside.value(a);
    adam.sort();
    EXPECT_EQ(adam, (QStringList{"m", "v"}));
    window->optimizerTab()->setScale(OptimizerScale::Bytes);
}

TEST(CompareTab, PinsColumnsAndListsTheSettingsThatDiffer) {
    Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    s.training.micro_batch_size = 1;
    auto window = openWindow(s);
    CompareTab* compare = window->compareTab();
    compare->clear();
    ASSERT_TRUE(compare->pin());
    window->document()->edit([](Scenario& x) { x.training.micro_batch_size = 2; });
    ASSERT_TRUE(compare->pin());
    const ChartSpec spec = compare->currentSpec();
    ASSERT_EQ(spec.categories.size(), 2);
    EXPECT_TRUE(spec.categories[0].startsWith("A"));
    EXPECT_TRUE(spec.categories[1].startsWith("B"));
    // The differing setting is drawn once: in each bar's caption, and in the
    // table under the chart, not again in a footer.
    EXPECT_TRUE(spec.footer.isEmpty()) << spec.footer.join('|').toStdString();
    EXPECT_TRUE(spec.categories[0].contains("micro batch size 1")) << spec.categories[0].toStdString();
    EXPECT_TRUE(spec.categories[1].contains("micro batch size 2")) << spec.categories[1].toStdString();
    ASSERT_GE(compare->table()->rowCount(), 1);
    EXPECT_EQ(compare->table()->verticalHeaderItem(0)->text(), "training.micro_batch_size");
    EXPECT_EQ(compare->table()->item(0, 0)->text(), "1");
    EXPECT_EQ(compare->table()->item(0, 1)->text(), "2");
    // Column B holds twice the activations of column A (linear in micro-batch).
    EXPECT_NEAR(layerValue(spec, "activations", 1) / layerValue(spec, "activations", 0), 2.0, 0.01);
}

TEST(CompareTab, HoldsAtMostSixColumnsAndRefusesAStaleScenario) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    CompareTab* compare = window->compareTab();
    compare->clear();
    for (int i = 0; i < CompareTab::kMaxPins; ++i) {
        window->document()->edit([i](Scenario& x) { x.training.sequence_length = 1024 * (i + 1); });
        EXPECT_TRUE(compare->pin());
    }
    EXPECT_FALSE(compare->pin());
    EXPECT_EQ(compare->pins().size(), static_cast<size_t>(CompareTab::kMaxPins));
    compare->removeLast();
    window->document()->edit([](Scenario& x) { x.training.micro_batch_size = -1; });  // invalid
    EXPECT_FALSE(compare->pin());
}

TEST(ScenarioDifferences, ListsOnlyWhatDiffersInColumnOrder) {
    Scenario a = presetScenario("llama3.1-8b-fsdp-8xh100");
    Scenario b = a;
    b.parallelism.zero_stage = 1;
    b.hardware.gpu = "A100-80GB";
    const QStringList d = scenarioDifferences({a, b});
    ASSERT_EQ(d.size(), 2);
    EXPECT_TRUE(d.contains(QStringLiteral("hardware.gpu: %1 | A100-80GB").arg(QString::fromStdString(a.hardware.gpu))));
    EXPECT_TRUE(d.contains(QStringLiteral("parallelism.zero_stage: %1 | 1").arg(a.parallelism.zero_stage)));
    EXPECT_TRUE(scenarioDifferences({a, a}).isEmpty());
}

}  // namespace
}  // namespace trainmem::ui

namespace trainmem::ui {
namespace {

using namespace test;

TEST(CompareTab, PinsAreRenamedMovedAndRemovedOneByOne) {
    Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    s.training.micro_batch_size = 1;
    auto window = openWindow(s);
    CompareTab* compare = window->compareTab();
    compare->clear();
    for (int mbs : {1, 2, 4}) {
        window->document()->edit([mbs](Scenario& x) { x.training.micro_batch_size = mbs; });
        ASSERT_TRUE(compare->pin());
    }
    EXPECT_TRUE(compare->renamePin(1, QStringLiteral("mbs 2")));
    EXPECT_FALSE(compare->renamePin(0, QStringLiteral("mbs 2")));  // taken
    EXPECT_FALSE(compare->renamePin(0, QStringLiteral("  ")));
    EXPECT_TRUE(compare->movePin(2, 0));
    ASSERT_EQ(compare->pins().size(), 3u);
    EXPECT_EQ(compare->pins()[0].scenario.training.micro_batch_size, 4);
    EXPECT_EQ(compare->pins()[2].label, QStringLiteral("mbs 2"));
    EXPECT_TRUE(compare->removePin(1));  // A (micro-batch 1)
    ASSERT_EQ(compare->pins().size(), 2u);
    const ChartSpec spec = compare->currentSpec();
    EXPECT_TRUE(spec.categories[1].startsWith("mbs 2\n"));
    // A new pin takes the first free letter.
    ASSERT_TRUE(compare->pin());
    EXPECT_EQ(compare->pins().back().label, QStringLiteral("A"));
}

// Hovering a bar's segment shows its component and value, in every chart:
// the Breakdown, the Optimizers tab and the Compare tab.
TEST(ChartHover, EverySegmentTellsItsComponentAndValue) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    ASSERT_TRUE(window->compareTab()->pin());
    window->document()->edit([](Scenario& s) { s.training.micro_batch_size = 1; });
    ASSERT_TRUE(window->compareTab()->pin());
    for (ChartTab* tab : {static_cast<ChartTab*>(window->breakdownTab()), static_cast<ChartTab*>(window->optimizerTab()),
                          static_cast<ChartTab*>(window->compareTab())}) {
        window->tabs()->setCurrentWidget(tab);
        QApplication::processEvents();
        MemoryChart* chart = tab->chart();
        auto* view = chart->findChild<QGraphicsView*>();
        ASSERT_NE(view, nullptr);
        QToolTip::hideText();
        // The bottom segment of the first bar: Weights.
        const QRectF bar = chart->barRect(0);
        const QPoint at = view->mapFromScene(QPointF(bar.center().x(), bar.bottom() - 3));
        QTest::mouseMove(view->viewport(), at);
        QApplication::processEvents();
        const QString tip = QToolTip::text();
        EXPECT_TRUE(tip.contains(QStringLiteral("Weights"))) << tab->metaObject()->className() << ": " << tip.toStdString();
        EXPECT_TRUE(tip.contains(QStringLiteral("3.74"))) << tab->metaObject()->className() << ": " << tip.toStdString();
    }
}

}  // namespace
}  // namespace trainmem::ui
