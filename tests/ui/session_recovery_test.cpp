// The session as input and as a file (issue 28: N02, N05, the minors on
// settings; issue 27: items 6 and 7): read through the bounded reader and put
// aside when bad, Discard on quit honoured, unsaved work autosaved and
// offered back after a crash, settings that cannot be used said.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include "ui/app_settings.h"
#include "ui/compare_tab.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

QString sessionFile() { return MainWindow().sessionFilePath(); }

void writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    ASSERT_EQ(f.write(bytes), bytes.size());
}

QByteArray readFile(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

class SessionFile : public ::testing::Test {
protected:
    void SetUp() override { clear(); }
    void TearDown() override { clear(); }
    void clear() {
        for (const char* suffix : {"", ".rejected", ".unrecovered"}) QFile::remove(file_ + suffix);
        QSettings("trainmem", "trainmem").remove("session/last");
    }
    const QString file_ = sessionFile();
};

// N02: the only JSON reader without the 32-level limit; a deep value in the
// settings file crashed every plain start.
TEST_F(SessionFile, ADeeplyNestedSessionIsRefusedSaidAndPutAside) {
    const QByteArray deep = QByteArray(100000, '[') + QByteArray(100000, ']');
    writeFile(file_, deep);
    MainWindow window;
    EXPECT_FALSE(window.restoreSession());
    EXPECT_TRUE(window.sessionProblem().contains("could not be restored")) << window.sessionProblem().toStdString();
    EXPECT_TRUE(window.sessionProblem().contains(file_ + ".rejected")) << window.sessionProblem().toStdString();
    EXPECT_EQ(readFile(file_ + ".rejected"), deep);
    EXPECT_FALSE(QFile::exists(file_));
}

TEST_F(SessionFile, ADeeplyNestedSessionInTheSettingsOfAnOlderReleaseToo) {
    const QString deep = QString(100000, '[') + QString(100000, ']');
    QSettings("trainmem", "trainmem").setValue("session/last", deep);
    MainWindow window;
    EXPECT_FALSE(window.restoreSession());
    EXPECT_TRUE(window.sessionProblem().contains("nest")) << window.sessionProblem().toStdString();
    EXPECT_EQ(readFile(file_ + ".rejected"), deep.toUtf8());
    EXPECT_TRUE(QSettings("trainmem", "trainmem").value("session/last").isNull());
}

TEST_F(SessionFile, AnOlderReleasesSessionIsStillRestored) {
    QTemporaryDir dir;
    const Scenario saved = presetScenario("llama3.1-8b-fsdp-8xh100");
    {
        auto window = openWindow(saved);
        ASSERT_TRUE(window->saveSession());
    }
    QSettings("trainmem", "trainmem").setValue("session/last", QString::fromUtf8(readFile(file_)));
    QFile::remove(file_);
    MainWindow next;
    EXPECT_TRUE(next.restoreSession());
    EXPECT_EQ(next.document()->scenario(), saved);
}

// Clicks `button` of the question the window is about to ask.
void answerNextQuestion(QMessageBox::StandardButton button) {
    QTimer::singleShot(0, [button] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        ASSERT_NE(box, nullptr) << "no question was asked";
        box->button(button)->click();
    });
}

// Issue 27, item 6: the next launch restored the discarded edits.
TEST_F(SessionFile, DiscardOnQuitDiscards) {
    QTemporaryDir dir;
    const QString path = dir.filePath("saved.json");
    const Scenario saved = presetScenario("llama3.1-8b-fsdp-8xh100");
    {
        auto window = openWindow(saved);
        ASSERT_TRUE(window->saveTo(path));
        window->document()->edit([](Scenario& s) { s.training.micro_batch_size = 3; });
        ASSERT_TRUE(window->compareTab()->pin());
        answerNextQuestion(QMessageBox::Discard);
        EXPECT_TRUE(window->close());
    }
    MainWindow next;
    ASSERT_TRUE(next.restoreSession());
    EXPECT_EQ(next.document()->scenario(), saved);
    EXPECT_EQ(next.document()->path(), path);
    EXPECT_FALSE(next.document()->dirty());
    EXPECT_TRUE(next.compareTab()->pins().empty());
}

TEST_F(SessionFile, DiscardingANewScenarioStartsAfresh) {
    {
        auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
        window->document()->edit([](Scenario& s) { s.training.micro_batch_size = 3; });
        ASSERT_TRUE(window->document()->dirty());
        answerNextQuestion(QMessageBox::Discard);
        EXPECT_TRUE(window->close());
    }
    MainWindow next;
    EXPECT_FALSE(next.restoreSession());
    EXPECT_TRUE(next.sessionProblem().isEmpty()) << next.sessionProblem().toStdString();
}

TEST_F(SessionFile, ClosingWithoutAQuestionStillRestores) {
    const Scenario saved = presetScenario("mixtral-8x7b-tp-ep");
    {
        auto window = openWindow(saved);
        EXPECT_TRUE(window->close());  // unedited: no question
    }
    MainWindow next;
    ASSERT_TRUE(next.restoreSession());
    EXPECT_EQ(next.document()->scenario(), saved);
}

// Issue 27, item 7: the session was written only on a clean quit; after
// kill -9 every edit since was gone. The window below is destroyed without
// closing, as a killed process is.
TEST_F(SessionFile, UnsavedWorkIsWrittenWhileEditingAndOfferedBackAfterACrash) {
    QTemporaryDir dir;
    const QString path = dir.filePath("saved.json");
    const Scenario saved = presetScenario("llama3.1-8b-fsdp-8xh100");
    Scenario edited = saved;
    edited.training.micro_batch_size = 3;
    {
        auto window = openWindow(saved);
        ASSERT_TRUE(window->saveTo(path));
        QTest::qWait(MainWindow::kAutosaveDelayMs + 300);
        window->document()->edit([&](Scenario& s) { s = edited; });
        // At most a few seconds behind the window.
        EXPECT_TRUE(QTest::qWaitFor([&] { return readFile(file_).contains("\"micro_batch_size\":3"); },
                                    MainWindow::kAutosaveDelayMs + 2000));
        EXPECT_TRUE(readFile(file_).contains("\"closed\":false"));
    }
    MainWindow next;
    ASSERT_TRUE(next.restoreSession());
    EXPECT_EQ(next.document()->scenario(), edited);
    EXPECT_TRUE(next.document()->dirty());
    EXPECT_TRUE(next.statusBar()->currentMessage().contains("did not close")) << next.statusBar()->currentMessage().toStdString();
    next.document()->undoStack()->undo();
    EXPECT_EQ(next.document()->scenario(), saved);
}

// The real app, killed with SIGKILL while open: what it autosaved is a whole
// session that a plain start offers back.
TEST(SessionKill, AKilledAppLeavesItsWorkForTheNextStart) {
    QTemporaryDir home;
    QProcess app;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("XDG_CONFIG_HOME", home.filePath("config"));
    env.insert("QT_QPA_PLATFORM", "offscreen");
    app.setProcessEnvironment(env);
    app.start(TRAINMEM_APP_EXE, {"--preset", "llama3.1-8b-fsdp-8xh100", "--set", "training.micro_batch_size=3"});
    ASSERT_TRUE(app.waitForStarted(10000));
    const QString written = home.filePath("config/trainmem/session.json");
    EXPECT_TRUE(QTest::qWaitFor([&] { return readFile(written).contains("\"micro_batch_size\":3"); },
                                MainWindow::kAutosaveDelayMs + 8000));
    ::kill(static_cast<pid_t>(app.processId()), SIGKILL);
    app.waitForFinished(5000);
    const QString original =
        QFileInfo(QSettings(QSettings::NativeFormat, QSettings::UserScope, "x", "y").fileName()).absolutePath();
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, home.filePath("config"));
    {
        MainWindow next;
        EXPECT_TRUE(next.restoreSession());
        EXPECT_EQ(next.document()->scenario().training.micro_batch_size, 3);
        EXPECT_TRUE(next.sessionProblem().isEmpty()) << next.sessionProblem().toStdString();
        EXPECT_TRUE(next.statusBar()->currentMessage().contains("did not close"));
    }
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, original);
}

TEST_F(SessionFile, AStartWithArgumentsKeepsACrashedSessionAside) {
    writeFile(file_, R"({"closed": false, "scenario": {}})");
    auto window = openWindow(presetScenario("mixtral-8x7b-tp-ep"));
    window->document()->edit([](Scenario& s) { s.training.micro_batch_size = 2; });
    ASSERT_TRUE(window->saveSession(MainWindow::SessionEnd::Running));
    EXPECT_EQ(readFile(file_ + ".unrecovered"), QByteArray(R"({"closed": false, "scenario": {}})"));
}

// N05 for the session: a symlink to a FIFO stays a FIFO; the failure is said.
TEST_F(SessionFile, ASessionFileThatIsAFifoIsNotReplaced) {
    QTemporaryDir dir;
    const QString fifo = dir.filePath("pipe");
    ASSERT_EQ(::mkfifo(QFile::encodeName(fifo).constData(), 0644), 0);
    ASSERT_TRUE(QFile::link(fifo, file_));
    auto window = openWindow(presetScenario("mixtral-8x7b-tp-ep"));
    EXPECT_FALSE(window->saveSession());
    EXPECT_TRUE(window->sessionProblem().contains("FIFO")) << window->sessionProblem().toStdString();
    struct stat info {};
    ASSERT_EQ(::stat(QFile::encodeName(fifo).constData(), &info), 0);
    EXPECT_TRUE(S_ISFIFO(info.st_mode));
    // And reading it does not wait for a writer.
    EXPECT_FALSE(window->restoreSession());
}

// Settings in a folder of a test's own (QSettings' user path moved there).
class OwnSettingsFolder : public ::testing::Test {
protected:
    void SetUp() override {
        original_ = QFileInfo(QSettings(QSettings::NativeFormat, QSettings::UserScope, "x", "y").fileName()).absolutePath();
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir_.path());
        ASSERT_TRUE(QDir().mkpath(dir_.filePath("trainmem")));
    }
    void TearDown() override { QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, original_); }
    QString file() const { return dir_.filePath("trainmem/trainmem.conf"); }
    QTemporaryDir dir_;
    QString original_;
};

TEST_F(OwnSettingsFolder, ASettingsPathThatIsAFolderIsSaid) {
    ASSERT_TRUE(QDir().mkpath(file()));
    AppSettings settings;
    EXPECT_TRUE(settings.problem().contains("is a folder")) << settings.problem().toStdString();
    settings.setUnits(Units::GB);
    EXPECT_EQ(settings.units(), Units::GB);  // remembered for the run
    MainWindow window;
    EXPECT_TRUE(window.sessionProblem().contains("not remembered")) << window.sessionProblem().toStdString();
}

TEST_F(OwnSettingsFolder, ASettingsFileLinkedToAFifoNeitherHangsNorIsReplaced) {
    const QString fifo = dir_.filePath("pipe");
    ASSERT_EQ(::mkfifo(QFile::encodeName(fifo).constData(), 0644), 0);
    ASSERT_TRUE(QFile::link(fifo, file()));
    {
        AppSettings settings;  // QSettings would block here, reading the FIFO
        EXPECT_TRUE(settings.problem().contains("FIFO")) << settings.problem().toStdString();
        settings.setUnits(Units::GB);
        settings.sync();
    }
    struct stat info {};
    ASSERT_EQ(::stat(QFile::encodeName(fifo).constData(), &info), 0);
    EXPECT_TRUE(S_ISFIFO(info.st_mode));
}

TEST_F(OwnSettingsFolder, RecentFilesAreCappedOnRead) {
    QStringList many;
    for (int i = 0; i < 100000; ++i) many << QStringLiteral("/tmp/f%1.json").arg(i);
    {
        QSettings raw("trainmem", "trainmem");
        raw.setValue("version", AppSettings::kVersion);
        raw.setValue("files/recent", many);
    }
    AppSettings settings;
    EXPECT_EQ(settings.recentFiles(), many.mid(0, AppSettings::kMaxRecentFiles));
    settings.sync();
    EXPECT_EQ(QSettings("trainmem", "trainmem").value("files/recent").toStringList().size(), AppSettings::kMaxRecentFiles);
}

}  // namespace
}  // namespace trainmem::ui
