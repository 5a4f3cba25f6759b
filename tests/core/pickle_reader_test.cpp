// The restricted unpickler against Python's own pickles: fixtures written by
// validation/make_snapshot_fixtures.py with Python's pickle module, whose
// source values are restated here by hand, and byte strings assembled by hand
// from the opcode table of CPython's Lib/pickletools.py.
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/snapshot/pickle_reader.h"

namespace trainmem {
namespace {

using namespace std::string_literals;

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(TRAINMEM_TEST_DATA_DIR) + "/snapshots/" + name, std::ios::binary);
    EXPECT_TRUE(in) << "missing fixture " << name;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

PickleValue decode(const std::string& bytes) {
    auto v = readPickle(bytes);
    EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.error().text());
    return v.ok() ? *v : PickleValue{};
}

std::string errorOf(const std::string& bytes, const PickleLimits& limits = {}) {
    auto v = readPickle(bytes, limits);
    EXPECT_FALSE(v.ok()) << "expected an error";
    if (v.ok()) return {};
    EXPECT_EQ(v.error().field, "pickle");
    return v.error().message;
}

int64_t intOf(const PickleValue& v) {
    EXPECT_TRUE(v.asInt().has_value()) << "kind " << pickleKindName(v.kind());
    return v.asInt().value_or(-999);
}

std::string strOf(const PickleValue& v) {
    EXPECT_TRUE(v.asString().has_value()) << "kind " << pickleKindName(v.kind());
    return std::string(v.asString().value_or("<not a string>"));
}

PickleValue field(const PickleValue& dict, std::string_view key) {
    auto v = dict.get(key);
    EXPECT_TRUE(v.has_value()) << "no key " << key;
    return v.value_or(PickleValue{});
}

// Python's json.dump of the same dict is an independent reading of it.
nlohmann::json toJson(const PickleValue& v) {
    switch (v.kind()) {
    case PickleKind::None: return nullptr;
    case PickleKind::Bool: return *v.asBool();
    case PickleKind::Int: return *v.asInt();
    case PickleKind::Float: return *v.asFloat();
    case PickleKind::String: return std::string(*v.asString());
    case PickleKind::Dict: {
        nlohmann::json o = nlohmann::json::object();
        for (std::size_t i = 0; i < v.size(); ++i) o[std::string(*v.keyAt(i).asString())] = toJson(v.valueAt(i));
        return o;
    }
    default: {
        nlohmann::json a = nlohmann::json::array();
        for (std::size_t i = 0; i < v.size(); ++i) a.push_back(toJson(v.at(i)));
        return a;
    }
    }
}

// ---- values Python wrote -------------------------------------------------

void expectPlainDataTypes(const PickleValue& d) {
    ASSERT_EQ(d.kind(), PickleKind::Dict);
    EXPECT_TRUE(field(d, "none").is(PickleKind::None));
    EXPECT_EQ(field(d, "true").asBool(), true);
    EXPECT_EQ(field(d, "false").asBool(), false);
    const int64_t ints[] = {0, 1, 255, 256, 65535, 65536, -1, -129, 2147483647, -2147483648LL, 2147483648LL,
                            std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
    const PickleValue list = field(d, "ints");
    ASSERT_EQ(list.size(), std::size(ints));
    for (std::size_t i = 0; i < std::size(ints); ++i) EXPECT_EQ(intOf(list.at(i)), ints[i]) << "ints[" << i << "]";
    const PickleValue floats = field(d, "floats");
    ASSERT_EQ(floats.size(), 4u);
    EXPECT_EQ(floats.at(0).asFloat(), 0.5);
    EXPECT_EQ(floats.at(1).asFloat(), -2.25);
    EXPECT_EQ(floats.at(2).asFloat(), 1e300);
    EXPECT_TRUE(std::isinf(floats.at(3).asFloat().value_or(0)));
    EXPECT_EQ(strOf(field(d, "text")), "h\xc3\xa9llo \xe2\x98\x83 \xf0\x9f\x98\x80");
    EXPECT_EQ(strOf(field(d, "long_text")), std::string(300, 'x'));
    const PickleValue tuples = field(d, "tuples");
    ASSERT_EQ(tuples.size(), 5u);
    for (std::size_t n = 0; n < 5; ++n) {
        const PickleValue t = tuples.at(n);
        EXPECT_EQ(t.kind(), PickleKind::Tuple);
        ASSERT_EQ(t.size(), n);
        for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(intOf(t.at(i)), int64_t(i + 1));
    }
    // Non-string keys: 42 -> "int key", (1, 2) -> "tuple key".
    bool saw_int_key = false, saw_tuple_key = false;
    for (std::size_t i = 0; i < d.size(); ++i) {
        const PickleValue k = d.keyAt(i);
        if (k.asInt() == 42) saw_int_key = strOf(d.valueAt(i)) == "int key";
        if (k.is(PickleKind::Tuple) && k.size() == 2 && intOf(k.at(1)) == 2) saw_tuple_key = strOf(d.valueAt(i)) == "tuple key";
    }
    EXPECT_TRUE(saw_int_key);
    EXPECT_TRUE(saw_tuple_key);
    const PickleValue many = field(d, "many");
    ASSERT_EQ(many.size(), 300u);
    EXPECT_EQ(strOf(many.at(0)), "s0");
    EXPECT_EQ(strOf(many.at(299)), "s299");
    EXPECT_EQ(strOf(field(d, "many_again")), "s299");
}

TEST(PickleReaderValues, DataTypesMatchWhatPythonWroteUnderProtocols2To5) {
    for (int protocol : {2, 3, 4, 5}) {
        SCOPED_TRACE("protocol " + std::to_string(protocol));
        expectPlainDataTypes(decode(fixture("data_types_p" + std::to_string(protocol) + ".pickle")));
    }
}

TEST(PickleReaderValues, Protocol5BytesBytearrayAndSets) {
    const PickleValue d = decode(fixture("data_types_p5.pickle"));
    EXPECT_EQ(field(d, "bytes").asBytes(), "\x00\x01\xff"s);
    EXPECT_EQ(field(d, "long_bytes").asBytes(), std::string(300, '\x01'));
    EXPECT_EQ(field(d, "bytearray").asBytes(), "abc"s);
    const PickleValue set = field(d, "set"), frozen = field(d, "frozenset");
    EXPECT_EQ(set.kind(), PickleKind::Set);
    ASSERT_EQ(set.size(), 1u);
    EXPECT_EQ(intOf(set.at(0)), 7);
    EXPECT_EQ(frozen.kind(), PickleKind::Set);
    ASSERT_EQ(frozen.size(), 1u);
    EXPECT_EQ(intOf(frozen.at(0)), 8);
}

TEST(PickleReaderValues, Protocol0TextFormsOfIntLongFloatAndMemo) {
    // pickle.dumps([1, -7, 2**40, True, False, None, 1.5, (1, 2), {1: 2}, s, s], 0) with s = [5, 6]
    const PickleValue v = decode(fixture("protocol0.pickle"));
    ASSERT_EQ(v.kind(), PickleKind::List);
    ASSERT_EQ(v.size(), 11u);
    EXPECT_EQ(intOf(v.at(0)), 1);
    EXPECT_EQ(intOf(v.at(1)), -7);
    EXPECT_EQ(intOf(v.at(2)), 1099511627776);
    EXPECT_EQ(v.at(3).asBool(), true);
    EXPECT_EQ(v.at(4).asBool(), false);
    EXPECT_TRUE(v.at(5).is(PickleKind::None));
    EXPECT_EQ(v.at(6).asFloat(), 1.5);
    EXPECT_EQ(v.at(7).kind(), PickleKind::Tuple);
    EXPECT_EQ(intOf(v.at(8).keyAt(0)), 1);
    EXPECT_EQ(intOf(v.at(8).valueAt(0)), 2);
    EXPECT_EQ(intOf(v.at(10).at(1)), 6);
    EXPECT_EQ(v.at(9).containerId(), v.at(10).containerId());
}

TEST(PickleReaderValues, SnapshotTreeEqualsPythonsJsonOfTheSameDict) {
    std::ifstream in(std::string(TRAINMEM_TEST_DATA_DIR) + "/snapshots/training_step.json");
    const nlohmann::json truth = nlohmann::json::parse(in);
    for (int protocol : {2, 3, 4, 5}) {
        SCOPED_TRACE("protocol " + std::to_string(protocol));
        EXPECT_EQ(toJson(decode(fixture("training_step_p" + std::to_string(protocol) + ".pickle"))), truth);
    }
}

TEST(PickleReaderValues, SharedObjectsStayShared) {
    const PickleValue shared = field(decode(fixture("data_types_p4.pickle")), "shared");
    ASSERT_EQ(shared.size(), 2u);
    ASSERT_TRUE(shared.at(0).containerId().has_value());
    EXPECT_EQ(shared.at(0).containerId(), shared.at(1).containerId());
}

TEST(PickleReaderValues, LaterDuplicateKeyWinsAsInPython) {
    // {"a": 1} then SETITEM "a" -> 2: PROTO 2, EMPTY_DICT, "a" 1 SETITEM, "a" 2 SETITEM
    const std::string bytes = "\x80\x02}\x8c\x01" "aK\x01s\x8c\x01" "aK\x02s."s;
    const PickleValue d = decode(bytes);
    EXPECT_EQ(d.size(), 2u);  // both pairs kept, in order
    EXPECT_EQ(intOf(field(d, "a")), 2);
}

// ---- opcodes no fixture happens to use, assembled by hand ----------------

TEST(PickleReaderOpcodes, Long4AndLong1AtThe64BitEdges) {
    // LONG4 with 9 bytes: 2^63 - 1 plus one redundant sign byte 0x00 still fits.
    EXPECT_EQ(intOf(decode("\x80\x02\x8b\x09\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\x7f\x00."s)),
              std::numeric_limits<int64_t>::max());
    // LONG1 with 8 bytes 00..80 is -2^63; LONG1 with 0 bytes is 0; ff is -1.
    EXPECT_EQ(intOf(decode("\x80\x02\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80."s)), std::numeric_limits<int64_t>::min());
    EXPECT_EQ(intOf(decode("\x80\x02\x8a\x00."s)), 0);
    EXPECT_EQ(intOf(decode("\x80\x02\x8a\x01\xff."s)), -1);
    // 2^63 needs a 9th byte (00..80 00): wider than int64.
    EXPECT_NE(errorOf("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00."s).find("wider than 64 bits"), std::string::npos);
    EXPECT_NE(errorOf(fixture("hostile/long_65_bits.pickle")).find("LONG1 at byte 2: integer wider than 64 bits"),
              std::string::npos);
    EXPECT_NE(errorOf("I99999999999999999999\n."s).find("wider than 64 bits"), std::string::npos);
}

TEST(PickleReaderOpcodes, Python2StringsAndEightByteLengths) {
    EXPECT_EQ(strOf(decode("U\x02hi."s)), "hi");                          // SHORT_BINSTRING
    EXPECT_EQ(strOf(decode("T\x03\x00\x00\x00" "abc."s)), "abc");         // BINSTRING
    EXPECT_EQ(strOf(decode("\x8d\x02\x00\x00\x00\x00\x00\x00\x00ok."s)), "ok");  // BINUNICODE8
    EXPECT_EQ(decode("\x8e\x01\x00\x00\x00\x00\x00\x00\x00z."s).asBytes(), "z"s);  // BINBYTES8
    EXPECT_NE(errorOf("U\x01\xe9."s).find("not ASCII"), std::string::npos);
    EXPECT_NE(errorOf("X\x01\x00\x00\x00\xe9."s).find("not valid UTF-8"), std::string::npos);
    // An encoded surrogate (U+D800) is refused as json and Python's strict codec do.
    EXPECT_NE(errorOf("X\x03\x00\x00\x00\xed\xa0\x80."s).find("not valid UTF-8"), std::string::npos);
}

TEST(PickleReaderOpcodes, DupPopPopMarkAndTextMemo) {
    // [x, x] via DUP: MARK, EMPTY_LIST, DUP, LIST
    const PickleValue dup = decode("(]2l."s);
    ASSERT_EQ(dup.size(), 2u);
    EXPECT_EQ(dup.at(0).containerId(), dup.at(1).containerId());
    // POP drops the top; POP_MARK drops everything since MARK.
    EXPECT_EQ(intOf(decode("K\x01K\x02" "0."s)), 1);
    EXPECT_EQ(intOf(decode("K\x01(K\x02K\x03" "1."s)), 1);
    // POP with nothing above the mark pops the mark itself (Lib/pickle.py load_pop).
    EXPECT_EQ(intOf(decode("K\x07(0."s)), 7);
    // PUT/GET text forms, and TUPLE from a MARK, and DICT from a MARK.
    const PickleValue t = decode("(K\x05p3\n0g3\ng3\nt."s);
    ASSERT_EQ(t.size(), 2u);
    EXPECT_EQ(intOf(t.at(1)), 5);
    EXPECT_EQ(intOf(field(decode("(\x8c\x01kK\x09" "d."s), "k")), 9);
}

TEST(PickleReaderOpcodes, SparseMemoIndicesCostNothing) {
    // LONG_BINPUT at 4e9, then LONG_BINGET of it: no 4e9-entry table.
    const PickleValue v = decode("\x80\x02K\x2ar\x00\x28\x6b\xee" "0j\x00\x28\x6b\xee."s);
    EXPECT_EQ(intOf(v), 42);
}

// ---- what is refused, and where -----------------------------------------

TEST(PickleReaderRefusals, CodeExecutionOpcodesAreNamedWithTheirOffset) {
    struct Case {
        std::string byte;
        std::string name;
    };
    const Case cases[] = {{"c", "GLOBAL"}, {"\x93", "STACK_GLOBAL"}, {"R", "REDUCE"}, {"b", "BUILD"},
                          {"i", "INST"},   {"o", "OBJ"},            {"\x81", "NEWOBJ"}, {"\x92", "NEWOBJ_EX"},
                          {"\x82", "EXT1"}, {"\x83", "EXT2"},       {"\x84", "EXT4"},  {"P", "PERSID"},
                          {"Q", "BINPERSID"}};
    for (const Case& c : cases) {
        EXPECT_EQ(errorOf("\x80\x02" + c.byte + "."),
                  "refusing opcode " + c.name + " at byte 2: snapshots never need code execution");
    }
    EXPECT_EQ(errorOf("\x80\x05\x97."s), "refusing opcode NEXT_BUFFER at byte 2: snapshots never use out-of-band buffers");
    EXPECT_EQ(errorOf("\x80\x05\x98."s),
              "refusing opcode READONLY_BUFFER at byte 2: snapshots never use out-of-band buffers");
}

TEST(PickleReaderRefusals, PythonsOwnOsSystemPicklesAreRefused) {
    // pickle.dumps(Evil()) where Evil.__reduce__ returns (os.system, ("echo pwned",)).
    // pickletools.dis puts STACK_GLOBAL at byte 28 (protocol 4) and GLOBAL at byte 0 (protocol 0).
    EXPECT_EQ(errorOf(fixture("hostile/reduce_os_system.pickle")),
              "refusing opcode STACK_GLOBAL at byte 28: snapshots never need code execution");
    EXPECT_EQ(errorOf(fixture("hostile/global_os_system_p0.pickle")),
              "refusing opcode GLOBAL at byte 0: snapshots never need code execution");
    // Below protocol 5 a bytearray is a call to builtins.bytearray: refused too.
    EXPECT_EQ(errorOf(fixture("hostile/bytearray_p4.pickle")),
              "refusing opcode STACK_GLOBAL at byte 34: snapshots never need code execution");
}

TEST(PickleReaderRefusals, UnknownAndUnsupportedOpcodes) {
    EXPECT_EQ(errorOf(fixture("hostile/not_a_pickle.bin")),
              "unknown opcode 0x25 at byte 0: not a pickle, or one newer than protocol 5");
    EXPECT_NE(errorOf("S'abc'\n."s).find("unsupported opcode STRING at byte 0"), std::string::npos);
    EXPECT_NE(errorOf("\x80\x06N."s).find("protocol 6 is newer than 5"), std::string::npos);
}

// ---- hostile input -------------------------------------------------------

TEST(PickleReaderHostileInput, TruncatedDataIsAnErrorAtEveryLength) {
    const std::string whole = fixture("training_step_p2.pickle");
    for (std::size_t n = 0; n < whole.size(); ++n) {
        auto v = readPickle(std::string_view(whole).substr(0, n));
        ASSERT_FALSE(v.ok()) << "prefix of " << n << " bytes decoded";
    }
    EXPECT_NE(errorOf(fixture("hostile/truncated.pickle")).find("truncated: FRAME at byte 2 announces 3267 bytes"),
              std::string::npos);
    EXPECT_EQ(errorOf(""), "truncated at byte 0: the data ended before the STOP opcode");
}

TEST(PickleReaderHostileInput, AbsurdLengthsFailBeforeAllocating) {
    EXPECT_EQ(errorOf(fixture("hostile/huge_length.pickle")),
              "truncated: BINUNICODE at byte 2 needs 4294967295 more bytes, only 4 remain");
    EXPECT_NE(errorOf(fixture("hostile/huge_frame.pickle")).find("truncated: FRAME at byte 2 announces"), std::string::npos);
    EXPECT_NE(errorOf("\x8e\xff\xff\xff\xff\xff\xff\xff\xff."s).find("BINBYTES8 at byte 0 needs 18446744073709551615"),
              std::string::npos);
    EXPECT_NE(errorOf("\x8b\xff\xff\xff\x7f."s).find("LONG4 at byte 0 needs 2147483647"), std::string::npos);
    EXPECT_NE(errorOf("\x8b\xff\xff\xff\xff."s).find("negative byte count"), std::string::npos);
}

TEST(PickleReaderHostileInput, StackUnderflowMemoMissAndLeftovers) {
    EXPECT_EQ(errorOf(fixture("hostile/stack_underflow.pickle")),
              "stack underflow: APPEND at byte 2 needs 2 value(s) above the last MARK");
    EXPECT_EQ(errorOf(fixture("hostile/memo_miss.pickle")), "BINGET at byte 2: memo has no entry 5");
    // Values below a MARK are out of reach, as in Python's metastack.
    // The list lies just below the MARK, so APPEND cannot reach it.
    EXPECT_NE(errorOf("](K\x01" "a."s).find("stack underflow: APPEND"), std::string::npos);
    EXPECT_NE(errorOf("1."s).find("needs a MARK"), std::string::npos);
    EXPECT_NE(errorOf("K\x01K\x02."s).find("STOP found 2 values"), std::string::npos);
    EXPECT_EQ(errorOf(fixture("hostile/trailing_data.pickle")), "7 bytes of trailing data after STOP at byte 3");
    // APPEND into a tuple, SETITEM into a list, a list as a dict key.
    EXPECT_NE(errorOf(")K\x01" "a."s).find("target is a tuple, expected a list"), std::string::npos);
    EXPECT_NE(errorOf("]K\x01K\x02s."s).find("target is a list, expected a dict"), std::string::npos);
    EXPECT_NE(errorOf("}]K\x01s."s).find("unhashable list"), std::string::npos);
}

TEST(PickleReaderHostileInput, DeepNestingAndCyclesAreRejected) {
    EXPECT_EQ(errorOf(fixture("hostile/deep_nesting.pickle")),
              "containers nested deeper than 256 levels; a snapshot needs about 6");
    EXPECT_EQ(errorOf(fixture("hostile/self_reference.pickle")),
              "a container contains itself (a reference cycle); snapshots are trees");
    // [[[[]]]] is 4 deep: fine at a limit of 4, refused at 3.
    const std::string four = "]]]]aaa."s;
    EXPECT_TRUE(readPickle(four, PickleLimits{4}).ok());
    EXPECT_NE(errorOf(four, PickleLimits{3}).find("deeper than 3"), std::string::npos);
    // A 3-deep list reached first at depth 2 and again at depth 3 (through a
    // second path): the deeper path counts. root=[A, [A]] with A=[[]].
    const std::string shared = "(]]aq\x00(h\x00l" "l."s;  // MARK, A=[[ ]], memo 0, MARK, GET 0, LIST, LIST
    EXPECT_TRUE(readPickle(shared, PickleLimits{4}).ok());
    EXPECT_FALSE(readPickle(shared, PickleLimits{3}).ok());
}

TEST(PickleReaderHostileInput, SharedReferencesDoNotExpandExponentially) {
    // Level k+1 = [level k, level k], 60 times: 2^60 paths in 11 bytes a level.
    std::string bytes = "\x80\x02]q\x00"s;
    for (int i = 0; i < 60; ++i) bytes += "0(h\x00h\x00lq\x00"s;  // POP, [m0, m0], PUT 0
    bytes += ".";
    const auto start = std::chrono::steady_clock::now();
    const PickleValue v = decode(bytes);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v.at(0).containerId(), v.at(1).containerId());
}

TEST(PickleReaderValues, WrongKindAccessIsEmptyNotACrash) {
    const PickleValue i = decode("K\x05."s);
    EXPECT_FALSE(i.asString().has_value());
    EXPECT_FALSE(i.asBool().has_value());
    EXPECT_EQ(i.size(), 0u);
    EXPECT_TRUE(i.at(3).is(PickleKind::None));
    EXPECT_FALSE(i.get("x").has_value());
    const PickleValue list = decode("]K\x01" "a."s);
    EXPECT_TRUE(list.at(1).is(PickleKind::None));
    EXPECT_TRUE(list.keyAt(0).is(PickleKind::None));
    EXPECT_FALSE(list.at(0).containerId().has_value());
    EXPECT_TRUE(PickleValue{}.is(PickleKind::None));
}

}  // namespace
}  // namespace trainmem
