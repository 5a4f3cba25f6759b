#pragma once
// What the Timeline tab draws, as plain values: one step of one pipeline
// stage from the core's stepTimeline(), the texts around it, and a measured
// snapshot's curves placed on the same time axis. Arranging numbers, never
// computing memory; TimelinePlot (timeline_plot.h) paints it.
#include <optional>

#include <QString>

#include "core/base/error.h"
#include "core/report/report.h"
#include "core/scenario/scenario.h"
#include "core/account/timeline.h"
#include "ui/snapshot_overlay.h"

namespace trainmem::ui {

struct TimelineDrawing {
    StepTimeline timeline;     // no samples: draw emptyNotice instead
    int64_t stages = 1;        // pipeline stages of the scenario
    Units units = Units::GiB;
    QString title;
    QString subtitle;
    QString capacityLabel;     // "H100-80GB capacity 79.65 GiB"
    QString staleNotice;       // non-empty: the grey banner, data faded
    QString emptyNotice;
    std::optional<MeasuredOverlay> measured;
    QString measuredSummary;   // peakComparison() of the overlay

    bool empty() const { return timeline.samples.empty(); }
};

// The drawing of `stage` (nullopt: the heaviest) of a valid scenario.
Expected<TimelineDrawing> timelineDrawing(const Scenario& scenario, std::optional<int64_t> stage, Units units);

// Sets a measured snapshot over the drawing's timeline, with the peaks compared.
void addMeasured(TimelineDrawing& drawing, const MeasuredSnapshot& measured);

// "peak 54.30 GiB · backward, layer 31, micro-batch 0"
QString peakLabel(const StepTimeline& timeline, Units units);
// Phase, micro-batch, layer, total and the largest components at a sample.
QString sampleTooltip(const TimelineSample& sample, Units units);

}  // namespace trainmem::ui
