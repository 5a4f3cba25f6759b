// Published memory measurements (validation/published/runs.json), each
// mapped to a scenario before its estimate was computed: every expressible
// run's estimate stays within the row's stated bound of what its publisher
// measured, and a run trainmem cannot yet describe stays refused with a
// message (so that the day it becomes expressible, its row is checked).
// The table and statistics: docs/accuracy.md §Published runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/account/estimate.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"

namespace trainmem {
namespace {

nlohmann::json publishedRuns() {
    std::ifstream in(std::string(TRAINMEM_VALIDATION_DIR) + "/published/runs.json");
    EXPECT_TRUE(in) << "validation/published/runs.json";
    return nlohmann::json::parse(in);
}

double measuredBytes(const nlohmann::json& run) {
    const double v = run.at("measured").get<double>();
    const std::string unit = run.at("unit");
    if (unit == "GB") return v * 1e9;
    EXPECT_EQ(unit, "GiB") << run.at("id");
    return v * 1073741824.0;
}

TEST(PublishedRuns, EachEstimateIsWithinItsRowsBound) {
    const nlohmann::json doc = publishedRuns();
    std::vector<double> errors;
    for (const nlohmann::json& run : doc.at("runs")) {
        const std::string id = run.at("id");
        Expected<Scenario> s = loadPreset(run.at("preset").get<std::string>());
        ASSERT_TRUE(s.ok()) << id;
        const Status applied = applySettings(*s, run.at("settings").get<std::vector<std::string>>());
        ASSERT_TRUE(applied.ok()) << id << ": " << applied.error().text();
        const Expected<Estimate> e = estimate(*s);
        const bool expressible = run.value("expressible", true);
        if (!expressible) {
            EXPECT_FALSE(e.ok()) << id << " is now expressible: give its row an error and a bound";
            continue;
        }
        ASSERT_TRUE(e.ok()) << id << ": " << e.error().text();
        if (run.value("published_below_model_states", false)) {
            // The row's named cause: the publication is below what the
            // configuration's weights, gradients and optimizer states need.
            const ModelStates& m = e->peak.model_states;
            const double states = static_cast<double>(m.weights + m.gradients + m.optimizer_states + m.master_weights);
            EXPECT_GT(states, measuredBytes(run)) << id;
            continue;
        }
        const std::string compare = run.at("compare");
        const double estimated = static_cast<double>(compare == "reserved" ? e->peak.reserved_bytes
                                                                            : e->peak.allocated_bytes);
        const double error = 100.0 * (estimated - measuredBytes(run)) / measuredBytes(run);
        std::printf("%-42s %-9s measured %.4g %s  estimate %.4g  error %+.1f%%\n", id.c_str(), compare.c_str(),
                    run.at("measured").get<double>(), run.at("unit").get<std::string>().c_str(),
                    estimated / (run.at("unit") == "GB" ? 1e9 : 1073741824.0), error);
        EXPECT_LE(std::abs(error), run.value("bound_percent", 10.0)) << id;
        errors.push_back(std::abs(error));
    }
    ASSERT_FALSE(errors.empty());
    std::sort(errors.begin(), errors.end());
    const size_t n = errors.size();
    std::printf("%zu runs: median |error| %.1f%%, worst %.1f%%\n", n,
                n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2, errors.back());
}

TEST(PublishedRuns, EveryRowCitesItsSourceAndCounter) {
    const nlohmann::json runs = publishedRuns();  // kept alive through the loop
    for (const nlohmann::json& run : runs.at("runs")) {
        for (const char* key : {"id", "source", "counter", "measured", "unit", "preset", "settings", "compare"})
            EXPECT_TRUE(run.contains(key)) << run.value("id", "?") << " lacks " << key;
        EXPECT_GT(run.at("source").get<std::string>().size(), 20u) << run.at("id");
    }
}

}  // namespace
}  // namespace trainmem
