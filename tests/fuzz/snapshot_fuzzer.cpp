// libFuzzer driver: any bytes through readPickle, snapshotFromPickle and
// snapshotTimeline must give a value or an error, within bounded memory and
// time. Run from the repository root, new inputs going to a scratch folder:
//   mkdir -p /tmp/fuzz-corpus
//   build-fuzz/tests/fuzz/snapshot_fuzzer -dict=tests/fuzz/snapshot.dict \
//       -max_total_time=300 -rss_limit_mb=2048 -timeout=10 \
//       /tmp/fuzz-corpus tests/data/snapshots/corpus
// A crash reproducer, once fixed, belongs in tests/data/snapshots/corpus/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "core/snapshot/memory_snapshot.h"
#include "core/snapshot/pickle_reader.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using trainmem::PickleKind;
using trainmem::PickleView;

// Touches every container once (shared ones too, but only once), so every
// accessor runs on whatever the reader accepted.
void walk(const PickleView& root) {
    std::vector<bool> seen;
    std::vector<PickleView> todo{root};
    while (!todo.empty()) {
        const PickleView v = todo.back();
        todo.pop_back();
        (void)v.asBool(), (void)v.asInt(), (void)v.asFloat(), (void)v.asString(), (void)v.asBytes();
        const auto id = v.containerId();
        if (!id) continue;
        if (*id >= seen.size()) seen.resize(*id + 1);
        if (seen[*id]) continue;
        seen[*id] = true;
        const bool dict = v.is(PickleKind::Dict);
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (dict) {
                todo.push_back(v.keyAt(i));
                todo.push_back(v.valueAt(i));
                if (const auto key = v.keyAt(i).asString()) (void)v.get(*key);
            } else {
                todo.push_back(v.at(i));
            }
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    auto value = trainmem::readPickle(bytes);
    if (!value.ok()) {
        FUZZ_CHECK(!value.error().message.empty());  // every error must say what is wrong
        return 0;
    }
    walk(value->view());
    auto snapshot = trainmem::snapshotFromPickle(*value, size);
    if (!snapshot.ok()) return 0;
    for (const std::int64_t device : trainmem::snapshotDevices(*snapshot)) {
        auto timeline = trainmem::snapshotTimeline(*snapshot, trainmem::TimelineOptions{device, 8});
        if (!timeline.ok()) continue;
        for (const auto& point : timeline->curve) {
            FUZZ_CHECK(point.allocated_bytes >= 0 && point.reserved_bytes >= 0);
        }
        FUZZ_CHECK(timeline->curve.size() <= 8);
    }
    return 0;
}
