#pragma once
// The kinds of a decoded pickle's values and the slot that holds one: the
// vocabulary shared by the reader, the document it fills and the views on it.
#include <cstdint>
#include <string_view>

namespace trainmem {

// Python's types, in the names Python gives them.
enum class PickleKind : std::uint8_t { None, Bool, Int, Float, String, Bytes, List, Tuple, Dict, Set };
std::string_view pickleKindName(PickleKind kind);  // "None", "bool", "int", "float", "str", ...

namespace pickle_detail {
struct Document;
// One value: a scalar held inline, or an index into the document's strings or
// containers. 16 bytes, so a trace of millions of events stays compact.
struct Slot {
    std::uint64_t bits = 0;  // int64, double bits, bool, or an index, by kind
    PickleKind kind = PickleKind::None;
};
}  // namespace pickle_detail

}  // namespace trainmem
