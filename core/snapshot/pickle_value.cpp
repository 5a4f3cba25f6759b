// Read-only accessors of a decoded pickle (see pickle_reader.h).
#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "core/snapshot/pickle_value.h"

#include "core/snapshot/pickle_document.h"

namespace trainmem {

using pickle_detail::Container;
using pickle_detail::Document;
using pickle_detail::Slot;

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

}  // namespace trainmem
