// Names of pickle opcodes, for error messages that say which one was refused.
#include "core/snapshot/pickle_opcodes.h"

namespace trainmem::pickle_detail {

const char* opcodeName(std::uint8_t op) {
    switch (op) {
    case kMark: return "MARK";
    case kStop: return "STOP";
    case kPop: return "POP";
    case kPopMark: return "POP_MARK";
    case kDup: return "DUP";
    case kFloat: return "FLOAT";
    case kInt: return "INT";
    case kBinInt: return "BININT";
    case kBinInt1: return "BININT1";
    case kLong: return "LONG";
    case kBinInt2: return "BININT2";
    case kNone: return "NONE";
    case kPersId: return "PERSID";
    case kBinPersId: return "BINPERSID";
    case kReduce: return "REDUCE";
    case kString: return "STRING";
    case kBinString: return "BINSTRING";
    case kShortBinString: return "SHORT_BINSTRING";
    case kUnicode: return "UNICODE";
    case kBinUnicode: return "BINUNICODE";
    case kAppend: return "APPEND";
    case kBuild: return "BUILD";
    case kGlobal: return "GLOBAL";
    case kDict: return "DICT";
    case kEmptyDict: return "EMPTY_DICT";
    case kAppends: return "APPENDS";
    case kGet: return "GET";
    case kBinGet: return "BINGET";
    case kInst: return "INST";
    case kLongBinGet: return "LONG_BINGET";
    case kList: return "LIST";
    case kEmptyList: return "EMPTY_LIST";
    case kObj: return "OBJ";
    case kPut: return "PUT";
    case kBinPut: return "BINPUT";
    case kLongBinPut: return "LONG_BINPUT";
    case kSetItem: return "SETITEM";
    case kTuple: return "TUPLE";
    case kEmptyTuple: return "EMPTY_TUPLE";
    case kSetItems: return "SETITEMS";
    case kBinFloat: return "BINFLOAT";
    case kBinBytes: return "BINBYTES";
    case kShortBinBytes: return "SHORT_BINBYTES";
    case kProto: return "PROTO";
    case kNewObj: return "NEWOBJ";
    case kExt1: return "EXT1";
    case kExt2: return "EXT2";
    case kExt4: return "EXT4";
    case kTuple1: return "TUPLE1";
    case kTuple2: return "TUPLE2";
    case kTuple3: return "TUPLE3";
    case kNewTrue: return "NEWTRUE";
    case kNewFalse: return "NEWFALSE";
    case kLong1: return "LONG1";
    case kLong4: return "LONG4";
    case kShortBinUnicode: return "SHORT_BINUNICODE";
    case kBinUnicode8: return "BINUNICODE8";
    case kBinBytes8: return "BINBYTES8";
    case kEmptySet: return "EMPTY_SET";
    case kAddItems: return "ADDITEMS";
    case kFrozenSet: return "FROZENSET";
    case kNewObjEx: return "NEWOBJ_EX";
    case kStackGlobal: return "STACK_GLOBAL";
    case kMemoize: return "MEMOIZE";
    case kFrame: return "FRAME";
    case kByteArray8: return "BYTEARRAY8";
    case kNextBuffer: return "NEXT_BUFFER";
    case kReadonlyBuffer: return "READONLY_BUFFER";
    default: return nullptr;
    }
}

}  // namespace trainmem::pickle_detail
