// Files: save then open gives back every field; a dropped or opened JSON is
// a scenario or a Hugging Face config by its content.
#include <QFile>
#include <QTemporaryDir>

#include "core/model/hf_config.h"
#include "core/scenario/scenario.h"
#include "tests/core/every_field_changed.h"
#include "ui/app_settings.h"
#include "ui/scenario_files.h"
#include "ui_test_support.h"
#include "core/scenario/scenario_file.h"

namespace trainmem::ui {
namespace {

using namespace test;

// Every training, parallelism and hardware field away from its default, on
// a model with both experts and latent attention.
Scenario everyFieldChanged() {
    Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    Expected<ModelConfig> v3 = loadModelPreset("deepseek-v3");
    EXPECT_TRUE(v3.ok());
    s.model = *v3;
    s.model_preset = "deepseek-v3";
    s.name = "round-trip";
    s.description = "every field changed";
    trainmem::testing::changeEveryField(s);
    return s;
}

TEST(ScenarioFiles, SaveThenOpenInANewWindowGivesBackEveryField) {
    QTemporaryDir dir;
    const QString path = dir.filePath("every-field.json");
    const Scenario original = everyFieldChanged();
    {
        auto window = openWindow(original);
        ASSERT_TRUE(window->saveTo(path));
        EXPECT_FALSE(window->document()->dirty());
    }
    auto reopened = openWindow(presetScenario("mixtral-8x7b-tp-ep"));
    ASSERT_TRUE(reopened->openFile(path));
    EXPECT_EQ(reopened->document()->scenario(), original);
    EXPECT_EQ(reopened->document()->path(), path);
    // And the panels show what was opened.
    EXPECT_EQ(fieldWidget<QSpinBox>(*reopened, "training.micro_batch_size")->value(), 3);
    EXPECT_EQ(fieldWidget<QSpinBox>(*reopened, "parallelism.virtual_stages")->value(), 2);
    EXPECT_EQ(fieldWidget<QSpinBox>(*reopened, "model.n_routed_experts")->value(), 256);
    EXPECT_DOUBLE_EQ(fieldWidget<QDoubleSpinBox>(*reopened, "hardware.memory_gib")->value(), 96.0);
}

TEST(ScenarioFiles, EditedModelRoundTripsAsAnInlineConfig) {
    QTemporaryDir dir;
    const QString path = dir.filePath("edited-model.json");
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    fieldWidget<QSpinBox>(*window, "model.num_hidden_layers")->setValue(20);
    ASSERT_TRUE(window->saveTo(path));
    Expected<Scenario> loaded = loadScenarioFile(path.toStdString());
    ASSERT_TRUE(loaded.ok()) << loaded.error().text();
    EXPECT_EQ(loaded->model.num_layers, 20);
    EXPECT_EQ(*loaded, window->document()->scenario());
}

TEST(ScenarioFiles, ContentDecidesScenarioOrModelConfig) {
    EXPECT_EQ(classifyJson({{"format", "trainmem-scenario"}, {"model", {{"preset", "gpt2"}}}}), JsonFileKind::Scenario);
    EXPECT_EQ(classifyJson({{"model", {{"preset", "gpt2"}}}, {"training", nlohmann::json::object()}}), JsonFileKind::Scenario);
    EXPECT_EQ(classifyJson({{"model_type", "llama"}, {"hidden_size", 4096}}), JsonFileKind::ModelConfig);
}

TEST(ScenarioFiles, OpeningAConfigJsonReplacesOnlyTheModel) {
    Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    s.training.sequence_length = 777;
    auto window = openWindow(s);
    ASSERT_TRUE(window->openFile(QStringLiteral(TRAINMEM_TEST_DATA_DIR "/hf/mixtral_defaults.json")));
    const Scenario& now = window->document()->scenario();
    EXPECT_EQ(now.model.family, "mixtral");
    EXPECT_TRUE(now.model.isMoe());
    EXPECT_EQ(now.training.sequence_length, 777);
    EXPECT_EQ(now.parallelism, s.parallelism);
    EXPECT_TRUE(now.model_preset.empty());
    EXPECT_TRUE(window->document()->path().isEmpty());  // still not a scenario file
}

TEST(ScenarioFiles, UnreadableFileLeavesTheScenarioAlone) {
    const Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    auto window = openWindow(s);
    EXPECT_FALSE(window->openFile(QStringLiteral(TRAINMEM_TEST_DATA_DIR "/scenarios/malformed.json")));
    EXPECT_FALSE(window->openFile(QStringLiteral("/nonexistent/scenario.json")));
    EXPECT_EQ(window->document()->scenario(), s);
}

TEST(AppSettings, RecentFilesAreMostRecentFirstWithoutDuplicates) {
    AppSettings settings;
    for (const QString& f : settings.recentFiles()) settings.removeRecentFile(f);
    settings.addRecentFile("/tmp/a.json");
    settings.addRecentFile("/tmp/b.json");
    settings.addRecentFile("/tmp/a.json");
    EXPECT_EQ(settings.recentFiles(), (QStringList{"/tmp/a.json", "/tmp/b.json"}));
    for (int i = 0; i < 20; ++i) settings.addRecentFile(QStringLiteral("/tmp/f%1.json").arg(i));
    EXPECT_EQ(settings.recentFiles().size(), AppSettings::kMaxRecentFiles);
    settings.setUnits(Units::GB);
    EXPECT_EQ(AppSettings().units(), Units::GB);
    settings.setUnits(Units::GiB);
}

}  // namespace
}  // namespace trainmem::ui
