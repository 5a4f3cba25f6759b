#pragma once
// saturatedBytes (byte_count.h) without the call to llround: the same
// result for every input (half away from zero; kTooLargeBytes for NaN,
// infinity and anything past 2^62), a few inline instructions. The account
// rounds some forty values per stage, so this is on the search's hot path.
#include <cmath>
#include <cstdint>

#include "core/base/byte_count.h"

namespace trainmem {

inline int64_t roundedBytes(double bytes) {
    if (!(std::fabs(bytes) < static_cast<double>(kTooLargeBytes))) return kTooLargeBytes;
    // |bytes| < 2^62: the truncation is exact, and so is bytes - truncation
    // (an integer below 2^52 and a value of the same binade, or 0 past it).
    const int64_t whole = static_cast<int64_t>(bytes);
    const double fraction = bytes - static_cast<double>(whole);
    return whole + (fraction >= 0.5 ? 1 : 0) - (fraction <= -0.5 ? 1 : 0);
}

}  // namespace trainmem
