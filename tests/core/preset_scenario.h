#pragma once
// A preset with settings applied as the CLI's --set applies them, in order,
// and validated unless `validated` is false: the core tests' one way from a
// preset name to a scenario.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"
#include "core/account/scenario_validate.h"

namespace trainmem {

inline Scenario presetWith(const std::string& preset, const std::vector<std::string>& settings,
                           bool validated = true) {
    Expected<Scenario> s = loadPreset(preset);
    EXPECT_TRUE(s.ok()) << preset;
    if (!s.ok()) return Scenario{};
    const Status applied = applySettings(*s, settings);
    EXPECT_TRUE(applied.ok()) << applied.error().text();
    if (validated) {
        const Status valid = validate(*s);
        EXPECT_TRUE(valid.ok()) << valid.error().text();
    }
    return *s;
}

// The same with `first` applied before `settings` (a test's fixed recipe).
inline Scenario presetWith(const std::string& preset, std::vector<std::string> first,
                           const std::vector<std::string>& settings) {
    first.insert(first.end(), settings.begin(), settings.end());
    return presetWith(preset, first);
}

}  // namespace trainmem
