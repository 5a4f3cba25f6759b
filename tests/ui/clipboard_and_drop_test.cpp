// Clipboard copies and drag and drop onto the window.
#include <QClipboard>
#include <QDropEvent>
#include <QMimeData>
#include <QTemporaryDir>
#include <QUrl>

#include "core/report/report.h"
#include "ui/chart_export.h"
#include "ui/chart_views.h"
#include "ui_test_support.h"
#include "core/scenario/scenario_file.h"
#include "core/account/estimate.h"

namespace trainmem::ui {
namespace {

using namespace test;

TEST(DragAndDrop, DroppedConfigJsonBecomesTheModel) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    ASSERT_TRUE(dropFile(*window, QStringLiteral(TRAINMEM_TEST_DATA_DIR "/hf/qwen2_defaults.json")));
    EXPECT_EQ(window->document()->scenario().model.family, "qwen2");
}

TEST(DragAndDrop, DroppedScenarioReplacesEverything) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    const QString path = QStringLiteral(TRAINMEM_PRESETS_DIR "/scenarios/mixtral-8x7b-tp-ep.json");
    ASSERT_TRUE(dropFile(*window, path));
    EXPECT_EQ(window->document()->scenario(), presetScenario("mixtral-8x7b-tp-ep"));
    EXPECT_EQ(window->document()->path(), path);
}

TEST(Clipboard, TableCopiesAsTheCoresMarkdownAndCsv) {
    const Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    Expected<Estimate> e = estimate(s);
    ASSERT_TRUE(e.ok());
    copyTableMarkdown(s, *e, Units::GiB);
    EXPECT_EQ(QApplication::clipboard()->text().toStdString(), estimateToMarkdown(s, *e, Units::GiB));
    copyTableCsv(s, *e);
    EXPECT_EQ(QApplication::clipboard()->text().toStdString(), estimateToCsv(s, *e));
}

TEST(Clipboard, ChartCopiesAsAnImageOfTheRequestedSize) {
    const Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    Expected<Estimate> e = estimate(s);
    ASSERT_TRUE(e.ok());
    copyChartImage(breakdownChart(s, *e, Units::GiB), QSize(640, 400), 2.0);
    const QImage image = QApplication::clipboard()->image();
    EXPECT_EQ(image.size(), QSize(1280, 800));
}

// Edit > Copy Scenario as JSON: the scenario as its file holds it, which the
// core reads back to the same scenario (an edited model included).
TEST(Clipboard, ScenarioCopiesAsItsFilesJson) {
    auto window = openWindow(presetScenario("mixtral-8x7b-tp-ep"));
    window->document()->edit([](Scenario& s) {
        s.training.micro_batch_size = 3;
        s.model.num_layers = 30;
    });
    QAction* copy = nullptr;
    for (QAction* a : window->findChildren<QAction*>())
        if (a->text().remove('&') == QStringLiteral("Copy Scenario as JSON")) copy = a;
    ASSERT_NE(copy, nullptr) << "no Edit > Copy Scenario as JSON";
    QApplication::clipboard()->clear();
    copy->trigger();
    const nlohmann::json copied = nlohmann::json::parse(QApplication::clipboard()->text().toStdString(), nullptr, false);
    ASSERT_TRUE(copied.is_object());
    const Expected<Scenario> back = scenarioFromJson(copied);
    ASSERT_TRUE(back.ok()) << back.error().text();
    EXPECT_EQ(*back, window->document()->scenario());
    EXPECT_EQ(back->model.num_layers, 30);
}

}  // namespace
}  // namespace trainmem::ui
