// Rebuilding allocated and reserved memory over a snapshot's trace (see
// memory_snapshot.h). The bookkeeping follows torch's own viewer,
// torch/utils/viz/MemoryViz.js: process_alloc_data seeds the start with
// blocks freed before their allocation was recorded and with blocks alive at
// the dump that the trace never mentions; simulate_memory merges and splits
// segment_map/segment_unmap ranges of expandable segments.
#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>

#include "core/snapshot/memory_snapshot.h"

namespace trainmem {

namespace {

bool containsNoCase(std::string_view hay, std::string_view needle) {
    return std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
           }) != hay.end();
}

bool isBackwardFrame(const StackFrame& f) {
    // Megatron's forward_backward_* schedules wrap the forward too.
    return containsNoCase(f.name, "backward") && !containsNoCase(f.name, "forward_backward");
}

bool isOptimizerFrame(const StackFrame& f) {
    return f.name == "step" || containsNoCase(f.name, "optimizer") || containsNoCase(f.filename, "/optim");
}

bool isLossFrame(const StackFrame& f) {
    return containsNoCase(f.name, "loss") || containsNoCase(f.name, "cross_entropy");
}

// Reserved ranges the trace has mapped and not yet unmapped, as half-open
// [start, end) intervals, adjacent ones merged.
class MappedRanges {
public:
    void add(uint64_t start, uint64_t end) {
        auto it = ranges_.upper_bound(start);
        if (it != ranges_.begin() && std::prev(it)->second >= start) --it;
        while (it != ranges_.end() && it->first <= end) {
            start = std::min(start, it->first);
            end = std::max(end, it->second);
            it = ranges_.erase(it);
        }
        ranges_.emplace(start, end);
    }

    // Removes [start, end) and returns how many of its bytes were mapped.
    uint64_t remove(uint64_t start, uint64_t end) {
        uint64_t removed = 0;
        auto it = firstTouching(start);
        while (it != ranges_.end() && it->first < end) {
            const auto [s, e] = *it;
            it = ranges_.erase(it);
            removed += std::min(e, end) - std::max(s, start);
            if (s < start) ranges_.emplace(s, start);
            if (e > end) {
                ranges_.emplace(end, e);
                break;
            }
        }
        return removed;
    }

    // Whether [start, end) lies inside one mapped range (adjacent ranges are
    // merged, so inside the union is inside one).
    bool covers(uint64_t start, uint64_t end) const {
        if (end < start) return false;
        auto it = ranges_.upper_bound(start);
        if (it == ranges_.begin()) return false;
        --it;
        return it->first <= start && end <= it->second;
    }

    const std::map<uint64_t, uint64_t>& ranges() const { return ranges_; }

private:
    std::map<uint64_t, uint64_t> ranges_;  // start -> end

    std::map<uint64_t, uint64_t>::const_iterator firstTouching(uint64_t start) const {
        auto it = ranges_.upper_bound(start);
        if (it != ranges_.begin() && std::prev(it)->second > start) --it;
        return it;
    }
};

// The mapped ranges at the end of the trace, for many overlap queries: with
// the bytes mapped below each range's start summed up front, a query is two
// binary searches, so n segments against m ranges take O((n + m) log m)
// instead of walking every range each segment overlaps (issue 15, D07).
class MappedPrefix {
public:
    explicit MappedPrefix(const MappedRanges& mapped) {
        starts_.reserve(mapped.ranges().size());
        uint64_t below = 0;
        for (const auto& [start, end] : mapped.ranges()) {
            starts_.push_back(start);
            ends_.push_back(end);
            below_.push_back(below);
            below += end - start;  // disjoint ranges of a 64-bit space: wraps only past 2^64, and differences stay exact
        }
    }

    // Bytes of [start, end) that are mapped.
    uint64_t overlap(uint64_t start, uint64_t end) const { return end <= start ? 0 : mappedBelow(end) - mappedBelow(start); }

private:
    std::vector<uint64_t> starts_, ends_, below_;

    // Mapped bytes at addresses < x.
    uint64_t mappedBelow(uint64_t x) const {
        const auto it = std::upper_bound(starts_.begin(), starts_.end(), x);
        if (it == starts_.begin()) return 0;
        const size_t i = static_cast<size_t>(it - starts_.begin()) - 1;
        return below_[i] + (std::min(ends_[i], x) - starts_[i]);
    }
};

// Bounds every running sum so baseline + change can never overflow int64.
constexpr int64_t kMaxRunningBytes = int64_t(1) << 60;

bool withinBounds(int64_t v) { return v >= -kMaxRunningBytes && v <= kMaxRunningBytes; }

size_t firstMax(const std::vector<MemoryCurvePoint>& curve, int64_t MemoryCurvePoint::*member) {
    size_t best = 0;
    for (size_t i = 1; i < curve.size(); ++i) {
        if (curve[i].*member > curve[best].*member) best = i;
    }
    return best;
}

std::string bytesText(int64_t bytes) { return std::to_string(bytes) + " B"; }

}  // namespace

std::optional<Phase> phaseOfCallStack(const CallStack& stack) {
    // Anything under a backward is backward, recomputation under
    // checkpointing included; otherwise the innermost telling frame decides,
    // so a module's forward inside HF's compute_loss or inside Lightning's
    // optimizer closure still reads as forward.
    if (std::any_of(stack.begin(), stack.end(), isBackwardFrame)) return Phase::Backward;
    for (const StackFrame& f : stack) {
        if (isOptimizerFrame(f)) return Phase::OptimizerStep;
        if (isLossFrame(f)) return Phase::Loss;
        if (containsNoCase(f.name, "forward")) return Phase::Forward;
    }
    return std::nullopt;
}

std::string_view phaseLabel(std::optional<Phase> phase) { return phase ? phaseName(*phase) : "unknown"; }

Expected<std::vector<MemoryCurvePoint>> downsampleCurve(const std::vector<MemoryCurvePoint>& curve, size_t max_points) {
    if (max_points == 0 || curve.size() <= max_points) return curve;
    if (max_points < 4) {
        return Error{"max_points", "must be 0 (every point) or at least 4, so the first and last points and both peaks survive"};
    }
    const size_t n = curve.size();
    std::vector<size_t> keep{0, n - 1, firstMax(curve, &MemoryCurvePoint::allocated_bytes),
                             firstMax(curve, &MemoryCurvePoint::reserved_bytes)};
    std::sort(keep.begin(), keep.end());
    keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
    const size_t runs = max_points - keep.size();
    const size_t interior = n - 2;  // points 1 .. n-2
    for (size_t r = 0; r < runs; ++r) {
        // Even split of the interior without multiplying large numbers.
        const size_t lo = 1 + r * (interior / runs) + std::min(r, interior % runs);
        const size_t hi = 1 + (r + 1) * (interior / runs) + std::min(r + 1, interior % runs);
        size_t best = lo;
        for (size_t i = lo + 1; i < hi; ++i) {
            if (curve[i].allocated_bytes > curve[best].allocated_bytes) best = i;
        }
        if (lo < hi) keep.push_back(best);
    }
    std::sort(keep.begin(), keep.end());
    keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
    std::vector<MemoryCurvePoint> out;
    out.reserve(keep.size());
    for (size_t i : keep) out.push_back(curve[i]);
    return out;
}

Expected<SnapshotTimeline> snapshotTimeline(const MemorySnapshot& snapshot, const TimelineOptions& options) {
    const std::vector<int64_t> devices = snapshotDevices(snapshot);
    if (!std::binary_search(devices.begin(), devices.end(), options.device)) {
        std::string listed;
        for (int64_t d : devices) listed += (listed.empty() ? "" : ", ") + std::to_string(d);
        return Error{"device", "device " + std::to_string(options.device) +
                                   " has no trace and no segments; this snapshot has " +
                                   (listed.empty() ? std::string("none") : "device(s) " + listed)};
    }
    if (options.max_points != 0 && options.max_points < 4) {
        return Error{"max_points", "must be 0 (every point) or at least 4, so the first and last points and both peaks survive"};
    }
    static const std::vector<TraceEvent> kNoEvents;
    const auto d = static_cast<size_t>(options.device);
    const auto& events = d < snapshot.device_traces.size() ? snapshot.device_traces[d] : kNoEvents;
    const std::string trace_path = "device_traces[" + std::to_string(d) + "]";

    std::vector<std::optional<Phase>> stack_phase;
    stack_phase.reserve(snapshot.stacks.size());
    for (const CallStack& s : snapshot.stacks) stack_phase.push_back(phaseOfCallStack(s));

    SnapshotTimeline t;
    t.device = options.device;
    t.event_count = events.size();
    t.event_phases.reserve(events.size());
    t.curve.reserve(events.size() + 1);
    t.curve.push_back(MemoryCurvePoint{});

    // Every address range a segment of this device ever held: the dump's
    // segments and every range the trace maps or unmaps. A block the trace
    // frees without having seen its alloc was alive before the trace, so it
    // lies in one of them; one that does not (issue 28, N03: a 1 TiB block
    // freed against 2 MiB of segments) is not counted as memory, but named.
    MappedRanges known_segments;
    for (const SnapshotSegment& s : snapshot.segments)
        if (s.device == options.device && s.total_size > 0)
            known_segments.add(static_cast<uint64_t>(s.address),
                               static_cast<uint64_t>(s.address) + static_cast<uint64_t>(s.total_size));
    for (const TraceEvent& e : events)
        if (e.action == TraceAction::SegmentAlloc || e.action == TraceAction::SegmentMap ||
            e.action == TraceAction::SegmentFree || e.action == TraceAction::SegmentUnmap)
            known_segments.add(static_cast<uint64_t>(e.addr), static_cast<uint64_t>(e.addr) + static_cast<uint64_t>(e.size));
    const bool segments_known = !known_segments.ranges().empty();
    size_t frees_outside = 0;
    int64_t frees_outside_bytes = 0;

    // First pass: changes relative to the unknown starting state, and what
    // the trace frees without having seen it allocated.
    int64_t allocated = 0, reserved = 0, freed_unseen_blocks = 0, freed_unseen_segments = 0;
    std::unordered_map<int64_t, int64_t> live_blocks;  // address -> size, allocated within the trace
    live_blocks.reserve(1024);
    MappedRanges mapped;
    size_t unrecognized = 0, size_mismatches = 0, double_allocs = 0;
    for (size_t i = 0; i < events.size(); ++i) {
        const TraceEvent& e = events[i];
        const bool has_stack = e.stack >= 0 && static_cast<size_t>(e.stack) < stack_phase.size();
        t.event_phases.push_back(has_stack ? stack_phase[static_cast<size_t>(e.stack)] : std::nullopt);
        const auto start = static_cast<uint64_t>(e.addr), end = start + static_cast<uint64_t>(e.size);
        switch (e.action) {
        case TraceAction::Alloc: {
            const auto [it, fresh] = live_blocks.try_emplace(e.addr, e.size);
            if (!fresh) {
                ++double_allocs;
                it->second = e.size;
            }
            allocated += e.size;
            break;
        }
        case TraceAction::FreeCompleted:
            // Memory is reusable at free_completed, not at free_requested.
            if (const auto it = live_blocks.find(e.addr); it != live_blocks.end()) {
                if (it->second != e.size) ++size_mismatches;
                allocated -= it->second;
                live_blocks.erase(it);
            } else if (segments_known && !known_segments.covers(start, end)) {
                ++frees_outside;
                frees_outside_bytes = std::min(frees_outside_bytes + e.size, kMaxRunningBytes);
            } else {
                freed_unseen_blocks += e.size;
                allocated -= e.size;
            }
            break;
        case TraceAction::SegmentAlloc:
        case TraceAction::SegmentMap:
            mapped.add(start, end);
            reserved += e.size;
            break;
        case TraceAction::SegmentFree:
        case TraceAction::SegmentUnmap:
            freed_unseen_segments += e.size - static_cast<int64_t>(mapped.remove(start, end));
            reserved -= e.size;
            break;
        case TraceAction::Oom: ++t.oom_events; break;
        case TraceAction::Unrecognized: ++unrecognized; break;
        default: break;
        }
        if (!withinBounds(allocated) || !withinBounds(reserved) || !withinBounds(freed_unseen_blocks) ||
            !withinBounds(freed_unseen_segments)) {
            return Error{trace_path + "[" + std::to_string(i) + "]", "running total passes 2^60 bytes; not a real trace"};
        }
        t.curve.push_back(MemoryCurvePoint{static_cast<int64_t>(i), e.time_us, allocated, reserved});
    }

    // What the dump still holds that the trace does not explain was there
    // from the start.
    int64_t unseen_live_blocks = 0, unseen_segments = 0, dump_allocated = 0, dump_reserved = 0;
    const MappedPrefix mapped_at_end(mapped);
    for (const SnapshotSegment& s : snapshot.segments) {
        if (s.device != options.device) continue;
        dump_reserved += s.total_size;
        const auto start = static_cast<uint64_t>(s.address);
        unseen_segments +=
            s.total_size - static_cast<int64_t>(mapped_at_end.overlap(start, start + static_cast<uint64_t>(s.total_size)));
        for (const SnapshotBlock& b : s.blocks) {
            if (b.state == BlockState::Inactive) continue;
            dump_allocated += b.requested_size;
            if (!live_blocks.contains(b.address)) unseen_live_blocks += b.requested_size;
        }
        if (!withinBounds(dump_reserved) || !withinBounds(dump_allocated)) {
            return Error{"segments", "sizes on device " + std::to_string(options.device) + " add up past 2^60 bytes"};
        }
    }
    t.allocated_baseline_bytes = freed_unseen_blocks + unseen_live_blocks;
    t.reserved_baseline_bytes = freed_unseen_segments + unseen_segments;
    for (MemoryCurvePoint& p : t.curve) {
        p.allocated_bytes += t.allocated_baseline_bytes;
        p.reserved_bytes += t.reserved_baseline_bytes;
    }

    const size_t ia = firstMax(t.curve, &MemoryCurvePoint::allocated_bytes);
    const size_t ir = firstMax(t.curve, &MemoryCurvePoint::reserved_bytes);
    auto phaseAt = [&](size_t curve_index) {
        return curve_index == 0 ? std::string("unknown") : std::string(phaseLabel(t.event_phases[curve_index - 1]));
    };
    t.allocated_peak_bytes = t.curve[ia].allocated_bytes;
    t.allocated_peak_event = t.curve[ia].event_index;
    t.allocated_peak_time_us = t.curve[ia].time_us;
    t.peak_phase = phaseAt(ia);
    t.reserved_peak_bytes = t.curve[ir].reserved_bytes;
    t.reserved_peak_event = t.curve[ir].event_index;
    t.reserved_peak_time_us = t.curve[ir].time_us;
    t.reserved_peak_phase = phaseAt(ir);

    const MemoryCurvePoint& last = t.curve.back();
    if (last.allocated_bytes != dump_allocated) {
        t.warnings.push_back("the trace ends with " + bytesText(last.allocated_bytes) + " allocated but the segments hold " +
                             bytesText(dump_allocated) + " in active blocks: trace and segments disagree");
    }
    if (last.reserved_bytes != dump_reserved) {
        t.warnings.push_back("the trace ends with " + bytesText(last.reserved_bytes) + " reserved but the segments total " +
                             bytesText(dump_reserved) + ": trace and segments disagree");
    }
    if (frees_outside > 0) {
        t.warnings.push_back(std::to_string(frees_outside) + " free(s) of blocks (" + bytesText(frees_outside_bytes) +
                             ") that lie outside every segment of the snapshot were not counted as memory alive "
                             "before the trace: trace and segments disagree");
    }
    if (segments_known) {
        const auto over = std::find_if(t.curve.begin(), t.curve.end(), [](const MemoryCurvePoint& p) {
            return p.allocated_bytes > p.reserved_bytes;
        });
        if (over != t.curve.end())
            t.warnings.push_back("allocated exceeds reserved (" + bytesText(over->allocated_bytes) + " against " +
                                 bytesText(over->reserved_bytes) + ") " +
                                 (over->event_index < 0 ? std::string("before the trace")
                                                        : "at event " + std::to_string(over->event_index)) +
                                 ": trace and segments disagree");
    }
    if (size_mismatches > 0) {
        t.warnings.push_back(std::to_string(size_mismatches) + " free(s) with a size other than their alloc's; the alloc's size was used");
    }
    if (double_allocs > 0) {
        t.warnings.push_back(std::to_string(double_allocs) + " alloc(s) at an address already allocated and not freed");
    }
    if (unrecognized > 0) {
        std::string names;
        for (const auto& n : snapshot.unrecognized_actions) names += (names.empty() ? "" : ", ") + n;
        t.warnings.push_back(std::to_string(unrecognized) + " event(s) with actions this reader does not know (" + names +
                             ") were ignored");
    }
    if (t.oom_events > 0) t.warnings.push_back("the trace records " + std::to_string(t.oom_events) + " out-of-memory event(s)");

    if (options.max_points != 0) {
        auto curve = downsampleCurve(t.curve, options.max_points);
        if (!curve.ok()) return curve.error();
        t.curve = std::move(*curve);
    }
    return t;
}

}  // namespace trainmem
