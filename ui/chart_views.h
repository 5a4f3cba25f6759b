#pragma once
// The four views of an estimate as chart specs: arranging the core's numbers
// into bars, call-outs and labels, never computing memory.
#include <vector>

#include <QString>

#include "core/account/estimate.h"
#include "core/report/report.h"
#include "core/scenario/scenario.h"
#include "ui/chart_spec.h"
#include "ui/pinned_scenario.h"

namespace trainmem::ui {

// Timeline is drawn by TimelineView (timeline_plot.h), not from a ChartSpec.
// StepTime and StepTimeStages are drawn by ui/step_time_views.h.
enum class ChartView { Breakdown, Stages, StepTime, StepTimeStages, Optimizers, Compare, Timeline };
// "breakdown", "stages", "steptime", "steptime-stages", "optimizers", "compare", "timeline"
QString chartViewKey(ChartView view);
std::optional<ChartView> parseChartView(const QString& key);

enum class OptimizerScale { Bytes, TimesParams };  // GiB per GPU, or buffers per parameter (seed figure)

double unitBytes(Units units);
// A number as every chart, table and export of the app prints it: the core's
// formatNumber (a tie rounded away from zero, never cut).
QString numberText(double value, int decimals);
QString unitName(Units units);
// "8 × H100-80GB (DP 2, TP 4+SP, ZeRO-1)": GPUs and parallel degrees in one phrase.
QString layoutPhrase(const Scenario& s);

// One GPU of the heaviest stage at its peak, like the seed figure: a segment
// per component (only those > 0), call-outs, capacity line, worked example.
// `stale` non-empty draws the banner over the (older) result.
ChartSpec breakdownChart(const Scenario& scenario, const Estimate& estimate, Units units, const QString& stale = {});

// One bar per pipeline stage.
ChartSpec stagesChart(const Scenario& scenario, const Estimate& estimate, const std::vector<StageEstimate>& stages,
                      Units units, const QString& stale = {});

// The scenario under every optimizer of trainmem::allOptimizers().
struct OptimizerOutcome {
    OptimizerKind optimizer;
    Scenario scenario;
    std::optional<Estimate> estimate;  // nullopt when this optimizer makes the scenario invalid
    QString error;
};
std::vector<OptimizerOutcome> estimateEveryOptimizer(const Scenario& scenario);
ChartSpec optimizerChart(const Scenario& scenario, const std::vector<OptimizerOutcome>& outcomes,
                         OptimizerScale scale, Units units);

// Pinned scenarios (ui/pinned_scenario.h) side by side.
// `base`: the pin the table's changes are measured against; with
// `with_table` the figure carries the table under its plot (exports).
ChartSpec compareChart(const std::vector<PinnedScenario>& pins, Units units, int base = 0, bool with_table = false);
// The comparison as rows: the settings that differ, every component and the
// device total per pin with its change against `base`, and whether it fits.
// The Compare tab's table, its figure and its clipboard copies all read it.
FigureTable comparisonTable(const std::vector<PinnedScenario>& pins, int base, Units units);
QString figureTableMarkdown(const FigureTable& table);
QString figureTableCsv(const FigureTable& table);  // sizes in bytes

// "training.micro_batch_size: 1 | 2 | 4" for every setting that differs.
QStringList scenarioDifferences(const std::vector<Scenario>& scenarios);
// The same as key and values, one value per scenario ("-" where it has none),
// found by comparing scenarioToJson key by key.
struct SettingDifference {
    QString key;
    QStringList values;
};
std::vector<SettingDifference> settingDifferences(const std::vector<Scenario>& scenarios);
// Each pin's caption under its bar: the values of the settings that differ
// ("optimizer adamw-8bit"), or its model and layout when nothing differs.
std::vector<QStringList> pinCaptions(const std::vector<Scenario>& scenarios);

// The segments of one stacked bar: the allocator's components at the peak,
// then what the device needs beyond them. Shared by every view.
struct BarSegment {
    QString key;
    QString name;
    QColor color;
    int64_t bytes = 0;
    std::optional<Component> component;  // nullopt for the device layers
};
std::vector<BarSegment> barSegments(const StageEstimate& stage);

}  // namespace trainmem::ui
