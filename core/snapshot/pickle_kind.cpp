#include "core/snapshot/pickle_kind.h"

namespace trainmem {

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

}  // namespace trainmem
