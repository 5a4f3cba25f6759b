#pragma once
// Read-only views of a decoded pickle (pickle_value.cpp); the reader that
// makes them is pickle_reader.h.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "core/snapshot/pickle_kind.h"

namespace trainmem {


// A read-only view of one decoded value that does not own its document:
// valid while the PickleValue it came from lives. Cheap to copy (no
// reference counting), for loops over millions of events. Accessors never
// fail hard: asking for the wrong kind gives std::nullopt, and an index out
// of range gives None.
class PickleView {
public:
    PickleView() = default;  // None
    PickleView(const pickle_detail::Document* document, pickle_detail::Slot slot) : document_(document), slot_(slot) {}

    PickleKind kind() const { return slot_.kind; }
    bool is(PickleKind k) const { return slot_.kind == k; }

    std::optional<bool> asBool() const;
    // Int only: a Python bool is not accepted as an int here, since a snapshot
    // never stores sizes as booleans and accepting one would hide a bad file.
    std::optional<std::int64_t> asInt() const;
    std::optional<double> asFloat() const;  // Float only
    std::optional<std::string_view> asString() const;  // valid UTF-8
    std::optional<std::string_view> asBytes() const;

    // Items of a list, tuple or set; key/value pairs of a dict; 0 otherwise.
    // Dicts keep pairs in pickle order, duplicates included (see get()); sets
    // keep their items as added, without removing duplicates.
    std::size_t size() const;
    PickleView at(std::size_t i) const;       // list/tuple/set item
    PickleView keyAt(std::size_t i) const;    // dict key
    PickleView valueAt(std::size_t i) const;  // dict value
    // Value for a string key of a dict. When a key occurs twice the later
    // pair wins, as it does in the dict Python would build.
    std::optional<PickleView> get(std::string_view key) const;

    // Identity of a container (list, tuple, dict, set) within its document:
    // two values with the same id are the same Python object.
    std::optional<std::size_t> containerId() const;

    const pickle_detail::Slot& slot() const { return slot_; }

private:
    const pickle_detail::Document* document_ = nullptr;
    pickle_detail::Slot slot_;
};

// A decoded value that keeps its document alive: what readPickle returns,
// and what its accessors return, so any value can outlive the root.
class PickleValue {
public:
    PickleValue() = default;  // None, with no document
    PickleValue(std::shared_ptr<const pickle_detail::Document> document, pickle_detail::Slot slot)
        : document_(std::move(document)), slot_(slot) {}

    PickleView view() const { return {document_.get(), slot_}; }

    PickleKind kind() const { return slot_.kind; }
    bool is(PickleKind k) const { return slot_.kind == k; }
    std::optional<bool> asBool() const { return view().asBool(); }
    std::optional<std::int64_t> asInt() const { return view().asInt(); }
    std::optional<double> asFloat() const { return view().asFloat(); }
    std::optional<std::string_view> asString() const { return view().asString(); }
    std::optional<std::string_view> asBytes() const { return view().asBytes(); }
    std::size_t size() const { return view().size(); }
    PickleValue at(std::size_t i) const { return wrap(view().at(i)); }
    PickleValue keyAt(std::size_t i) const { return wrap(view().keyAt(i)); }
    PickleValue valueAt(std::size_t i) const { return wrap(view().valueAt(i)); }
    std::optional<PickleValue> get(std::string_view key) const {
        const auto v = view().get(key);
        return v ? std::optional<PickleValue>(wrap(*v)) : std::nullopt;
    }
    std::optional<std::size_t> containerId() const { return view().containerId(); }

private:
    std::shared_ptr<const pickle_detail::Document> document_;
    pickle_detail::Slot slot_;

    PickleValue wrap(const PickleView& v) const { return {document_, v.slot()}; }
};

}  // namespace trainmem
