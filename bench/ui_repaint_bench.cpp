// Input change to repaint, offscreen: the time from setting a panel's widget
// to the window's pixels showing the new estimate, for the 405B 3D-parallel
// scenario (1024 GPUs, 16 pipeline stages). The budget is one 60 Hz frame,
// 16 ms; docs/gui.md reports the measured median.
#include <benchmark/benchmark.h>

#include <QApplication>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>

#include "core/scenario/presets.h"
#include "ui/breakdown_tab.h"
#include "ui/chart_tab.h"
#include "ui/chart_views.h"
#include "ui/field_bindings.h"
#include "ui/main_window.h"
#include "ui/memory_chart.h"
#include "ui/optimizer_tab.h"

namespace {

using trainmem::ui::MainWindow;

std::unique_ptr<MainWindow> openWindow() {
    auto w = std::make_unique<MainWindow>();
    trainmem::Expected<trainmem::Scenario> s = trainmem::loadPreset("llama3.1-405b-3d");
    if (!s) std::abort();
    w->resize(1500, 940);
    w->document()->replace(*s);
    w->show();
    QApplication::processEvents();
    return w;
}

// Alternates the micro-batch between 1 and 2 through its spin box, then lets
// the event loop repaint what changed.
void editAndRepaint(benchmark::State& state, int tab, bool per_stage) {
    auto window = openWindow();
    window->tabs()->setCurrentIndex(tab);
    window->breakdownTab()->setPerStage(per_stage);
    QApplication::processEvents();
    auto* spin = qobject_cast<QSpinBox*>(window->fieldBindings().widgetFor("training.micro_batch_size"));
    if (!spin) std::abort();
    trainmem::ui::MemoryChart* chart = qobject_cast<trainmem::ui::ChartTab*>(window->tabs()->currentWidget())->chart();
    const int paints = chart->paintCount();
    int value = 1;
    for (auto _ : state) {
        value = value == 1 ? 2 : 1;
        spin->setValue(value);
        // What the event loop does next: paint every region the edit made
        // dirty (chart, table, status line, panels' read-outs).
        QApplication::processEvents();
    }
    if (window->document()->stale()) state.SkipWithError("scenario became invalid");
    if (chart->paintCount() - paints < state.iterations()) state.SkipWithError("the chart was not repainted every time");
}

void BM_MicroBatchToRepaint_Breakdown(benchmark::State& state) { editAndRepaint(state, 0, false); }
void BM_MicroBatchToRepaint_PerStage(benchmark::State& state) { editAndRepaint(state, 0, true); }
void BM_MicroBatchToRepaint_Optimizers(benchmark::State& state) { editAndRepaint(state, 1, false); }

// The parts, for finding where time goes.
void BM_EstimateAndStages(benchmark::State& state) {
    trainmem::Expected<trainmem::Scenario> s = trainmem::loadPreset("llama3.1-405b-3d");
    for (auto _ : state) {
        benchmark::DoNotOptimize(trainmem::estimate(*s));
        benchmark::DoNotOptimize(trainmem::estimateStages(*s));
    }
}

void BM_ChartSetSpecAndPaint(benchmark::State& state) {
    trainmem::Expected<trainmem::Scenario> s = trainmem::loadPreset("llama3.1-405b-3d");
    trainmem::Expected<trainmem::Estimate> e = trainmem::estimate(*s);
    const trainmem::ui::ChartSpec spec = trainmem::ui::breakdownChart(*s, *e, trainmem::Units::GiB);
    trainmem::ui::MemoryChart chart;
    chart.resize(1100, 620);
    chart.show();
    QApplication::processEvents();
    for (auto _ : state) {
        chart.setSpec(spec);
        chart.repaint();
    }
}

constexpr int kRepetitions = 10;
BENCHMARK(BM_MicroBatchToRepaint_Breakdown)->Unit(benchmark::kMillisecond)->Iterations(40)->Repetitions(kRepetitions)->ReportAggregatesOnly(true);
BENCHMARK(BM_MicroBatchToRepaint_PerStage)->Unit(benchmark::kMillisecond)->Iterations(40)->Repetitions(kRepetitions)->ReportAggregatesOnly(true);
BENCHMARK(BM_MicroBatchToRepaint_Optimizers)->Unit(benchmark::kMillisecond)->Iterations(40)->Repetitions(kRepetitions)->ReportAggregatesOnly(true);
BENCHMARK(BM_EstimateAndStages)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ChartSetSpecAndPaint)->Unit(benchmark::kMillisecond)->Iterations(40)->Repetitions(kRepetitions)->ReportAggregatesOnly(true);

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QStandardPaths::setTestModeEnabled(true);  // never touch the user's settings
    QApplication app(argc, argv);
    if (qEnvironmentVariableIsEmpty("TRAINMEM_PRESETS")) trainmem::setPresetsDirectory(TRAINMEM_PRESETS_DIR);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
