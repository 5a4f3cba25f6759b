// Snapshots built to make the reader or the timeline do work out of
// proportion to the file (issue 15, D06 and D07): shared frame dicts
// referenced from many stacks, and many segments over many mapped ranges.
#include <chrono>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/memory_snapshot.h"
#include "tests/core/snapshot_test_support.h"

namespace trainmem {
namespace {

using test_support::pickled;

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
