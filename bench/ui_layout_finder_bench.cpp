// Find a Layout's live search, from an edit of the scenario to the table
// showing the new ranking, for every scenario preset (the three of 1,024 GPUs
// search the most). The budget is one 60 Hz frame, 16.7 ms (docs/performance.md).
//
// editToTable: real time is the edit to the last repaint of the two tables
// (the search runs on a worker thread meanwhile); CPU time is the GUI
// thread's own (Google Benchmark counts the calling thread's CPU): what the
// panel does on the GUI thread before and after the worker (starting it, the
// rows' formatting, the tables' update and paint), which is what could hold a
// frame. A table's update need not be over when the result arrives (a
// column that changed width used to repaint the whole table again on a later
// turn of the event loop: QTableView applies widths on a zero timer), so each
// edit waits until the tables have painted nothing for kQuiet and counts up
// to their last paint; "paints" counts the tables' paint events per edit. The
// edits are as far apart as a person's, not queued behind one another.
//
// editInWindowToTable: the same, with the panel in the app's window (its
// Find a Layout dock shown beside the main window, 1500 × 940), where an
// edit also updates the charts, the breakdown table and the panels: CPU time
// is all of the GUI thread's work for the edit, real time still the edit to
// the last repaint of Find a Layout's tables.
//
// searchOnly: the same searches on the calling thread, without the panel:
// the worker's part of editToTable.
#include <benchmark/benchmark.h>

#include <chrono>

#include <QApplication>
#include <QDockWidget>
#include <QTableWidget>
#include <QTimer>

#include "core/scenario/batch.h"
#include "core/search/layout_search.h"
#include "core/scenario/presets.h"
#include "ui/layout_finder_panel.h"
#include "ui/main_window.h"
#include "ui/scenario_document.h"

namespace {

using trainmem::ui::LayoutFinderPanel;
using trainmem::ui::ScenarioDocument;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kQuiet{30};

// Counts the paint events of the widgets it watches.
class PaintCounter : public QObject {
public:
    int paints = 0;
    bool eventFilter(QObject*, QEvent* event) override {
        if (event->type() == QEvent::Paint) ++paints;
        return false;
    }
};

// The preset's sequence length, or half of it (the global batch stays the preset's).
int64_t sequenceFor(const trainmem::Scenario& preset, bool half) {
    return half ? preset.training.sequence_length / 2 : preset.training.sequence_length;
}

// Alternates the sequence length of `document` between the preset's and half
// of it, and waits for the tables of `panel` (shown, on `document`).
void editsToTables(benchmark::State& state, const trainmem::Scenario& preset, ScenarioDocument& document,
                   LayoutFinderPanel& panel) {
    PaintCounter counter;
    panel.layoutTable()->viewport()->installEventFilter(&counter);
    panel.rejectedTable()->viewport()->installEventFilter(&counter);
    bool finished = false;
    QObject::connect(&panel, &LayoutFinderPanel::searchFinished, [&] { finished = true; });
    QTimer quiet;
    quiet.setSingleShot(true);
    quiet.setInterval(kQuiet);
    // The end of the last paint of the tables after the search's result.
    auto waitForTables = [&] {
        while (!finished) QApplication::processEvents(QEventLoop::WaitForMoreEvents);
        finished = false;
        Clock::time_point end = Clock::now();
        int seen = counter.paints;
        quiet.start();
        while (quiet.isActive()) {
            QApplication::processEvents(QEventLoop::WaitForMoreEvents);
            if (counter.paints != seen) {  // painted in this turn: its end is now
                seen = counter.paints;
                end = Clock::now();
                quiet.start();
            }
        }
        return end;
    };
    waitForTables();  // the search the panel makes when it is first shown
    const int paints_before = counter.paints;
    bool half = false;
    for (auto _ : state) {
        half = !half;
        const Clock::time_point edit = Clock::now();
        document.edit([&](trainmem::Scenario& x) { x.training.sequence_length = sequenceFor(preset, half); },
                      QStringLiteral("sequence"));
        const Clock::time_point end = waitForTables();
        state.SetIterationTime(std::chrono::duration<double>(end - edit).count());
    }
    // Paint events of the two tables per edit (two when each table paints once).
    state.counters["paints"] = benchmark::Counter(counter.paints - paints_before, benchmark::Counter::kAvgIterations);
    // A scenario that fits no GPU count of its own (gpt2-1.5b-zero-paper,
    // llama2-7b-fp32-adam) lists only the misses.
    if (panel.layoutTable()->rowCount() + panel.rejectedTable()->rowCount() == 0) state.SkipWithError("no layout listed");
}

void editToTable(benchmark::State& state, const char* preset) {
    trainmem::Expected<trainmem::Scenario> s = trainmem::loadPreset(preset);
    if (!s) std::abort();
    ScenarioDocument document;
    document.replace(*s);
    LayoutFinderPanel panel(&document);
    panel.resize(1200, 700);
    panel.show();
    editsToTables(state, *s, document, panel);
}

void editInWindowToTable(benchmark::State& state, const char* preset) {
    trainmem::Expected<trainmem::Scenario> s = trainmem::loadPreset(preset);
    if (!s) std::abort();
    trainmem::ui::MainWindow window;
    window.resize(1500, 940);
    window.document()->replace(*s);
    window.show();
    auto* dock = qobject_cast<QDockWidget*>(window.layoutFinder()->parentWidget());
    if (!dock) std::abort();
    dock->show();
    editsToTables(state, *s, *window.document(), *window.layoutFinder());
}

// The panel's searches (its options for the preset: the scenario's GPU
// count and global batch, 20 listed, 5 misses), alternating as above.
void searchOnly(benchmark::State& state, const char* preset) {
    trainmem::Expected<trainmem::Scenario> s = trainmem::loadPreset(preset);
    if (!s) std::abort();
    trainmem::LayoutSearchOptions options;
    options.gpus = s->parallelism.totalGpus();
    options.global_batch = trainmem::planBatch(*s).effective_batch;
    options.top = 20;
    options.rejected = 5;
    trainmem::Scenario scenarios[2] = {*s, *s};
    scenarios[1].training.sequence_length = sequenceFor(*s, true);
    int i = 0;
    for (auto _ : state) {
        trainmem::Expected<trainmem::LayoutSearchResult> r = trainmem::searchLayouts(scenarios[i ^= 1], options);
        if (!r || r->layouts.size() + r->rejected.size() == 0) state.SkipWithError("no layout listed");
        benchmark::DoNotOptimize(r);
    }
}

}  // namespace

#define TRAINMEM_LIVE_SEARCH(name, preset)                                                                                  \
    BENCHMARK_CAPTURE(editToTable, name, preset)                                                                           \
        ->Unit(benchmark::kMillisecond)                                                                                    \
        ->UseManualTime()                                                                                                  \
        ->Iterations(20)                                                                                                   \
        ->Repetitions(5)                                                                                                   \
        ->ReportAggregatesOnly(true);                                                                                      \
    BENCHMARK_CAPTURE(searchOnly, name, preset)->Unit(benchmark::kMillisecond)->Iterations(20)->Repetitions(5)->ReportAggregatesOnly(true)

TRAINMEM_LIVE_SEARCH(gpt2_zero, "gpt2-1.5b-zero-paper");
TRAINMEM_LIVE_SEARCH(gpt2_deepspeed_8xv100, "gpt2-1.5b-deepspeed-zero1-8xv100");
TRAINMEM_LIVE_SEARCH(llama3_8b_megatron, "llama3-8b-megatron-8xh100");
TRAINMEM_LIVE_SEARCH(llama8b_litgpt_4gpu, "llama3.1-8b-litgpt-full-4gpu");
TRAINMEM_LIVE_SEARCH(llama8b_torchtitan, "llama3.1-8b-torchtitan-8xh100");
TRAINMEM_LIVE_SEARCH(llama8b_torchtune, "llama3.1-8b-torchtune-full-single");
TRAINMEM_LIVE_SEARCH(llama2_7b_fp32, "llama2-7b-fp32-adam");
TRAINMEM_LIVE_SEARCH(llama8b_qlora, "llama3.1-8b-qlora-rtx4090");
TRAINMEM_LIVE_SEARCH(mistral7b_lora, "mistral-7b-lora-a100");
TRAINMEM_LIVE_SEARCH(llama8b_fsdp, "llama3.1-8b-fsdp-8xh100");
TRAINMEM_LIVE_SEARCH(llama70b_cp, "llama3.1-70b-long-context-cp");
TRAINMEM_LIVE_SEARCH(llama405b_3d, "llama3.1-405b-3d");
TRAINMEM_LIVE_SEARCH(llama70b_interleaved, "llama3.1-70b-interleaved-3d");
TRAINMEM_LIVE_SEARCH(mixtral_tp_ep, "mixtral-8x7b-tp-ep");

#define TRAINMEM_LIVE_SEARCH_IN_WINDOW(name, preset)                                                                        \
    BENCHMARK_CAPTURE(editInWindowToTable, name, preset)                                                                   \
        ->Unit(benchmark::kMillisecond)                                                                                    \
        ->UseManualTime()                                                                                                  \
        ->Iterations(20)                                                                                                   \
        ->Repetitions(5)                                                                                                   \
        ->ReportAggregatesOnly(true)

TRAINMEM_LIVE_SEARCH_IN_WINDOW(llama405b_3d, "llama3.1-405b-3d");
TRAINMEM_LIVE_SEARCH_IN_WINDOW(llama70b_interleaved, "llama3.1-70b-interleaved-3d");
TRAINMEM_LIVE_SEARCH_IN_WINDOW(mixtral_tp_ep, "mixtral-8x7b-tp-ep");
