// Issue 28, N03: a free_completed of an address no segment holds was counted
// as memory alive before the trace; a 439-byte file reported 1 TiB allocated
// against 2 MiB reserved, with no warning.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "core/snapshot/memory_snapshot.h"
#include "snapshot_test_support.h"

namespace trainmem {
namespace {

using test_support::pickled;

constexpr int64_t MiB = 1 << 20;
constexpr int64_t TiB = int64_t{1} << 40;

// One 2 MiB segment at 4096 with a 1000-byte block the trace allocates, and
// a free of `freed` bytes at `addr` that the trace never allocated.
nlohmann::json snapshotFreeing(int64_t addr, int64_t freed) {
    nlohmann::json j = nlohmann::json::parse(R"({
      "segments": [{"device": 0, "address": 4096, "total_size": 2097152, "allocated_size": 1024,
                    "active_size": 1024, "requested_size": 1000, "stream": 0, "segment_type": "small",
                    "blocks": [{"address": 4096, "size": 1024, "requested_size": 1000, "state": "active_allocated"},
                               {"address": 5120, "size": 2096128, "requested_size": 0, "state": "inactive"}]}],
      "device_traces": [[{"action": "alloc", "addr": 4096, "size": 1000, "stream": 0, "time_us": 5}]]
    })");
    j["device_traces"][0].push_back(
        {{"action", "free_completed"}, {"addr", addr}, {"size", freed}, {"stream", 0}, {"time_us", 6}});
    return j;
}

SnapshotTimeline timelineOf(const nlohmann::json& j) {
    const Expected<MemorySnapshot> s = readMemorySnapshot(pickled(j));
    EXPECT_TRUE(s.ok()) << s.error().text();
    const Expected<SnapshotTimeline> t = snapshotTimeline(*s);
    EXPECT_TRUE(t.ok()) << t.error().text();
    return *t;
}

bool mentions(const std::vector<std::string>& warnings, const std::string& part) {
    for (const std::string& w : warnings)
        if (w.find(part) != std::string::npos) return true;
    return false;
}

TEST(SnapshotOutsideSegments, FreeOutsideEverySegmentIsNotMemoryAndIsNamed) {
    const SnapshotTimeline t = timelineOf(snapshotFreeing(int64_t{1} << 46, TiB));
    // Only the traced 1000-byte block was ever allocated; 2 MiB reserved.
    EXPECT_EQ(t.allocated_baseline_bytes, 0);
    EXPECT_EQ(t.allocated_peak_bytes, 1000);
    EXPECT_EQ(t.reserved_peak_bytes, 2 * MiB);
    EXPECT_LE(t.allocated_peak_bytes, t.reserved_peak_bytes);
    EXPECT_TRUE(mentions(t.warnings, "1 free(s) of blocks (1099511627776 B) that lie outside every segment"))
        << (t.warnings.empty() ? "no warning" : t.warnings.front());
}

TEST(SnapshotOutsideSegments, FreeInsideASegmentStillSeedsTheBaseline) {
    // A block in the segment's free part, alive before recording (as a ring
    // buffer that dropped its alloc leaves it): counted, no warning.
    const SnapshotTimeline t = timelineOf(snapshotFreeing(8192, 4096));
    EXPECT_EQ(t.allocated_baseline_bytes, 4096);
    EXPECT_EQ(t.allocated_peak_bytes, 4096 + 1000);
    EXPECT_TRUE(t.warnings.empty()) << t.warnings.front();
}

TEST(SnapshotOutsideSegments, AllocatedAboveReservedIsWarned) {
    // A block straddling the segment's end is outside it too; and a traced
    // alloc bigger than every segment makes allocated pass reserved.
    nlohmann::json j = snapshotFreeing(4096 + 2 * MiB - 512, 1024);
    j["device_traces"][0].push_back({{"action", "alloc"}, {"addr", 1 << 30}, {"size", 64 * MiB}, {"stream", 0}});
    const SnapshotTimeline t = timelineOf(j);
    EXPECT_TRUE(mentions(t.warnings, "outside every segment")) << (t.warnings.empty() ? "" : t.warnings.front());
    EXPECT_TRUE(mentions(t.warnings, "allocated exceeds reserved (" + std::to_string(64 * MiB + 1000) +
                                         " B against 2097152 B) at event 2"));
}

}  // namespace
}  // namespace trainmem
