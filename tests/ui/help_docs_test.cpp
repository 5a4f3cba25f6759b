// Help > Documentation finds the pages: installed beside the app as the .deb
// puts them, or in the source tree when run from a build.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMenuBar>
#include <QTemporaryDir>

#include "ui/help_docs.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

TEST(HelpDocs, EveryPageIsInTheSourceTreesDocs) {
    // The test binary is in the build tree, with no installed docs beside it.
    const QString dir = docsDirectory(QStringLiteral("/nonexistent/bin"));
    ASSERT_FALSE(dir.isEmpty());
    for (const DocPage& page : docPages()) EXPECT_TRUE(QFileInfo(dir + "/" + page.file).isFile()) << page.file.toStdString();
    // And every page in docs/ is offered.
    for (const QString& file : QDir(dir).entryList({QStringLiteral("*.md")}, QDir::Files))
        EXPECT_TRUE(std::any_of(docPages().begin(), docPages().end(), [&](const DocPage& p) { return p.file == file; }))
            << file.toStdString() << " is not in the Help menu";
}

TEST(HelpDocs, TheInstalledDocsComeFirst) {
    QTemporaryDir prefix;
    ASSERT_TRUE(QDir(prefix.path()).mkpath(QStringLiteral("bin")));
    ASSERT_TRUE(QDir(prefix.path()).mkpath(QStringLiteral("share/doc/trainmem")));
    QFile page(prefix.filePath(QStringLiteral("share/doc/trainmem/") + docPages().front().file));
    ASSERT_TRUE(page.open(QIODevice::WriteOnly));
    page.close();
    EXPECT_EQ(docsDirectory(prefix.filePath(QStringLiteral("bin"))), prefix.filePath(QStringLiteral("share/doc/trainmem")));
}

TEST(HelpDocs, TheHelpMenuListsThePages) {
    MainWindow window;
    QMenu* docs = nullptr;
    for (QAction* top : window.menuBar()->actions())
        if (top->menu() && top->text().remove('&') == QStringLiteral("Help"))
            for (QAction* a : top->menu()->actions())
                if (a->menu() && a->text().remove('&') == QStringLiteral("Documentation")) docs = a->menu();
    ASSERT_NE(docs, nullptr);
    EXPECT_EQ(docs->actions().size(), static_cast<qsizetype>(docPages().size()));
}

}  // namespace
}  // namespace trainmem::ui
