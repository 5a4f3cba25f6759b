// trainmem-cli validate: exit 0 within the bounds, 1 when one is exceeded,
// 2 with one line on stderr for bad input. The measurement files here are
// SYNTHETIC, written by the test at a chosen error from the estimate, so the
// checks hold whatever the estimator's numbers are.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "tests/cli/cli_run.h"
#include "core/account/estimate.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"

namespace trainmem::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;


json syntheticScenario(int64_t micro_batch) {
    return {{"model", {{"preset", "gpt2"}}},
            {"training", {{"micro_batch_size", micro_batch}, {"sequence_length", 1024}, {"precision", "amp-bf16"}}}};
}

// A temporary folder of synthetic measurements, removed at the end of the test.
class MeasurementFolder {
public:
    MeasurementFolder() {
        path_ = fs::temp_directory_path() /
                ("trainmem-validate-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~MeasurementFolder() { fs::remove_all(path_); }
    const fs::path& path() const { return path_; }

    // Measured values chosen so that (estimated - measured) / measured equals the given errors.
    void addCase(const std::string& name, int64_t micro_batch, double allocated_error, double reserved_error,
                 const std::string& gpu = "SYNTHETIC") {
        const json scenario = syntheticScenario(micro_batch);
        auto s = scenarioFromJson(scenario);
        ASSERT_TRUE(s.ok()) << s.error().text();
        auto e = estimate(*s);
        ASSERT_TRUE(e.ok()) << e.error().text();
        const auto measured = [](int64_t estimated, double error) {
            return static_cast<int64_t>(std::llround(static_cast<double>(estimated) / (1.0 + error)));
        };
        const int64_t allocated = measured(e->peak.allocated_bytes, allocated_error);
        const int64_t reserved = std::max(allocated, measured(e->peak.reserved_bytes, reserved_error));
        write(name, {{"scenario", scenario},
                     {"measured", {{"allocated_peak_bytes", allocated}, {"reserved_peak_bytes", reserved},
                                   {"device_bytes", reserved + 500 * kMiB}, {"peak_phase", "backward"},
                                   {"gpu", gpu}, {"driver", ""}, {"torch", "0+synthetic"},
                                   {"transformers", ""}, {"cuda", ""}, {"steps", 3}}}});
    }
    void write(const std::string& name, const json& doc) { std::ofstream(path_ / (name + ".json")) << doc.dump(2); }
    void writeText(const std::string& name, const std::string& text) { std::ofstream(path_ / name) << text; }

private:
    fs::path path_;
};

void expectRefused(const CliRun& r, const std::string& fragment) {
    EXPECT_EQ(r.status, 2);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(r.err.rfind("trainmem-cli: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
}

TEST(ValidateCommand, WithinBoundsExitsZeroWithTheTable) {
    MeasurementFolder folder;
    folder.addCase("case-a", 2, 0.02, 0.04);
    folder.addCase("case-b", 4, -0.01, -0.08);
    folder.addCase("case-c", 8, 0.045, 0.0);
    const CliRun r = run({"validate", folder.path().string()});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    for (const char* text : {"case-a", "case-b", "case-c", "+2.00%", "-1.00%", "+4.50%", "-8.00%", "median |error|",
                             "Within bounds"})
        EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
}

TEST(ValidateCommand, AllocatedWorstBeyondFivePercentExitsOne) {
    MeasurementFolder folder;
    folder.addCase("case-a", 2, 0.0, 0.0);
    folder.addCase("case-b", 4, -0.07, 0.0);
    folder.addCase("case-c", 8, 0.0, 0.0);
    const CliRun r = run({"validate", folder.path().string()});
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("Bound exceeded: allocated: worst"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(case-b)"), std::string::npos) << r.out;
}

TEST(ValidateCommand, MedianBeyondThreePercentExitsOne) {
    MeasurementFolder folder;
    folder.addCase("case-a", 2, 0.04, 0.0);
    folder.addCase("case-b", 4, 0.04, 0.0);
    folder.addCase("case-c", 8, 0.0, 0.0);
    const CliRun r = run({"validate", folder.path().string()});
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("allocated: median"), std::string::npos) << r.out;
}

TEST(ValidateCommand, ReservedBeyondTenPercentExitsOne) {
    MeasurementFolder folder;
    folder.addCase("case-a", 2, 0.0, 0.15);
    const CliRun r = run({"validate", folder.path().string()});
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("reserved: worst"), std::string::npos) << r.out;
}

TEST(ValidateCommand, JsonHasEveryCaseTheStatisticsAndTheVerdict) {
    MeasurementFolder folder;
    folder.addCase("case-a", 2, 0.02, 0.0);
    folder.addCase("case-b", 4, -0.06, 0.0);
    const CliRun r = run({"validate", folder.path().string(), "--format", "json"});
    EXPECT_EQ(r.status, 1);
    const json doc = json::parse(r.out);
    ASSERT_EQ(doc["cases"].size(), 2u);
    EXPECT_EQ(doc["cases"][0]["case"], "case-a");
    EXPECT_TRUE(doc["cases"][0]["allocated"]["measured_bytes"].is_number_integer());
    EXPECT_NEAR(doc["cases"][1]["allocated"]["error"].get<double>(), -0.06, 1e-9);
    EXPECT_NEAR(doc["allocated"]["worst_abs_error"].get<double>(), 0.06, 1e-9);
    EXPECT_EQ(doc["allocated"]["worst_case"], "case-b");
    EXPECT_EQ(doc["within_bounds"], false);
    EXPECT_EQ(doc["bounds"]["allocated_worst"], 0.05);
}

TEST(ValidateCommand, MarkdownIsATableForTheDocsWithEachMachineOnce) {
    MeasurementFolder folder;
    folder.addCase("case-a", 2, 0.02, 0.04);
    folder.addCase("case-b", 4, -0.01, -0.08, "SYNTHETIC B");
    folder.addCase("case-c", 8, 0.01, 0.0);
    const CliRun r = run({"validate", folder.path().string(), "--format", "markdown"});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    std::istringstream lines(r.out);
    std::vector<std::string> rows;
    for (std::string line; std::getline(lines, line);) rows.push_back(line);
    ASSERT_GE(rows.size(), 7u) << r.out;
    EXPECT_EQ(rows[0].rfind("| Case |", 0), 0u) << rows[0];
    EXPECT_EQ(rows[1].rfind("| --- | ---: |", 0), 0u) << rows[1];  // numbers right-aligned
    // Three cases, then the median and worst rows, with no blank row between.
    EXPECT_EQ(rows[2].rfind("| case-a |", 0), 0u) << rows[2];
    EXPECT_NE(rows[2].find("+2.00%"), std::string::npos) << rows[2];
    // A pipe inside a cell is escaped, or Markdown would split the cell.
    EXPECT_EQ(rows[5].rfind(R"(| median \|error\| |)", 0), 0u) << rows[5];
    EXPECT_EQ(rows[6].rfind(R"(| worst \|error\| |)", 0), 0u) << rows[6];
    // Each machine once, in the order first seen.
    const size_t a = r.out.find("- SYNTHETIC, torch 0+synthetic\n");
    const size_t b = r.out.find("- SYNTHETIC B, torch 0+synthetic\n");
    EXPECT_NE(a, std::string::npos) << r.out;
    EXPECT_NE(b, std::string::npos) << r.out;
    EXPECT_LT(a, b);
    EXPECT_EQ(r.out.find("- SYNTHETIC, torch", a + 1), std::string::npos) << r.out;
}

TEST(ValidateCommand, EmptyFolderSaysHowToMeasure) {
    MeasurementFolder folder;
    folder.writeText("README.md", "measurements go here\n");
    expectRefused(run({"validate", folder.path().string()}), "run validation/measure_gpu.py --all on a GPU");
}

TEST(ValidateCommand, MissingFolderIsBadInput) {
    expectRefused(run({"validate", "/nonexistent/trainmem-measurements"}), "/nonexistent/trainmem-measurements");
}

TEST(ValidateCommand, MalformedFileNamesTheFileAndTheKey) {
    MeasurementFolder folder;
    folder.addCase("case-a", 2, 0.0, 0.0);
    folder.write("case-broken", {{"scenario", syntheticScenario(2)}, {"measured", {{"allocated_peak_bytes", 1}}}});
    const CliRun r = run({"validate", folder.path().string()});
    expectRefused(r, "measured.reserved_peak_bytes");
    EXPECT_NE(r.err.find("case-broken.json"), std::string::npos) << r.err;
}

TEST(ValidateCommand, InvalidScenarioNamesTheScenarioKey) {
    MeasurementFolder folder;
    json doc = {{"scenario", syntheticScenario(2)}, {"measured", json::object()}};
    doc["scenario"]["training"]["micro_batch_size"] = 0;
    folder.write("case-zero-batch", doc);
    expectRefused(run({"validate", folder.path().string()}), "scenario.training.micro_batch_size");
}

TEST(ValidateCommand, UnknownFlagIsBadInput) {
    expectRefused(run({"validate", "--fromat", "json"}), "--fromat");
}

TEST(ValidateCommand, HelpListsTheExitStatuses) {
    const CliRun r = run({"validate", "--help"});
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("1  a bound is exceeded"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace trainmem::cli
