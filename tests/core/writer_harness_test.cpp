// The writer harness on the core's writers (issue 28): the one atomic writer
// every file goes through, and scenario saves. The UI's writers (exports,
// the session, settings) run the same harness in tests/ui, trainmem-cli's
// stdout in tests/cli/output_failure_test.cpp.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <utime.h>

#include <filesystem>
#include <string>

#include "core/base/file_output.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"
#include "tests/support/hostile_targets.h"

namespace trainmem {
namespace {

namespace fs = std::filesystem;
using test_support::fileText;
using test_support::HostileTargets;

std::string errorOf(const Status& s) { return s ? std::string() : s.error().text(); }

TEST(WriterHarness, TheAtomicWriterRefusesEveryHostileTarget) {
    // 40 KB, so half of it fills a page of the full disk and the rest fails.
    const std::string bytes(40000, 'a');
    HostileTargets targets;
    targets.check([&](const fs::path& p) { return errorOf(writeFileAtomically(p, bytes)); }, "data.bin");
    EXPECT_EQ(fileText(targets.root() / "plain-data.bin"), bytes);
}

TEST(WriterHarness, ScenarioSavesRefuseEveryHostileTarget) {
    Expected<Scenario> s = loadPreset("llama3.1-8b-fsdp-8xh100");
    ASSERT_TRUE(s.ok());
    HostileTargets targets;
    targets.check([&](const fs::path& p) { return errorOf(saveScenarioFile(*s, p)); }, "run.json");
}

// Minor: a save killed by SIGKILL leaves its temporary file; 300 kills left
// 60 files (218 MB). The next save removes stale ones of its own naming, and
// nothing else.
TEST(WriterHarness, StaleTemporaryFilesOfAKilledSaveAreRemovedOnTheNextSave) {
    HostileTargets targets;
    const fs::path dir = targets.root();
    const fs::path target = dir / "run.json";
    const fs::path stale = dir / ".run.json.Ab12Cd", fresh = dir / ".run.json.Zz99Yy";
    const fs::path other = dir / ".other.json.Ab12Cd", lookalike = dir / ".run.json.Ab12Cd.keep";
    for (const fs::path& p : {stale, fresh, other, lookalike}) test_support::writeText(p, "temp");
    const struct utimbuf old_times {1'000'000'000, 1'000'000'000};  // 2001
    for (const fs::path& p : {stale, other, lookalike}) ASSERT_EQ(::utime(p.c_str(), &old_times), 0);
    ASSERT_TRUE(writeFileAtomically(target, "{}\n").ok());
    EXPECT_FALSE(fs::exists(stale));
    EXPECT_TRUE(fs::exists(fresh)) << "a save in progress elsewhere may own it";
    EXPECT_TRUE(fs::exists(other));
    EXPECT_TRUE(fs::exists(lookalike));
    EXPECT_TRUE(isTemporaryFileOf(stale, target));
    EXPECT_FALSE(isTemporaryFileOf(lookalike, target));
}

}  // namespace
}  // namespace trainmem
