// Find a Layout's live search, from an edit of the scenario to the table
// showing the new ranking: for the presets whose search is the largest
// (1,024 GPUs). Real time is the edit to the updated, repainted table (the
// search runs on a worker thread meanwhile); CPU time is the GUI thread's own
// (Google Benchmark counts the calling thread's CPU): what the panel does on
// the GUI thread before and after the worker (starting it, the rows'
// formatting, the table's update), which is what could hold a frame.
// The budget is one 60 Hz frame, 16.7 ms (docs/performance.md).
#include <benchmark/benchmark.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QStandardPaths>
#include <QTableWidget>

#include "core/presets.h"
#include "ui/layout_finder_panel.h"
#include "ui/scenario_document.h"

namespace {

using trainmem::ui::LayoutFinderPanel;
using trainmem::ui::ScenarioDocument;

// Alternates the sequence length between the preset's and half of it (the
// global batch stays the preset's), and waits for the table.
void editToTable(benchmark::State& state, const char* preset) {
    trainmem::Expected<trainmem::Scenario> s = trainmem::loadPreset(preset);
    if (!s) std::abort();
    ScenarioDocument document;
    document.replace(*s);
    LayoutFinderPanel panel(&document);
    panel.resize(1200, 700);
    panel.show();
    bool finished = false;
    QObject::connect(&panel, &LayoutFinderPanel::searchFinished, [&] { finished = true; });
    auto waitForTable = [&] {
        while (!finished) QApplication::processEvents(QEventLoop::WaitForMoreEvents);
        QApplication::processEvents();  // the table's repaint
        finished = false;
    };
    QApplication::processEvents();
    if (panel.searching()) waitForTable();
    const int64_t sequence = s->training.sequence_length;
    bool half = false;
    for (auto _ : state) {
        half = !half;
        document.edit([&](trainmem::Scenario& x) { x.training.sequence_length = half ? sequence / 2 : sequence; },
                      QStringLiteral("sequence"));
        waitForTable();
    }
    if (panel.layoutTable()->rowCount() == 0) state.SkipWithError("no layout listed");
}

}  // namespace

BENCHMARK_CAPTURE(editToTable, llama405b_3d, "llama3.1-405b-3d")->Unit(benchmark::kMillisecond)->Iterations(20)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK_CAPTURE(editToTable, llama70b_interleaved, "llama3.1-70b-interleaved-3d")->Unit(benchmark::kMillisecond)->Iterations(20)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK_CAPTURE(editToTable, mixtral_tp_ep, "mixtral-8x7b-tp-ep")->Unit(benchmark::kMillisecond)->Iterations(20)->Repetitions(5)->ReportAggregatesOnly(true);
