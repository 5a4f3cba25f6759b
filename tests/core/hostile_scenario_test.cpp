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

#include "core/base/json_input.h"
#include "core/search/layout_search.h"
#include "core/scenario/presets.h"
#include "core/report/report.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"
#include "core/account/estimate.h"

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

TEST(HostileNames, ControlCharactersAreEscapedInTheReport) {
    Scenario s = preset("gpt2");
    s.name = "evil\n\x1b[2J\x1b]0;title\x07name";
    auto e = estimate(s);
    ASSERT_TRUE(e.ok());
    const std::string table = estimateToTable(s, *e);
    const std::string first_line = table.substr(0, table.find('\n'));
    EXPECT_EQ(first_line.find('\x1b'), std::string::npos) << first_line;
    EXPECT_EQ(first_line.find('\x07'), std::string::npos);
    EXPECT_NE(first_line.find("evil\\n\\x1b[2J"), std::string::npos) << first_line;
}

TEST(HostileVersion, AVersionPast2To63IsReportedAsGiven) {
    auto doc = parseJsonText(R"({"format": "trainmem-scenario", "version": 18446744073709551615, "model": {"preset": "gpt2"}})",
                             "x");
    ASSERT_TRUE(doc.ok());
    auto s = scenarioFromJson(*doc);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().field, "version");
    EXPECT_NE(s.error().message.find("18446744073709551615"), std::string::npos) << s.error().text();
    EXPECT_NE(s.error().message.find("newer"), std::string::npos) << s.error().text();
}

class SaveFolder : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "trainmem-save-XXXXXX").string();
        dir_ = ::mkdtemp(pattern.data());
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    static std::string read(const fs::path& p) {
        std::ifstream in(p);
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }
    fs::path dir_;
};

TEST_F(SaveFolder, SavingThroughASymlinkKeepsTheLinkAndWritesItsTarget) {
    fs::create_directory(dir_ / "real");
    std::ofstream(dir_ / "real" / "run.json") << "old";
    fs::create_symlink(fs::path("real") / "run.json", dir_ / "link.json");
    const Scenario s = preset("gpt2");
    ASSERT_TRUE(saveScenarioFile(s, dir_ / "link.json").ok());
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir_ / "link.json")));
    auto back = loadScenarioFile(dir_ / "real" / "run.json");
    ASSERT_TRUE(back.ok()) << back.error().text();
    EXPECT_EQ(back->training, s.training);
    // No temporary file left next to the link.
    for (const auto& entry : fs::directory_iterator(dir_)) EXPECT_NE(entry.path().filename().string()[0], '.');
}

TEST_F(SaveFolder, SavingOverAReadOnlyFileFailsAndLeavesIt) {
    const fs::path file = dir_ / "locked.json";
    std::ofstream(file) << "old";
    ::chmod(file.c_str(), 0444);
    auto saved = saveScenarioFile(preset("gpt2"), file);
    ASSERT_FALSE(saved.ok());
    EXPECT_NE(saved.error().text().find("read-only"), std::string::npos) << saved.error().text();
    EXPECT_EQ(read(file), "old");
}

}  // namespace
}  // namespace trainmem
