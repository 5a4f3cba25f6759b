// Edit > Copy as trainmem-cli Command: the line, run through the CLI's own
// parsing (applySettings on the named source), gives back the open scenario.
#include "core/scenario/presets.h"
#include "ui/cli_command.h"
#include "ui_test_support.h"
#include "core/scenario/scenario_file.h"

namespace trainmem::ui {
namespace {

using test::presetScenario;

TEST(CliCommand, APresetAsIsIsJustThePreset) {
    const Expected<QString> line = cliCommand(presetScenario("llama3.1-8b-fsdp-8xh100"));
    ASSERT_TRUE(line.ok()) << line.error().text();
    EXPECT_EQ(*line, QStringLiteral("trainmem-cli estimate --preset llama3.1-8b-fsdp-8xh100"));
}

TEST(CliCommand, EditsBecomeSetsThatReproduceTheScenario) {
    Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    s.training.micro_batch_size = 3;
    s.training.optimizer = OptimizerKind::AdamW8bit;
    s.parallelism.zero_stage = 2;
    const Expected<QString> line = cliCommand(s);
    ASSERT_TRUE(line.ok()) << line.error().text();
    EXPECT_TRUE(line->startsWith("trainmem-cli estimate --preset llama3.1-8b-fsdp-8xh100 --set ")) << line->toStdString();
    EXPECT_TRUE(line->contains("--set training.micro_batch_size=3")) << line->toStdString();
    // Parse it back as the CLI does: the preset, then the --set edits.
    Scenario back = presetScenario("llama3.1-8b-fsdp-8xh100");
    std::vector<std::string> sets;
    const QStringList words = line->split(' ');
    for (int i = 0; i + 1 < words.size(); ++i)
        if (words[i] == "--set") sets.push_back(words[i + 1].toStdString());
    ASSERT_EQ(sets.size(), 3u) << line->toStdString();
    ASSERT_TRUE(applySettings(back, sets).ok());
    EXPECT_EQ(back.training.micro_batch_size, 3);
    EXPECT_EQ(back.training.optimizer, OptimizerKind::AdamW8bit);
    EXPECT_EQ(back.parallelism.zero_stage, 2);
}

TEST(CliCommand, AnEditedModelStartsFromItsModelPreset) {
    Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    s.model.num_layers = 16;
    s.model_preset.clear();
    s.name.clear();
    const Expected<QString> none = cliCommand(s);
    EXPECT_FALSE(none.ok());  // nothing to start from: says so instead of a wrong line
}

}  // namespace
}  // namespace trainmem::ui
