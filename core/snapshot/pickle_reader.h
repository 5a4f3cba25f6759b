#pragma once
// A restricted unpickler for the files torch.cuda.memory._dump_snapshot
// writes (pickle.dump of plain dicts, lists, strings and ints). It decodes the
// data opcodes of pickle protocols 0-5 and refuses every opcode that imports a
// global or calls one (GLOBAL, REDUCE, BUILD, ...): a snapshot never needs
// code execution, and a file from someone else must not get to run any.
// PyTorch's own viewer (torch/utils/viz/MemoryViz.js, unpickle()) makes the
// same choice with an even smaller opcode set.
//
// The decoded value is a graph owned by one shared document: a pickle may
// refer to one object many times (torch shares frame lists between events),
// and those references stay shared instead of being copied, so a small file
// cannot expand into a huge tree. The reader rejects cycles and nesting deeper
// than PickleLimits::max_depth, so a recursive walk from the root is bounded
// in depth; a walk that visits every *path* of a graph with shared objects can
// still take exponential time, and should dedupe by containerId().
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "core/base/error.h"
#include "core/snapshot/pickle_value.h"

namespace trainmem {

struct PickleLimits {
    std::size_t max_depth = 256;  // containers inside containers; a snapshot needs 6
};

// Decodes one pickle that must fill `bytes` exactly (STOP is the last byte).
// Errors have field "pickle" and a message that names the byte offset, e.g.
// "refusing opcode REDUCE at byte 1234: snapshots never need code execution".
// Integers wider than 64 bits are an error, not clamped: no field of a
// snapshot comes near 2^63, so such a number means a file that is not one.
Expected<PickleValue> readPickle(std::string_view bytes, const PickleLimits& limits = {});

}  // namespace trainmem
