// The smaller things a daily user trips over (issue 12, item 9): presets load
// on one click and show which is loaded, search finds every MoE, names and
// descriptions follow the model, the status line does not call a stale result
// "fits", stages count from 1, "1 GPU", file dialogs start somewhere sensible,
// the table's share is the CLI's, and fields offer only what the model has.
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QScrollArea>
#include <QScrollBar>
#include <QTableWidget>
#include <QTest>

#include "core/report/report.h"
#include "ui/breakdown_tab.h"
#include "ui/breakdown_table.h"
#include "ui/chart_views.h"
#include "ui/memory_chart.h"
#include "ui/model_panel.h"
#include "ui/preset_picker.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

QListWidgetItem* presetItem(PresetPicker* picker, const QString& name) {
    for (int i = 0; i < picker->list()->count(); ++i)
        if (picker->list()->item(i)->data(Qt::UserRole).toString() == name) return picker->list()->item(i);
    return nullptr;
}

TEST(Presets, OneClickLoadsAndTheLoadedPresetIsMarked) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    PresetPicker* picker = window->presetPicker();
    QListWidgetItem* mixtral = presetItem(picker, QStringLiteral("mixtral-8x7b-tp-ep"));
    ASSERT_NE(mixtral, nullptr);
    picker->list()->scrollToItem(mixtral);
    QTest::mouseClick(picker->list()->viewport(), Qt::LeftButton, {}, picker->list()->visualItemRect(mixtral).center());
    QApplication::processEvents();
    EXPECT_EQ(window->document()->scenario().name, "mixtral-8x7b-tp-ep");
    EXPECT_EQ(picker->loadedItem(true), mixtral);
    EXPECT_TRUE(mixtral->font().bold());
    EXPECT_EQ(window->document()->undoStack()->count(), 1);  // one step, undoable
}

TEST(Presets, SearchingMoeFindsEveryMixtureOfExpertsPreset) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    PresetPicker* picker = window->presetPicker();
    auto* search = picker->findChild<QLineEdit*>();
    ASSERT_NE(search, nullptr);
    search->setText(QStringLiteral("moe"));
    QStringList shown;
    for (int i = 0; i < picker->list()->count(); ++i)
        if (!picker->list()->item(i)->isHidden()) shown << picker->list()->item(i)->data(Qt::UserRole).toString();
    // The presets whose models route tokens to experts.
    for (const char* moe : {"deepseek-v2-lite", "deepseek-v3", "mixtral-8x22b", "mixtral-8x7b", "qwen1.5-moe-a2.7b",
                            "mixtral-8x7b-tp-ep"})
        EXPECT_TRUE(shown.contains(QString::fromLatin1(moe))) << moe << " not in " << shown.join(", ").toStdString();
    EXPECT_FALSE(shown.contains(QStringLiteral("llama-3.1-8b")));
}

TEST(Names, ChartTitlesAndSavedNamesFollowTheModel) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    ASSERT_FALSE(window->document()->scenario().description.empty());
    const std::string model = window->document()->scenario().model.name;  // "meta-llama/Llama-3.1-8B"
    fieldWidget<QSpinBox>(*window, "model.num_hidden_layers")->setValue(48);
    QApplication::processEvents();
    const Scenario& s = window->document()->scenario();
    EXPECT_EQ(s.model.name, model + " (edited)");
    EXPECT_TRUE(s.description.empty());  // the preset's text was about the 8B model
    EXPECT_TRUE(window->breakdownTab()->chart()->spec().title.contains("(edited)") ||
                window->breakdownTab()->chart()->spec().subtitle.contains("(edited)"));
    fieldWidget<QSpinBox>(*window, "model.num_hidden_layers")->setValue(40);
    EXPECT_EQ(window->document()->scenario().model.name, model + " (edited)");  // once

    // Another model drops the scenario's name: the title is the model's.
    ASSERT_TRUE(window->presetPicker()->choose(QStringLiteral("mixtral-8x7b")));
    const QString mixtral = QString::fromStdString(window->document()->scenario().model.name);
    ASSERT_TRUE(mixtral.contains("Mixtral-8x7B")) << mixtral.toStdString();
    EXPECT_TRUE(window->document()->scenario().name.empty());
    EXPECT_TRUE(window->windowTitle().startsWith(mixtral)) << window->windowTitle().toStdString();
    EXPECT_TRUE(window->scenarioFileStem().contains(QStringLiteral("mixtral-8x7b"))) << window->scenarioFileStem().toStdString();
    EXPECT_FALSE(window->scenarioFileStem().contains('/'));
}

TEST(StatusLine, AStaleResultIsNotCalledFits) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    auto* status = window->findChild<EstimateStatus*>();
    ASSERT_NE(status, nullptr);
    ASSERT_TRUE(status->text().contains(">fits<"));
    fieldWidget<QSpinBox>(*window, "parallelism.tensor")->setValue(3);
    QApplication::processEvents();
    ASSERT_TRUE(window->document()->stale());
    EXPECT_TRUE(status->text().contains("Invalid input"));
    EXPECT_FALSE(status->text().contains("1e8449")) << status->text().toStdString();  // no green
    EXPECT_FALSE(status->text().contains(">fits<"));
}

TEST(StatusLine, OneGpuIsSingular) {
    Scenario s = presetScenario("llama3.1-8b-qlora-rtx4090");
    ASSERT_EQ(s.parallelism.totalGpus(), 1);
    auto window = openWindow(s);
    auto* status = window->findChild<EstimateStatus*>();
    EXPECT_TRUE(status->text().contains("1 GPU,")) << status->text().toStdString();
    EXPECT_FALSE(status->text().contains("1 GPUs"));
}

TEST(StatusLine, GivesTheWarningsTheCliGives) {
    // core's reportWarnings: Llama 4's activation caveat reaches the window
    // as it reaches trainmem-cli's report.
    auto window = openWindow(presetScenario("llama-4-scout"));
    auto* status = window->findChild<EstimateStatus*>();
    ASSERT_NE(status, nullptr);
    EXPECT_TRUE(status->text().contains("runs every expert on every token")) << status->text().toStdString();
}

TEST(Stages, CountedFromOneEverywhere) {
    auto window = openWindow(presetScenario("llama3.1-405b-3d"));
    const Estimate& e = window->document()->result();
    ASSERT_EQ(e.num_stages, 16);
    const ChartSpec breakdown = window->breakdownTab()->currentSpec();
    const QString peak = QStringLiteral("stage %1 of 16").arg(e.peak.stage + 1);
    EXPECT_TRUE(breakdown.subtitle.contains(peak)) << breakdown.subtitle.toStdString();
    EXPECT_TRUE(breakdown.categories.front().startsWith(QStringLiteral("Stage %1 ").arg(e.peak.stage + 1)));
    const ChartSpec stages = stagesChart(window->document()->resultScenario(), e, window->document()->stages(), Units::GiB, {});
    ASSERT_EQ(stages.categories.size(), 16);
    EXPECT_TRUE(stages.categories.front().startsWith("Stage 1\n"));
    EXPECT_TRUE(stages.categories.back().startsWith("Stage 16\n"));
}

TEST(StaleBanner, DoesNotCoverACallout) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    fieldWidget<QSpinBox>(*window, "parallelism.tensor")->setValue(3);
    QApplication::processEvents();
    MemoryChart* chart = window->breakdownTab()->chart();
    const ChartSpec& spec = chart->spec();
    ASSERT_FALSE(spec.staleNotice.isEmpty());
    const QRectF banner = chart->textRect(QStringLiteral("Stale"));
    ASSERT_FALSE(banner.isEmpty());
    int checked = 0;
    for (const ChartLayer& layer : spec.layers) {
        if (layer.callout.isEmpty()) continue;
        const QRectF callout = chart->textRect(layer.callout.section(':', 0, 0));
        if (callout.isEmpty()) continue;
        ++checked;
        EXPECT_FALSE(banner.intersects(callout)) << layer.callout.toStdString();
    }
    EXPECT_GT(checked, 3);
}

TEST(Table, ShareIsOfTheAllocatedPeakAsInTheCli) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    auto* table = window->findChild<BreakdownTable*>();
    const Estimate& e = window->document()->result();
    int weights = -1, allocated = -1;
    for (int r = 0; r < table->rowCount(); ++r) {
        if (table->item(r, 0)->text() == "Weights") weights = r;
        if (table->item(r, 0)->text().startsWith("Allocated")) allocated = r;
    }
    ASSERT_GE(weights, 0);
    ASSERT_GE(allocated, 0);
    EXPECT_EQ(table->item(allocated, 2)->text(), "100.0%");
    const double share = 100.0 * static_cast<double>(e.peak.at_peak[Component::Weights]) / static_cast<double>(e.peak.allocated_bytes);
    EXPECT_EQ(table->item(weights, 2)->text(), QStringLiteral("%1%").arg(share, 0, 'f', 1));
    // trainmem-cli's table prints the same figure for the same scenario.
    EXPECT_NE(estimateToTable(window->document()->resultScenario(), e).find(table->item(weights, 2)->text().toStdString()),
              std::string::npos);
}

TEST(Fields, ActivationOffersOnlyKnownFunctions) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    auto* act = fieldWidget<QComboBox>(*window, "model.hidden_act");
    ASSERT_NE(act, nullptr);
    EXPECT_FALSE(act->isEditable());  // "foo" cannot be typed
    EXPECT_EQ(act->currentText(), "silu");
    act->setCurrentIndex(act->findText("gelu_new"));
    EXPECT_EQ(window->document()->scenario().model.hidden_act, "gelu_new");
}

TEST(Fields, LoraTargetsAreTheLoadedArchitecturesModules) {
    Scenario s = presetScenario("mistral-7b-lora-a100");
    auto window = openWindow(s);
    auto box = [&](const char* name) {
        for (QCheckBox* b : window->findChildren<QCheckBox*>())
            if (b->text() == QLatin1String(name)) return b;
        return static_cast<QCheckBox*>(nullptr);
    };
    ASSERT_NE(box("q_proj"), nullptr);
    EXPECT_FALSE(box("q_proj")->isHidden());
    EXPECT_FALSE(box("gate_proj")->isHidden());
    EXPECT_TRUE(box("c_attn")->isHidden());  // GPT-2's fused module
    EXPECT_TRUE(box("kv_b_proj")->isHidden());  // DeepSeek's MLA
    ASSERT_TRUE(window->presetPicker()->choose(QStringLiteral("gpt2")));
    QApplication::processEvents();
    EXPECT_FALSE(box("c_attn")->isHidden());
    EXPECT_FALSE(box("c_fc")->isHidden());
    EXPECT_TRUE(box("kv_b_proj")->isHidden());
    EXPECT_TRUE(box("w1")->isHidden());  // Mixtral's experts
}

TEST(Column, AWideModelScrollsSidewaysInsteadOfBeingCut) {
    auto window = openWindow(presetScenario("llama3.1-405b-3d"));
    window->resize(1000, 700);
    QApplication::processEvents();
    QScrollArea* column = nullptr;
    for (QScrollArea* a : window->findChildren<QScrollArea*>())
        if (a->widget() && a->widget()->findChild<PresetPicker*>()) column = a;
    ASSERT_NE(column, nullptr);
    const bool fits = column->widget()->width() <= column->viewport()->width();
    EXPECT_TRUE(fits || column->horizontalScrollBar()->isVisible());
    EXPECT_NE(column->horizontalScrollBarPolicy(), Qt::ScrollBarAlwaysOff);
}

TEST(FileDialogs, StartInDocumentsAndExportSuggestsTheScenario) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    EXPECT_NE(window->documentFolder(), QStringLiteral("/"));
    EXPECT_TRUE(QDir(window->documentFolder()).exists() || window->documentFolder().startsWith(QDir::homePath()));
    EXPECT_TRUE(window->suggestedExportPath().endsWith("/llama3.1-8b-fsdp-8xh100-breakdown"))
        << window->suggestedExportPath().toStdString();
}

}  // namespace
}  // namespace trainmem::ui

namespace trainmem::ui {
namespace {

using namespace test;

// The controls people change most come first; the architecture is collapsed
// and opens by itself when an error names one of its fields.
TEST(Column, MostChangedFirstArchitectureCollapsedUntilAnErrorNamesIt) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    QWidget* gpu = window->fieldBindings().widgetFor("hardware.gpu");
    QWidget* mbs = window->fieldBindings().widgetFor("training.micro_batch_size");
    QWidget* tp = window->fieldBindings().widgetFor("parallelism.tensor");
    QWidget* kv = window->fieldBindings().widgetFor("model.num_key_value_heads");
    ASSERT_TRUE(gpu && mbs && tp && kv);
    QWidget* column = window->presetPicker()->parentWidget();
    auto y = [&](QWidget* w) { return w->mapTo(column, QPoint()).y(); };
    EXPECT_LT(y(gpu), y(mbs));
    EXPECT_LT(y(mbs), y(tp));
    EXPECT_FALSE(window->modelPanel()->architectureShown());
    EXPECT_FALSE(kv->isVisibleTo(window.get()));

    window->document()->edit([](Scenario& s) { s.model.num_kv_heads = 5; });  // 32 heads do not split into 5 groups
    QApplication::processEvents();
    ASSERT_TRUE(window->document()->stale());
    ASSERT_EQ(window->fieldBindings().marked(), kv);
    EXPECT_TRUE(window->modelPanel()->architectureShown());
    EXPECT_TRUE(kv->isVisibleTo(window.get()));
}

}  // namespace
}  // namespace trainmem::ui
