// The Compare tab's pins travel with the scenario file: names and order kept,
// older files without pins still open, a bad pin is named and left out while
// the scenario and the other pins load.
#include <QFile>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QUndoStack>

#include "core/scenario/scenario.h"
#include "ui/compare_tab.h"
#include "ui/scenario_pins.h"
#include "ui_test_support.h"
#include "core/scenario/scenario_file.h"
#include "core/account/estimate.h"

namespace trainmem::ui {
namespace {

using namespace test;

void writeText(const QString& path, const std::string& text) {
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(text.c_str());
}

TEST(ScenarioPins, SavedWithTheScenarioInTheirOrderWithTheirNames) {
    QTemporaryDir dir;
    const QString path = dir.filePath("pinned.json");
    const Scenario base = presetScenario("llama3.1-8b-fsdp-8xh100");
    Scenario doubled = base;
    doubled.training.micro_batch_size = base.training.micro_batch_size * 2;
    {
        auto window = openWindow(base);
        ASSERT_TRUE(window->compareTab()->pin());
        window->document()->replace(doubled);
        ASSERT_TRUE(window->compareTab()->pin());
        ASSERT_TRUE(window->compareTab()->renamePin(0, QStringLiteral("baseline")));
        ASSERT_TRUE(window->compareTab()->renamePin(1, QStringLiteral("micro-batch x2")));
        ASSERT_TRUE(window->compareTab()->movePin(1, 0));  // the order is the user's, not the letters'
        ASSERT_TRUE(window->saveTo(path));
    }
    auto reopened = openWindow(presetScenario("mixtral-8x7b-tp-ep"));
    ASSERT_TRUE(reopened->openFile(path));
    const auto& pins = reopened->compareTab()->pins();
    ASSERT_EQ(pins.size(), 2u);
    EXPECT_EQ(pins[0].label, QStringLiteral("micro-batch x2"));
    EXPECT_EQ(pins[1].label, QStringLiteral("baseline"));
    EXPECT_EQ(pins[0].scenario, doubled);
    EXPECT_EQ(pins[1].scenario, base);
    // Each pin's estimate is the core's for its scenario, made again on load.
    EXPECT_EQ(pins[0].estimate.peak.device_bytes, estimate(doubled)->peak.device_bytes);
    // The trainmem-cli reads the same file: the pins are not part of its scenario.
    Expected<Scenario> cli = loadScenarioFile(path.toStdString());
    ASSERT_TRUE(cli.ok()) << cli.error().text();
    EXPECT_EQ(*cli, doubled);
}

TEST(ScenarioPins, AFileWithoutPinsOpensAndKeepsThePinsBeingCompared) {
    QTemporaryDir dir;
    const QString path = dir.filePath("old.json");
    ASSERT_TRUE(saveScenarioFile(presetScenario("llama3.1-8b-fsdp-8xh100"), path.toStdString()).ok());
    auto window = openWindow(presetScenario("mixtral-8x7b-tp-ep"));
    ASSERT_TRUE(window->compareTab()->pin());
    ASSERT_TRUE(window->openFile(path));
    EXPECT_EQ(window->compareTab()->pins().size(), 1u);
    EXPECT_EQ(window->document()->scenario(), presetScenario("llama3.1-8b-fsdp-8xh100"));
}

TEST(ScenarioPins, ABadPinIsNamedAndLeftOutTheRestLoads) {
    QTemporaryDir dir;
    const QString path = dir.filePath("bad-pin.json");
    const Scenario base = presetScenario("llama3.1-8b-fsdp-8xh100");
    nlohmann::json doc = scenarioToJson(base);
    nlohmann::json bad = scenarioToJson(base);
    bad["training"]["micro_batch_size"] = 0;
    doc["pins"] = nlohmann::json::array({{{"name", "good"}, {"scenario", scenarioToJson(base)}},
                                         {{"name", "zero batch"}, {"scenario", bad}},
                                         {{"name", "good"}, {"scenario", scenarioToJson(base)}},
                                         42});
    writeText(path, doc.dump(2));

    auto window = openWindow(presetScenario("mixtral-8x7b-tp-ep"));
    ASSERT_TRUE(window->openFile(path));
    EXPECT_EQ(window->document()->scenario(), base);
    ASSERT_EQ(window->compareTab()->pins().size(), 1u);
    EXPECT_EQ(window->compareTab()->pins()[0].label, QStringLiteral("good"));
    const QString message = window->statusBar()->currentMessage();
    EXPECT_TRUE(message.contains(QStringLiteral("pins[1].scenario.training.micro_batch_size"))) << message.toStdString();
    EXPECT_TRUE(message.contains(QStringLiteral("pins[2].name"))) << message.toStdString();
    EXPECT_TRUE(message.contains(QStringLiteral("pins[3]"))) << message.toStdString();

    const LoadedPins not_a_list = pinsFromJson({{"pins", "A"}}, CompareTab::kMaxPins);
    EXPECT_TRUE(not_a_list.pins.empty());
    ASSERT_EQ(not_a_list.errors.size(), 1);
    EXPECT_TRUE(not_a_list.errors[0].startsWith(QStringLiteral("pins: expected a list")));
}


// Pins are saved in the file, so changing them is a change to the document:
// each of add, rename, move and remove marks it unsaved and is one Undo step.
TEST(ScenarioPins, EveryPinChangeMarksTheFileUnsavedAndIsUndoable) {
    QTemporaryDir dir;
    const QString path = dir.filePath("pins.json");
    const Scenario base = presetScenario("llama3.1-8b-fsdp-8xh100");
    auto window = openWindow(base);
    ASSERT_TRUE(window->saveTo(path));
    ASSERT_FALSE(window->document()->dirty());
    CompareTab* tab = window->compareTab();
    QUndoStack* undo = window->document()->undoStack();
    auto labels = [&] {
        QStringList out;
        for (const PinnedScenario& p : tab->pins()) out << p.label;
        return out.join(',');
    };

    ASSERT_TRUE(tab->pin());
    EXPECT_TRUE(window->document()->dirty()) << "a new pin is not saved yet";
    EXPECT_TRUE(window->isWindowModified());
    ASSERT_TRUE(tab->pin());
    ASSERT_TRUE(tab->renamePin(1, QStringLiteral("second")));
    ASSERT_TRUE(tab->movePin(1, 0));
    ASSERT_TRUE(tab->removePin(1));
    EXPECT_EQ(labels(), QStringLiteral("second"));

    undo->undo();  // the removal
    EXPECT_EQ(labels(), QStringLiteral("second,A"));
    undo->undo();  // the move
    EXPECT_EQ(labels(), QStringLiteral("A,second"));
    undo->undo();  // the rename
    EXPECT_EQ(labels(), QStringLiteral("A,B"));
    undo->undo();  // the second pin
    EXPECT_EQ(labels(), QStringLiteral("A"));
    undo->undo();  // the first
    EXPECT_EQ(labels(), QString());
    EXPECT_FALSE(window->document()->dirty()) << "back to what was saved";
    EXPECT_EQ(window->document()->scenario(), base) << "pin steps never touch the scenario";
    undo->redo();
    EXPECT_EQ(labels(), QStringLiteral("A"));
    EXPECT_TRUE(window->document()->dirty());

    // Clear and Remove last are steps too, and saving makes the pins clean.
    tab->clear();
    EXPECT_EQ(labels(), QString());
    undo->undo();
    EXPECT_EQ(labels(), QStringLiteral("A"));
    ASSERT_TRUE(window->saveTo(path));
    EXPECT_FALSE(window->document()->dirty());
    tab->removeLast();
    EXPECT_TRUE(window->document()->dirty());
    undo->undo();
    EXPECT_FALSE(window->document()->dirty());
    EXPECT_EQ(labels(), QStringLiteral("A"));
}

}  // namespace
}  // namespace trainmem::ui
