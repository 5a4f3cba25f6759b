// Turning the unpickled dict into a MemorySnapshot, checking its structure.
// Key names and optional keys follow torch/csrc/cuda/memory_snapshot.cpp
// (_memory_snapshot_pickled) and the legacy handling in torch's viewer
// (torch/utils/viz/MemoryViz.js, annotate_snapshot).
#include <algorithm>
#include <fstream>
#include <limits>
#include <unordered_map>
#include <utility>

#include "core/memory_snapshot.h"

namespace trainmem {

std::string_view traceActionName(TraceAction action) {
    switch (action) {
    case TraceAction::Alloc: return "alloc";
    case TraceAction::FreeRequested: return "free_requested";
    case TraceAction::FreeCompleted: return "free_completed";
    case TraceAction::SegmentAlloc: return "segment_alloc";
    case TraceAction::SegmentFree: return "segment_free";
    case TraceAction::SegmentMap: return "segment_map";
    case TraceAction::SegmentUnmap: return "segment_unmap";
    case TraceAction::Snapshot: return "snapshot";
    case TraceAction::Oom: return "oom";
    case TraceAction::Unrecognized: return "unrecognized";
    }
    return "unrecognized";
}

namespace {

constexpr size_t kMaxRememberedActionNames = 16;

std::string indexPath(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

Error wrongKind(const std::string& path, std::string_view expected, const PickleValue& v) {
    return Error{path, "must be " + std::string(expected) + ", found " + std::string(pickleKindName(v.kind()))};
}

// A pickle may refer to one object from many places. torch writes every
// event, segment and block once, so a repeat means a crafted file that
// would multiply the work (a list holding the same 10^6-event trace 10^6
// times); it is refused instead of walked.
class DistinctObjects {
public:
    bool firstVisit(const PickleValue& v) {
        const auto id = v.containerId();
        if (!id) return true;
        if (*id >= seen_.size()) seen_.resize(*id + 1, false);
        if (seen_[*id]) return false;
        seen_[*id] = true;
        return true;
    }

private:
    std::vector<bool> seen_;
};

class SnapshotReader {
public:
    Expected<MemorySnapshot> read(const PickleValue& root) {
        if (!root.is(PickleKind::Dict)) {
            return wrongKind("snapshot", "a dict with 'segments' and 'device_traces' (what torch.cuda.memory._dump_snapshot writes)",
                             root);
        }
        const auto segments = root.get("segments");
        const auto traces = root.get("device_traces");
        if (!segments) return Error{"segments", "missing; a torch memory snapshot has 'segments' and 'device_traces'"};
        if (!traces) return Error{"device_traces", "missing; a torch memory snapshot has 'segments' and 'device_traces'"};
        if (!segments->is(PickleKind::List)) return wrongKind("segments", "a list", *segments);
        if (!traces->is(PickleKind::List)) return wrongKind("device_traces", "a list", *traces);

        snapshot_.segments.reserve(segments->size());
        for (size_t i = 0; i < segments->size(); ++i) {
            if (auto s = readSegment(segments->at(i), indexPath("segments", i)); !s.ok()) return s.error();
        }
        snapshot_.device_traces.resize(traces->size());
        for (size_t d = 0; d < traces->size(); ++d) {
            const std::string path = indexPath("device_traces", d);
            const PickleValue trace = traces->at(d);
            if (!trace.is(PickleKind::List)) return wrongKind(path, "a list of events", trace);
            if (!distinct_.firstVisit(trace)) return repeated(path);
            auto& events = snapshot_.device_traces[d];
            events.reserve(trace.size());
            for (size_t i = 0; i < trace.size(); ++i) {
                auto e = readEvent(trace.at(i), indexPath(path, i));
                if (!e.ok()) return e.error();
                events.push_back(*e);
            }
        }
        return std::move(snapshot_);
    }

private:
    MemorySnapshot snapshot_;
    DistinctObjects distinct_;
    std::unordered_map<size_t, int32_t> stack_of_list_;  // frames list id -> index in stacks

    static Error repeated(const std::string& path) {
        return Error{path, "the same object appears twice; torch writes each one once, so this file was crafted"};
    }

    static Expected<PickleValue> require(const PickleValue& dict, std::string_view key, const std::string& path) {
        if (auto v = dict.get(key)) return *v;
        return Error{path + "." + std::string(key), "missing"};
    }

    static Expected<int64_t> integer(const PickleValue& v, const std::string& path) {
        if (auto i = v.asInt()) return *i;
        return wrongKind(path, "an integer", v);
    }

    static Expected<int64_t> size(const PickleValue& v, const std::string& path) {
        const auto i = v.asInt();
        if (!i || *i < 0 || *i > kMaxSnapshotSizeBytes) {
            return Error{path, "must be a non-negative integer no larger than 2^50"};
        }
        return *i;
    }

    static Expected<int64_t> address(const PickleValue& v, const std::string& path) {
        const auto i = v.asInt();
        if (!i || *i < 0) return Error{path, "must be a non-negative integer"};
        return *i;
    }

    static Expected<std::string> text(const PickleValue& v, const std::string& path) {
        if (auto s = v.asString()) return std::string(*s);
        return wrongKind(path, "a string", v);
    }

    // Reads dict[key] with `parse` into `out`; absent keys are an error.
    template <class T, class Parse>
    static Status field(const PickleValue& dict, std::string_view key, const std::string& path, Parse parse, T& out) {
        auto v = require(dict, key, path);
        if (!v.ok()) return v.error();
        auto parsed = parse(*v, path + "." + std::string(key));
        if (!parsed.ok()) return parsed.error();
        out = *parsed;
        return ok();
    }

    template <class T, class Parse>
    static Status optionalField(const PickleValue& dict, std::string_view key, const std::string& path, Parse parse,
                                std::optional<T>& out) {
        const auto v = dict.get(key);
        if (!v) return ok();
        auto parsed = parse(*v, path + "." + std::string(key));
        if (!parsed.ok()) return parsed.error();
        out = *parsed;
        return ok();
    }

    Status readSegment(const PickleValue& s, const std::string& path) {
        if (!s.is(PickleKind::Dict)) return wrongKind(path, "a dict", s);
        if (!distinct_.firstVisit(s)) return repeated(path);
        SnapshotSegment seg;
        Status st = field(s, "device", path, address, seg.device);
        if (st.ok()) st = field(s, "address", path, address, seg.address);
        if (st.ok()) st = field(s, "total_size", path, size, seg.total_size);
        if (st.ok()) st = field(s, "allocated_size", path, size, seg.allocated_size);
        if (st.ok()) st = field(s, "active_size", path, size, seg.active_size);
        if (st.ok()) st = field(s, "stream", path, integer, seg.stream);
        if (st.ok()) st = field(s, "segment_type", path, text, seg.segment_type);
        std::optional<int64_t> requested;
        if (st.ok()) st = optionalField(s, "requested_size", path, size, requested);
        if (!st.ok()) return st;
        seg.requested_size = requested.value_or(0);
        if (const auto expandable = s.get("is_expandable")) {
            if (!expandable->asBool()) return wrongKind(path + ".is_expandable", "a bool", *expandable);
            seg.is_expandable = *expandable->asBool();
        }

        auto blocks = require(s, "blocks", path);
        if (!blocks.ok()) return blocks.error();
        const std::string blocks_path = path + ".blocks";
        if (!blocks->is(PickleKind::List)) return wrongKind(blocks_path, "a list", *blocks);
        if (!distinct_.firstVisit(*blocks)) return repeated(blocks_path);
        int64_t next_address = seg.address;  // legacy files: blocks lie back to back
        seg.blocks.reserve(blocks->size());
        for (size_t i = 0; i < blocks->size(); ++i) {
            const std::string bpath = indexPath(blocks_path, i);
            const PickleValue b = blocks->at(i);
            if (!b.is(PickleKind::Dict)) return wrongKind(bpath, "a dict", b);
            if (!distinct_.firstVisit(b)) return repeated(bpath);
            SnapshotBlock block;
            std::string state;
            std::optional<int64_t> block_address, block_requested;
            Status bs = field(b, "size", bpath, size, block.size);
            if (bs.ok()) bs = field(b, "state", bpath, text, state);
            if (bs.ok()) bs = optionalField(b, "address", bpath, address, block_address);
            if (bs.ok()) bs = optionalField(b, "requested_size", bpath, size, block_requested);
            if (!bs.ok()) return bs;
            if (state == "active_allocated") block.state = BlockState::ActiveAllocated;
            // torch writes active_pending_free; its documentation says active_awaiting_free.
            else if (state == "active_pending_free" || state == "active_awaiting_free") block.state = BlockState::ActivePendingFree;
            else if (state == "inactive") block.state = BlockState::Inactive;
            else return Error{bpath + ".state", "must be active_allocated, active_pending_free or inactive, found '" + state + "'"};
            block.address = block_address.value_or(next_address);
            block.requested_size = block_requested.value_or(block.size);
            if (block.address > std::numeric_limits<int64_t>::max() - block.size) {
                return Error{bpath + ".address", "address plus size passes 2^63"};
            }
            next_address = block.address + block.size;
            seg.blocks.push_back(block);
        }
        snapshot_.segments.push_back(std::move(seg));
        return ok();
    }

    Expected<TraceEvent> readEvent(const PickleValue& e, const std::string& path) {
        if (!e.is(PickleKind::Dict)) return wrongKind(path, "a dict", e);
        if (!distinct_.firstVisit(e)) return repeated(path);
        TraceEvent event;
        std::string action;
        Status st = field(e, "action", path, text, action);
        if (!st.ok()) return st.error();
        event.action = actionFromName(action);
        if (event.action == TraceAction::Oom) {
            st = optionalField(e, "device_free", path, size, event.device_free);
        } else {
            st = field(e, "addr", path, address, event.addr);
        }
        if (st.ok()) st = field(e, "size", path, size, event.size);
        if (st.ok()) st = field(e, "stream", path, integer, event.stream);
        if (st.ok()) st = optionalField(e, "time_us", path, integer, event.time_us);
        if (!st.ok()) return st.error();
        if (const auto frames = e.get("frames")) {
            auto stack = readStack(*frames, path + ".frames");
            if (!stack.ok()) return stack.error();
            event.stack = *stack;
        }
        return event;
    }

    TraceAction actionFromName(const std::string& name) {
        static const std::pair<std::string_view, TraceAction> kActions[] = {
            {"alloc", TraceAction::Alloc},
            {"free_requested", TraceAction::FreeRequested},
            {"free_completed", TraceAction::FreeCompleted},
            {"segment_alloc", TraceAction::SegmentAlloc},
            {"segment_free", TraceAction::SegmentFree},
            {"segment_map", TraceAction::SegmentMap},
            {"segment_unmap", TraceAction::SegmentUnmap},
            {"snapshot", TraceAction::Snapshot},
            {"oom", TraceAction::Oom},
        };
        for (const auto& [n, a] : kActions) {
            if (n == name) return a;
        }
        auto& names = snapshot_.unrecognized_actions;
        if (names.size() < kMaxRememberedActionNames && std::find(names.begin(), names.end(), name) == names.end()) {
            names.push_back(name);
        }
        return TraceAction::Unrecognized;
    }

    // Frames lists are shared between events in torch's files; each distinct
    // list is read once and its index reused.
    Expected<int32_t> readStack(const PickleValue& frames, const std::string& path) {
        if (!frames.is(PickleKind::List)) return wrongKind(path, "a list of frames", frames);
        if (frames.size() == 0) return -1;
        const size_t id = *frames.containerId();
        if (const auto it = stack_of_list_.find(id); it != stack_of_list_.end()) return it->second;
        CallStack stack;
        stack.reserve(frames.size());
        for (size_t i = 0; i < frames.size(); ++i) {
            const std::string fpath = indexPath(path, i);
            const PickleValue f = frames.at(i);
            if (!f.is(PickleKind::Dict)) return wrongKind(fpath, "a dict with filename, line and name", f);
            StackFrame frame;
            Status st = field(f, "filename", fpath, text, frame.filename);
            if (st.ok()) st = field(f, "line", fpath, integer, frame.line);
            if (st.ok()) st = field(f, "name", fpath, text, frame.name);
            if (!st.ok()) return st.error();
            stack.push_back(std::move(frame));
        }
        snapshot_.stacks.push_back(std::move(stack));
        const auto index = static_cast<int32_t>(snapshot_.stacks.size() - 1);
        stack_of_list_.emplace(id, index);
        return index;
    }
};

}  // namespace

Expected<MemorySnapshot> snapshotFromPickle(const PickleValue& root) { return SnapshotReader().read(root); }

Expected<MemorySnapshot> readMemorySnapshot(std::string_view bytes) {
    auto root = readPickle(bytes);
    if (!root.ok()) return root.error();
    return snapshotFromPickle(*root);
}

Expected<MemorySnapshot> loadMemorySnapshotFile(const std::filesystem::path& path) {
    std::error_code ec;
    const auto length = std::filesystem::file_size(path, ec);
    std::ifstream in(path, std::ios::binary);
    if (ec || !in) return Error{"file", "cannot open " + path.string()};
    std::string bytes(static_cast<size_t>(length), '\0');
    if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
        return Error{"file", "cannot read " + path.string()};
    }
    auto snapshot = readMemorySnapshot(bytes);
    if (!snapshot.ok()) {
        Error e = snapshot.error();
        e.message = path.filename().string() + ": " + e.message;
        return e;
    }
    return snapshot;
}

std::vector<int64_t> snapshotDevices(const MemorySnapshot& snapshot) {
    std::vector<int64_t> devices;
    for (size_t d = 0; d < snapshot.device_traces.size(); ++d) {
        if (!snapshot.device_traces[d].empty()) devices.push_back(static_cast<int64_t>(d));
    }
    for (const auto& s : snapshot.segments) devices.push_back(s.device);
    std::sort(devices.begin(), devices.end());
    devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
    return devices;
}

}  // namespace trainmem
