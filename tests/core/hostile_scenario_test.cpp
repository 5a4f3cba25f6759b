// Smaller hostile-input cases of issue 15: the layout search's bound and its
// stop, names with control characters, a version past 2^63, and saving
// through a symlink or over a read-only file.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "core/json_input.h"
#include "core/layout_search.h"
#include "core/presets.h"
#include "core/report.h"
#include "core/scenario.h"

namespace trainmem {
namespace {

namespace fs = std::filesystem;

Scenario preset(const std::string& name) {
    auto s = loadPreset(name);
    EXPECT_TRUE(s.ok()) << name;
    return s.ok() ? *s : Scenario{};
}

TEST(LayoutSearchBound, StopsAtTheLimitWithTheBestSoFar) {
    LayoutSearchOptions options;
    options.gpus = 720720;  // 240 divisors: a space of billions of points
    options.max_layouts = 2'000'000;
    auto result = searchLayouts(preset("llama-3.1-8b"), options);
    ASSERT_TRUE(result.ok()) << result.error().text();
    EXPECT_EQ(result->stopped, "the limit of 2000000 layouts");
    EXPECT_GE(result->enumerated, 2'000'000);
    EXPECT_LT(result->enumerated, 2'000'100);
    options.max_layouts = 0;
    EXPECT_FALSE(searchLayouts(preset("llama-3.1-8b"), options).ok());
}

TEST(LayoutSearchBound, TheProgressCallbackSeesCountsAndCanStop) {
    LayoutSearchOptions options;
    options.gpus = 720720;
    int64_t calls = 0, last = 0;
    options.progress = [&](int64_t enumerated, int64_t) {
        EXPECT_GT(enumerated, last);
        last = enumerated;
        return ++calls < 5;  // as Ctrl+C does
    };
    auto result = searchLayouts(preset("llama-3.1-8b"), options);
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(calls, 5);
    EXPECT_EQ(result->stopped, "interrupted");
    EXPECT_LT(result->enumerated, 6 * 65536 + 100);
    // A whole small search is not stopped.
    options.gpus = 8;
    options.progress = {};
    auto whole = searchLayouts(preset("llama-3.1-8b"), options);
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(whole->stopped, "");
}

}  // namespace
}  // namespace trainmem
