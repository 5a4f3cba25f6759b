// The window: every edit redraws the chart from the new estimate, an invalid
// input marks its widget and leaves the last result drawn as stale, and every
// input field the core knows has a widget.
#include <QCheckBox>
#include <QLabel>

#include "core/training/hardware.h"
#include "core/model/model_fields.h"
#include "core/scenario/scenario.h"
#include "ui/breakdown_tab.h"
#include "ui/chart_views.h"
#include "ui/memory_chart.h"
#include "ui/model_panel.h"
#include "ui/preset_picker.h"
#include "ui_test_support.h"
#include "core/scenario/scenario_file.h"

namespace trainmem::ui {
namespace {

using namespace test;

TEST(MainWindow, EditingMicroBatchRedrawsTheChartWithTheNewEstimate) {
    Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    s.training.micro_batch_size = 1;
    auto window = openWindow(s);
    MemoryChart* chart = window->breakdownTab()->chart();
    const double before = layerValue(chart->spec(), "activations");
    ASSERT_GT(before, 0);
    const int paints = chart->paintCount();

    auto* spin = fieldWidget<QSpinBox>(*window, "training.micro_batch_size");
    ASSERT_NE(spin, nullptr);
    spin->setValue(2);
    QApplication::processEvents();

    // Activations are linear in the micro-batch (Korthikanti et al. 2022).
    const double after = layerValue(chart->spec(), "activations");
    EXPECT_NEAR(after / before, 2.0, 0.01);
    EXPECT_DOUBLE_EQ(after, window->document()->result().peak.at_peak[Component::Activations] / kGiBd);
    EXPECT_GT(chart->paintCount(), paints);
}

TEST(MainWindow, InvalidInputMarksItsFieldAndKeepsTheLastResultStale) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    MemoryChart* chart = window->breakdownTab()->chart();
    const double weights = layerValue(chart->spec(), "weights");
    auto* tensor = fieldWidget<QSpinBox>(*window, "parallelism.tensor");
    ASSERT_NE(tensor, nullptr);
    const QString own_tip = tensor->toolTip();

    tensor->setValue(3);  // 32 heads do not split over 3 ranks
    QApplication::processEvents();
    EXPECT_EQ(window->fieldBindings().marked(), tensor);
    EXPECT_TRUE(tensor->styleSheet().contains("border"));
    EXPECT_TRUE(tensor->toolTip().contains(QString::fromStdString(window->document()->error()->message).toHtmlEscaped()));
    EXPECT_FALSE(chart->spec().staleNotice.isEmpty());
    EXPECT_DOUBLE_EQ(layerValue(chart->spec(), "weights"), weights);  // the last valid result, still drawn
    EXPECT_FALSE(chart->spec().empty());

    tensor->setValue(2);
    QApplication::processEvents();
    // The preset states "gpus": 8; editing a degree keeps that count in step.
    EXPECT_EQ(window->document()->scenario().parallelism.gpus, std::optional<int64_t>(16));
    EXPECT_EQ(window->fieldBindings().marked(), nullptr);
    EXPECT_TRUE(tensor->styleSheet().isEmpty());
    EXPECT_EQ(tensor->toolTip(), own_tip);
    EXPECT_TRUE(chart->spec().staleNotice.isEmpty());
}

TEST(MainWindow, EverySettingKeyOfTheCoreHasAWidget) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    for (const std::string& key : settingKeys())
        EXPECT_NE(window->fieldBindings().widgetFor(QString::fromStdString(key)), nullptr) << key;
}

// Help: every field says what it is in its tooltip (issue 12: "tooltips on
// every field with typical values"), a sentence, not a bare name.
TEST(MainWindow, EveryFieldHasATooltipSayingWhatItIs) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    for (const std::string& key : settingKeys()) {
        QWidget* w = window->fieldBindings().widgetFor(QString::fromStdString(key));
        if (!w) continue;  // EverySettingKeyOfTheCoreHasAWidget names it
        const QString tip = w->toolTip();
        EXPECT_GE(tip.split(' ', Qt::SkipEmptyParts).size(), 4) << key << ": \"" << tip.toStdString() << "\"";
    }
}

TEST(MainWindow, EveryModelKeyTheCoreNamesInErrorsHasAWidget) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    for (const char* family : {"llama", "gpt2", "mixtral", "qwen2_moe", "deepseek_v3"})
        for (int f = 0; f <= static_cast<int>(ModelField::VHeadDim); ++f) {
            const std::string field = modelField(family, static_cast<ModelField>(f));
            EXPECT_NE(window->fieldBindings().widgetFor(QString::fromStdString(field)), nullptr) << family << " " << field;
        }
}

TEST(MainWindow, ExpertFieldsShowOnlyForMoeModelsAndLatentFieldsOnlyForMla) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    window->modelPanel()->setArchitectureShown(true);  // collapsed at start
    QWidget* experts = window->fieldBindings().widgetFor("model.num_local_experts");
    QWidget* kv_lora = window->fieldBindings().widgetFor("model.kv_lora_rank");
    ASSERT_NE(experts, nullptr);
    ASSERT_NE(kv_lora, nullptr);
    EXPECT_FALSE(experts->isVisible());
    EXPECT_FALSE(kv_lora->isVisible());

    ASSERT_TRUE(window->presetPicker()->choose("mixtral-8x7b"));
    QApplication::processEvents();
    EXPECT_TRUE(experts->isVisibleTo(window.get()));
    EXPECT_FALSE(kv_lora->isVisibleTo(window.get()));
    EXPECT_EQ(qobject_cast<QSpinBox*>(experts)->value(), 8);  // Mixtral-8x7B: 8 experts

    ASSERT_TRUE(window->presetPicker()->choose("deepseek-v3"));
    QApplication::processEvents();
    EXPECT_TRUE(experts->isVisibleTo(window.get()));
    EXPECT_TRUE(kv_lora->isVisibleTo(window.get()));
    EXPECT_EQ(qobject_cast<QSpinBox*>(experts)->value(), 256);  // DeepSeek-V3: 256 routed experts
    EXPECT_EQ(qobject_cast<QSpinBox*>(kv_lora)->value(), 512);
}

TEST(MainWindow, ModelPresetKeepsTrainingAndParallelism) {
    Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    s.training.sequence_length = 1234;
    auto window = openWindow(s);
    ASSERT_TRUE(window->presetPicker()->choose("mistral-7b-v0.1"));
    EXPECT_EQ(window->document()->scenario().model_preset, "mistral-7b-v0.1");
    EXPECT_EQ(window->document()->scenario().training.sequence_length, 1234);
    EXPECT_EQ(window->document()->scenario().parallelism, s.parallelism);
}

TEST(MainWindow, UnitsSwitchRescalesChartsToDecimalGigabytes) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    const ChartSpec gib = window->breakdownTab()->currentSpec();
    window->setUnits(Units::GB);
    const ChartSpec gb = window->breakdownTab()->currentSpec();
    EXPECT_TRUE(gb.valueAxisTitle.startsWith("GB"));
    // 1 GiB = 1.073741824 GB.
    EXPECT_NEAR(layerValue(gb, "weights") / layerValue(gib, "weights"), 1.073741824, 1e-9);
    window->setUnits(Units::GiB);
}

TEST(MainWindow, CapacityLineIsTheCataloguedGpuMemory) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    const GpuSpec* gpu = findGpu(window->document()->scenario().hardware.gpu);
    ASSERT_NE(gpu, nullptr);
    const ChartSpec spec = window->breakdownTab()->currentSpec();
    ASSERT_TRUE(spec.capacity.has_value());
    EXPECT_DOUBLE_EQ(*spec.capacity, gpu->memory_bytes / kGiBd);
}

TEST(MainWindow, BreakdownDrawsOnlyComponentsAboveZeroAndTheyAddUpToTheDeviceTotal) {
    auto window = openWindow(presetScenario("llama3.1-405b-3d"));
    const ChartSpec spec = window->breakdownTab()->currentSpec();
    double sum = 0;
    for (const ChartLayer& l : spec.layers) {
        EXPECT_GT(l.values[0], 0) << l.key.toStdString();
        EXPECT_FALSE(l.callout.isEmpty()) << l.key.toStdString();
        sum += l.values[0];
    }
    EXPECT_NEAR(sum, window->document()->result().peak.device_bytes / kGiBd, 1e-9);
}

TEST(MainWindow, PerStageToggleDrawsOneBarPerPipelineStageAndMarksThePeak) {
    auto window = openWindow(presetScenario("llama3.1-405b-3d"));
    window->breakdownTab()->setPerStage(true);
    const ChartSpec spec = window->breakdownTab()->currentSpec();
    const int64_t stages = window->document()->scenario().parallelism.pipeline;
    ASSERT_EQ(spec.categories.size(), stages);
    EXPECT_EQ(spec.highlightedCategory, window->document()->result().peak.stage);
    // Bars are the stages' own totals; the heaviest is the estimate's peak.
    double tallest = 0;
    int tallest_index = -1;
    for (int i = 0; i < spec.categories.size(); ++i) {
        double sum = 0;
        for (const ChartLayer& l : spec.layers) sum += l.values[i];
        if (sum > tallest) tallest = sum, tallest_index = i;
    }
    EXPECT_EQ(tallest_index, window->document()->result().peak.stage);
    window->breakdownTab()->setPerStage(false);
}

}  // namespace
}  // namespace trainmem::ui
