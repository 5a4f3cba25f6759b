#pragma once
// "Where the step's time goes": the core's modelled step time
// (core/steptime/step_time.h, docs/step-time.md) as chart specs, beside the
// memory views of chart_views.h. Arranges the numbers the document already
// computed; never times anything itself.
#include <vector>

#include <QString>

#include "core/scenario/scenario.h"
#include "core/steptime/step_time.h"
#include "ui/chart_spec.h"

namespace trainmem::ui {

// The unit a chart of times is drawn in: seconds, or milliseconds when the
// largest bar is under a second (an axis of "0.0 0.1 0.2 s" reads worse).
struct TimeUnit {
    double seconds = 1;  // one unit, in seconds
    QString name;        // "s", "ms"
    int decimals = 0;    // axis ticks
};
TimeUnit timeUnitFor(double largest_seconds);
// "4.21 s", "312.5 ms": the CLI's rule, through the app's one rounding.
QString secondsText(double seconds);
// "Step 4.21 s · 5,120 tokens/s/GPU · MFU 41.3%"
QString throughputPhrase(const StepTime& time);
// The part's name as the chart and the table say it ("FSDP gathers"):
// timeComponentName without "(exposed)", which the table's columns say.
QString timePartName(TimeComponent part);
QColor timePartColor(TimeComponent part);
bool isCommunication(TimeComponent part);

// One stacked bar for the step of the slowest stage: a segment per part
// with a call-out (its time, its share, what it is), the exposed and
// overlapped time of every collective in a table under the plot, the
// assumptions in the footer.
ChartSpec stepTimeChart(const Scenario& scenario, const StepTimeModel& model, const StepTime& time,
                        const QString& stale = {});
// One bar per pipeline stage: one micro-batch's forward, backward,
// recomputation and exposed communication; the slowest stage marked.
ChartSpec stageTimesChart(const Scenario& scenario, const StepTimeModel& model, const StepTime& time,
                          const std::vector<StageTime>& stages, const QString& stale = {});
// The model's assumptions for this GPU and recipe (the footer's line, and
// the tab's tooltip in full): achieved shares of the peaks, the links,
// what is not modelled.
QString stepTimeAssumptions(const Scenario& scenario, const StepTimeModel& model);
QString stepTimeAssumptionsShort(const StepTimeModel& model);

}  // namespace trainmem::ui
