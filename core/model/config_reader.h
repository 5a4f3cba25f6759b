#pragma once
// Typed, bounded reads of a config.json object for the importer
// (hf_config.cpp) and its hybrid-layer reader (hf_hybrid.cpp). Internal to
// the core.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/json_input.h"
#include "core/model/model_config.h"

namespace trainmem {

using nlohmann::json;

// Reads typed values out of a config.json object. The first problem is kept
// and reported; later reads return their fallbacks so that the importer can
// run straight through and check once at the end.
class ConfigReader {
public:
    explicit ConfigReader(const json& config) : c_(config) {}

    bool failed() const { return error_.has_value(); }
    const Error& error() const { return *error_; }
    void fail(std::string_view key, std::string message) {
        if (!error_) error_ = Error{"model." + std::string(key), std::move(message)};
    }

    bool has(std::string_view key) const { return c_.contains(std::string(key)); }
    bool present(std::string_view key) const { return has(key) && !at(key).is_null(); }
    bool isNull(std::string_view key) const { return has(key) && at(key).is_null(); }
    bool isText(std::string_view key) const { return has(key) && at(key).is_string(); }
    // The value itself (has(key) must hold): a nested object to read with a
    // reader of its own (Kimi Linear's linear_attn_config).
    const json& raw(std::string_view key) const { return at(key); }
    // A count of parameters, which may exceed the bound of a size (up to 10^15).
    int64_t parameterCount(std::string_view key) {
        if (!present(key)) return 0;
        const json& v = at(key);
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1'000'000'000'000'000) {
            fail(key, "must be a parameter count from 0 to 10^15 (got " + describeJson(v) + ")");
            return 0;
        }
        return v.get<int64_t>();
    }

    int64_t integer(std::string_view key, int64_t fallback) {
        return present(key) ? toInteger(key, at(key)) : fallback;
    }
    bool boolean(std::string_view key, bool fallback) {
        if (!present(key)) return fallback;
        const json& v = at(key);
        if (v.is_boolean()) return v.get<bool>();
        fail(key, "must be true or false (got " + describeJson(v) + ")");
        return fallback;
    }
    double number(std::string_view key, double fallback) {
        if (!present(key)) return fallback;
        const json& v = at(key);
        if (v.is_number()) return v.get<double>();
        fail(key, "must be a number (got " + describeJson(v) + ")");
        return fallback;
    }
    std::optional<std::string> text(std::string_view key) {
        if (!present(key)) return std::nullopt;
        const json& v = at(key);
        if (v.is_string()) return v.get<std::string>();
        fail(key, "must be a string (got " + describeJson(v) + ")");
        return std::nullopt;
    }
    std::vector<std::string> strings(std::string_view key) {
        std::vector<std::string> out;
        if (!present(key)) return out;
        const json& v = at(key);
        if (!v.is_array()) {
            fail(key, "must be a list of strings (got " + describeJson(v) + ")");
            return out;
        }
        for (const json& e : v) {
            if (!e.is_string()) {
                fail(key, "must be a list of strings (got an element " + describeJson(e) + ")");
                return {};
            }
            out.push_back(e.get<std::string>());
        }
        return out;
    }
    std::vector<int64_t> integers(std::string_view key) {
        std::vector<int64_t> out;
        if (!present(key)) return out;
        const json& v = at(key);
        if (!v.is_array()) {
            fail(key, "must be a list of integers (got " + describeJson(v) + ")");
            return out;
        }
        for (const json& e : v) out.push_back(toInteger(key, e));
        return out;
    }

private:
    const json& at(std::string_view key) const { return c_.at(std::string(key)); }
    int64_t toInteger(std::string_view key, const json& v) {
        if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            fail(key, "must be an integer below 2^63 (got " + describeJson(v) + ")");
            return 0;
        }
        if (!v.is_number_integer()) {
            fail(key, "must be an integer (got " + describeJson(v) + ")");
            return 0;
        }
        // Refused here, under the key the user wrote, before any arithmetic
        // or loop of the importer can use it (validate() checks the rest).
        const int64_t i = v.get<int64_t>();
        if (i > kMaxModelSize) {
            fail(key, "must be at most " + std::to_string(kMaxModelSize) + " (got " + std::to_string(i) + ")");
            return 0;
        }
        if (i < -kMaxModelSize) {
            fail(key, "must be zero or a positive integer (got " + std::to_string(i) + ")");
            return 0;
        }
        return i;
    }

    const json& c_;
    std::optional<Error> error_;
};

}  // namespace trainmem
