// Turning the unpickled dict into a MemorySnapshot, checking its structure.
// Key names and optional keys follow torch/csrc/cuda/memory_snapshot.cpp
// (_memory_snapshot_pickled) and the legacy handling in torch's viewer
// (torch/utils/viz/MemoryViz.js, annotate_snapshot).
#include <algorithm>
#include <cstdio>
#include <limits>
#include <unordered_map>
#include <utility>

#include "core/snapshot/memory_snapshot.h"

#include "core/base/json_input.h"  // readInputFile
#include "core/base/units.h"

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

// Where a value sits, as a chain on the stack; spelled out only for an
// error, so millions of good events cost no string building.
struct Path {
    const Path* parent = nullptr;
    std::string_view key;  // ".key" (or the root's name) when not empty
    size_t index = 0;      // "[index]" when key is empty

    Path field(std::string_view k) const { return Path{this, k, 0}; }
    Path item(size_t i) const { return Path{this, {}, i}; }
    std::string str() const {
        std::string head = parent ? parent->str() : std::string();
        if (key.empty()) return head + "[" + std::to_string(index) + "]";
        return head.empty() ? std::string(key) : head + "." + std::string(key);
    }
};

Error wrongKind(const Path& path, std::string_view expected, const PickleView& v) {
    return Error{path.str(), "must be " + std::string(expected) + ", found " + std::string(pickleKindName(v.kind()))};
}

// A pickle may refer to one object from many places. torch writes every
// event, segment and block once, so a repeat means a crafted file that
// would multiply the work (a list holding the same 10^6-event trace 10^6
// times); it is refused instead of walked.
class DistinctObjects {
public:
    bool firstVisit(const PickleView& v) {
        const auto id = v.containerId();
        if (!id) return true;
        if (*id >= seen_.size()) seen_.resize(std::max(*id + 1, seen_.size() * 2), false);
        if (seen_[*id]) return false;
        seen_[*id] = true;
        return true;
    }

private:
    std::vector<bool> seen_;
};

Error repeated(const Path& path) {
    return Error{path.str(), "the same object appears twice; torch writes each one once, so this file was crafted"};
}

Expected<int64_t> integer(const PickleView& v, const Path& path) {
    if (auto i = v.asInt()) return *i;
    return wrongKind(path, "an integer", v);
}

Expected<int64_t> size(const PickleView& v, const Path& path) {
    const auto i = v.asInt();
    if (!i || *i < 0 || *i > kMaxSnapshotSizeBytes) return Error{path.str(), "must be a non-negative integer no larger than 2^50"};
    return *i;
}

Expected<int64_t> address(const PickleView& v, const Path& path) {
    const auto i = v.asInt();
    if (!i || *i < 0) return Error{path.str(), "must be a non-negative integer"};
    return *i;
}

Expected<std::string> text(const PickleView& v, const Path& path) {
    if (auto s = v.asString()) return std::string(*s);
    return wrongKind(path, "a string", v);
}

// Parses a present value into `out`; a missing one is an error.
template <class T, class Parse>
Status readRequired(const std::optional<PickleView>& v, const Path& path, Parse parse, T& out) {
    if (!v) return Error{path.str(), "missing"};
    auto parsed = parse(*v, path);
    if (!parsed.ok()) return parsed.error();
    out = std::move(*parsed);
    return ok();
}

template <class T, class Parse>
Status readOptional(const std::optional<PickleView>& v, const Path& path, Parse parse, std::optional<T>& out) {
    if (!v) return ok();
    auto parsed = parse(*v, path);
    if (!parsed.ok()) return parsed.error();
    out = std::move(*parsed);
    return ok();
}

class SnapshotReader {
public:
    explicit SnapshotReader(size_t input_bytes) : frame_text_budget_((size_t{64} << 20) + 16 * input_bytes) {}

    Expected<MemorySnapshot> read(const PickleView& root) {
        const Path root_path{nullptr, "snapshot"};
        if (!root.is(PickleKind::Dict)) {
            return wrongKind(root_path,
                             "a dict with 'segments' and 'device_traces' (what torch.cuda.memory._dump_snapshot writes)", root);
        }
        const auto segments = root.get("segments");
        const auto traces = root.get("device_traces");
        const Path segments_path{nullptr, "segments"}, traces_path{nullptr, "device_traces"};
        if (!segments) return Error{"segments", "missing; a torch memory snapshot has 'segments' and 'device_traces'"};
        if (!traces) return Error{"device_traces", "missing; a torch memory snapshot has 'segments' and 'device_traces'"};
        if (!segments->is(PickleKind::List)) return wrongKind(segments_path, "a list", *segments);
        if (!traces->is(PickleKind::List)) return wrongKind(traces_path, "a list", *traces);

        snapshot_.segments.reserve(segments->size());
        for (size_t i = 0; i < segments->size(); ++i) {
            if (Status s = readSegment(segments->at(i), segments_path.item(i)); !s.ok()) return s.error();
        }
        snapshot_.device_traces.resize(traces->size());
        for (size_t d = 0; d < traces->size(); ++d) {
            const Path path = traces_path.item(d);
            const PickleView trace = traces->at(d);
            if (!trace.is(PickleKind::List)) return wrongKind(path, "a list of events", trace);
            if (!distinct_.firstVisit(trace)) return repeated(path);
            auto& events = snapshot_.device_traces[d];
            events.resize(trace.size());
            for (size_t i = 0; i < trace.size(); ++i) {
                if (Status s = readEvent(trace.at(i), path.item(i), events[i]); !s.ok()) return s.error();
            }
        }
        return std::move(snapshot_);
    }

private:
    MemorySnapshot snapshot_;
    DistinctObjects distinct_;
    std::vector<int32_t> stack_of_list_;  // by frames list container id: -2 unseen, else index in stacks
    std::unordered_map<size_t, StackFrame> frame_of_dict_;  // by frame dict container id
    size_t frame_text_bytes_ = 0;
    size_t frame_text_budget_;

    Status readSegment(const PickleView& s, const Path& path) {
        if (!s.is(PickleKind::Dict)) return wrongKind(path, "a dict", s);
        if (!distinct_.firstVisit(s)) return repeated(path);
        SnapshotSegment seg;
        std::optional<int64_t> requested;
        Status st = readRequired(s.get("device"), path.field("device"), address, seg.device);
        if (st.ok()) st = readRequired(s.get("address"), path.field("address"), address, seg.address);
        if (st.ok()) st = readRequired(s.get("total_size"), path.field("total_size"), size, seg.total_size);
        if (st.ok()) st = readRequired(s.get("allocated_size"), path.field("allocated_size"), size, seg.allocated_size);
        if (st.ok()) st = readRequired(s.get("active_size"), path.field("active_size"), size, seg.active_size);
        if (st.ok()) st = readRequired(s.get("stream"), path.field("stream"), integer, seg.stream);
        if (st.ok()) st = readRequired(s.get("segment_type"), path.field("segment_type"), text, seg.segment_type);
        if (st.ok()) st = readOptional(s.get("requested_size"), path.field("requested_size"), size, requested);
        if (!st.ok()) return st;
        seg.requested_size = requested.value_or(0);
        if (const auto expandable = s.get("is_expandable")) {
            if (!expandable->asBool()) return wrongKind(path.field("is_expandable"), "a bool", *expandable);
            seg.is_expandable = *expandable->asBool();
        }

        const Path blocks_path = path.field("blocks");
        const auto blocks = s.get("blocks");
        if (!blocks) return Error{blocks_path.str(), "missing"};
        if (!blocks->is(PickleKind::List)) return wrongKind(blocks_path, "a list", *blocks);
        if (!distinct_.firstVisit(*blocks)) return repeated(blocks_path);
        int64_t next_address = seg.address;  // legacy files: blocks lie back to back
        seg.blocks.reserve(blocks->size());
        for (size_t i = 0; i < blocks->size(); ++i) {
            const Path bpath = blocks_path.item(i);
            const PickleView b = blocks->at(i);
            if (!b.is(PickleKind::Dict)) return wrongKind(bpath, "a dict", b);
            if (!distinct_.firstVisit(b)) return repeated(bpath);
            SnapshotBlock block;
            std::string state;
            std::optional<int64_t> block_address, block_requested;
            Status bs = readRequired(b.get("size"), bpath.field("size"), size, block.size);
            if (bs.ok()) bs = readRequired(b.get("state"), bpath.field("state"), text, state);
            if (bs.ok()) bs = readOptional(b.get("address"), bpath.field("address"), address, block_address);
            if (bs.ok()) bs = readOptional(b.get("requested_size"), bpath.field("requested_size"), size, block_requested);
            if (!bs.ok()) return bs;
            if (state == "active_allocated") block.state = BlockState::ActiveAllocated;
            // torch writes active_pending_free; its documentation says active_awaiting_free.
            else if (state == "active_pending_free" || state == "active_awaiting_free") block.state = BlockState::ActivePendingFree;
            else if (state == "inactive") block.state = BlockState::Inactive;
            else return Error{bpath.field("state").str(), "must be active_allocated, active_pending_free or inactive, found '" + state + "'"};
            block.address = block_address.value_or(next_address);
            block.requested_size = block_requested.value_or(block.size);
            if (block.address > std::numeric_limits<int64_t>::max() - block.size) {
                return Error{bpath.field("address").str(), "address plus size passes 2^63"};
            }
            next_address = block.address + block.size;
            seg.blocks.push_back(block);
        }
        snapshot_.segments.push_back(std::move(seg));
        return ok();
    }

    // The hot path: one pass over the event's pairs instead of a lookup per key.
    Status readEvent(const PickleView& e, const Path& path, TraceEvent& event) {
        if (!e.is(PickleKind::Dict)) return wrongKind(path, "a dict", e);
        if (!distinct_.firstVisit(e)) return repeated(path);
        std::optional<PickleView> action, addr, bytes, stream, time_us, frames, device_free;
        for (size_t i = 0, n = e.size(); i < n; ++i) {
            const auto key = e.keyAt(i).asString();
            if (!key) continue;
            const PickleView v = e.valueAt(i);
            if (*key == "action") action = v;
            else if (*key == "addr") addr = v;
            else if (*key == "size") bytes = v;
            else if (*key == "stream") stream = v;
            else if (*key == "time_us") time_us = v;
            else if (*key == "frames") frames = v;
            else if (*key == "device_free") device_free = v;
        }
        if (!action) return Error{path.field("action").str(), "missing"};
        const auto name = action->asString();
        if (!name) return wrongKind(path.field("action"), "a string", *action);
        event.action = actionFromName(*name);
        Status st = event.action == TraceAction::Oom
                        ? readOptional(device_free, path.field("device_free"), size, event.device_free)
                        : readRequired(addr, path.field("addr"), address, event.addr);
        if (st.ok()) st = readRequired(bytes, path.field("size"), size, event.size);
        if (st.ok()) st = readRequired(stream, path.field("stream"), integer, event.stream);
        if (st.ok()) st = readOptional(time_us, path.field("time_us"), integer, event.time_us);
        if (!st.ok()) return st;
        if (frames) {
            auto stack = readStack(*frames, path.field("frames"));
            if (!stack.ok()) return stack.error();
            event.stack = *stack;
        }
        return ok();
    }

    TraceAction actionFromName(std::string_view name) {
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
            names.emplace_back(name);
        }
        return TraceAction::Unrecognized;
    }

    // Frames lists are shared between events in torch's files; each distinct
    // list is read once and its index reused. Frame dicts can be shared too:
    // each distinct one is read once (a 20,000-key dict referenced 200,000
    // times is one lookup, not 200,000), and the text its copies take is
    // counted against a budget proportional to the file, since a copy of a
    // shared 1 MB filename per reference would allocate out of proportion.
    Expected<int32_t> readStack(const PickleView& frames, const Path& path) {
        if (!frames.is(PickleKind::List)) return wrongKind(path, "a list of frames", frames);
        if (frames.size() == 0) return -1;
        const size_t id = *frames.containerId();
        if (id >= stack_of_list_.size()) stack_of_list_.resize(std::max(id + 1, stack_of_list_.size() * 2), -2);
        if (stack_of_list_[id] != -2) return stack_of_list_[id];
        CallStack stack;
        stack.reserve(frames.size());
        for (size_t i = 0; i < frames.size(); ++i) {
            const Path fpath = path.item(i);
            const PickleView f = frames.at(i);
            if (!f.is(PickleKind::Dict)) return wrongKind(fpath, "a dict with filename, line and name", f);
            const size_t dict_id = *f.containerId();
            auto known = frame_of_dict_.find(dict_id);
            if (known == frame_of_dict_.end()) {
                StackFrame frame;
                Status st = readRequired(f.get("filename"), fpath.field("filename"), text, frame.filename);
                if (st.ok()) st = readRequired(f.get("line"), fpath.field("line"), integer, frame.line);
                if (st.ok()) st = readRequired(f.get("name"), fpath.field("name"), text, frame.name);
                if (!st.ok()) return st.error();
                known = frame_of_dict_.emplace(dict_id, std::move(frame)).first;
            }
            const StackFrame& frame = known->second;
            frame_text_bytes_ += frame.filename.size() + frame.name.size() + sizeof(StackFrame);
            if (frame_text_bytes_ > frame_text_budget_) {
                return Error{fpath.str(), "the call stacks repeat more frame text than " +
                                               std::to_string(frame_text_budget_ >> 20) +
                                               " MiB (64 MiB + 16x the file); not a real snapshot"};
            }
            stack.push_back(frame);
        }
        snapshot_.stacks.push_back(std::move(stack));
        const auto index = static_cast<int32_t>(snapshot_.stacks.size() - 1);
        stack_of_list_[id] = index;
        return index;
    }
};

}  // namespace

Expected<MemorySnapshot> snapshotFromPickle(const PickleValue& root, size_t input_bytes) {
    return SnapshotReader(input_bytes).read(root.view());
}

Expected<MemorySnapshot> readMemorySnapshot(std::string_view bytes) {
    auto root = readPickle(bytes);
    if (!root.ok()) return root.error();
    return snapshotFromPickle(*root, bytes.size());
}

// Errors name the file as their field, and keep the path inside it in the
// message: "run/snap.pickle: device_traces[0][17].size: must be ...".
Expected<MemorySnapshot> loadMemorySnapshotFile(const std::filesystem::path& path) {
    auto read = readInputFile(path, kMaxSnapshotFileBytes);
    if (!read) return read.error();
    const std::string bytes = std::move(*read);
    auto snapshot = readMemorySnapshot(bytes);
    if (!snapshot.ok()) {
        const Error& e = snapshot.error();
        return Error{path.string(), e.field == "pickle" ? e.message : e.text()};
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

std::optional<std::string> snapshotMismatch(int64_t measured, int64_t estimated) {
    if (measured <= 0 || estimated <= 0) return std::nullopt;
    const double ratio = static_cast<double>(std::max(measured, estimated)) / static_cast<double>(std::min(measured, estimated));
    if (ratio <= kSnapshotMismatchFactor) return std::nullopt;
    char factor[32];
    std::snprintf(factor, sizeof factor, "%.1f", ratio);
    return std::string("this snapshot does not look like this scenario: its allocated peak (") +
           formatBytes(measured) + ") and the estimate's (" + formatBytes(estimated) +
           ") are " + factor + "x apart; set the scenario the snapshot was recorded from (model, batch, sequence, "
           "layout) before reading the error";
}

}  // namespace trainmem
