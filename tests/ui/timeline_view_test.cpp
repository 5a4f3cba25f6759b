// The Timeline tab: one step of one stage by component, whose highest point
// is the estimate's peak; a measured snapshot set over it and aligned by
// phase; bad snapshot files reported in the tab, never a crash.
#include <QComboBox>
#include <QImage>
#include <QProcess>
#include <QSvgRenderer>
#include <QTabWidget>
#include <QTemporaryDir>

#include "core/snapshot/memory_snapshot.h"
#include "core/scenario/presets.h"
#include "core/report/report.h"
#include "ui/chart_views.h"
#include "ui/component_palette.h"
#include "ui/scenario_document.h"
#include "ui/timeline_tab.h"
#include "ui/timeline_view.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

constexpr int64_t MiB = int64_t{1} << 20;
const QString kSnapshots = QStringLiteral(TRAINMEM_TEST_DATA_DIR "/snapshots/");

// A shown tab on its own document, laid out at a realistic size.
struct TabOn {
    explicit TabOn(const Scenario& s) {
        document.replace(s);
        tab.resize(1200, 760);
        tab.show();
        QApplication::processEvents();
    }
    ScenarioDocument document;
    TimelineTab tab{&document};
};

int64_t largestTotal(const StepTimeline& t) {
    int64_t top = 0;
    for (const TimelineSample& s : t.samples) top = std::max(top, s.bytes.total());
    return top;
}

// GPT-2 small as a single GPU trains it: 12 blocks, one stage, one
// micro-batch, nothing recomputed.
Scenario gpt2Alone() {
    Expected<ModelConfig> gpt2 = loadModelPreset("gpt2");
    EXPECT_TRUE(gpt2.ok());
    Scenario s = scenarioForModel(gpt2.ok() ? *gpt2 : ModelConfig{}, "gpt2");
    s.training.gradient_accumulation_steps = 1;
    s.training.checkpointing = Checkpointing::None;
    return s;
}

TEST(TimelineTab, HighestPointIsTheEstimatedPeakAllocatedOfTheHeaviestStage) {
    for (const char* preset : {"llama3.1-8b-fsdp-8xh100", "llama3.1-405b-3d", "llama3.1-70b-interleaved-3d", "mixtral-8x7b-tp-ep"}) {
        TabOn on(presetScenario(preset));
        ASSERT_TRUE(on.document.hasResult()) << preset;
        const TimelineDrawing& d = on.tab.currentDrawing();
        ASSERT_FALSE(d.empty()) << preset;
        EXPECT_EQ(d.timeline.stage, on.document.result().peak.stage) << preset;
        EXPECT_EQ(largestTotal(d.timeline), on.document.result().peak.allocated_bytes) << preset;
        EXPECT_EQ(d.timeline.peak_bytes(), on.document.result().peak.allocated_bytes) << preset;
    }
}

TEST(TimelineTab, StageSelectorListsEveryPipelineStageAndStartsOnTheHeaviest) {
    const Scenario s = presetScenario("llama3.1-405b-3d");
    TabOn on(s);
    QComboBox* stages = on.tab.stageSelector();
    EXPECT_EQ(stages->count(), s.parallelism.pipeline);
    EXPECT_EQ(stages->currentIndex(), on.document.result().peak.stage);
    EXPECT_TRUE(stages->isEnabled());

    // Another stage: its own step, never above the heaviest stage's peak.
    const int other = on.document.result().peak.stage == 0 ? 1 : 0;
    on.tab.setStage(other);
    const TimelineDrawing& d = on.tab.currentDrawing();
    EXPECT_EQ(d.timeline.stage, other);
    EXPECT_EQ(stages->currentIndex(), other);
    EXPECT_EQ(largestTotal(d.timeline), on.document.stages()[static_cast<size_t>(other)].allocated_bytes);
    EXPECT_LE(largestTotal(d.timeline), on.document.result().peak.allocated_bytes);
}

TEST(TimelineTab, RendersTheStackInThePlotArea) {
    TabOn on(presetScenario("llama3.1-8b-fsdp-8xh100"));
    const QSize size(1200, 750);
    const QImage image = on.tab.renderImage(size).convertToFormat(QImage::Format_RGB32);
    ASSERT_EQ(image.size(), size);
    const QRectF plot = TimelinePlot(on.tab.currentDrawing(), QRectF(QPointF(0, 0), QSizeF(size))).plotArea();
    ASSERT_GT(plot.width(), 600);
    ASSERT_GT(plot.height(), 300);
    int coloured = 0, total = 0;
    for (int y = static_cast<int>(plot.top()) + 1; y < static_cast<int>(plot.bottom()); y += 3)
        for (int x = static_cast<int>(plot.left()) + 1; x < static_cast<int>(plot.right()); x += 3) {
            ++total;
            const QColor c = image.pixelColor(x, y);
            if (c.saturation() > 60) ++coloured;  // not white, grey grid or black text
        }
    EXPECT_GT(coloured, total / 5);
    // The bottom of the stack is the weights, in the Breakdown tab's colour.
    const QColor weights = image.pixelColor(static_cast<int>(plot.center().x()), static_cast<int>(plot.bottom()) - 2);
    EXPECT_EQ(weights.rgb(), componentColor(Component::Weights).rgb());
}

TEST(TimelineTab, FollowsEditsAndKeepsTheLastValidTimelineWhenInvalid) {
    Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    s.training.micro_batch_size = 1;
    TabOn on(s);
    const int64_t one = on.tab.currentDrawing().timeline.peak_bytes();
    on.document.edit([](Scenario& x) { x.training.micro_batch_size = 2; });
    const int64_t two = on.tab.currentDrawing().timeline.peak_bytes();
    EXPECT_GT(two, one);
    EXPECT_EQ(two, on.document.result().peak.allocated_bytes);

    on.document.edit([](Scenario& x) { x.parallelism.tensor = 3; });  // 32 heads do not split over 3 ranks
    ASSERT_TRUE(on.document.stale());
    const TimelineDrawing& d = on.tab.currentDrawing();
    EXPECT_FALSE(d.staleNotice.isEmpty());
    EXPECT_EQ(d.timeline.peak_bytes(), two);
}

TEST(TimelineTab, TooltipNamesThePhaseAndTheLargestComponents) {
    TabOn on(gpt2Alone());
    const TimelineDrawing& d = on.tab.currentDrawing();
    const TimelinePlot plot(d, QRectF(on.tab.view()->rect()));
    // 12 blocks: forward samples end at 1..12, the loss at 13, backward blocks
    // at 15, 17, ..., 37 and the optimizer step at 39. Time 16 is the second
    // backward block, block 10 from 0: "layer 11" for people, who count from 1.
    const double x = plot.xOf(16.0);
    const QString tip = on.tab.view()->tooltipAt(QPointF(x, plot.plotArea().center().y()));
    EXPECT_TRUE(tip.contains("backward")) << tip.toStdString();
    EXPECT_TRUE(tip.contains("layer 11")) << tip.toStdString();
    EXPECT_TRUE(tip.contains("Weights")) << tip.toStdString();
    EXPECT_TRUE(on.tab.view()->tooltipAt(QPointF(2, 2)).isEmpty());
}

TEST(TimelineTab, ExportsPngSvgAndPdf) {
    TabOn on(presetScenario("llama3.1-405b-3d"));
    QTemporaryDir dir;
    EXPECT_TRUE(on.tab.exportTo(dir.filePath("t.png"), QSize(900, 560), 2.0));
    EXPECT_EQ(QImage(dir.filePath("t.png")).size(), QSize(1800, 1120));
    EXPECT_TRUE(on.tab.exportTo(dir.filePath("t.svg"), QSize(900, 560)));
    EXPECT_TRUE(QSvgRenderer(dir.filePath("t.svg")).isValid());
    EXPECT_TRUE(on.tab.exportTo(dir.filePath("t.pdf"), QSize(900, 560)));
    EXPECT_GT(QFileInfo(dir.filePath("t.pdf")).size(), 1000);
    EXPECT_FALSE(on.tab.exportTo(dir.filePath("t.jpg"), QSize(900, 560)));
    EXPECT_FALSE(on.tab.exportTo(dir.filePath("tiny.png"), QSize(10, 10)));
}

TEST(TimelineSnapshot, OpeningTheFixtureShowsItsPeakWorkedOutByHand) {
    TabOn on(gpt2Alone());
    ASSERT_TRUE(on.tab.openSnapshot(kSnapshots + "training_step_p4.pickle")) << on.tab.statusText().toStdString();
    const TimelineDrawing& d = on.tab.currentDrawing();
    ASSERT_TRUE(d.measured.has_value());
    // Before recording: 32 MiB of parameters and 64 MiB of Adam states. Then
    // two 20 MiB activations, 20 MiB logits, a 20 MiB softmax temporary (176),
    // freed (156); gradient 1 of 16 MiB (172), logits freed (152), gradient 2
    // of 32 MiB: 184 MiB, in backward.
    EXPECT_EQ(d.measured->allocated_peak_bytes, 184 * MiB);
    EXPECT_EQ(d.measured->peak_phase, "backward");
    // And the core reader says the same.
    Expected<MemorySnapshot> snap = loadMemorySnapshotFile((kSnapshots + "training_step_p4.pickle").toStdString());
    ASSERT_TRUE(snap.ok());
    Expected<SnapshotTimeline> curves = snapshotTimeline(*snap);
    ASSERT_TRUE(curves.ok());
    EXPECT_EQ(d.measured->allocated_peak_bytes, curves->allocated_peak_bytes);
    EXPECT_EQ(d.measured->reserved_peak_bytes, curves->reserved_peak_bytes);
    // Shown with the estimate's peak and the difference, in the picture and the status line.
    EXPECT_TRUE(d.measuredSummary.contains("measured peak 0.18 GiB (backward)")) << d.measuredSummary.toStdString();
    EXPECT_TRUE(d.measuredSummary.contains(QString::fromStdString(formatBytes(d.timeline.peak_bytes()))))
        << d.measuredSummary.toStdString();
    EXPECT_TRUE(on.tab.statusText().contains(d.measuredSummary)) << on.tab.statusText().toStdString();
    // The fixture's step is not this GPT-2 scenario: the status says so.
    EXPECT_TRUE(on.tab.statusText().contains("does not look like this scenario")) << on.tab.statusText().toStdString();
}

TEST(TimelineSnapshot, FixtureIsAlignedPhaseByPhaseOntoTheEstimatedStep) {
    TabOn on(gpt2Alone());
    ASSERT_TRUE(on.tab.openSnapshot(kSnapshots + "training_step_p4.pickle"));
    const TimelineDrawing& d = on.tab.currentDrawing();
    ASSERT_TRUE(d.measured.has_value());
    EXPECT_TRUE(d.measured->aligned_by_phase) << d.measured->alignment.toStdString();
    // The trace: events every 10 us from 1000 us; forward from e0, loss from
    // e3 (1030), backward from e8 (1080), optimizer step from e18 (1180) to
    // the last event e26 (1260). The estimate: forward [0, 12], loss [12, 13],
    // backward [13, 37], step [37, 39]. So e8 lands on 13, e18 on 37, e26 on
    // 39, and the peak e12 (1120) on 13 + 40/100 x 24 = 22.6.
    auto xOfAllocated = [&](double bytes) {
        for (const QPointF& p : d.measured->allocated)
            if (p.y() == bytes) return p.x();
        return -1.0;
    };
    EXPECT_NEAR(xOfAllocated(184.0 * MiB), 22.6, 1e-9);
    EXPECT_NEAR(d.measured->allocated.back().x(), 39.0, 1e-9);
    EXPECT_NEAR(d.measured->allocated.front().x(), 0.0, 1e-9);
    // e8 (the first gradient, 172 MiB) starts the backward.
    EXPECT_NEAR(xOfAllocated(172.0 * MiB), 13.0, 1e-9);
}

TEST(TimelineSnapshot, WithoutPhasesTheTraceIsStretchedAndSaysSo) {
    // A trace whose events carry no frames: nothing names a phase.
    SnapshotTimeline curves;
    curves.event_count = 3;
    curves.curve = {{-1, std::nullopt, 10, 20}, {0, std::nullopt, 30, 40}, {1, std::nullopt, 50, 60}, {2, std::nullopt, 10, 60}};
    curves.event_phases = {std::nullopt, std::nullopt, std::nullopt};
    curves.allocated_peak_bytes = 50;
    const MeasuredSnapshot measured{QStringLiteral("x.pickle"), 0, 1, curves};
    Expected<StepTimeline> estimated = stepTimeline(gpt2Alone());
    ASSERT_TRUE(estimated.ok());
    const MeasuredOverlay o = alignMeasured(measured, *estimated);
    EXPECT_FALSE(o.aligned_by_phase);
    EXPECT_TRUE(o.alignment.contains("stretched")) << o.alignment.toStdString();
    // Event positions 0..3 over the step's 0..39.
    ASSERT_EQ(o.allocated.size(), 4);
    EXPECT_DOUBLE_EQ(o.allocated[0].x(), 0.0);
    EXPECT_DOUBLE_EQ(o.allocated[1].x(), 13.0);
    EXPECT_DOUBLE_EQ(o.allocated[3].x(), 39.0);
    EXPECT_EQ(o.allocated_peak_bytes, 50);
}

TEST(TimelineSnapshot, HostileFilesAreReportedInTheTabWithoutACrash) {
    TabOn on(gpt2Alone());
    ASSERT_TRUE(on.tab.openSnapshot(kSnapshots + "training_step_p4.pickle"));
    for (const char* file : {"hostile/reduce_os_system.pickle", "hostile/global_os_system_p0.pickle", "hostile/not_a_pickle.bin",
                             "hostile/truncated.pickle", "hostile/deep_nesting.pickle", "hostile/huge_length.pickle",
                             "hostile/self_reference.pickle", "no-such-file.pickle"}) {
        EXPECT_FALSE(on.tab.openSnapshot(kSnapshots + file)) << file;
        EXPECT_TRUE(on.tab.statusText().startsWith("Could not read the snapshot")) << file << ": " << on.tab.statusText().toStdString();
        // The snapshot that was open stays drawn.
        EXPECT_TRUE(on.tab.currentDrawing().measured.has_value()) << file;
    }
    on.tab.removeSnapshot();
    EXPECT_FALSE(on.tab.currentDrawing().measured.has_value());
    EXPECT_FALSE(on.tab.statusText().startsWith("Could not"));
}

TEST(TimelinePeakLabel, NamesTheMomentOfThePeak) {
    StepTimeline t;
    TimelineSample s;
    s.time = 40;
    s.phase = Phase::Backward;
    s.layer = 31;
    s.microbatch = 0;
    s.bytes[Component::Activations] = static_cast<int64_t>(54.3 * 1024 * MiB);
    t.samples = {s};
    EXPECT_EQ(peakLabel(t, Units::GiB), QString::fromUtf8("peak 54.30 GiB · backward, layer 32, micro-batch 1"));
}

}  // namespace
}  // namespace trainmem::ui

namespace trainmem::ui {
namespace {

using namespace test;

TEST(TimelineInWindow, IsATabThatFollowsTheWindowsUnitsAndViewChoice) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    TimelineTab* tab = window->timelineTab();
    ASSERT_NE(tab, nullptr);
    EXPECT_GE(window->tabs()->indexOf(tab), 0);
    window->showView(ChartView::Timeline);
    EXPECT_EQ(window->tabs()->currentWidget(), tab);
    window->setUnits(Units::GB);
    EXPECT_EQ(tab->currentDrawing().units, Units::GB);
    EXPECT_TRUE(tab->currentDrawing().capacityLabel.endsWith(" GB"));
    window->setUnits(Units::GiB);
    EXPECT_NE(window->layoutFinder(), nullptr);
}

struct AppRun {
    int status;
    QString err;
};

AppRun runApp(const QStringList& args) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("QT_QPA_PLATFORM");  // the app must choose offscreen by itself
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(TRAINMEM_APP_EXE), args + QStringList{"--presets", TRAINMEM_PRESETS_DIR});
    EXPECT_TRUE(p.waitForFinished(60000));
    QString err;
    for (const QString& line : QString::fromLocal8Bit(p.readAllStandardError()).split('\n', Qt::SkipEmptyParts))
        if (!line.startsWith("QStandardPaths:")) err += line + '\n';
    return {p.exitCode(), err};
}

TEST(TimelineHeadlessExport, WritesTheTimelineWithASnapshotAndRefusesABadOne) {
    QTemporaryDir dir;
    const QString out = dir.filePath("timeline.png");
    const AppRun ok = runApp({"--preset", "llama3.1-405b-3d", "--view", "timeline", "--snapshot",
                              kSnapshots + "training_step_p4.pickle", "--width", "1000", "--height", "600", "--export", out});
    EXPECT_EQ(ok.status, 0) << ok.err.toStdString();
    EXPECT_EQ(QImage(out).size(), QSize(1000, 600));
    const AppRun svg = runApp({"--preset", "llama-3.1-8b", "--view", "timeline", "--export", dir.filePath("t.svg")});
    EXPECT_EQ(svg.status, 0) << svg.err.toStdString();
    EXPECT_TRUE(QSvgRenderer(dir.filePath("t.svg")).isValid());

    const QString bad = dir.filePath("bad.png");
    const AppRun hostile = runApp({"--preset", "llama-3.1-8b", "--view", "timeline", "--snapshot",
                                   kSnapshots + "hostile/reduce_os_system.pickle", "--export", bad});
    EXPECT_EQ(hostile.status, 2);
    EXPECT_EQ(hostile.err.count('\n'), 1) << hostile.err.toStdString();
    EXPECT_TRUE(hostile.err.startsWith("trainmem: ")) << hostile.err.toStdString();
    EXPECT_FALSE(QFile::exists(bad));
}

}  // namespace
}  // namespace trainmem::ui
