// The Help menu: the keyboard shortcuts read from the menus themselves, the
// documentation pages, About.
#include "ui/main_window.h"

#include <QApplication>
#include <QDesktopServices>
#include <QMenuBar>
#include <QMessageBox>
#include <QRegularExpression>
#include <QStatusBar>
#include <QUrl>

#include "ui/help_docs.h"

namespace trainmem::ui {

void MainWindow::buildHelpMenu() {
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard Shortcuts"), QKeySequence(tr("F1")), this, [this] {
        QMessageBox box(QMessageBox::NoIcon, tr("Keyboard shortcuts"), shortcutList(), QMessageBox::Close, this);
        box.setTextFormat(Qt::RichText);
        box.exec();
    });
    QMenu* docs = help->addMenu(tr("&Documentation"));
    for (const DocPage& page : docPages())
        docs->addAction(page.title, this, [this, file = page.file] { openDocPage(file); })->setToolTip(page.file);
    help->addAction(tr("&About trainmem"), this, [this] {
        QMessageBox::about(this, tr("About trainmem"),
                           tr("<b>trainmem</b> %1<br>GPU memory of training large transformers, per GPU, by component.<br>"
                              "Every term, its default and its source: docs/memory-model.md.")
                               .arg(QApplication::applicationVersion()));
    });
}

bool MainWindow::openDocPage(const QString& file) {
    const QString dir = docsDirectory(QApplication::applicationDirPath());
    if (dir.isEmpty()) {
        QMessageBox::information(this, tr("Documentation"),
                                 tr("The documentation was not found. It is looked for in:<br>%1<br><br>It is also online "
                                    "with the source, in its docs/ folder.")
                                     .arg(docsCandidates(QApplication::applicationDirPath()).join(QStringLiteral("<br>")).toHtmlEscaped()));
        return false;
    }
    const QString path = dir + "/" + file;
    if (!QDesktopServices::openUrl(QUrl::fromLocalFile(path))) {
        statusBar()->showMessage(tr("No application opens %1; the page is at %2").arg(file, path), 15000);
        return false;
    }
    statusBar()->showMessage(tr("Opened %1").arg(path), 5000);
    return true;
}

QString MainWindow::shortcutList() const {
    // Read from the menus themselves, so the list cannot fall behind them.
    QString rows;
    for (QAction* top : menuBar()->actions()) {
        if (!top->menu()) continue;
        QString entries;
        for (QAction* a : top->menu()->actions())
            if (!a->isSeparator() && !a->shortcut().isEmpty())
                entries += QStringLiteral("<tr><td>%1</td><td style='padding-left:16px'><b>%2</b></td></tr>")
                               .arg(a->text().remove('&').remove(QRegularExpression(QStringLiteral(" “.*”$"))).toHtmlEscaped(),
                                    a->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped());
        if (!entries.isEmpty())
            rows += QStringLiteral("<tr><td colspan=2 style='padding-top:6px'><i>%1</i></td></tr>").arg(top->text().remove('&')) + entries;
    }
    return QStringLiteral("<table>%1</table><p>Inputs: the mouse wheel changes a field only once it has focus (click or "
                          "Tab); elsewhere it scrolls the column.</p>")
        .arg(rows);
}

}  // namespace trainmem::ui
