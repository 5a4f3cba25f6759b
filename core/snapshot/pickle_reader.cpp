// The restricted unpickler (see pickle_reader.h). Opcode semantics follow
// CPython's Lib/pickle.py (_Unpickler.load_*) and the opcode table of
// Lib/pickletools.py; the refusal of GLOBAL/REDUCE follows PyTorch's viewer,
// torch/utils/viz/MemoryViz.js, whose unpickle() knows data opcodes only.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/snapshot/pickle_document.h"
#include "core/snapshot/pickle_opcodes.h"
#include "core/snapshot/pickle_reader.h"

namespace trainmem {

using pickle_detail::Container;
using pickle_detail::Document;
using pickle_detail::Slot;
using pickle_detail::TextSpan;
using namespace pickle_detail;  // opcode bytes, opcodeName, checkShape

namespace {

// Strict UTF-8 (no surrogates, no overlong forms), as Python's decoder and
// nlohmann_json's dump both require; checked once per string so every later
// consumer can trust asString().
bool isValidUtf8(std::string_view s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const auto* end = p + s.size();
    while (p < end) {
        const unsigned char c = *p;
        if (c < 0x80) {
            ++p;
            continue;
        }
        std::size_t n = 0;
        std::uint32_t cp = 0;
        if ((c & 0xE0) == 0xC0) { n = 1; cp = c & 0x1F; }
        else if ((c & 0xF0) == 0xE0) { n = 2; cp = c & 0x0F; }
        else if ((c & 0xF8) == 0xF0) { n = 3; cp = c & 0x07; }
        else return false;
        if (static_cast<std::size_t>(end - p) <= n) return false;
        for (std::size_t i = 1; i <= n; ++i) {
            if ((p[i] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (p[i] & 0x3F);
        }
        static constexpr std::uint32_t kMinimum[] = {0, 0x80, 0x800, 0x10000};
        if (cp < kMinimum[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        p += n + 1;
    }
    return true;
}

bool isAscii(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

class Unpickler {
public:
    Unpickler(std::string_view input, const PickleLimits& limits)
        : in_(input), limits_(limits), doc_(std::make_shared<Document>()) {
        // torch's files spend about 40 bytes per container; reserving only
        // claims address space, so an overestimate costs nothing real.
        doc_->containers.reserve(input.size() / 32);
        memo_.reserve(input.size() / 32);
    }

    Expected<PickleValue> run() {
        while (true) {
            if (pos_ >= in_.size()) {
                return Error{"pickle", "truncated at byte " + std::to_string(pos_) +
                                           ": the data ended before the STOP opcode"};
            }
            op_pos_ = pos_;
            op_ = static_cast<std::uint8_t>(in_[pos_++]);
            if (op_ == kStop) break;
            if (!step()) return std::move(*error_);
        }
        if (!marks_.empty() || stack_.size() != 1) {
            return Error{"pickle", "malformed at byte " + std::to_string(op_pos_) + ": STOP found " +
                                       std::to_string(stack_.size()) + " values and " +
                                       std::to_string(marks_.size()) + " open MARKs; expected one value"};
        }
        if (pos_ != in_.size()) {
            return Error{"pickle", std::to_string(in_.size() - pos_) + " bytes of trailing data after STOP at byte " +
                                       std::to_string(op_pos_)};
        }
        const Slot root = stack_.back();
        if (auto problem = checkShape(*doc_, root, limits_.max_depth)) return Error{"pickle", std::move(*problem)};
        return PickleValue(std::move(doc_), root);
    }

private:
    std::string_view in_;
    PickleLimits limits_;
    std::shared_ptr<Document> doc_;
    std::size_t pos_ = 0;     // next unread byte
    std::size_t op_pos_ = 0;  // offset of the opcode being decoded, for messages
    std::uint8_t op_ = 0;
    std::vector<Slot> stack_;
    std::vector<std::size_t> marks_;  // stack sizes at each MARK
    // The memo is dense in practice (MEMOIZE, or PUT 0, 1, 2, ...); an index
    // far ahead goes to the map so a hostile LONG_BINPUT 4e9 allocates nothing.
    std::vector<Slot> memo_;
    std::unordered_map<std::uint64_t, Slot> sparse_memo_;
    std::optional<Error> error_;

    std::string here() const { return std::string(opcodeName(op_)) + " at byte " + std::to_string(op_pos_); }

    bool fail(std::string message) {
        error_ = Error{"pickle", std::move(message)};
        return false;
    }

    // Checked before any allocation, so a length field of 2^60 costs nothing.
    bool need(std::uint64_t n) {
        const std::size_t left = in_.size() - pos_;
        if (n > left) {
            return fail("truncated: " + here() + " needs " + std::to_string(n) + " more bytes, only " +
                        std::to_string(left) + " remain");
        }
        return true;
    }

    std::uint64_t readLittleEndian(std::size_t n) {
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t(static_cast<std::uint8_t>(in_[pos_ + i])) << (8 * i);
        pos_ += n;
        return v;
    }

    bool readLine(std::string_view& line) {
        const std::size_t nl = in_.find('\n', pos_);
        if (nl == std::string_view::npos) return fail("truncated: " + here() + " has no terminating newline");
        line = in_.substr(pos_, nl - pos_);
        pos_ = nl + 1;
        return true;
    }

    std::size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }

    bool requireAboveMark(std::size_t n) {
        if (stack_.size() - floor() >= n) return true;
        return fail("stack underflow: " + here() + " needs " + std::to_string(n) +
                    " value(s) above the last MARK");
    }

    bool popMark(std::size_t& mark) {
        if (marks_.empty()) return fail("stack underflow: " + here() + " needs a MARK and none is open");
        mark = marks_.back();
        marks_.pop_back();
        return true;
    }

    Slot newText(PickleKind kind, std::string_view bytes) {
        doc_->texts.push_back(TextSpan{doc_->text.size(), bytes.size()});
        doc_->text.append(bytes);
        return Slot{doc_->texts.size() - 1, kind};
    }

    Slot newContainer(PickleKind kind, std::vector<Slot> items = {}) {
        doc_->containers.push_back(Container{kind, std::move(items)});
        return Slot{doc_->containers.size() - 1, kind};
    }

    bool pushInt(std::int64_t v) {
        stack_.push_back(Slot{static_cast<std::uint64_t>(v), PickleKind::Int});
        return true;
    }

    bool pushText(PickleKind kind, std::uint64_t length) {
        if (!need(length)) return false;
        const std::string_view bytes = in_.substr(pos_, static_cast<std::size_t>(length));
        pos_ += static_cast<std::size_t>(length);
        if (kind == PickleKind::String && !isValidUtf8(bytes)) return fail(here() + ": string is not valid UTF-8");
        stack_.push_back(newText(kind, bytes));
        return true;
    }

    // Python 3 reads protocol-0/1 byte strings as ASCII text by default.
    bool pushAsciiText(std::uint64_t length) {
        if (!need(length)) return false;
        const std::string_view bytes = in_.substr(pos_, static_cast<std::size_t>(length));
        pos_ += static_cast<std::size_t>(length);
        if (!isAscii(bytes)) return fail(here() + ": byte string is not ASCII, which Python 3 would refuse too");
        stack_.push_back(newText(PickleKind::String, bytes));
        return true;
    }

    // LONG1/LONG4: little-endian two's complement of any width.
    bool pushLong(std::uint64_t n) {
        if (!need(n)) return false;
        const auto* b = reinterpret_cast<const unsigned char*>(in_.data() + pos_);
        std::uint64_t v = 0;
        const std::size_t low = static_cast<std::size_t>(std::min<std::uint64_t>(n, 8));
        for (std::size_t i = 0; i < low; ++i) v |= std::uint64_t(b[i]) << (8 * i);
        const bool negative = low > 0 && (b[low - 1] & 0x80) != 0;
        if (negative && low < 8) v |= ~std::uint64_t(0) << (8 * low);
        const unsigned char fill = negative ? 0xFF : 0x00;
        for (std::uint64_t i = 8; i < n; ++i) {
            if (b[i] != fill) return fail(here() + ": integer wider than 64 bits; no snapshot field needs one");
        }
        pos_ += static_cast<std::size_t>(n);
        return pushInt(static_cast<std::int64_t>(v));
    }

    bool parseDecimal(std::string_view text, std::int64_t& out) {
        if (!text.empty() && text.front() == '+') text.remove_prefix(1);
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
        if (ec == std::errc::result_out_of_range) {
            return fail(here() + ": integer wider than 64 bits; no snapshot field needs one");
        }
        if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
            return fail(here() + ": expected a decimal integer");
        }
        return true;
    }

    bool memoPut(std::uint64_t index) {
        if (!requireAboveMark(1)) return false;
        const Slot top = stack_.back();
        if (index < memo_.size()) {
            memo_[static_cast<std::size_t>(index)] = top;
        } else if (index == memo_.size()) {
            sparse_memo_.erase(index);
            memo_.push_back(top);
            // Entries parked in the map move to the vector once it reaches them.
            if (sparse_memo_.empty()) return true;
            for (auto it = sparse_memo_.find(memo_.size()); it != sparse_memo_.end();
                 it = sparse_memo_.find(memo_.size())) {
                memo_.push_back(it->second);
                sparse_memo_.erase(it);
            }
        } else {
            sparse_memo_[index] = top;
        }
        return true;
    }

    bool memoGet(std::uint64_t index) {
        if (index < memo_.size()) {
            stack_.push_back(memo_[static_cast<std::size_t>(index)]);
            return true;
        }
        const auto it = sparse_memo_.find(index);
        if (it == sparse_memo_.end()) return fail(here() + ": memo has no entry " + std::to_string(index));
        stack_.push_back(it->second);
        return true;
    }

    // The container an APPEND/SETITEM/ADDITEMS writes into, which must be of
    // the kind named: Python would call its append/__setitem__/add, and only
    // the built-in list, dict and set are data.
    Container* target(const Slot& slot, PickleKind kind) {
        if (slot.kind != kind) {
            fail(here() + ": target is a " + std::string(pickleKindName(slot.kind)) + ", expected a " +
                 std::string(pickleKindName(kind)));
            return nullptr;
        }
        return &doc_->containers[slot.bits];
    }

    bool checkHashable(const Slot& key) {
        if (key.kind == PickleKind::List || key.kind == PickleKind::Dict || key.kind == PickleKind::Set) {
            return fail(here() + ": unhashable " + std::string(pickleKindName(key.kind)) + " used as a dict key or set item");
        }
        return true;
    }

    bool addPairs(Container& dict, std::size_t from) {
        if ((stack_.size() - from) % 2 != 0) return fail(here() + ": odd number of items for key/value pairs");
        for (std::size_t i = from; i < stack_.size(); i += 2) {
            if (!checkHashable(stack_[i])) return false;
        }
        dict.items.insert(dict.items.end(), stack_.begin() + static_cast<std::ptrdiff_t>(from), stack_.end());
        stack_.resize(from);
        return true;
    }

    bool addSetItems(Container& set, std::size_t from) {
        for (std::size_t i = from; i < stack_.size(); ++i) {
            if (!checkHashable(stack_[i])) return false;
        }
        set.items.insert(set.items.end(), stack_.begin() + static_cast<std::ptrdiff_t>(from), stack_.end());
        stack_.resize(from);
        return true;
    }

    bool pushFromMark(PickleKind kind) {
        std::size_t mark = 0;
        if (!popMark(mark)) return false;
        std::vector<Slot> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
        stack_.resize(mark);
        if (kind == PickleKind::Dict) {
            if (items.size() % 2 != 0) return fail(here() + ": odd number of items for key/value pairs");
            for (std::size_t i = 0; i < items.size(); i += 2) {
                if (!checkHashable(items[i])) return false;
            }
        } else if (kind == PickleKind::Set) {
            for (const Slot& s : items) {
                if (!checkHashable(s)) return false;
            }
        }
        stack_.push_back(newContainer(kind, std::move(items)));
        return true;
    }

    bool pushTuple(std::size_t n) {
        if (!requireAboveMark(n)) return false;
        std::vector<Slot> items(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
        stack_.resize(stack_.size() - n);
        stack_.push_back(newContainer(PickleKind::Tuple, std::move(items)));
        return true;
    }

    bool refuse(const char* why) {
        return fail(std::string("refusing opcode ") + opcodeName(op_) + " at byte " + std::to_string(op_pos_) + ": " + why);
    }

    bool step();
};

bool Unpickler::step() {
    switch (op_) {
    case kProto: {
        if (!need(1)) return false;
        const auto version = static_cast<std::uint8_t>(in_[pos_++]);
        if (version > 5) return fail(here() + ": pickle protocol " + std::to_string(version) + " is newer than 5");
        return true;
    }
    case kFrame: {
        // An 8-byte length announcing the next frame; the bytes still follow
        // inline, so checking the length against what remains is enough.
        if (!need(8)) return false;
        const std::uint64_t length = readLittleEndian(8);
        if (length > in_.size() - pos_) {
            return fail("truncated: " + here() + " announces " + std::to_string(length) + " bytes, only " +
                        std::to_string(in_.size() - pos_) + " remain");
        }
        return true;
    }
    case kMark: marks_.push_back(stack_.size()); return true;
    case kPop:
        // Python pops the mark instead when nothing lies above it.
        if (!marks_.empty() && stack_.size() == marks_.back()) {
            marks_.pop_back();
            return true;
        }
        if (!requireAboveMark(1)) return false;
        stack_.pop_back();
        return true;
    case kPopMark: {
        std::size_t mark = 0;
        if (!popMark(mark)) return false;
        stack_.resize(mark);
        return true;
    }
    case kDup:
        if (!requireAboveMark(1)) return false;
        stack_.push_back(stack_.back());
        return true;
    case kNone: stack_.push_back(Slot{0, PickleKind::None}); return true;
    case kNewTrue: stack_.push_back(Slot{1, PickleKind::Bool}); return true;
    case kNewFalse: stack_.push_back(Slot{0, PickleKind::Bool}); return true;
    case kInt: {
        std::string_view line;
        if (!readLine(line)) return false;
        // Protocol 0 writes booleans as INT 01 / INT 00.
        if (line == "01" || line == "00") {
            stack_.push_back(Slot{line == "01" ? 1u : 0u, PickleKind::Bool});
            return true;
        }
        std::int64_t v = 0;
        return parseDecimal(line, v) && pushInt(v);
    }
    case kLong: {
        std::string_view line;
        if (!readLine(line)) return false;
        if (!line.empty() && line.back() == 'L') line.remove_suffix(1);
        std::int64_t v = 0;
        return parseDecimal(line, v) && pushInt(v);
    }
    case kBinInt:
        if (!need(4)) return false;
        return pushInt(static_cast<std::int32_t>(static_cast<std::uint32_t>(readLittleEndian(4))));
    case kBinInt1:
        if (!need(1)) return false;
        return pushInt(static_cast<std::int64_t>(readLittleEndian(1)));
    case kBinInt2:
        if (!need(2)) return false;
        return pushInt(static_cast<std::int64_t>(readLittleEndian(2)));
    case kLong1:
        if (!need(1)) return false;
        return pushLong(readLittleEndian(1));
    case kLong4: {
        if (!need(4)) return false;
        const auto n = static_cast<std::int32_t>(static_cast<std::uint32_t>(readLittleEndian(4)));
        if (n < 0) return fail(here() + ": negative byte count");
        return pushLong(static_cast<std::uint64_t>(n));
    }
    case kBinFloat: {
        if (!need(8)) return false;
        std::uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<std::uint8_t>(in_[pos_ + i]);  // big-endian
        pos_ += 8;
        stack_.push_back(Slot{bits, PickleKind::Float});
        return true;
    }
    case kFloat: {
        std::string_view line;
        if (!readLine(line)) return false;
        double v = 0;
        const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
        if (ec != std::errc() || end != line.data() + line.size() || line.empty()) {
            return fail(here() + ": expected a decimal float");
        }
        stack_.push_back(Slot{std::bit_cast<std::uint64_t>(v), PickleKind::Float});
        return true;
    }
    case kShortBinString:
        if (!need(1)) return false;
        return pushAsciiText(readLittleEndian(1));
    case kBinString: {
        if (!need(4)) return false;
        const auto n = static_cast<std::int32_t>(static_cast<std::uint32_t>(readLittleEndian(4)));
        if (n < 0) return fail(here() + ": negative byte count");
        return pushAsciiText(static_cast<std::uint64_t>(n));
    }
    case kShortBinUnicode:
        if (!need(1)) return false;
        return pushText(PickleKind::String, readLittleEndian(1));
    case kBinUnicode:
        if (!need(4)) return false;
        return pushText(PickleKind::String, readLittleEndian(4));
    case kBinUnicode8:
        if (!need(8)) return false;
        return pushText(PickleKind::String, readLittleEndian(8));
    case kShortBinBytes:
        if (!need(1)) return false;
        return pushText(PickleKind::Bytes, readLittleEndian(1));
    case kBinBytes:
        if (!need(4)) return false;
        return pushText(PickleKind::Bytes, readLittleEndian(4));
    case kBinBytes8:
    case kByteArray8:  // a bytearray reads as bytes: the value is the same data
        if (!need(8)) return false;
        return pushText(PickleKind::Bytes, readLittleEndian(8));
    case kEmptyList: stack_.push_back(newContainer(PickleKind::List)); return true;
    case kEmptyTuple: stack_.push_back(newContainer(PickleKind::Tuple)); return true;
    case kEmptyDict: stack_.push_back(newContainer(PickleKind::Dict)); return true;
    case kEmptySet: stack_.push_back(newContainer(PickleKind::Set)); return true;
    case kList: return pushFromMark(PickleKind::List);
    case kTuple: return pushFromMark(PickleKind::Tuple);
    case kDict: return pushFromMark(PickleKind::Dict);
    case kFrozenSet: return pushFromMark(PickleKind::Set);
    case kTuple1: return pushTuple(1);
    case kTuple2: return pushTuple(2);
    case kTuple3: return pushTuple(3);
    case kAppend: {
        if (!requireAboveMark(2)) return false;
        Container* list = target(stack_[stack_.size() - 2], PickleKind::List);
        if (!list) return false;
        list->items.push_back(stack_.back());
        stack_.pop_back();
        return true;
    }
    case kAppends: {
        std::size_t mark = 0;
        if (!popMark(mark)) return false;
        if (mark == 0 || mark - 1 < floor()) return fail("stack underflow: " + here() + " has no list below its MARK");
        Container* list = target(stack_[mark - 1], PickleKind::List);
        if (!list) return false;
        list->items.insert(list->items.end(), stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
        stack_.resize(mark);
        return true;
    }
    case kSetItem: {
        if (!requireAboveMark(3)) return false;
        Container* dict = target(stack_[stack_.size() - 3], PickleKind::Dict);
        return dict && addPairs(*dict, stack_.size() - 2);
    }
    case kSetItems: {
        std::size_t mark = 0;
        if (!popMark(mark)) return false;
        if (mark == 0 || mark - 1 < floor()) return fail("stack underflow: " + here() + " has no dict below its MARK");
        Container* dict = target(stack_[mark - 1], PickleKind::Dict);
        return dict && addPairs(*dict, mark);
    }
    case kAddItems: {
        std::size_t mark = 0;
        if (!popMark(mark)) return false;
        if (mark == 0 || mark - 1 < floor()) return fail("stack underflow: " + here() + " has no set below its MARK");
        Container* set = target(stack_[mark - 1], PickleKind::Set);
        return set && addSetItems(*set, mark);
    }
    case kMemoize: return memoPut(memo_.size() + sparse_memo_.size());
    case kBinPut:
        if (!need(1)) return false;
        return memoPut(readLittleEndian(1));
    case kLongBinPut:
        if (!need(4)) return false;
        return memoPut(readLittleEndian(4));
    case kPut: {
        std::string_view line;
        std::int64_t index = 0;
        if (!readLine(line) || !parseDecimal(line, index)) return false;
        if (index < 0) return fail(here() + ": negative memo index");
        return memoPut(static_cast<std::uint64_t>(index));
    }
    case kBinGet:
        if (!need(1)) return false;
        return memoGet(readLittleEndian(1));
    case kLongBinGet:
        if (!need(4)) return false;
        return memoGet(readLittleEndian(4));
    case kGet: {
        std::string_view line;
        std::int64_t index = 0;
        if (!readLine(line) || !parseDecimal(line, index)) return false;
        if (index < 0) return fail(here() + ": negative memo index");
        return memoGet(static_cast<std::uint64_t>(index));
    }
    case kGlobal: case kStackGlobal: case kReduce: case kBuild: case kInst: case kObj:
    case kNewObj: case kNewObjEx: case kExt1: case kExt2: case kExt4: case kPersId: case kBinPersId:
        return refuse("snapshots never need code execution");
    case kNextBuffer: case kReadonlyBuffer:
        return refuse("snapshots never use out-of-band buffers");
    case kString: case kUnicode:
        return fail("unsupported opcode " + here() +
                    ": protocol-0 quoted strings are not read; snapshots are written with protocol 2 or later");
    default: {
        static constexpr char kHex[] = "0123456789abcdef";
        const std::string hex = {'0', 'x', kHex[op_ >> 4], kHex[op_ & 15]};
        return fail("unknown opcode " + hex + " at byte " + std::to_string(op_pos_) +
                    ": not a pickle, or one newer than protocol 5");
    }
    }
}

}  // namespace

Expected<PickleValue> readPickle(std::string_view bytes, const PickleLimits& limits) {
    return Unpickler(bytes, limits).run();
}

}  // namespace trainmem
