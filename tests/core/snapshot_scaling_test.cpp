// Snapshots built to make the reader or the timeline do work out of
// proportion to the file (issue 15, D06 and D07): shared frame dicts
// referenced from many stacks, and many segments over many mapped ranges.
#include <chrono>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/snapshot/memory_snapshot.h"
#include "tests/core/snapshot_test_support.h"

namespace trainmem {
namespace {

using test_support::pickled;
using test_support::writePickle;

// A snapshot whose `events` allocs each have their own frames list holding
// the one frame dict `frame`, which the pickle stores once (memo slot 0).
std::string sharedFrameSnapshot(const nlohmann::json& frame, int events) {
    std::string out = "\x80\x02";
    writePickle(frame, out);
    out += std::string("q\0" "0", 3);  // BINPUT 0, POP: the frame dict lives in the memo
    out += '}';
    writePickle("segments", out);
    out += "]s";
    writePickle("device_traces", out);
    out += "]]";  // the list of devices, and device 0's trace
    for (int i = 0; i < events; ++i) {
        out += '}';
        const nlohmann::json fields = {{"action", "alloc"}, {"addr", 512 * i}, {"size", 512}, {"stream", 0}};
        for (const auto& [key, value] : fields.items()) {
            writePickle(key, out);
            writePickle(value, out);
            out += 's';
        }
        writePickle("frames", out);
        out += std::string("]h\0" "as", 5);  // a fresh list holding the shared dict (BINGET 0)
        out += 'a';            // the event into the trace
    }
    out += "as.";  // trace into the devices list; device_traces into the root
    return out;
}

TEST(SnapshotScaling, SharedHugeFrameTextIsNotCopiedOutOfProportion) {
    // 1 MiB filename, referenced by 200 stacks: copying it per stack would
    // take 200 MiB from a 1 MiB file.
    const std::string file = sharedFrameSnapshot({{"filename", std::string(1 << 20, 'f')}, {"line", 1},
                                                  {"name", "forward"}},
                                                 200);
    ASSERT_LT(file.size(), 2u << 20);
    auto snapshot = readMemorySnapshot(file);
    ASSERT_FALSE(snapshot.ok()) << "read " << snapshot->stacks.size() << " stacks";
    EXPECT_NE(snapshot.error().message.find("frame text"), std::string::npos) << snapshot.error().text();
    EXPECT_NE(snapshot.error().field.find("device_traces[0]["), std::string::npos) << snapshot.error().text();

    // The same sharing with ordinary frames is read, each stack complete.
    auto small = readMemorySnapshot(
        sharedFrameSnapshot({{"filename", "train.py"}, {"line", 7}, {"name", "forward"}}, 2000));
    ASSERT_TRUE(small.ok()) << small.error().text();
    ASSERT_EQ(small->stacks.size(), 2000u);
    EXPECT_EQ(small->stacks[1999].at(0).filename, "train.py");
    EXPECT_EQ(small->stacks[1999].at(0).line, 7);
}

TEST(SnapshotScaling, AWideSharedFrameDictIsReadOnce) {
    // A 20,000-key frame dict referenced 50,000 times: looking its keys up per
    // reference is 10^9 comparisons (tens of seconds); once is instant.
    nlohmann::json frame = {{"filename", "train.py"}, {"line", 1}, {"name", "forward"}};
    for (int k = 0; k < 20000; ++k) frame["k" + std::to_string(k)] = k;
    const std::string file = sharedFrameSnapshot(frame, 50000);
    const auto start = std::chrono::steady_clock::now();
    auto snapshot = readMemorySnapshot(file);
    const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(snapshot.ok()) << snapshot.error().text();
    EXPECT_EQ(snapshot->stacks.size(), 50000u);
    EXPECT_LT(seconds, 2.0);
}

TEST(SnapshotScaling, ManySegmentsOverManyMappedRangesIsNotQuadratic) {
    // m = 30,000 one-byte ranges mapped at even addresses, and n = 30,000
    // dump segments each spanning all of them: n x m = 9e8 range visits
    // when each segment walks the ranges it overlaps.
    const int n = 30000, m = 30000;
    nlohmann::json trace = nlohmann::json::array();
    for (int i = 0; i < m; ++i)
        trace.push_back({{"action", "segment_map"}, {"addr", 2 * i}, {"size", 1}, {"stream", 0}});
    nlohmann::json segments = nlohmann::json::array();
    for (int i = 0; i < n; ++i)
        segments.push_back({{"device", 0}, {"address", 0}, {"total_size", 2 * m}, {"allocated_size", 0},
                            {"active_size", 0}, {"requested_size", 0}, {"stream", 0}, {"segment_type", "large"},
                            {"blocks", nlohmann::json::array()}});
    auto snapshot = readMemorySnapshot(pickled({{"segments", segments}, {"device_traces", {trace}}}));
    ASSERT_TRUE(snapshot.ok()) << snapshot.error().text();
    const auto start = std::chrono::steady_clock::now();
    auto timeline = snapshotTimeline(*snapshot);
    const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(timeline.ok()) << timeline.error().text();
    // Each segment has m of its 2m bytes mapped by the trace; the other m
    // were there before it started.
    EXPECT_EQ(timeline->reserved_baseline_bytes, int64_t{n} * m);
    EXPECT_LT(seconds, 1.0);
}

}  // namespace
}  // namespace trainmem
