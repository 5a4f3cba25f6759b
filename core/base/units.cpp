#include "core/base/units.h"

#include <cmath>
#include <cstdio>

namespace trainmem {

std::string formatNumber(double value, int decimals) {
    // printf's "%.2f" rounds a tie to even (136.125 GiB, an exact binary
    // value, read "136.12" on a bar and "136.13" in Qt's table): round half
    // away from zero first, as people do, then print what is left.
    if (std::isfinite(value) && decimals >= 0 && decimals <= 9 && std::fabs(value) < 1e15) {
        const double scale = std::pow(10.0, decimals);
        value = std::round(value * scale) / scale;
        if (value == 0) value = 0;  // no "-0.00"
    }
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

std::string formatBytes(int64_t bytes, Units units) {
    const double scale = units == Units::GiB ? static_cast<double>(kGiB) : 1e9;
    return formatNumber(static_cast<double>(bytes) / scale, 2) + (units == Units::GiB ? " GiB" : " GB");
}

std::string formatCount(int64_t n) {
    const double v = static_cast<double>(n);
    const double a = std::fabs(v);
    if (a >= 1e12) return formatNumber(v / 1e12, 2) + "T";
    if (a >= 1e9) return formatNumber(v / 1e9, 2) + "B";
    if (a >= 1e6) return formatNumber(v / 1e6, 2) + "M";
    if (a >= 1e3) return formatNumber(v / 1e3, 2) + "K";
    return std::to_string(n);
}

}  // namespace trainmem
