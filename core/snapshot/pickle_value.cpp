// Read-only accessors of a decoded pickle (see pickle_reader.h).
#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "core/snapshot/pickle_document.h"
#include "core/snapshot/pickle_reader.h"

namespace trainmem {

using pickle_detail::Container;
using pickle_detail::Document;
using pickle_detail::Slot;

std::string_view pickleKindName(PickleKind kind) {
    switch (kind) {
    case PickleKind::None: return "None";
    case PickleKind::Bool: return "bool";
    case PickleKind::Int: return "int";
    case PickleKind::Float: return "float";
    case PickleKind::String: return "str";
    case PickleKind::Bytes: return "bytes";
    case PickleKind::List: return "list";
    case PickleKind::Tuple: return "tuple";
    case PickleKind::Dict: return "dict";
    case PickleKind::Set: return "set";
    }
    return "unknown";
}

namespace {

bool isContainer(PickleKind kind) {
    return kind == PickleKind::List || kind == PickleKind::Tuple || kind == PickleKind::Dict ||
           kind == PickleKind::Set;
}

}  // namespace

std::optional<bool> PickleView::asBool() const {
    if (slot_.kind != PickleKind::Bool) return std::nullopt;
    return slot_.bits != 0;
}

std::optional<std::int64_t> PickleView::asInt() const {
    if (slot_.kind != PickleKind::Int) return std::nullopt;
    return static_cast<std::int64_t>(slot_.bits);
}

std::optional<double> PickleView::asFloat() const {
    if (slot_.kind != PickleKind::Float) return std::nullopt;
    return std::bit_cast<double>(slot_.bits);
}

std::optional<std::string_view> PickleView::asString() const {
    if (slot_.kind != PickleKind::String || !document_) return std::nullopt;
    const auto& span = document_->texts[slot_.bits];
    return std::string_view(document_->text).substr(span.offset, span.size);
}

std::optional<std::string_view> PickleView::asBytes() const {
    if (slot_.kind != PickleKind::Bytes || !document_) return std::nullopt;
    const auto& span = document_->texts[slot_.bits];
    return std::string_view(document_->text).substr(span.offset, span.size);
}

std::size_t PickleView::size() const {
    if (!isContainer(slot_.kind) || !document_) return 0;
    const Container& c = document_->containers[slot_.bits];
    return c.kind == PickleKind::Dict ? c.items.size() / 2 : c.items.size();
}

PickleView PickleView::at(std::size_t i) const {
    if (slot_.kind == PickleKind::Dict || i >= size()) return {};
    return {document_, document_->containers[slot_.bits].items[i]};
}

PickleView PickleView::keyAt(std::size_t i) const {
    if (slot_.kind != PickleKind::Dict || i >= size()) return {};
    return {document_, document_->containers[slot_.bits].items[2 * i]};
}

PickleView PickleView::valueAt(std::size_t i) const {
    if (slot_.kind != PickleKind::Dict || i >= size()) return {};
    return {document_, document_->containers[slot_.bits].items[2 * i + 1]};
}

std::optional<PickleView> PickleView::get(std::string_view key) const {
    if (slot_.kind != PickleKind::Dict || !document_) return std::nullopt;
    const auto& items = document_->containers[slot_.bits].items;
    // Backwards, so the last of duplicate keys wins as in a Python dict.
    for (std::size_t i = items.size(); i >= 2; i -= 2) {
        const Slot& k = items[i - 2];
        if (k.kind != PickleKind::String) continue;
        const auto& span = document_->texts[k.bits];
        if (std::string_view(document_->text).substr(span.offset, span.size) == key) {
            return PickleView(document_, items[i - 1]);
        }
    }
    return std::nullopt;
}

std::optional<std::size_t> PickleView::containerId() const {
    if (!isContainer(slot_.kind) || !document_) return std::nullopt;
    return static_cast<std::size_t>(slot_.bits);
}

namespace pickle_detail {

// Walks the containers reachable from the root once (iteratively, so a deep
// file cannot overflow this stack either) and rejects cycles and nesting
// deeper than the limit. A shared container is expanded once and remembers
// its height, so the walk is linear even when the graph has many paths.
std::optional<std::string> checkShape(const Document& doc, const Slot& root, std::size_t max_depth) {
    if (!isContainer(root.kind)) return std::nullopt;
    constexpr std::uint32_t kUnseen = 0, kOpen = ~std::uint32_t(0);
    // kUnseen, kOpen, or the finished container's height (>= 1).
    std::vector<std::uint32_t> height(doc.containers.size(), kUnseen);
    struct Frame {
        std::size_t container;
        std::size_t next;
        std::uint32_t tallest_child;
    };
    auto tooDeep = [&] {
        return "containers nested deeper than " + std::to_string(max_depth) + " levels; a snapshot needs about 6";
    };
    if (max_depth == 0) return tooDeep();
    std::vector<Frame> path{{static_cast<std::size_t>(root.bits), 0, 0}};
    height[root.bits] = kOpen;
    while (!path.empty()) {
        Frame& top = path.back();
        const auto& items = doc.containers[top.container].items;
        if (top.next == items.size()) {
            const std::uint32_t h = top.tallest_child + 1;
            height[top.container] = h;
            path.pop_back();
            if (!path.empty()) path.back().tallest_child = std::max(path.back().tallest_child, h);
            continue;
        }
        const Slot child = items[top.next++];
        if (!isContainer(child.kind)) continue;
        const std::uint32_t h = height[child.bits];
        if (h == kOpen) return "a container contains itself (a reference cycle); snapshots are trees";
        if (h != kUnseen) {
            if (path.size() + h > max_depth) return tooDeep();
            top.tallest_child = std::max(top.tallest_child, h);
            continue;
        }
        if (path.size() + 1 > max_depth) return tooDeep();
        height[child.bits] = kOpen;
        path.push_back({static_cast<std::size_t>(child.bits), 0, 0});
    }
    return std::nullopt;
}

}  // namespace pickle_detail

}  // namespace trainmem
