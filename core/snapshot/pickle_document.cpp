// The decoded document's shape check (pickle_document.h).
#include "core/snapshot/pickle_document.h"

#include <algorithm>
#include <string>
#include <vector>

namespace trainmem {

namespace {

bool isContainer(PickleKind kind) {
    return kind == PickleKind::List || kind == PickleKind::Tuple || kind == PickleKind::Dict ||
           kind == PickleKind::Set;
}

}  // namespace

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
