// Snapshot structure and the rebuilt curves, against peaks worked out by
// hand from the events validation/make_snapshot_fixtures.py writes (each
// step of the arithmetic is spelled out below), and against malformed files
// built from JSON literals by a tiny pickle writer that shares no code with
// the reader (snapshot_test_support.h).
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/snapshot/memory_snapshot.h"
#include "tests/core/snapshot_test_support.h"

namespace trainmem {
namespace {

constexpr int64_t MiB = int64_t(1) << 20;

using test_support::fixture;
using test_support::pickled;

MemorySnapshot snapshotOf(const std::string& name) {
    auto s = readMemorySnapshot(fixture(name));
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().text());
    return s.ok() ? *s : MemorySnapshot{};
}

SnapshotTimeline timelineOf(const std::string& name, TimelineOptions options = {}) {
    auto t = snapshotTimeline(snapshotOf(name), options);
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().text());
    return t.ok() ? *t : SnapshotTimeline{};
}

// One 2 MiB segment with a 1000-byte tensor in a 1024-byte block, allocated
// by the only event of the trace.
nlohmann::json minimalSnapshot() {
    return nlohmann::json::parse(R"({
      "segments": [{"device": 0, "address": 4096, "total_size": 2097152, "allocated_size": 1024,
                    "active_size": 1024, "requested_size": 1000, "stream": 0, "segment_type": "small",
                    "blocks": [{"address": 4096, "size": 1024, "requested_size": 1000, "state": "active_allocated"},
                               {"address": 5120, "size": 2096128, "requested_size": 0, "state": "inactive"}]}],
      "device_traces": [[{"action": "alloc", "addr": 4096, "size": 1000, "stream": 0, "time_us": 5,
                          "frames": [{"filename": "train.py", "line": 3, "name": "forward"}]}]]
    })");
}

Error errorFor(const nlohmann::json& snapshot) {
    auto s = readMemorySnapshot(pickled(snapshot));
    EXPECT_FALSE(s.ok()) << "expected an error";
    return s.ok() ? Error{} : s.error();
}

std::vector<int64_t> allocatedSeries(const SnapshotTimeline& t) {
    std::vector<int64_t> v;
    for (const auto& p : t.curve) v.push_back(p.allocated_bytes);
    return v;
}

std::vector<int64_t> reservedSeries(const SnapshotTimeline& t) {
    std::vector<int64_t> v;
    for (const auto& p : t.curve) v.push_back(p.reserved_bytes);
    return v;
}

std::vector<int64_t> mib(std::initializer_list<int64_t> values) {
    std::vector<int64_t> v;
    for (int64_t x : values) v.push_back(x * MiB);
    return v;
}

// ---- structure --------------------------------------------------------------

TEST(MemorySnapshotStructure, ReadsSegmentsBlocksEventsAndSharedStacks) {
    const MemorySnapshot s = snapshotOf("training_step_p4.pickle");
    ASSERT_EQ(s.segments.size(), 4u);
    EXPECT_EQ(s.segments[0].address, 0x7F0000000000);
    EXPECT_EQ(s.segments[0].total_size, 96 * MiB);
    EXPECT_EQ(s.segments[0].segment_type, "large");
    ASSERT_EQ(s.segments[0].blocks.size(), 2u);
    EXPECT_EQ(s.segments[0].blocks[1].address, 0x7F0000000000 + 32 * MiB);
    EXPECT_EQ(s.segments[0].blocks[1].state, BlockState::ActiveAllocated);
    ASSERT_EQ(s.device_traces.size(), 2u);
    ASSERT_EQ(s.device_traces[0].size(), 27u);
    EXPECT_TRUE(s.device_traces[1].empty());
    const TraceEvent& first = s.device_traces[0][0];
    EXPECT_EQ(first.action, TraceAction::SegmentAlloc);
    EXPECT_EQ(first.addr, 0x7F0010000000);
    EXPECT_EQ(first.size, 60 * MiB);
    EXPECT_EQ(first.time_us, 1000);
    // Five distinct stacks (forward, loss, backward, step, zero_grad), shared
    // by 26 events; the closing "snapshot" event has no frames.
    EXPECT_EQ(s.stacks.size(), 5u);
    EXPECT_EQ(s.device_traces[0][1].stack, s.device_traces[0][2].stack);
    EXPECT_EQ(s.device_traces[0][26].stack, -1);
    const CallStack& forward = s.stacks.at(static_cast<size_t>(s.device_traces[0][1].stack));
    ASSERT_EQ(forward.size(), 5u);
    EXPECT_EQ(forward[0].name, "forward");
    EXPECT_EQ(forward[0].line, 125);
    EXPECT_EQ(forward[4].filename, "train.py");
    EXPECT_EQ(snapshotDevices(s), std::vector<int64_t>{0});
}

TEST(MemorySnapshotStructure, OomEventsCarryDeviceFreeInsteadOfAnAddress) {
    const MemorySnapshot s = snapshotOf("expandable_segments_p4.pickle");
    const TraceEvent& oom = s.device_traces.at(0).at(6);
    EXPECT_EQ(oom.action, TraceAction::Oom);
    EXPECT_EQ(oom.size, 64 * MiB);
    EXPECT_EQ(oom.device_free, 3 * MiB);
    EXPECT_TRUE(s.segments.at(1).is_expandable);
}

TEST(MemorySnapshotStructure, LegacyFilesWithoutBlockAddressesTimesOrFrames) {
    // torch before 2.1: blocks carry neither address nor requested_size, and
    // events may lack time_us and frames. Addresses follow from the segment's
    // start and the sizes before (torch's viewer, annotate_snapshot).
    nlohmann::json j = minimalSnapshot();
    for (auto& b : j["segments"][0]["blocks"]) {
        b.erase("address");
        b.erase("requested_size");
    }
    j["segments"][0].erase("requested_size");
    j["device_traces"][0][0].erase("time_us");
    j["device_traces"][0][0].erase("frames");
    auto s = readMemorySnapshot(pickled(j));
    ASSERT_TRUE(s.ok()) << s.error().text();
    EXPECT_EQ(s->segments[0].blocks[1].address, 4096 + 1024);
    EXPECT_EQ(s->segments[0].blocks[0].requested_size, 1024);
    EXPECT_FALSE(s->device_traces[0][0].time_us.has_value());
    EXPECT_EQ(s->device_traces[0][0].stack, -1);
}

TEST(MemorySnapshotStructure, UnknownActionsAreKeptCountedAndNamed) {
    nlohmann::json j = minimalSnapshot();
    j["device_traces"][0].push_back({{"action", "user_defined"}, {"addr", 0}, {"size", 0}, {"stream", 0}});
    auto s = readMemorySnapshot(pickled(j));
    ASSERT_TRUE(s.ok()) << s.error().text();
    EXPECT_EQ(s->device_traces[0][1].action, TraceAction::Unrecognized);
    EXPECT_EQ(s->unrecognized_actions, std::vector<std::string>{"user_defined"});
    auto t = snapshotTimeline(*s);
    ASSERT_TRUE(t.ok());
    ASSERT_EQ(t->warnings.size(), 1u);
    EXPECT_EQ(t->warnings[0], "1 event(s) with actions this reader does not know (user_defined) were ignored");
}

TEST(MemorySnapshotErrors, WrongStructureNamesThePath) {
    struct Case {
        std::string pointer;  // JSON pointer to change
        nlohmann::json value;
        std::string field;
        std::string message;
    };
    const Case cases[] = {
        {"/device_traces/0/0/size", -1, "device_traces[0][0].size", "must be a non-negative integer no larger than 2^50"},
        {"/device_traces/0/0/size", int64_t(1) << 51, "device_traces[0][0].size",
         "must be a non-negative integer no larger than 2^50"},
        {"/device_traces/0/0/size", "12", "device_traces[0][0].size", "must be a non-negative integer no larger than 2^50"},
        {"/device_traces/0/0/action", 7, "device_traces[0][0].action", "must be a string, found int"},
        {"/device_traces/0/0/addr", -4096, "device_traces[0][0].addr", "must be a non-negative integer"},
        {"/device_traces/0/0/frames/0/line", "3", "device_traces[0][0].frames[0].line", "must be an integer, found str"},
        {"/device_traces/0/0/frames/0", 1, "device_traces[0][0].frames[0]",
         "must be a dict with filename, line and name, found int"},
        {"/device_traces/0/0", nlohmann::json::array(), "device_traces[0][0]", "must be a dict, found list"},
        {"/device_traces/0", 3, "device_traces[0]", "must be a list of events, found int"},
        {"/segments/0/blocks/1/state", "allocated", "segments[0].blocks[1].state",
         "must be active_allocated, active_pending_free or inactive, found 'allocated'"},
        {"/segments/0/total_size", 1.5, "segments[0].total_size", "must be a non-negative integer no larger than 2^50"},
        {"/segments/0/is_expandable", 1, "segments[0].is_expandable", "must be a bool, found int"},
        {"/segments", nlohmann::json::object(), "segments", "must be a list, found dict"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.pointer);
        nlohmann::json j = minimalSnapshot();
        j[nlohmann::json::json_pointer(c.pointer)] = c.value;
        const Error e = errorFor(j);
        EXPECT_EQ(e.field, c.field);
        EXPECT_EQ(e.message, c.message);
    }
}

TEST(MemorySnapshotErrors, MissingKeys) {
    nlohmann::json j = minimalSnapshot();
    j.erase("device_traces");
    EXPECT_EQ(errorFor(j).text(), "device_traces: missing; a torch memory snapshot has 'segments' and 'device_traces'");
    j = minimalSnapshot();
    j["device_traces"][0][0].erase("addr");
    EXPECT_EQ(errorFor(j).text(), "device_traces[0][0].addr: missing");
    j = minimalSnapshot();
    j["segments"][0]["blocks"][0].erase("size");
    EXPECT_EQ(errorFor(j).text(), "segments[0].blocks[0].size: missing");
    EXPECT_EQ(errorFor(nlohmann::json::array()).field, "snapshot");
}

TEST(MemorySnapshotErrors, SharedObjectsThatWouldMultiplyWorkAreRefused) {
    auto shared = readMemorySnapshot(fixture("hostile/shared_event.pickle"));
    ASSERT_FALSE(shared.ok());
    EXPECT_EQ(shared.error().field, "device_traces[0][1]");
    auto repeated = readMemorySnapshot(fixture("hostile/repeated_trace.pickle"));
    ASSERT_FALSE(repeated.ok());
    EXPECT_EQ(repeated.error().field, "device_traces[1]");
}

TEST(MemorySnapshotErrors, PickleErrorsPassThroughAndFilesAreNamed) {
    auto evil = readMemorySnapshot(fixture("hostile/reduce_os_system.pickle"));
    ASSERT_FALSE(evil.ok());
    EXPECT_EQ(evil.error().text(), "pickle: refusing opcode STACK_GLOBAL at byte 28: snapshots never need code execution");
    auto missing = loadMemorySnapshotFile("/nonexistent/snapshot.pickle");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().text(), "/nonexistent/snapshot.pickle: no such file");
    const std::string dir = std::string(TRAINMEM_TEST_DATA_DIR) + "/snapshots/hostile/";
    auto evil_file = loadMemorySnapshotFile(dir + "reduce_os_system.pickle");
    ASSERT_FALSE(evil_file.ok());
    EXPECT_EQ(evil_file.error().text(),
              dir + "reduce_os_system.pickle: refusing opcode STACK_GLOBAL at byte 28: snapshots never need code execution");
    auto shared = loadMemorySnapshotFile(dir + "shared_event.pickle");
    ASSERT_FALSE(shared.ok());
    EXPECT_EQ(shared.error().field, dir + "shared_event.pickle");
    EXPECT_EQ(shared.error().message.rfind("device_traces[0][1]: the same object appears twice", 0), 0u)
        << shared.error().message;
}

// ---- curves against hand arithmetic ---------------------------------------

TEST(SnapshotTimelinePeaks, TrainingStepPeaksInBackward) {
    // Before recording: segment S0 of 96 MiB holding parameters (32 MiB) and
    // Adam states (64 MiB), so both curves start at 96 MiB.
    // Allocated, MiB, after each event (alloc +size, free_completed -size):
    //   e1 +20=116 e2 +20=136 e3 +20=156 (logits) e5 +20=176 (softmax tmp)
    //   e7 -20=156 e8 +16=172 (grad 1) e10 -20=152 e12 +32=184 (grad 2)
    //   e14 -20=164 e16 -20=144 e19 +8=152 e21 -8=144 e23 -16=128 e25 -32=96
    // Reserved, MiB: e0 +60=156 e4 +20=176 e11 +32=208 e17 -60=148 e18 +20=168
    const SnapshotTimeline t = timelineOf("training_step_p4.pickle");
    EXPECT_EQ(t.event_count, 27u);
    EXPECT_EQ(t.allocated_baseline_bytes, 96 * MiB);
    EXPECT_EQ(t.reserved_baseline_bytes, 96 * MiB);
    EXPECT_EQ(t.allocated_peak_bytes, 184 * MiB);
    EXPECT_EQ(t.allocated_peak_event, 12);
    EXPECT_EQ(t.allocated_peak_time_us, 1000 + 12 * 10);
    EXPECT_EQ(t.peak_phase, "backward");
    EXPECT_EQ(t.reserved_peak_bytes, 208 * MiB);
    EXPECT_EQ(t.reserved_peak_event, 11);
    EXPECT_EQ(t.reserved_peak_phase, "backward");
    EXPECT_EQ(allocatedSeries(t), mib({96, 96, 116, 136, 156, 156, 176, 176, 156, 172, 172, 152, 152, 184, 184, 164,
                                       164, 144, 144, 144, 152, 152, 144, 144, 128, 128, 96, 96}));
    EXPECT_EQ(reservedSeries(t), mib({96, 156, 156, 156, 156, 176, 176, 176, 176, 176, 176, 176, 208, 208, 208, 208,
                                      208, 208, 148, 168, 168, 168, 168, 168, 168, 168, 168, 168}));
    EXPECT_TRUE(t.warnings.empty()) << t.warnings.front();
    EXPECT_EQ(t.curve.front().event_index, -1);
    EXPECT_EQ(t.curve.back().event_index, 26);
}

TEST(SnapshotTimelinePeaks, EveryProtocolGivesTheSameTimeline) {
    const SnapshotTimeline p4 = timelineOf("training_step_p4.pickle");
    for (int protocol : {2, 3, 5}) {
        const SnapshotTimeline t = timelineOf("training_step_p" + std::to_string(protocol) + ".pickle");
        EXPECT_EQ(t.curve, p4.curve) << "protocol " << protocol;
        EXPECT_EQ(t.event_phases, p4.event_phases) << "protocol " << protocol;
    }
}

TEST(SnapshotTimelinePeaks, RingBufferFreesSeedTheBaseline) {
    // Alive before recording: X 10 MiB and Y 6 MiB (freed by the trace without
    // a recorded alloc) and Z (never in the trace, alive at the dump, 4 MiB
    // block of which 4 MiB - 512 B requested). Baseline = 20 MiB - 512 B.
    //   e0 free_requested X: no change      e1 free_completed X: -10 ->  10 MiB - 512
    //   e2 alloc W 8:  18 MiB - 512          e3 free_completed Y: -6  ->  12 MiB - 512
    //   e4 alloc V 12: 24 MiB - 512 (peak)   e5 free_requested W; e6 free_completed W: 16 MiB - 512
    // V reuses X's address and is alive at the dump: counted once, from e4.
    const SnapshotTimeline t = timelineOf("ring_buffer_p4.pickle");
    const int64_t b = 20 * MiB - 512;
    EXPECT_EQ(t.allocated_baseline_bytes, b);
    EXPECT_EQ(allocatedSeries(t), (std::vector<int64_t>{b, b, b - 10 * MiB, b - 2 * MiB, b - 8 * MiB, b + 4 * MiB,
                                                        b + 4 * MiB, b - 4 * MiB}));
    EXPECT_EQ(t.allocated_peak_bytes, 24 * MiB - 512);
    EXPECT_EQ(t.allocated_peak_event, 4);
    EXPECT_EQ(t.peak_phase, "forward");
    // No segment events: the one 32 MiB segment is there throughout.
    EXPECT_EQ(t.reserved_baseline_bytes, 32 * MiB);
    EXPECT_EQ(t.reserved_peak_bytes, 32 * MiB);
    EXPECT_EQ(t.reserved_peak_event, -1);
    EXPECT_EQ(t.reserved_peak_phase, "unknown");
    EXPECT_TRUE(t.warnings.empty()) << t.warnings.front();
}

TEST(SnapshotTimelinePeaks, ExpandableSegmentsMapAndUnmapRanges) {
    // Before recording: P 20 MiB (freed at e0) and Q 8 MiB (never in the
    // trace): 28 MiB. e0 -20 = 8; e1 map E 20 = 28; e2 map E+20 8 = 36 (peak);
    // e3 unmap the middle 10 = 26; e4 segment_alloc F 2 = 28; e5 unmap the
    // start 10 = 18; e6 oom: 18. At the dump: Q 8 + E's last 8 + F 2 = 18.
    const SnapshotTimeline t = timelineOf("expandable_segments_p4.pickle");
    EXPECT_EQ(t.reserved_baseline_bytes, 28 * MiB);
    EXPECT_EQ(reservedSeries(t), mib({28, 8, 28, 36, 26, 28, 18, 18}));
    EXPECT_EQ(t.reserved_peak_bytes, 36 * MiB);
    EXPECT_EQ(t.reserved_peak_event, 2);
    EXPECT_EQ(t.reserved_peak_phase, "forward");
    // Q's 8 MiB block is the only allocation, before and after.
    EXPECT_EQ(allocatedSeries(t), mib({8, 8, 8, 8, 8, 8, 8, 8}));
    EXPECT_EQ(t.oom_events, 1u);
    ASSERT_EQ(t.warnings.size(), 1u);
    EXPECT_EQ(t.warnings[0], "the trace records 1 out-of-memory event(s)");
    // e4 is a recomputation under checkpointing: backward, not forward.
    EXPECT_EQ(t.event_phases.at(4), Phase::Backward);
}

TEST(SnapshotTimelinePeaks, PhasesOfTheTrainingStep) {
    const SnapshotTimeline t = timelineOf("training_step_p4.pickle");
    EXPECT_EQ(t.event_phases.at(1), Phase::Forward);
    EXPECT_EQ(t.event_phases.at(3), Phase::Loss);
    EXPECT_EQ(t.event_phases.at(8), Phase::Backward);
    EXPECT_EQ(t.event_phases.at(19), Phase::OptimizerStep);
    EXPECT_EQ(t.event_phases.at(23), Phase::OptimizerStep);  // zero_grad lives in torch/optim
    EXPECT_EQ(t.event_phases.at(26), std::nullopt);
}

TEST(SnapshotTimelinePeaks, DumpWithoutHistoryIsOneFlatPoint) {
    nlohmann::json j = minimalSnapshot();
    j["device_traces"][0] = nlohmann::json::array();
    auto s = readMemorySnapshot(pickled(j));
    ASSERT_TRUE(s.ok());
    auto t = snapshotTimeline(*s);
    ASSERT_TRUE(t.ok()) << t.error().text();
    ASSERT_EQ(t->curve.size(), 1u);
    EXPECT_EQ(t->allocated_peak_bytes, 1000);
    EXPECT_EQ(t->reserved_peak_bytes, 2 * MiB);
    EXPECT_EQ(t->allocated_peak_event, -1);
}

TEST(SnapshotTimelinePeaks, DisagreementBetweenTraceAndSegmentsIsReported) {
    nlohmann::json j = minimalSnapshot();
    j["segments"][0]["blocks"][0]["state"] = "inactive";  // the trace says alive, the dump says free
    auto t = snapshotTimeline(*readMemorySnapshot(pickled(j)));
    ASSERT_TRUE(t.ok());
    ASSERT_EQ(t->warnings.size(), 1u);
    EXPECT_EQ(t->warnings[0],
              "the trace ends with 1000 B allocated but the segments hold 0 B in active blocks: trace and segments disagree");
}

TEST(SnapshotTimelineOptions, UnknownDeviceAndTooFewPoints) {
    const MemorySnapshot s = snapshotOf("training_step_p4.pickle");
    auto d1 = snapshotTimeline(s, TimelineOptions{1, 0});
    ASSERT_FALSE(d1.ok());
    EXPECT_EQ(d1.error().text(), "device: device 1 has no trace and no segments; this snapshot has device(s) 0");
    auto three = snapshotTimeline(s, TimelineOptions{0, 3});
    ASSERT_FALSE(three.ok());
    EXPECT_EQ(three.error().field, "max_points");
}

// ---- downsampling -----------------------------------------------------------

TEST(SnapshotTimelineDownsampling, KeepsEndsAndBothPeaks) {
    const SnapshotTimeline t = timelineOf("training_step_p4.pickle", TimelineOptions{0, 4});
    // 28 points reduced to: baseline, e11 (reserved peak), e12 (allocated peak), e26.
    ASSERT_EQ(t.curve.size(), 4u);
    EXPECT_EQ(t.curve[0].event_index, -1);
    EXPECT_EQ(t.curve[1].event_index, 11);
    EXPECT_EQ(t.curve[2].event_index, 12);
    EXPECT_EQ(t.curve[3].event_index, 26);
    EXPECT_EQ(t.curve[2].allocated_bytes, 184 * MiB);
    EXPECT_EQ(t.curve[1].reserved_bytes, 208 * MiB);
    EXPECT_EQ(t.allocated_peak_bytes, 184 * MiB);  // peaks come from the full curve
}

TEST(SnapshotTimelineDownsampling, EachRunKeepsItsHighestPoint) {
    // 10 points, allocated 0 5 1 9 2 3 8 4 6 7; reserved flat. Kept: 0 and 9
    // (ends), 3 (the peak), and for 6 - 3 = 3 runs over the interior points
    // 1..8 split 3/3/2: {1,2,3} -> 3, {4,5,6} -> 6, {7,8} -> 8.
    const int64_t values[] = {0, 5, 1, 9, 2, 3, 8, 4, 6, 7};
    std::vector<MemoryCurvePoint> curve;
    for (int64_t i = 0; i < 10; ++i) curve.push_back(MemoryCurvePoint{i, i, values[i], 100});
    auto out = downsampleCurve(curve, 6);
    ASSERT_TRUE(out.ok());
    std::vector<int64_t> kept;
    for (const auto& p : *out) kept.push_back(p.event_index);
    EXPECT_EQ(kept, (std::vector<int64_t>{0, 3, 6, 8, 9}));
    EXPECT_EQ(downsampleCurve(curve, 0)->size(), 10u);
    EXPECT_EQ(downsampleCurve(curve, 20)->size(), 10u);
    EXPECT_FALSE(downsampleCurve(curve, 2).ok());
}

// ---- phases from call stacks --------------------------------------------------

CallStack stack(std::initializer_list<std::pair<const char*, const char*>> frames) {
    CallStack s;
    for (const auto& [file, name] : frames) s.push_back(StackFrame{file, 1, name});
    return s;
}

TEST(SnapshotPhases, FrameNamesDecideThePhase) {
    // HF Trainer runs the model inside compute_loss: the innermost forward wins.
    EXPECT_EQ(phaseOfCallStack(stack({{"torch/nn/modules/linear.py", "forward"},
                                      {"transformers/trainer.py", "compute_loss"},
                                      {"transformers/trainer.py", "training_step"}})),
              Phase::Forward);
    EXPECT_EQ(phaseOfCallStack(stack({{"transformers/loss/loss_utils.py", "ForCausalLMLoss"},
                                      {"modeling_llama.py", "forward"}})),
              Phase::Loss);
    // Megatron's schedule is named forward_backward_*: not a backward by itself.
    EXPECT_EQ(phaseOfCallStack(stack({{"megatron/model.py", "forward"},
                                      {"megatron/core/pipeline_parallel/schedules.py", "forward_backward_no_pipelining"}})),
              Phase::Forward);
    // Lightning runs the training step inside optimizer.step(closure).
    EXPECT_EQ(phaseOfCallStack(stack({{"torch/nn/modules/linear.py", "forward"},
                                      {"lightning/pytorch/loops/optimization.py", "closure"},
                                      {"torch/optim/adamw.py", "step"}})),
              Phase::Forward);
    // C++ frames (stacks="all") name autograd nodes like MmBackward0.
    EXPECT_EQ(phaseOfCallStack(stack({{"", "torch::autograd::generated::MmBackward0::apply"}})), Phase::Backward);
    EXPECT_EQ(phaseOfCallStack(stack({{"deepspeed/runtime/engine.py", "step"}})), Phase::OptimizerStep);
    EXPECT_EQ(phaseOfCallStack(stack({{"train.py", "load_batch"}})), std::nullopt);
    EXPECT_EQ(phaseOfCallStack({}), std::nullopt);
    EXPECT_EQ(phaseLabel(std::nullopt), "unknown");
}

// Within the estimator's published errors (tens of percent) a comparison is
// read as one; beyond 3x it is a snapshot of another run, and says so with
// both peaks (issue 27: an unrelated scenario read +31,113% without a word).
TEST(SnapshotMismatch, OnlyPeaksFarApartAreAnotherRun) {
    const int64_t GiB = int64_t{1} << 30;
    EXPECT_FALSE(snapshotMismatch(10 * GiB, 14 * GiB));
    EXPECT_FALSE(snapshotMismatch(10 * GiB, 30 * GiB));
    EXPECT_FALSE(snapshotMismatch(10 * GiB, 0));
    const auto over = snapshotMismatch(1 * GiB, 40 * GiB);
    ASSERT_TRUE(over);
    EXPECT_NE(over->find("does not look like this scenario"), std::string::npos) << *over;
    EXPECT_NE(over->find("40.0x apart"), std::string::npos) << *over;
    EXPECT_TRUE(snapshotMismatch(40 * GiB, 1 * GiB));
}

}  // namespace
}  // namespace trainmem
