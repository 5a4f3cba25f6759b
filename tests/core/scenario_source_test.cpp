// One scenario source for the CLI and the app (core/scenario/scenario_source.h): the
// same flags give the same scenario, warnings and errors in both.
#include <gtest/gtest.h>

#include <string>

#include "core/scenario/presets.h"
#include "core/scenario/scenario_source.h"

namespace trainmem {
namespace {

const std::string kData = TRAINMEM_TEST_DATA_DIR;

TEST(ScenarioSource, OnlyOneSource) {
    ScenarioSource s;
    ASSERT_TRUE(s.set("--preset", "gpt2").ok());
    const Status second = s.set("--scenario", "x.json");
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.error().field, "--scenario");
    EXPECT_EQ(second.error().message, "give only one of --preset, --model-config and --scenario");
}

TEST(ScenarioSource, NoSourceIsAnErrorUnlessTheFrontEndHasADefault) {
    ScenarioSource none;
    none.settings = {"training.micro_batch_size=4"};
    EXPECT_FALSE(scenarioFromSource(none).ok());
    auto fallback = loadPreset("gpt2");
    ASSERT_TRUE(fallback.ok());
    const Expected<Scenario> s = scenarioFromSource(none, &*fallback);
    ASSERT_TRUE(s.ok()) << s.error().text();
    EXPECT_EQ(s->training.micro_batch_size, 4);
}

TEST(ScenarioSource, AModelConfigKeepsTheImportersWarningsAndNamesTheFileInErrors) {
    ScenarioSource unknown;
    ASSERT_TRUE(unknown.set("--model-config", kData + "/hf/unknown_type.json").ok());
    const Expected<Scenario> s = scenarioFromSource(unknown);
    ASSERT_TRUE(s.ok()) << s.error().text();
    ASSERT_EQ(s->warnings.size(), 1u);
    EXPECT_EQ(s->warnings[0].rfind("model.model_type", 0), 0u);

    ScenarioSource missing;
    ASSERT_TRUE(missing.set("--model-config", kData + "/hf/unknown_missing_hidden.json").ok());
    const Expected<Scenario> e = scenarioFromSource(missing);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().field, "model.hidden_size");
    EXPECT_NE(e.error().message.find("unknown_missing_hidden.json"), std::string::npos) << e.error().message;
}

TEST(ScenarioSource, AScenarioFileGivenAsAModelConfigSaysWhichFlagReadsIt) {
    // The app used to open it anyway and the CLI to refuse it as a config
    // without model_type; both now refuse it the same way.
    ScenarioSource s;
    ASSERT_TRUE(s.set("--model-config", kData + "/../../presets/scenarios/gpt2-1.5b-zero-paper.json").ok());
    const Expected<Scenario> e = scenarioFromSource(s);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().message.find("--scenario"), std::string::npos) << e.error().message;
}

}  // namespace
}  // namespace trainmem
