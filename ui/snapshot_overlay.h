#pragma once
// A measured PyTorch memory snapshot set over the estimated step timeline:
// the core reads the file and rebuilds its allocated and reserved curves
// (core/snapshot/memory_snapshot.h); this only places those curves on the estimate's
// time axis so the two shapes can be compared, and states the peaks.
#include <cstdint>
#include <optional>
#include <vector>

#include <QPointF>
#include <QString>
#include <QStringList>
#include <QVector>

#include "core/base/error.h"
#include "core/snapshot/memory_snapshot.h"
#include "core/report/report.h"
#include "core/account/timeline.h"

namespace trainmem::ui {

// What was read from one snapshot file, kept so it can be re-aligned
// whenever the estimated timeline changes.
struct MeasuredSnapshot {
    QString path;
    int64_t device = 0;
    int devices = 1;              // devices with a trace in the file
    SnapshotTimeline curves;      // one point per event, never downsampled
};

// Errors name the file: "snap.pickle: refusing opcode REDUCE at byte 45: ...".
Expected<MeasuredSnapshot> loadMeasuredSnapshot(const QString& path);

// One contiguous stretch of a step in one coarse phase (micro-batches are
// not told apart: a measured trace does not say which one it is in).
struct PhaseSpan {
    Phase phase = Phase::Forward;
    double begin = 0;  // estimated step time, or the measured curve's own x
    double end = 0;
};

// The estimate's phases in step order, consecutive samples of the same
// phase merged. Sample i covers (time[i-1], time[i]], the first from 0.
std::vector<PhaseSpan> estimatedPhaseSpans(const StepTimeline& timeline);

// The measured curves on the estimate's time axis.
struct MeasuredOverlay {
    QString source;               // the file's name
    int64_t device = 0;
    QVector<QPointF> allocated;   // x: estimated step time, y: bytes
    QVector<QPointF> reserved;
    int64_t allocated_peak_bytes = 0;  // the reader's, over the whole trace
    int64_t reserved_peak_bytes = 0;
    QString peak_phase;           // where the measured allocated peak happened ("backward", "unknown")
    bool aligned_by_phase = false;
    QString alignment;            // how x was mapped, in words
    QStringList warnings;         // the reader's, in words
};

// Aligns by phase when the trace's call stacks give the same phase sequence
// as the estimate (or contain it, then the last such window: later steps
// have their optimizer states allocated already); otherwise stretches the
// whole trace over the step and says so.
MeasuredOverlay alignMeasured(const MeasuredSnapshot& measured, const StepTimeline& estimated);

// "measured 12.30 GiB (backward) · estimated 11.80 GiB · estimate − measured −0.50 GiB (−4.1%)"
QString peakComparison(int64_t measured_bytes, const QString& measured_phase, int64_t estimated_bytes, Units units);

}  // namespace trainmem::ui
