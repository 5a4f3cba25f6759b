#include "ui/snapshot_overlay.h"

#include <algorithm>
#include <cmath>

#include <QFileInfo>
#include <QObject>

#include "core/report/report.h"

namespace trainmem::ui {

namespace {

QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// The measured curve's own x: torch's microsecond clock when every event has
// one (torch >= 2.1), else the event's position in the trace.
std::vector<double> measuredX(const SnapshotTimeline& t) {
    const std::vector<MemoryCurvePoint>& c = t.curve;
    const bool timed = c.size() > 1 && std::all_of(c.begin() + 1, c.end(), [](const MemoryCurvePoint& p) {
                           return p.time_us.has_value();
                       });
    std::vector<double> x(c.size());
    for (size_t i = 0; i < c.size(); ++i) {
        if (timed)
            x[i] = static_cast<double>(i == 0 ? *c[1].time_us : *c[i].time_us);
        else
            x[i] = static_cast<double>(i);
    }
    return x;
}

// Runs of the same known phase over the trace's events; events whose stack
// names no phase (allocator internals, no frames recorded) stay in the run
// they occur in. Curve point i + 1 is event i.
std::vector<PhaseSpan> measuredPhaseSpans(const SnapshotTimeline& t, const std::vector<double>& x) {
    std::vector<PhaseSpan> spans;
    for (size_t e = 0; e < t.event_phases.size() && e + 1 < x.size(); ++e) {
        const std::optional<Phase>& phase = t.event_phases[e];
        if (!phase) continue;
        if (spans.empty() || spans.back().phase != *phase) {
            if (!spans.empty()) spans.back().end = x[e + 1];
            spans.push_back({*phase, spans.empty() ? x.front() : x[e + 1], x[e + 1]});
        }
    }
    if (!spans.empty()) spans.back().end = x.back();
    return spans;
}

// A measured trace often cannot tell the loss from the forward (the loss is
// computed inside the model's forward, or in a function named otherwise):
// the coarser sequence with loss folded into forward is the second try.
std::vector<PhaseSpan> lossFoldedIntoForward(std::vector<PhaseSpan> spans) {
    std::vector<PhaseSpan> out;
    for (PhaseSpan s : spans) {
        if (s.phase == Phase::Loss) s.phase = Phase::Forward;
        if (!out.empty() && out.back().phase == s.phase)
            out.back().end = s.end;
        else
            out.push_back(s);
    }
    return out;
}

bool samePhases(const std::vector<PhaseSpan>& a, size_t from, const std::vector<PhaseSpan>& b) {
    if (from + b.size() > a.size()) return false;
    for (size_t i = 0; i < b.size(); ++i)
        if (a[from + i].phase != b[i].phase) return false;
    return true;
}

// The last window of `measured` with the estimate's phase sequence.
std::optional<size_t> lastMatchingWindow(const std::vector<PhaseSpan>& measured, const std::vector<PhaseSpan>& estimated) {
    if (estimated.empty() || measured.size() < estimated.size()) return std::nullopt;
    for (size_t from = measured.size() - estimated.size() + 1; from-- > 0;)
        if (samePhases(measured, from, estimated)) return from;
    return std::nullopt;
}

QString phaseSequence(const std::vector<PhaseSpan>& spans) {
    QStringList names;
    for (const PhaseSpan& s : spans) names << q(phaseName(s.phase));
    if (names.size() > 8) return names.mid(0, 6).join(", ") + QStringLiteral(", … (%1 spans)").arg(names.size());
    return names.join(", ");
}

double lerp(double x, double x0, double x1, double y0, double y1) {
    if (!(x1 > x0)) return y0;
    return y0 + (x - x0) / (x1 - x0) * (y1 - y0);
}

}  // namespace

Expected<MeasuredSnapshot> loadMeasuredSnapshot(const QString& path) {
    Expected<MemorySnapshot> snapshot = loadMemorySnapshotFile(path.toStdString());
    if (!snapshot) return snapshot.error();
    const std::vector<int64_t> devices = snapshotDevices(*snapshot);
    if (devices.empty())
        return Error{QFileInfo(path).fileName().toStdString(), "the snapshot has no device with a trace or segments"};
    // The first device with a trace: a trace is what makes a curve.
    int64_t device = devices.front();
    for (int64_t d : devices) {
        if (static_cast<size_t>(d) < snapshot->device_traces.size() && !snapshot->device_traces[static_cast<size_t>(d)].empty()) {
            device = d;
            break;
        }
    }
    TimelineOptions options;
    options.device = device;
    Expected<SnapshotTimeline> curves = snapshotTimeline(*snapshot, options);
    if (!curves) {
        Error e = curves.error();
        e.field = QFileInfo(path).fileName().toStdString() + (e.field.empty() ? "" : ": " + e.field);
        return e;
    }
    return MeasuredSnapshot{path, device, static_cast<int>(devices.size()), std::move(curves).value()};
}

std::vector<PhaseSpan> estimatedPhaseSpans(const StepTimeline& timeline) {
    std::vector<PhaseSpan> spans;
    double previous = 0;
    for (const TimelineSample& s : timeline.samples) {
        if (spans.empty() || spans.back().phase != s.phase)
            spans.push_back({s.phase, previous, s.time});
        else
            spans.back().end = s.time;
        previous = s.time;
    }
    return spans;
}

MeasuredOverlay alignMeasured(const MeasuredSnapshot& measured, const StepTimeline& estimated) {
    const SnapshotTimeline& t = measured.curves;
    MeasuredOverlay o;
    o.source = QFileInfo(measured.path).fileName();
    o.device = measured.device;
    o.allocated_peak_bytes = t.allocated_peak_bytes;
    o.reserved_peak_bytes = t.reserved_peak_bytes;
    o.peak_phase = QString::fromStdString(t.peak_phase);
    for (const std::string& w : t.warnings) o.warnings << QString::fromStdString(w);
    if (t.curve.empty() || estimated.samples.empty()) return o;

    const std::vector<double> x = measuredX(t);
    const double step_end = estimated.samples.back().time;
    auto add = [&](double time, size_t i) {
        o.allocated << QPointF(time, static_cast<double>(t.curve[i].allocated_bytes));
        o.reserved << QPointF(time, static_cast<double>(t.curve[i].reserved_bytes));
    };

    std::vector<PhaseSpan> est = estimatedPhaseSpans(estimated);
    std::vector<PhaseSpan> got = measuredPhaseSpans(t, x);
    std::optional<size_t> window = lastMatchingWindow(got, est);
    bool folded = false;
    if (!window) {
        const std::vector<PhaseSpan> est_folded = lossFoldedIntoForward(est);
        const std::vector<PhaseSpan> got_folded = lossFoldedIntoForward(got);
        if (const auto w = lastMatchingWindow(got_folded, est_folded)) {
            est = est_folded;
            got = got_folded;
            window = w;
            folded = true;
        }
    }

    if (window) {
        // Piecewise linear: each measured phase span onto the estimate's span
        // of the same phase, so forward lines up with forward even when the
        // measured backward took twice as long as the model's 2 x forward.
        const size_t first = *window;
        const double begin = got[first].begin, end = got[first + est.size() - 1].end;
        size_t span = first;
        bool started = false;
        for (size_t i = 0; i < t.curve.size(); ++i) {
            if (x[i] < begin) continue;
            if (x[i] > end) break;
            if (!started && i > 0) add(est.front().begin, i - 1);  // the level the window starts from
            started = true;
            while (span + 1 < first + est.size() && x[i] >= got[span + 1].begin) ++span;
            const PhaseSpan& m = got[span];
            const PhaseSpan& e = est[span - first];
            add(lerp(x[i], m.begin, m.end, e.begin, e.end), i);
        }
        o.aligned_by_phase = true;
        const size_t steps = got.size() / std::max<size_t>(1, est.size());
        o.alignment = QObject::tr("aligned by phase (%1)%2%3")
                          .arg(phaseSequence(est))
                          .arg(folded ? QObject::tr("; the trace's loss counted as forward") : QString())
                          .arg(steps > 1 ? QObject::tr("; the last of %1 steps in the trace").arg(steps) : QString());
        return o;
    }

    // No phase match: the whole trace over the whole step.
    const double x0 = x.front(), x1 = x.back();
    for (size_t i = 0; i < t.curve.size(); ++i) add(x1 > x0 ? lerp(x[i], x0, x1, 0, step_end) : 0.0, i);
    if (t.curve.size() == 1) add(step_end, 0);
    o.alignment = got.empty() ? QObject::tr("stretched over the step: the trace's call stacks name no phase")
                              : QObject::tr("stretched over the step: the trace's phases (%1) differ from the estimate's (%2)")
                                    .arg(phaseSequence(got), phaseSequence(est));
    return o;
}

QString peakComparison(int64_t measured_bytes, const QString& measured_phase, int64_t estimated_bytes, Units units) {
    const int64_t diff = estimated_bytes - measured_bytes;
    const QString sign = diff > 0 ? QStringLiteral("+") : diff < 0 ? QStringLiteral("−") : QString();
    const QString percent = measured_bytes > 0
                                ? QStringLiteral(" (%1%2%)").arg(sign).arg(std::abs(100.0 * static_cast<double>(diff) /
                                                                                    static_cast<double>(measured_bytes)),
                                                                           0, 'f', 1)
                                : QString();
    return QObject::tr("measured peak %1 (%2) · estimated %3 · estimate − measured %4%5%6")
        .arg(q(formatBytes(measured_bytes, units)), measured_phase, q(formatBytes(estimated_bytes, units)), sign,
             q(formatBytes(std::abs(diff), units)), percent);
}

}  // namespace trainmem::ui
