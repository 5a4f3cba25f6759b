#pragma once
// Byte counts that cannot overflow. Inputs inside their documented ranges can
// still ask for more than int64 holds (a 16M-token sequence with eager
// attention, a 4 EiB CUDA context), so the account rounds and adds through
// these: a count saturates at kTooLargeBytes and the estimate then says
// "too large to represent" (Estimate::too_large) instead of wrapping to a
// negative number or a "fits" (issue 15, D04; docs/robustness.md).
#include <cmath>
#include <cstdint>

namespace trainmem {

// 2^62 bytes (4 EiB): far beyond any device, and a sum of two saturated
// counts still fits int64, so one comparison at the end catches every case.
constexpr int64_t kTooLargeBytes = int64_t{1} << 62;

// Rounded to whole bytes; NaN, infinity and anything >= 2^62 (either sign)
// give kTooLargeBytes, never llround's undefined result past 2^63.
inline int64_t saturatedBytes(double bytes) {
    if (!(std::fabs(bytes) < static_cast<double>(kTooLargeBytes))) return kTooLargeBytes;
    return static_cast<int64_t>(std::llround(bytes));
}

// a + b, saturating at kTooLargeBytes (inputs are counts within +-2^62).
inline int64_t addBytes(int64_t a, int64_t b) {
    if (a >= kTooLargeBytes || b >= kTooLargeBytes) return kTooLargeBytes;
    const int64_t sum = a + b;  // |a|, |b| < 2^62: cannot overflow
    return sum >= kTooLargeBytes ? kTooLargeBytes : sum;
}

// Bytes of `elements` elements of `bytes_per_element` each (a tensor's size).
inline int64_t tensorBytes(int64_t elements, double bytes_per_element) {
    return static_cast<int64_t>(static_cast<double>(elements) * bytes_per_element + 0.5);
}

}  // namespace trainmem
