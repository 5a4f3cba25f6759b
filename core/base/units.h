#pragma once
// Sizes and counts as people read them, with one rounding for every number
// the reports and the app print.
#include <cstdint>
#include <string>

namespace trainmem {

constexpr int64_t kGiB = int64_t{1} << 30;

// Human-readable sizes; GiB (1024^3) or GB (1000^3).
enum class Units { GiB, GB };

// `value` with `decimals` digits, a tie rounded away from zero (136.125 ->
// "136.13", never cut): every number the CLI and the app print goes through it.
std::string formatNumber(double value, int decimals);
std::string formatBytes(int64_t bytes, Units units = Units::GiB);
std::string formatCount(int64_t n);  // 8030261248 -> "8.03B"

}  // namespace trainmem
