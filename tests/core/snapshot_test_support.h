#pragma once
// Helpers shared by the snapshot tests: fixture files, and a tiny protocol-2
// pickle writer for JSON values, written from the opcode table of CPython's
// Lib/pickletools.py and sharing no code with the reader it tests.
#include <bit>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace trainmem::test_support {

inline std::string fixture(const std::string& name) {
    std::ifstream in(std::string(TRAINMEM_TEST_DATA_DIR) + "/snapshots/" + name, std::ios::binary);
    EXPECT_TRUE(in) << "missing fixture " << name;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline void writePickle(const nlohmann::json& v, std::string& out) {
    auto littleEndian = [&](uint64_t x, int n) {
        for (int i = 0; i < n; ++i) out += static_cast<char>((x >> (8 * i)) & 0xFF);
    };
    if (v.is_null()) {
        out += 'N';
    } else if (v.is_boolean()) {
        out += v.get<bool>() ? '\x88' : '\x89';
    } else if (v.is_number_integer()) {
        const int64_t i = v.get<int64_t>();
        if (i >= 0 && i < 256) {
            out += 'K';
            littleEndian(static_cast<uint64_t>(i), 1);
        } else if (i >= INT32_MIN && i <= INT32_MAX) {
            out += 'J';
            littleEndian(static_cast<uint64_t>(i), 4);
        } else {
            out += "\x8a\x08";
            littleEndian(static_cast<uint64_t>(i), 8);
        }
    } else if (v.is_number_float()) {
        out += 'G';
        const auto bits = std::bit_cast<uint64_t>(v.get<double>());
        for (int i = 7; i >= 0; --i) out += static_cast<char>((bits >> (8 * i)) & 0xFF);
    } else if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        out += 'X';
        littleEndian(s.size(), 4);
        out += s;
    } else if (v.is_array()) {
        out += ']';
        for (const auto& item : v) {
            writePickle(item, out);
            out += 'a';
        }
    } else {
        out += '}';
        for (const auto& [key, item] : v.items()) {
            writePickle(key, out);
            writePickle(item, out);
            out += 's';
        }
    }
}

inline std::string pickled(const nlohmann::json& v) {
    std::string out = "\x80\x02";
    writePickle(v, out);
    return out + ".";
}

}  // namespace trainmem::test_support
