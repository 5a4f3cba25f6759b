#pragma once
// What the layout solver's tests share: a model on a named GPU, a search
// that must succeed, and a kept layout reproduced through its settings.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/search/layout_search.h"
#include "tests/core/test_models.h"
#include "core/scenario/scenario_file.h"

namespace trainmem::testing {

// Every divisor of n, ascending: the degrees a reference loop over layouts
// tries (the search's own enumeration is what such a loop checks).
inline std::vector<int64_t> divisors(int64_t n) {
    std::vector<int64_t> out;
    for (int64_t d = 1; d <= n; ++d)
        if (n % d == 0) out.push_back(d);
    return out;
}

inline Scenario onGpu(ModelConfig model, const char* gpu) {
    Scenario s = scenarioOf(std::move(model));
    s.hardware.gpu = gpu;
    return s;
}

inline LayoutSearchResult search(const Scenario& base, LayoutSearchOptions options) {
    auto result = searchLayouts(base, options);
    EXPECT_TRUE(result.ok()) << result.error().text();
    return result.ok() ? *result : LayoutSearchResult{};
}

// Applies a kept layout's settings to the base, the way `trainmem-cli
// estimate --set ...` would.
inline Scenario reproduce(const Scenario& base, const Layout& layout) {
    Scenario shown = base;
    applyLayout(shown, layout);
    Scenario s = base;
    for (const auto& [key, value] : layoutSettings(shown)) {
        const Status applied = applySetting(s, key, value);
        EXPECT_TRUE(applied.ok()) << key << "=" << value << ": " << applied.error().text();
    }
    return s;
}

}  // namespace trainmem::testing
