// Starting again where the window was left, on a scenario that fits the first
// time, and never past the screen's edge.
#include <QFile>
#include <QScreen>
#include <QTabWidget>
#include <QTemporaryDir>

#include "core/account/estimate.h"
#include "ui/app_settings.h"
#include "ui/breakdown_tab.h"
#include "ui/compare_tab.h"
#include "ui/scenario_files.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

TEST(Session, ClosingAndStartingAgainBringsBackTheEditsPinsAndTab) {
    QTemporaryDir dir;
    const QString path = dir.filePath("saved.json");
    const Scenario saved = presetScenario("llama3.1-8b-fsdp-8xh100");
    Scenario edited = saved;
    edited.training.micro_batch_size = 3;
    {
        auto window = openWindow(saved);
        ASSERT_TRUE(window->saveTo(path));
        ASSERT_TRUE(window->compareTab()->pin());
        ASSERT_TRUE(window->compareTab()->renamePin(0, QStringLiteral("as saved")));
        window->document()->edit([&](Scenario& s) { s = edited; });
        window->breakdownTab()->setPerStage(true);
        window->tabs()->setCurrentWidget(window->compareTab());
        window->saveSession();  // what closing the window does once the user has answered
    }
    MainWindow next;
    ASSERT_TRUE(next.restoreSession());
    EXPECT_EQ(next.document()->scenario(), edited);
    EXPECT_EQ(next.document()->path(), path);
    EXPECT_TRUE(next.document()->dirty());  // the edits are still unsaved ...
    ASSERT_EQ(next.compareTab()->pins().size(), 1u);
    EXPECT_EQ(next.compareTab()->pins()[0].label, QStringLiteral("as saved"));
    next.document()->undoStack()->undo();   // ... and one Undo goes back to the file
    EXPECT_EQ(next.document()->scenario(), saved);
    EXPECT_FALSE(next.document()->dirty());
    // The pin was made after saving, so the file as saved has none.
    EXPECT_TRUE(next.compareTab()->pins().empty());
    EXPECT_EQ(next.tabs()->currentWidget(), next.compareTab());
    EXPECT_TRUE(next.breakdownTab()->perStage());
}

// Pins changed after saving, with the scenario as saved: the restored window
// still says unsaved (pins are part of the file), and Undo goes back to the
// file's pins.
TEST(Session, UnsavedPinsAloneComeBackUnsaved) {
    QTemporaryDir dir;
    const QString path = dir.filePath("pinned.json");
    const Scenario saved = presetScenario("llama3.1-8b-fsdp-8xh100");
    {
        auto window = openWindow(saved);
        ASSERT_TRUE(window->compareTab()->pin());
        ASSERT_TRUE(window->saveTo(path));
        ASSERT_TRUE(window->compareTab()->renamePin(0, QStringLiteral("renamed")));
        ASSERT_TRUE(window->document()->dirty());
        window->saveSession();
    }
    MainWindow next;
    ASSERT_TRUE(next.restoreSession());
    EXPECT_EQ(next.document()->scenario(), saved);
    ASSERT_EQ(next.compareTab()->pins().size(), 1u);
    EXPECT_EQ(next.compareTab()->pins()[0].label, QStringLiteral("renamed"));
    EXPECT_TRUE(next.document()->dirty());
    next.document()->undoStack()->undo();
    ASSERT_EQ(next.compareTab()->pins().size(), 1u);
    EXPECT_EQ(next.compareTab()->pins()[0].label, QStringLiteral("A"));
    EXPECT_FALSE(next.document()->dirty());
}

TEST(Session, NoSessionOrABrokenOneChangesNothing) {
    const QString file = MainWindow().sessionFilePath();
    for (const QString& broken : {QString(), QStringLiteral("{"), QStringLiteral("{\"scenario\": 3}"),
                                  QStringLiteral("{\"scenario\": {\"model\": {\"preset\": \"no-such\"}}, \"path\": \"\", "
                                                 "\"dirty\": false, \"pins\": [], \"tab\": 0, \"per_stage\": false}"),
                                  QStringLiteral("{\"scenario\": {\"model\": {\"preset\": \"gpt2\"}}, \"path\": 1, "
                                                 "\"dirty\": false, \"pins\": [], \"tab\": 0, \"per_stage\": false}")}) {
        QFile::remove(file);
        if (!broken.isNull()) {
            QFile f(file);
            ASSERT_TRUE(f.open(QIODevice::WriteOnly));
            f.write(broken.toUtf8());
        }
        const Scenario before = presetScenario("mixtral-8x7b-tp-ep");
        auto window = openWindow(before);
        EXPECT_FALSE(window->restoreSession()) << broken.toStdString();
        EXPECT_EQ(window->document()->scenario(), before);
    }
    QFile::remove(file);
    QFile::remove(file + ".rejected");
}

TEST(Session, TheFirstStartIsOnAScenarioThatFits) {
    Expected<Scenario> first = defaultScenario();
    ASSERT_TRUE(first.ok()) << first.error().text();
    Expected<Estimate> e = estimate(*first);
    ASSERT_TRUE(e.ok());
    EXPECT_TRUE(e->fits) << first->name;
}

TEST(Session, TheWindowNeverOpensPastTheScreensEdge) {
    const QRect screen(0, 0, 1000, 700);
    // The old default, 1500 x 940, on a 1000 x 700 screen.
    const QRect fitted = fitToScreen(QRect(60, 40, 1500, 940), screen, QSize(800, 560));
    EXPECT_TRUE(screen.contains(fitted)) << fitted.x() << "," << fitted.y() << " " << fitted.width() << "x" << fitted.height();
    EXPECT_EQ(fitted.size(), QSize(1000, 700));
    // A saved position off to the right of a smaller screen comes back onto it.
    const QRect moved = fitToScreen(QRect(1800, 900, 900, 600), screen, QSize(800, 560));
    EXPECT_TRUE(screen.contains(moved));
    EXPECT_EQ(moved.size(), QSize(900, 600));
    // A window that fits stays as it was.
    EXPECT_EQ(fitToScreen(QRect(10, 10, 900, 600), screen, QSize(800, 560)), QRect(10, 10, 900, 600));
    // And a new window on this test's (offscreen) screen is within it, or at its minimum.
    MainWindow window;
    const QRect available = window.screen()->availableGeometry();
    EXPECT_TRUE(window.width() <= available.width() || window.width() <= window.minimumSizeHint().width());
    EXPECT_TRUE(window.height() <= available.height() || window.height() <= window.minimumSizeHint().height());
}

}  // namespace
}  // namespace trainmem::ui
