// File > Open Run Config… and dropping a run config (issue 25, the app): the
// stack's own file becomes the scenario as one undoable step, with the
// report trainmem-cli import gives, its unknowns highlighted until set.
#include <QAction>
#include <QClipboard>
#include <QDockWidget>
#include <QDropEvent>
#include <QFile>
#include <QLabel>
#include <QMenuBar>
#include <QMimeData>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QUrl>

#include "core/runconfig/run_config.h"
#include "ui/launch_options.h"
#include "ui/run_config_files.h"
#include "ui/run_config_panel.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

const QString kRunConfigs = QStringLiteral(TRAINMEM_TEST_DATA_DIR "/run_configs/");

// What trainmem-cli import reads from the file (the core's importer, with
// companions beside it, as the app resolves them).
runconfig::RunConfigImport cliImport(const QString& path) {
    runconfig::RunConfigOptions options;
    options.working_directory = (kRunConfigs).toStdString();
    Expected<runconfig::RunConfigImport> r = runconfig::importRunConfig(path.toStdString(), options);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().text());
    return r.ok() ? *r : runconfig::RunConfigImport{};
}

int childCount(RunConfigPanel* panel, const QString& category) {
    QTreeWidgetItem* item = panel->category(category);
    return item ? item->childCount() : -1;
}

TEST(RunConfigOpen, ATorchtitanTomlBecomesTheScenarioAsOneUndoableStepWithItsReport) {
    const Scenario before = presetScenario("llama3.1-8b-fsdp-8xh100");
    auto window = openWindow(before);
    // The menu offers it.
    bool in_menu = false;
    for (QAction* a : window->menuBar()->findChildren<QAction*>())
        in_menu = in_menu || a->text().remove('&') == QStringLiteral("Open Run Config…");
    EXPECT_TRUE(in_menu);

    const QString path = kRunConfigs + "torchtitan_llama3_8b.toml";
    const int steps = window->document()->undoStack()->count();
    ASSERT_TRUE(window->openRunConfigFile(path)) << window->statusBar()->currentMessage().toStdString();
    const Scenario& s = window->document()->scenario();
    // The file's own keys (torchtitan v0.2.2): llama3 8B is Llama-3.1-8B,
    // local_batch_size 1, seq_len 8192, op-level selective checkpointing.
    EXPECT_EQ(s.model_preset, "llama-3.1-8b");
    EXPECT_EQ(s.training.micro_batch_size, 1);
    EXPECT_EQ(s.training.sequence_length, 8192);
    EXPECT_EQ(s.training.framework, Framework::Torchtitan);
    EXPECT_EQ(s.training.checkpointing, Checkpointing::Op);
    // The same scenario as trainmem-cli import, but for the GPU, which no
    // run config says: the open scenario's, and the panel says so.
    runconfig::RunConfigImport cli = cliImport(path);
    cli.scenario.hardware = before.hardware;
    EXPECT_EQ(s, cli.scenario);
    EXPECT_EQ(window->document()->undoStack()->count(), steps + 1);

    RunConfigPanel* panel = window->runConfigPanel();
    EXPECT_TRUE(window->runConfigDock()->isVisible());
    EXPECT_EQ(childCount(panel, "Read"), int(cli.report.read.size()));
    EXPECT_EQ(childCount(panel, "Defaults"), int(cli.report.defaults.size()));
    EXPECT_EQ(childCount(panel, "Unknown"), int(cli.report.unknown.size()));
    EXPECT_EQ(childCount(panel, "Not representable"), int(cli.report.not_representable.size()));
    EXPECT_EQ(childCount(panel, "Ignored"), int(cli.report.ignored.size()));
    ASSERT_NE(panel->category("Kept from the open scenario"), nullptr);
    EXPECT_TRUE(panel->header()->text().contains("torchtitan"));
    // A default names the stack's source (job_config.py at the release read).
    QTreeWidgetItem* defaults = panel->category("Defaults");
    ASSERT_GT(defaults->childCount(), 0);
    bool cites = false;
    for (int i = 0; i < defaults->childCount(); ++i) cites = cites || defaults->child(i)->text(3).contains("job_config.py");
    EXPECT_TRUE(cites);

    // data_parallel_shard_degree = -1 takes the world size, which the file
    // does not give: unknown, highlighted, until the user sets DP.
    ASSERT_TRUE(panel->unsetUnknowns().contains("parallelism.data")) << panel->unsetUnknowns().join(",").toStdString();
    QWidget* dp = window->fieldBindings().widgetFor("parallelism.data");
    ASSERT_NE(dp, nullptr);
    EXPECT_TRUE(dp->styleSheet().contains("#e0a000")) << dp->styleSheet().toStdString();  // its field too
    window->document()->edit([](Scenario& x) { x.parallelism.data = 8; }, "DP");
    QApplication::processEvents();
    EXPECT_FALSE(panel->unsetUnknowns().contains("parallelism.data"));
    EXPECT_FALSE(dp->styleSheet().contains("#e0a000")) << dp->styleSheet().toStdString();

    // Undo twice: the DP edit, then the whole run config.
    window->document()->undoStack()->undo();
    window->document()->undoStack()->undo();
    EXPECT_EQ(window->document()->scenario(), before);
}

TEST(RunConfigOpen, ADroppedAxolotlYamlReadsTheDeepspeedJsonItNames) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    const QString path = kRunConfigs + "axolotl_llama3_1_8b_lora_zero2.yaml";
    ASSERT_TRUE(dropFile(*window, path)) << window->statusBar()->currentMessage().toStdString();
    const Scenario& s = window->document()->scenario();
    // The file: LoRA r 32, micro-batch 2 x 4096 tokens, 4 accumulation
    // steps, adamw_bnb_8bit; its DeepSpeed JSON: ZeRO-2.
    EXPECT_EQ(s.model_preset, "llama-3.1-8b");
    EXPECT_EQ(s.training.finetuning, Finetuning::Lora);
    EXPECT_EQ(s.training.lora_rank, 32);
    EXPECT_EQ(s.training.micro_batch_size, 2);
    EXPECT_EQ(s.training.sequence_length, 4096);
    EXPECT_EQ(s.training.gradient_accumulation_steps, 4);
    EXPECT_EQ(s.training.optimizer, OptimizerKind::AdamW8bit);
    EXPECT_EQ(s.parallelism.zero_stage, 2);
    const runconfig::RunConfigImport cli = cliImport(path);
    EXPECT_EQ(childCount(window->runConfigPanel(), "Read"), int(cli.report.read.size()));
    EXPECT_EQ(childCount(window->runConfigPanel(), "Not representable"), int(cli.report.not_representable.size()));
}

TEST(RunConfigOpen, ABrokenFileChangesNothingAndNamesTheFileAndLine) {
    const Scenario before = presetScenario("llama3.1-8b-fsdp-8xh100");
    auto window = openWindow(before);
    QTemporaryDir dir;
    const QString path = dir.filePath("broken.toml");
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write("[model]\nname = \"llama3\"\n[training\nlocal_batch_size = 1\n");
    f.close();
    EXPECT_FALSE(window->openRunConfigFile(path));
    EXPECT_EQ(window->document()->scenario(), before);
    const QString message = window->statusBar()->currentMessage();
    EXPECT_TRUE(message.contains("broken.toml")) << message.toStdString();
    EXPECT_TRUE(message.contains("3")) << message.toStdString();  // the line of "[training"
    EXPECT_FALSE(window->document()->dirty());
}

TEST(RunConfigOpen, RunConfigsAreToldFromScenariosAndModelConfigs) {
    EXPECT_TRUE(isRunConfigFile(kRunConfigs + "deepspeed_zero3_offload.json"));
    EXPECT_TRUE(isRunConfigFile(kRunConfigs + "megatron_llama3_8b.sh"));
    EXPECT_TRUE(isRunConfigFile(kRunConfigs + "torchtune_llama3_1_8b_full.yaml"));
    EXPECT_FALSE(isRunConfigFile(QStringLiteral(TRAINMEM_TEST_DATA_DIR "/hf/qwen2_defaults.json")));
    EXPECT_FALSE(isRunConfigFile(QStringLiteral(TRAINMEM_PRESETS_DIR "/scenarios/mixtral-8x7b-tp-ep.json")));
}

// Edit > Copy as Run Config: the scenario as the stack's own file, the
// core's export-run text, which the importer reads back to the same
// training and parallel keys (its round trip is the core's test; here: the
// window copies exactly it, and says why when the target cannot).
TEST(RunConfigOpen, CopyAsRunConfigIsTheStacksOwnFileAndReadsBack) {
    const Scenario s = presetScenario("llama3.1-8b-torchtitan-8xh100");
    auto window = openWindow(s);
    for (const char* target : {"torchtitan", "deepspeed", "megatron"}) {
        const Expected<std::string> expected = runconfig::exportRunConfig(s, target);
        if (!expected) {
            EXPECT_FALSE(window->copyRunConfig(QString::fromLatin1(target)));
            EXPECT_TRUE(window->statusBar()->currentMessage().contains(QString::fromStdString(expected.error().message)));
            continue;
        }
        ASSERT_TRUE(window->copyRunConfig(QString::fromLatin1(target))) << window->statusBar()->currentMessage().toStdString();
        EXPECT_EQ(QApplication::clipboard()->text().toStdString(), *expected) << target;
    }
    // The torchtitan TOML, written to a file and opened, is the scenario's
    // micro-batch, sequence and layout again.
    ASSERT_TRUE(window->copyRunConfig(QStringLiteral("torchtitan")));
    QTemporaryDir dir;
    const QString path = dir.filePath("copied.toml");
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(QApplication::clipboard()->text().toUtf8());
    f.close();
    window->document()->edit([](Scenario& x) { x.training.micro_batch_size = 7; });
    ASSERT_TRUE(window->openRunConfigFile(path)) << window->statusBar()->currentMessage().toStdString();
    const Scenario& back = window->document()->scenario();
    EXPECT_EQ(back.training.micro_batch_size, s.training.micro_batch_size);
    EXPECT_EQ(back.training.sequence_length, s.training.sequence_length);
    EXPECT_EQ(back.parallelism.data, s.parallelism.data);
    EXPECT_EQ(back.parallelism.zero_stage, s.parallelism.zero_stage);
}

// trainmem FILE.toml (what a desktop's "Open with" passes) or --run-config
// FILE opens it over the scenario, as the menu does; a config.json given
// bare is still a model; a headless export refuses it by name.
TEST(RunConfigOpen, TheCommandLineTakesARunConfig) {
    const QString toml = kRunConfigs + "torchtitan_llama3_8b.toml";
    Expected<LaunchOptions> bare = parseLaunchOptions({toml});
    ASSERT_TRUE(bare.ok()) << bare.error().text();
    EXPECT_EQ(bare->run_config, toml);
    EXPECT_EQ(bare->source, LaunchOptions::Source::Default);
    Expected<LaunchOptions> flag = parseLaunchOptions({"--preset", "llama3.1-8b-fsdp-8xh100", "--run-config", toml});
    ASSERT_TRUE(flag.ok()) << flag.error().text();
    EXPECT_EQ(flag->run_config, toml);
    EXPECT_EQ(flag->source, LaunchOptions::Source::Preset);
    Expected<LaunchOptions> model = parseLaunchOptions({QStringLiteral(TRAINMEM_TEST_DATA_DIR "/hf/qwen2_defaults.json")});
    ASSERT_TRUE(model.ok()) << model.error().text();
    EXPECT_TRUE(model->run_config.isEmpty());
    EXPECT_EQ(model->source, LaunchOptions::Source::ModelConfig);
    QTemporaryDir dir;
    LaunchOptions headless = *flag;
    headless.export_path = dir.filePath("x.png");
    EXPECT_EQ(runHeadlessExport(headless), 2);
    EXPECT_FALSE(QFile::exists(headless.export_path));
}

}  // namespace
}  // namespace trainmem::ui
