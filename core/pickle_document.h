#pragma once
// Storage behind PickleValue; private to pickle_reader.cpp and
// pickle_value.cpp. Strings live back to back in one buffer and containers in
// one vector, so decoding does not allocate per scalar.
#include <cstdint>
#include <string>
#include <vector>

#include "core/pickle_reader.h"

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

}  // namespace trainmem::pickle_detail
