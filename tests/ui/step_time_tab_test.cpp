// The Step time tab (issue 26): where the step's time goes, drawn from the
// step time the document computed, held to what the core's stepTime() says
// for the same scenario, before and after an edit.
#include <QFile>
#include <QLabel>
#include <QLocale>
#include <QProcess>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>

#include "core/base/units.h"
#include "core/steptime/step_time.h"
#include "ui/memory_chart.h"
#include "ui/step_time_tab.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

StepTime coreStepTime(const Scenario& s) {
    Expected<StepTime> t = trainmem::stepTime(s);
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().text());
    return t.ok() ? *t : StepTime{};
}

// Seconds per unit of the chart's value axis ("ms per step", "s per step").
double axisSeconds(const ChartSpec& spec) { return spec.valueAxisTitle.startsWith("ms ") ? 1e-3 : 1.0; }

const FigureTableRow* tableRow(const ChartSpec& spec, const QString& name) {
    for (const FigureTableRow& row : spec.table.rows)
        if (row.name == name) return &row;
    return nullptr;
}

// The chart shows every part of the core's step time for the scenario, the
// step, tokens/s/GPU and MFU in its subtitle, and each collective's exposed
// and overlapped time in the table under the bar.
void expectShows(const ChartSpec& spec, const StepTime& expected) {
    const double unit = axisSeconds(spec);
    double drawn = 0;
    for (TimeComponent c : allTimeComponents()) {
        const QString key = QString::fromUtf8(timeComponentKey(c).data());
        EXPECT_NEAR(layerValue(spec, key) * unit, expected[c], 1e-9 * expected.step_seconds) << key.toStdString();
        drawn += layerValue(spec, key) * unit;
    }
    EXPECT_NEAR(drawn, expected.step_seconds, 1e-9 * expected.step_seconds);
    ASSERT_EQ(spec.barTopValues.size(), 1);
    EXPECT_NEAR(spec.barTopValues[0] * unit, expected.step_seconds, 1e-9 * expected.step_seconds);
    const QString tokens = QLocale(QLocale::English).toString(qlonglong(std::llround(expected.tokens_per_second_per_gpu)));
    EXPECT_TRUE(spec.subtitle.contains(tokens + " tokens/s/GPU")) << spec.subtitle.toStdString();
    EXPECT_TRUE(spec.subtitle.contains(QStringLiteral("MFU %1%").arg(QString::fromStdString(formatNumber(expected.mfu * 100, 1)))))
        << spec.subtitle.toStdString();
}

TEST(StepTimeTab, ShowsTheCoresStepTimeOfAPresetAndFollowsAnEdit) {
    const Scenario fsdp = presetScenario("llama3.1-8b-fsdp-8xh100");
    auto window = openWindow(fsdp);
    window->showView(ChartView::StepTime);
    QApplication::processEvents();
    StepTimeTab* tab = window->stepTimeTab();
    ASSERT_EQ(window->tabs()->currentWidget(), tab);
    EXPECT_EQ(window->tabs()->tabText(window->tabs()->indexOf(tab)), QStringLiteral("Step time"));
    const StepTime before = coreStepTime(fsdp);
    ASSERT_GT(before.step_seconds, 0);
    ChartSpec spec = tab->chart()->spec();
    expectShows(spec, before);
    // FSDP on 8 GPUs: its gathers are mostly hidden by prefetch, and the
    // table says both parts.
    const FigureTableRow* gathers = tableRow(spec, QStringLiteral("FSDP gathers"));
    ASSERT_NE(gathers, nullptr);
    ASSERT_EQ(gathers->numbers.size(), 2);
    EXPECT_DOUBLE_EQ(gathers->numbers[0], before[TimeComponent::FsdpGather]);
    EXPECT_DOUBLE_EQ(gathers->numbers[1], before.overlappedAt(TimeComponent::FsdpGather));
    EXPECT_GT(gathers->numbers[1], gathers->numbers[0]);
    // A call-out for compute, with its time and share, is on screen.
    const QStringList texts = tab->chart()->visibleTexts();
    EXPECT_TRUE(std::any_of(texts.begin(), texts.end(), [](const QString& t) { return t.startsWith("Compute: "); }))
        << texts.join(" | ").toStdString();

    // Editing the micro-batch in its field redraws the tab with the new step.
    const int paints = tab->chart()->paintCount();
    auto* micro = fieldWidget<QSpinBox>(*window, "training.micro_batch_size");
    ASSERT_NE(micro, nullptr);
    micro->setValue(1);
    QApplication::processEvents();
    Scenario edited = fsdp;
    edited.training.micro_batch_size = 1;
    const StepTime after = coreStepTime(edited);
    ASSERT_NE(after.step_seconds, before.step_seconds);
    expectShows(tab->chart()->spec(), after);
    EXPECT_GT(tab->chart()->paintCount(), paints);
    // Half the tokens per micro-batch: compute roughly halves (a matmul's
    // time is linear in its rows once the tiles are full).
    EXPECT_NEAR(after[TimeComponent::Compute] / before[TimeComponent::Compute], 0.5, 0.05);
}

TEST(StepTimeTab, OneBarPerPipelineStageMarksTheSlowest) {
    const Scenario s = presetScenario("llama3.1-405b-3d");
    auto window = openWindow(s);
    window->showView(ChartView::StepTimeStages);
    QApplication::processEvents();
    StepTimeTab* tab = window->stepTimeTab();
    ASSERT_TRUE(tab->perStage());
    Expected<StepTimeModel> model = prepareStepTime(s);
    ASSERT_TRUE(model.ok()) << model.error().text();
    const std::vector<StageTime> stages = stageTimes(*model, s);
    const StepTime step = trainmem::stepTime(*model, s);
    const ChartSpec spec = tab->chart()->spec();
    ASSERT_EQ(spec.categories.size(), 16);
    ASSERT_EQ(stages.size(), 16u);
    EXPECT_EQ(spec.highlightedCategory, step.slowest_stage);
    EXPECT_TRUE(spec.categories[int(step.slowest_stage)].contains("slowest"));
    const double unit = axisSeconds(spec);
    for (int i = 0; i < 16; ++i) {
        EXPECT_NEAR(layerValue(spec, "forward", i) * unit, stages[size_t(i)].forward, 1e-12);
        EXPECT_NEAR(layerValue(spec, "backward", i) * unit, stages[size_t(i)].backward, 1e-12);
        EXPECT_NEAR(spec.barTopValues[i] * unit, stages[size_t(i)].total(), 1e-12);
    }
    // The slowest stage's micro-batch is the one the step is made of.
    EXPECT_NEAR(stages[size_t(step.slowest_stage)].total(), step.slowest.total(), 1e-12);
    // Back to the step: one bar.
    tab->setPerStage(false);
    QApplication::processEvents();
    EXPECT_EQ(tab->chart()->spec().categories.size(), 1);
}

TEST(StepTimeTab, SaysWhyAGpuWithoutRatesIsNotTimedAndGivesTheAssumptions) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    window->showView(ChartView::StepTime);
    QApplication::processEvents();
    StepTimeTab* tab = window->stepTimeTab();
    // The assumptions are one hover away: the H100's dense bf16 peak
    // (989.4 TFLOP/s, its datasheet) and the link to the doc.
    EXPECT_TRUE(tab->assumptionsLink()->toolTip().contains("989.4 TFLOP/s")) << tab->assumptionsLink()->toolTip().toStdString();
    EXPECT_TRUE(tab->assumptionsLink()->text().contains("step-time.md"));
    // AWS's A10G has no NVIDIA datasheet: the memory is estimated, the
    // step time is refused by name.
    window->document()->edit([](Scenario& s) { s.hardware.gpu = "A10G-24GB"; });
    QApplication::processEvents();
    ASSERT_TRUE(window->document()->hasResult());
    ASSERT_FALSE(window->document()->stale());
    const ChartSpec spec = tab->chart()->spec();
    EXPECT_TRUE(spec.layers.isEmpty());
    EXPECT_TRUE(spec.emptyNotice.contains("hardware.gpu")) << spec.emptyNotice.toStdString();
}

TEST(StepTimeTab, ExportsHeadlessLikeTheOtherViews) {
    QTemporaryDir dir;
    const AppRun r = runApp(
        {"--preset", "llama3.1-8b-fsdp-8xh100", "--view", "steptime", "--size", "column", "--export", dir.filePath("t.svg")});
    ASSERT_EQ(r.status, 0) << r.err.toStdString();
    QFile svg(dir.filePath("t.svg"));
    ASSERT_TRUE(svg.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(svg.readAll());
    EXPECT_TRUE(text.contains("tokens/s/GPU"));
    EXPECT_TRUE(text.contains("FSDP gathers"));
}

}  // namespace
}  // namespace trainmem::ui
