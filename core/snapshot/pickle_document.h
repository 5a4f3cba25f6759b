#pragma once
// Storage behind PickleValue; private to pickle_reader.cpp and
// pickle_value.cpp. Strings live back to back in one buffer and containers in
// one vector, so decoding does not allocate per scalar.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/snapshot/pickle_kind.h"

namespace trainmem::pickle_detail {

struct TextSpan {
    std::size_t offset = 0;  // into Document::text
    std::size_t size = 0;
};

struct Container {
    PickleKind kind = PickleKind::List;
    std::vector<Slot> items;  // a dict stores key, value, key, value, ...
};

struct Document {
    std::string text;
    std::vector<TextSpan> texts;  // Slot::bits of a String or Bytes indexes this
    std::vector<Container> containers;  // Slot::bits of a List/Tuple/Dict/Set indexes this
};

// Rejects a cycle or nesting deeper than max_depth below `root`; the
// problem in words, or nullopt. Linear in the containers reachable.
std::optional<std::string> checkShape(const Document& doc, const Slot& root, std::size_t max_depth);

}  // namespace trainmem::pickle_detail
