// Issue 27's minors: every bar of every chart tells its formula on hover
// (docs/gui.md promised it; only the one-bar Breakdown had it), a non-last
// pipeline stage's "Logits and loss" is not explained as b × s × V, and the
// struck-out framework keys say what the strike means.
#include <QGraphicsView>
#include <QLabel>
#include <QTest>
#include <QToolTip>

#include "core/account/estimate.h"
#include "ui/chart_tab.h"
#include "ui/chart_views.h"
#include "ui/compare_tab.h"
#include "ui/memory_chart.h"
#include "ui/optimizer_tab.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

const ChartLayer* layer(const ChartSpec& spec, const QString& key) {
    for (const ChartLayer& l : spec.layers)
        if (l.key == key) return &l;
    return nullptr;
}

// Llama-3.1-8B's 8,030,261,248 parameters over 8 FSDP ranks, fp32 under
// AMP: 1.00B × 4 B = 3.74 GiB of weights on each GPU.
TEST(BarFormulas, HoveringAnyBarOfTheOptimizersAndCompareChartsGivesItsFormula) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    ASSERT_TRUE(window->compareTab()->pin());
    window->document()->edit([](Scenario& s) { s.training.micro_batch_size = 1; });
    ASSERT_TRUE(window->compareTab()->pin());
    for (ChartTab* tab : {static_cast<ChartTab*>(window->optimizerTab()), static_cast<ChartTab*>(window->compareTab())}) {
        window->tabs()->setCurrentWidget(tab);
        QApplication::processEvents();
        MemoryChart* chart = tab->chart();
        auto* view = chart->findChild<QGraphicsView*>();
        ASSERT_NE(view, nullptr);
        for (int bar : {0, 1}) {
            QToolTip::hideText();
            QApplication::processEvents();
            const QRectF rect = chart->barRect(bar);
            QTest::mouseMove(view->viewport(), view->mapFromScene(QPointF(rect.center().x(), rect.bottom() - 3)));
            QApplication::processEvents();
            const QString tip = QToolTip::text();
            EXPECT_TRUE(tip.contains(QStringLiteral("[1.00B × 4 B = 3.74 GiB]")))
                << tab->metaObject()->className() << " bar " << bar << ": " << tip.toStdString();
        }
    }
}

TEST(BarFormulas, EachStageHasItsOwnFormulasAndOnlyTheLastHasLogits) {
    // PyTorch's kernels: the first stage keeps the embedding's token ids
    // and rotary tables under "Logits and loss" (Megatron's keep none).
    Scenario s = presetScenario("llama3.1-405b-3d");
    s.training.kernels = KernelProfile::Fused;
    Expected<ScenarioEstimate> e = estimateWithStages(s);
    ASSERT_TRUE(e.ok()) << e.error().text();
    const ChartSpec spec = stagesChart(s, e->estimate, e->stages, Units::GiB);
    const ChartLayer* logits = layer(spec, QStringLiteral("logits_loss"));
    ASSERT_NE(logits, nullptr);
    ASSERT_EQ(logits->details.size(), 16);
    EXPECT_TRUE(logits->details[15].contains(QStringLiteral("b × s × V"))) << logits->details[15].toStdString();
    EXPECT_FALSE(logits->details[0].contains(QStringLiteral("× V"))) << logits->details[0].toStdString();
    EXPECT_TRUE(logits->details[0].contains(QStringLiteral("no logits on this stage"))) << logits->details[0].toStdString();
    // The first stage keeps 16 micro-batches in flight under 1F1B, the last
    // one (Narayanan et al. 2021): each stage's activations say its own.
    const ChartLayer* activations = layer(spec, QStringLiteral("activations"));
    ASSERT_NE(activations, nullptr);
    EXPECT_TRUE(activations->details[0].contains(QStringLiteral("16 micro-batches in flight"))) << activations->details[0].toStdString();
    EXPECT_TRUE(activations->details[15].contains(QStringLiteral("1 micro-batch in flight"))) << activations->details[15].toStdString();
}

QLabel* frameworkReadout(MainWindow& window) {
    for (QLabel* label : window.findChildren<QLabel*>())
        if (label->toolTip().startsWith(QStringLiteral("Keys the framework sets"))) return label;
    return nullptr;
}

TEST(BarFormulas, StruckOutFrameworkKeysSayWhatTheStrikeMeans) {
    auto window = openWindow(presetScenario("llama3.1-8b-torchtitan-8xh100"));
    QLabel* readout = frameworkReadout(*window);
    ASSERT_NE(readout, nullptr);
    // A legend exactly when something is struck out.
    EXPECT_EQ(readout->text().contains(QStringLiteral("<s>")), readout->text().contains(QStringLiteral("struck out")));
    // Override a key torchtitan sets (its checkpointing): struck, and said.
    window->document()->edit([](Scenario& s) {
        s.training.checkpointing = s.training.checkpointing == Checkpointing::None ? Checkpointing::Full : Checkpointing::None;
    });
    QApplication::processEvents();
    EXPECT_TRUE(readout->text().contains(QStringLiteral("<s>"))) << readout->text().toStdString();
    EXPECT_TRUE(readout->text().contains(QStringLiteral("struck out</s>: changed since"))) << readout->text().toStdString();
}

}  // namespace
}  // namespace trainmem::ui
