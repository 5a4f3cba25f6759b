#include "core/base/units.h"

#include <cmath>
#include <cstdio>

namespace trainmem {

std::string formatFixed(double value, int decimals) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

std::string formatBytes(int64_t bytes, Units units) {
    const double scale = units == Units::GiB ? static_cast<double>(kGiB) : 1e9;
    return formatFixed(static_cast<double>(bytes) / scale, 2) + (units == Units::GiB ? " GiB" : " GB");
}

std::string formatCount(int64_t n) {
    const double v = static_cast<double>(n);
    const double a = std::fabs(v);
    if (a >= 1e12) return formatFixed(v / 1e12, 2) + "T";
    if (a >= 1e9) return formatFixed(v / 1e9, 2) + "B";
    if (a >= 1e6) return formatFixed(v / 1e6, 2) + "M";
    if (a >= 1e3) return formatFixed(v / 1e3, 2) + "K";
    return std::to_string(n);
}

}  // namespace trainmem
