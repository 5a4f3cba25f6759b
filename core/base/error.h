#pragma once
// Errors are values that name the field they are about, so every layer (CLI,
// GUI, tests) can show "training.micro_batch_size: must be a positive integer"
// next to the right input instead of a generic failure.
#include <string>
#include <utility>
#include <variant>

namespace trainmem {

struct Error {
    std::string field;    // dotted path of the offending input, e.g. "parallelism.tensor"
    std::string message;  // what is wrong and what is allowed
    std::string text() const { return field.empty() ? message : field + ": " + message; }
};

// A minimal std::expected stand-in (C++23 is not available with g++ 12).
template <class T>
class Expected {
public:
    Expected(T value) : v_(std::move(value)) {}
    Expected(Error error) : v_(std::move(error)) {}
    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }
    const T& value() const& { return std::get<0>(v_); }
    T& value() & { return std::get<0>(v_); }
    T&& value() && { return std::get<0>(std::move(v_)); }
    const T& operator*() const& { return value(); }
    T& operator*() & { return value(); }
    const T* operator->() const { return &value(); }
    T* operator->() { return &value(); }
    const Error& error() const { return std::get<1>(v_); }

private:
    std::variant<T, Error> v_;
};

// For operations that produce nothing but may fail.
struct Ok {};
using Status = Expected<Ok>;
inline Status ok() { return Ok{}; }

}  // namespace trainmem
