#include "ui/timeline_drawing.h"

#include <algorithm>
#include <vector>

#include <QObject>

#include "core/scenario/batch.h"
#include "core/account/estimate.h"
#include "core/snapshot/memory_snapshot.h"
#include "ui/chart_views.h"
#include "ui/component_palette.h"

namespace trainmem::ui {

namespace {

QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }
QString bytesText(int64_t bytes, Units units) { return q(formatBytes(bytes, units)); }

// "Llama-3.1-8B · 8 × H100-80GB (DP 8, ZeRO-3) · micro-batch 2 × 4 per step · 1F1B"
QString scenarioPhrase(const Scenario& s) {
    const ParallelConfig& p = s.parallelism;
    QStringList parts;
    const std::string& name = s.model.name.empty() ? s.name : s.model.name;
    if (!name.empty()) parts << QString::fromStdString(name);
    parts << layoutPhrase(s);
    const int64_t m = microbatchesPerStep(s);
    parts << QStringLiteral("micro-batch %1 × %2 per step").arg(s.training.micro_batch_size).arg(m);
    if (p.pipeline > 1) {
        QString schedule = q(scheduleName(p.schedule));
        if (p.schedule == PipelineSchedule::Interleaved1F1B) schedule += QStringLiteral(" v%1").arg(p.virtual_stages);
        parts << schedule;
    }
    if (s.training.checkpointing != Checkpointing::None)
        parts << QStringLiteral("%1 recomputation").arg(q(checkpointingName(s.training.checkpointing)));
    return parts.join(QStringLiteral(" · "));
}

}  // namespace

Expected<TimelineDrawing> timelineDrawing(const Scenario& scenario, std::optional<int64_t> stage, Units units) {
    Expected<StepTimeline> timeline = stepTimeline(scenario, stage);
    if (!timeline) return timeline.error();
    TimelineDrawing d;
    d.timeline = std::move(timeline).value();
    d.stages = scenario.parallelism.pipeline;
    d.units = units;
    d.title = d.stages > 1 ? QObject::tr("Memory through one training step — stage %1 of %2, per GPU")
                                 .arg(d.timeline.stage + 1)
                                 .arg(d.stages)
                           : QObject::tr("Memory through one training step, per GPU");
    d.subtitle = scenarioPhrase(scenario);
    d.capacityLabel = QObject::tr("%1 capacity %2")
                          .arg(QString::fromStdString(scenario.hardware.gpu), bytesText(d.timeline.capacity_bytes, units));
    return d;
}

QString peakLabel(const StepTimeline& t, Units units) {
    if (t.samples.empty()) return {};
    const TimelineSample& s = t.samples[t.peak_index];
    QStringList where{q(phaseName(s.phase))};
    // Layers and micro-batches counted from 1 for people, as stages are.
    if (s.layer >= 0) where << QObject::tr("layer %1").arg(s.layer + 1);
    if (s.microbatch >= 0) where << QObject::tr("micro-batch %1").arg(s.microbatch + 1);
    return QObject::tr("peak %1 · %2").arg(bytesText(t.peak_bytes(), units), where.join(", "));
}

QString sampleTooltip(const TimelineSample& s, Units units) {
    QStringList head{q(phaseName(s.phase))};
    if (s.microbatch >= 0) head << QObject::tr("micro-batch %1").arg(s.microbatch + 1);
    if (s.layer >= 0) head << QObject::tr("layer %1").arg(s.layer + 1);
    QString tip = QStringLiteral("<b>%1</b><br>").arg(head.join(QStringLiteral(" · ")).toHtmlEscaped());
    tip += QObject::tr("allocated %1").arg(bytesText(s.bytes.total(), units));
    const auto all = allComponents();
    std::vector<Component> order(all.begin(), all.end());
    std::stable_sort(order.begin(), order.end(), [&](Component a, Component b) { return s.bytes[a] > s.bytes[b]; });
    for (size_t k = 0; k < std::min<size_t>(4, order.size()) && s.bytes[order[k]] > 0; ++k)
        tip += QStringLiteral("<br><span style=\"color:%1\">■</span> %2 %3")
                   .arg(componentColor(order[k]).name(), q(componentName(order[k])).toHtmlEscaped(),
                        bytesText(s.bytes[order[k]], units));
    return tip;
}

void addMeasured(TimelineDrawing& drawing, const MeasuredSnapshot& measured) {
    if (drawing.empty()) return;
    drawing.measured = alignMeasured(measured, drawing.timeline);
    drawing.measuredSummary = peakComparison(drawing.measured->allocated_peak_bytes, drawing.measured->peak_phase,
                                             drawing.timeline.peak_bytes(), drawing.units);
    if (const auto mismatch = snapshotMismatch(drawing.measured->allocated_peak_bytes, drawing.timeline.peak_bytes()))
        drawing.measured->warnings << QString::fromStdString(*mismatch);
}

}  // namespace trainmem::ui
