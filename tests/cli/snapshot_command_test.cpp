// trainmem-cli snapshot on the synthetic training step of
// validation/make_snapshot_fixtures.py, whose peaks are worked out by hand in
// tests/core/memory_snapshot_test.cpp: allocated 184 MiB at event 12 and
// reserved 208 MiB at event 11, both in backward.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "tests/cli/cli_run.h"
#include "core/account/estimate.h"
#include "core/scenario/presets.h"

namespace trainmem::cli {
namespace {

constexpr int64_t MiB = int64_t(1) << 20;


std::string snapshotFile(const std::string& name) { return std::string(TRAINMEM_TEST_DATA_DIR) + "/snapshots/" + name; }

TEST(SnapshotCommand, JsonHasThePeaksTheBaselineAndTheCurve) {
    const CliRun r = run({"snapshot", snapshotFile("training_step_p4.pickle"), "--format", "json", "--points", "0"});
    ASSERT_EQ(r.status, kExitOk) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["device"], 0);
    EXPECT_EQ(j["event_count"], 27);
    EXPECT_EQ(j["allocated"]["baseline_bytes"], 96 * MiB);
    EXPECT_EQ(j["allocated"]["peak_bytes"], 184 * MiB);
    EXPECT_EQ(j["allocated"]["peak_event"], 12);
    EXPECT_EQ(j["allocated"]["peak_time_us"], 1120);
    EXPECT_EQ(j["allocated"]["peak_phase"], "backward");
    EXPECT_EQ(j["reserved"]["peak_bytes"], 208 * MiB);
    EXPECT_EQ(j["reserved"]["peak_event"], 11);
    ASSERT_EQ(j["curve"].size(), 28u);  // the baseline and 27 events
    EXPECT_EQ(j["curve"][0]["event"], -1);
    EXPECT_TRUE(j["curve"][0]["time_us"].is_null());
    EXPECT_EQ(j["curve"][13]["allocated_bytes"], 184 * MiB);
    EXPECT_FALSE(j.contains("estimate"));
}

TEST(SnapshotCommand, PointsDownsampleTheCurveKeepingThePeaks) {
    const CliRun r = run({"snapshot", snapshotFile("training_step_p2.pickle"), "--format=json", "--points=4"});
    ASSERT_EQ(r.status, kExitOk) << r.err;
    const auto curve = nlohmann::json::parse(r.out)["curve"];
    ASSERT_EQ(curve.size(), 4u);
    EXPECT_EQ(curve[1]["event"], 11);
    EXPECT_EQ(curve[2]["event"], 12);
    EXPECT_EQ(run({"snapshot", snapshotFile("training_step_p2.pickle"), "--points", "3"}).status, kExitUsage);
}

TEST(SnapshotCommand, TableNamesPeaksWithEventTimeAndPhase) {
    const CliRun r = run({"snapshot", snapshotFile("training_step_p5.pickle")});
    ASSERT_EQ(r.status, kExitOk) << r.err;
    EXPECT_NE(r.out.find("27 events, 5 distinct call stacks"), std::string::npos) << r.out;
    // 184 MiB = 192937984 B at event 12 (t = 1120 us); 208 MiB = 218103808 B at event 11.
    EXPECT_NE(r.out.find("192937984     12     1120  backward"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("218103808     11     1110  backward"), std::string::npos) << r.out;
}

TEST(SnapshotCommand, ScenarioPutsTheEstimateBesideTheMeasurement) {
    const CliRun r = run({"snapshot", snapshotFile("training_step_p4.pickle"), "--preset", "gpt2", "--format", "json"});
    ASSERT_EQ(r.status, kExitOk) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    auto scenario = loadPreset("gpt2");
    ASSERT_TRUE(scenario.ok()) << scenario.error().text();
    auto e = estimate(*scenario);
    ASSERT_TRUE(e.ok()) << e.error().text();
    const int64_t estimated = e->peak.allocated_bytes;
    ASSERT_TRUE(j.contains("estimate"));
    EXPECT_EQ(j["estimate"]["allocated_bytes"], estimated);
    const double measured = 184.0 * MiB;
    EXPECT_DOUBLE_EQ(j["estimate"]["allocated_error"].get<double>(), (double(estimated) - measured) / measured);
    EXPECT_EQ(j["estimate"]["peak_phase"], std::string(phaseName(e->peak.peak_phase)));
    // A GPT-2 estimate of batch 1 x 1024 beside a small recorded step: 22x
    // apart, so the comparison says the snapshot is of another run.
    ASSERT_TRUE(j["estimate"].contains("mismatch"));
    EXPECT_NE(j["estimate"]["mismatch"].get<std::string>().find("does not look like this scenario"), std::string::npos);
}

TEST(SnapshotCommand, BadInputIsOneLineAndStatus2) {
    const std::string evil = snapshotFile("hostile/reduce_os_system.pickle");
    CliRun r = run({"snapshot", evil});
    EXPECT_EQ(r.status, kExitUsage);
    EXPECT_EQ(r.err, "trainmem-cli: " + evil +
                         ": refusing opcode STACK_GLOBAL at byte 28: snapshots never need code execution\n");
    r = run({"snapshot"});
    EXPECT_EQ(r.status, kExitUsage);
    EXPECT_NE(r.err.find("no snapshot file"), std::string::npos);
    r = run({"snapshot", snapshotFile("training_step_p4.pickle"), "--device", "1"});
    EXPECT_EQ(r.status, kExitUsage);
    EXPECT_EQ(r.err, "trainmem-cli: --device: device 1 has no trace and no segments; this snapshot has device(s) 0\n");
    r = run({"snapshot", snapshotFile("training_step_p4.pickle"), "--device", "-1"});
    EXPECT_EQ(r.status, kExitUsage);
    r = run({"snapshot", "/nonexistent.pickle"});
    EXPECT_EQ(r.err, "trainmem-cli: /nonexistent.pickle: no such file\n");
    // A device or a folder is named as such, at once (issue 15: /dev/zero never finished).
    r = run({"snapshot", "/dev/zero"});
    EXPECT_EQ(r.status, kExitUsage);
    EXPECT_EQ(r.err, "trainmem-cli: /dev/zero: is a character device, not a regular file; only regular files are read\n");
    r = run({"snapshot", "/tmp"});
    EXPECT_EQ(r.err, "trainmem-cli: /tmp: is a directory, not a file\n");
}

}  // namespace
}  // namespace trainmem::cli
