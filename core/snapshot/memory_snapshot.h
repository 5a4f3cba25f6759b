#pragma once
// Measured memory: the snapshot torch.cuda.memory._dump_snapshot writes after
// torch.cuda.memory._record_memory_history(), and the allocated and reserved
// curves rebuilt from its trace, to set beside an estimate.
//
// The file is a pickle of a dict (torch/csrc/cuda/memory_snapshot.cpp, and
// the TypedDicts documented in torch/cuda/memory.py::_snapshot):
//   segments:      the allocator's segments at dump time, each with its blocks
//   device_traces: per device, the events recorded before the dump, oldest
//                  first; a ring buffer, so the oldest may have been dropped
// Reading goes through the restricted unpickler (pickle_reader.h): a snapshot
// never runs code.
// The timeline functions (phaseOfCallStack, phaseLabel, downsampleCurve) are in memory_timeline.cpp.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/account/estimate.h"
#include "core/snapshot/pickle_reader.h"

namespace trainmem {

// Sizes above this (1 PiB) mean a corrupt file, not a GPU.
constexpr int64_t kMaxSnapshotSizeBytes = int64_t(1) << 50;

struct StackFrame {
    std::string filename;
    int64_t line = 0;
    std::string name;  // function name
    bool operator==(const StackFrame&) const = default;
};
using CallStack = std::vector<StackFrame>;  // innermost call first, as torch records it

enum class BlockState { ActiveAllocated, ActivePendingFree, Inactive };

struct SnapshotBlock {
    int64_t address = 0;         // legacy files omit it: then segment address + sizes before it
    int64_t size = 0;            // bytes set aside, rounded by the allocator
    int64_t requested_size = 0;  // bytes asked for; legacy files omit it: then size
    BlockState state = BlockState::Inactive;
};

struct SnapshotSegment {
    int64_t device = 0;
    int64_t address = 0;
    int64_t total_size = 0;      // reserved from CUDA
    int64_t allocated_size = 0;  // in active_allocated blocks
    int64_t active_size = 0;     // allocated plus pending free
    int64_t requested_size = 0;  // what the active blocks asked for; legacy files omit it: then 0
    int64_t stream = 0;
    std::string segment_type;    // "large" or "small" pool
    bool is_expandable = false;
    std::vector<SnapshotBlock> blocks;
};

enum class TraceAction {
    Alloc, FreeRequested, FreeCompleted, SegmentAlloc, SegmentFree, SegmentMap, SegmentUnmap, Snapshot, Oom,
    Unrecognized,  // an action this reader does not know (a newer torch); ignored by the curves, counted
};
std::string_view traceActionName(TraceAction action);  // torch's spelling: "free_completed"

struct TraceEvent {
    TraceAction action = TraceAction::Unrecognized;
    int64_t addr = 0;                    // 0 for oom, which has no address
    int64_t size = 0;                    // a block's requested size, or a segment's size
    int64_t stream = 0;
    std::optional<int64_t> time_us;      // absent in files from torch before 2.1
    std::optional<int64_t> device_free;  // oom only: free bytes CUDA reported
    int32_t stack = -1;                  // into MemorySnapshot::stacks; -1 when no frames were recorded
};

struct MemorySnapshot {
    std::vector<SnapshotSegment> segments;
    std::vector<std::vector<TraceEvent>> device_traces;  // index = device
    std::vector<CallStack> stacks;  // distinct call stacks; events share them as torch's file does
    std::vector<std::string> unrecognized_actions;  // distinct names of Unrecognized events
};

// Structure checks name the path of the bad value, e.g.
// "device_traces[0][17].size: must be a non-negative integer no larger than 2^50".
// `input_bytes` is the pickle's size: the call stacks' text may take at most
// 64 MiB + 16x it (shared frames are copied per stack; docs/snapshots.md).
Expected<MemorySnapshot> snapshotFromPickle(const PickleValue& root, size_t input_bytes = 0);
Expected<MemorySnapshot> readMemorySnapshot(std::string_view bytes);
// Errors have the file's path as their field: "snap.pickle: refusing opcode REDUCE at byte 45: ...".
Expected<MemorySnapshot> loadMemorySnapshotFile(const std::filesystem::path& path);

// Devices with a non-empty trace or at least one segment (the ones torch's
// viewer offers), ascending.
std::vector<int64_t> snapshotDevices(const MemorySnapshot& snapshot);

// A coarse phase from the function names on a call stack: anything under a
// "backward" is Backward (recomputation included); else an optimizer frame
// makes it OptimizerStep; else the innermost frame naming a loss or a
// forward decides between Loss and Forward. nullopt when nothing matches.
std::optional<Phase> phaseOfCallStack(const CallStack& stack);
std::string_view phaseLabel(std::optional<Phase> phase);  // phaseName(), or "unknown"

struct MemoryCurvePoint {
    int64_t event_index = -1;  // into device_traces[device]; -1 is the state before the first event
    std::optional<int64_t> time_us;
    int64_t allocated_bytes = 0;  // live blocks' requested bytes (torch.cuda.memory_allocated)
    int64_t reserved_bytes = 0;   // segments held from CUDA (torch.cuda.memory_reserved)
    bool operator==(const MemoryCurvePoint&) const = default;
};

struct TimelineOptions {
    int64_t device = 0;
    size_t max_points = 0;  // 0: one point per event; else at least 4, peaks kept
};

struct SnapshotTimeline {
    int64_t device = 0;
    size_t event_count = 0;
    // What was alive before the first recorded event: blocks and segments the
    // trace frees without having recorded their allocation, plus those alive
    // at the dump that the trace never mentions.
    int64_t allocated_baseline_bytes = 0;
    int64_t reserved_baseline_bytes = 0;

    int64_t allocated_peak_bytes = 0;
    int64_t allocated_peak_event = -1;  // first event reaching the peak; -1: the baseline itself
    std::optional<int64_t> allocated_peak_time_us;
    std::string peak_phase = "unknown";  // phaseLabel() at the allocated peak

    int64_t reserved_peak_bytes = 0;
    int64_t reserved_peak_event = -1;
    std::optional<int64_t> reserved_peak_time_us;
    std::string reserved_peak_phase = "unknown";

    std::vector<std::optional<Phase>> event_phases;  // one per event of the device's trace
    std::vector<MemoryCurvePoint> curve;  // baseline point, then one per event (or downsampled)
    size_t oom_events = 0;
    std::vector<std::string> warnings;  // inconsistencies and ignored events, in words
};

Expected<SnapshotTimeline> snapshotTimeline(const MemorySnapshot& snapshot, const TimelineOptions& options = {});

// Keeps the first and last points, both peaks (first occurrence), and the
// highest allocated point of each of max_points - 4 equal runs between them:
// a plot of the result has the original's envelope.
Expected<std::vector<MemoryCurvePoint>> downsampleCurve(const std::vector<MemoryCurvePoint>& curve, size_t max_points);

// A snapshot set beside an estimate of another run: the measured and the
// estimated allocated peaks more than kSnapshotMismatchFactor apart (the
// estimator's published errors stay far inside it: docs/accuracy.md). Says
// so, with both peaks and the factor, or nothing when they are comparable.
inline constexpr double kSnapshotMismatchFactor = 3.0;
std::optional<std::string> snapshotMismatch(int64_t measured_peak_bytes, int64_t estimated_peak_bytes);

}  // namespace trainmem
