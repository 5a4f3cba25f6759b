#pragma once
// Sizes and counts as people read them: one rounding (printf's, half to
// even on the binary value) for every number the reports and the app print.
#include <cstdint>
#include <string>

namespace trainmem {

constexpr int64_t kGiB = int64_t{1} << 30;

// Human-readable sizes; GiB (1024^3) or GB (1000^3).
enum class Units { GiB, GB };

std::string formatFixed(double value, int decimals);  // 57.9449 -> "57.94" at 2
std::string formatBytes(int64_t bytes, Units units = Units::GiB);
std::string formatCount(int64_t n);  // 8030261248 -> "8.03B"

}  // namespace trainmem
