// Mutation fuzzing inside the suite: seeded, deterministic, and run under
// ASan/UBSan in CI. Every input must end in a value or an error; a value's
// curves must stay non-negative.
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/snapshot/memory_snapshot.h"
#include "tests/core/snapshot_test_support.h"

namespace trainmem {
namespace {

using test_support::fixture;
using test_support::pickled;

// Every curve point of every device, or the error; never a crash.
struct Outcome {
    bool decoded = false;
    size_t timelines = 0;
};

Outcome runEverything(std::string_view bytes, int iteration) {
    Outcome o;
    auto value = readPickle(bytes);
    if (!value.ok()) return o;
    o.decoded = true;
    auto snapshot = snapshotFromPickle(*value);
    if (!snapshot.ok()) return o;
    for (int64_t device : snapshotDevices(*snapshot)) {
        auto t = snapshotTimeline(*snapshot, TimelineOptions{device, 16});
        if (!t.ok()) continue;
        ++o.timelines;
        // Baselines count exactly what the trace frees unseen, so no prefix
        // of a trace, however odd, can go below zero.
        for (const auto& p : t->curve) {
            EXPECT_GE(p.allocated_bytes, 0) << "iteration " << iteration;
            EXPECT_GE(p.reserved_bytes, 0) << "iteration " << iteration;
        }
    }
    return o;
}

// 20,000 deterministic byte-level mutations of the fixtures (bit flips, byte
// changes, truncations, insertions, spliced copies, fake 0xffffffff lengths)
// through reader, model and curves. ASan/UBSan builds run this too.
TEST(SnapshotMutationFuzz, MutatedBytesGiveValuesOrErrors) {
    const std::vector<std::string> seeds = {fixture("training_step_p2.pickle"), fixture("training_step_p4.pickle"),
                                            fixture("ring_buffer_p3.pickle"), fixture("expandable_segments_p5.pickle"),
                                            fixture("data_types_p5.pickle"), fixture("protocol0.pickle")};
    std::mt19937_64 rng(20261121);
    auto pick = [&](size_t n) { return n == 0 ? size_t(0) : static_cast<size_t>(rng() % n); };
    size_t decoded = 0, timelines = 0;
    for (int iteration = 0; iteration < 20000; ++iteration) {
        std::string bytes = seeds[pick(seeds.size())];
        const size_t edits = 1 + pick(2);
        for (size_t k = 0; k < edits && !bytes.empty(); ++k) {
            const size_t at = pick(bytes.size());
            const size_t kind = pick(20);
            if (kind < 8) bytes[at] = static_cast<char>(bytes[at] ^ (1 << pick(8)));
            else if (kind < 14) bytes[at] = static_cast<char>(rng());
            else if (kind < 16) bytes.resize(at);
            else if (kind < 18) bytes.insert(at, 1, static_cast<char>(rng()));
            else if (kind < 19) bytes.insert(at, bytes.substr(pick(bytes.size()), pick(64)));
            else bytes.insert(at, "\xff\xff\xff\xff");
        }
        const Outcome o = runEverything(bytes, iteration);
        decoded += o.decoded;
        timelines += o.timelines;
    }
    // Most mutations must get past the first bytes, or this tests nothing.
    EXPECT_GT(decoded, 3000u);
    EXPECT_GT(timelines, 1500u);
}

// Mutations of the value tree rather than the bytes: well-formed pickles
// with odd contents (negative or huge sizes, swapped actions, addresses
// copied from elsewhere so frees and allocs collide, keys deleted, events
// duplicated), which byte flips rarely reach.
TEST(SnapshotMutationFuzz, MutatedStructuresGiveValuesOrErrors) {
    std::vector<nlohmann::json> seeds;
    for (const char* name : {"training_step.json", "ring_buffer.json", "expandable_segments.json"}) {
        std::ifstream in(std::string(TRAINMEM_TEST_DATA_DIR) + "/snapshots/" + name);
        seeds.push_back(nlohmann::json::parse(in));
    }
    const nlohmann::json pool[] = {-1, 0, 1, 512, int64_t(1) << 50, (int64_t(1) << 50) + 1, int64_t(1) << 62,
                                   INT64_MAX, INT64_MIN, 1.5, "alloc", "free_completed", "free_requested",
                                   "segment_alloc", "segment_free", "segment_map", "segment_unmap", "oom",
                                   "snapshot", "inactive", "active_allocated", nullptr, nlohmann::json::array(),
                                   nlohmann::json::object(), true};
    std::mt19937_64 rng(7);
    auto pick = [&](size_t n) { return n == 0 ? size_t(0) : static_cast<size_t>(rng() % n); };
    struct Place {
        nlohmann::json* value;
        nlohmann::json* parent;  // null for the root
        std::string key;         // in an object parent
        size_t index;            // in an array parent
    };
    size_t timelines = 0;
    for (int iteration = 0; iteration < 2000; ++iteration) {
        nlohmann::json doc = seeds[pick(seeds.size())];
        for (size_t k = 0, edits = 1 + pick(3); k < edits; ++k) {
            std::vector<Place> places, leaves;
            std::function<void(nlohmann::json&, nlohmann::json*, std::string, size_t)> walk =
                [&](nlohmann::json& v, nlohmann::json* parent, std::string key, size_t index) {
                    if (parent) places.push_back({&v, parent, key, index});
                    if (v.is_object()) {
                        for (auto it = v.begin(); it != v.end(); ++it) walk(it.value(), &v, it.key(), 0);
                    } else if (v.is_array()) {
                        for (size_t i = 0; i < v.size(); ++i) walk(v[i], &v, {}, i);
                    } else {
                        leaves.push_back({&v, parent, key, index});
                    }
                };
            walk(doc, nullptr, {}, 0);
            if (places.empty()) break;
            const Place target = places[pick(places.size())];
            switch (pick(4)) {
            case 0: *target.value = pool[pick(std::size(pool))]; break;
            case 1: *target.value = nlohmann::json(*leaves[pick(leaves.size())].value); break;
            case 2:
                if (target.parent->is_object()) target.parent->erase(target.key);
                else target.parent->erase(target.index);
                break;
            case 3:
                if (target.parent->is_array()) {
                    const nlohmann::json copy = *target.value;
                    target.parent->insert(target.parent->begin() + static_cast<std::ptrdiff_t>(pick(target.parent->size() + 1)), copy);
                }
                break;
            }
        }
        timelines += runEverything(pickled(doc), iteration).timelines;
    }
    EXPECT_GT(timelines, 400u);
}

}  // namespace
}  // namespace trainmem
