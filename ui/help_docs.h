#pragma once
// Help > Documentation: the docs pages, found where the .deb installs them
// (<prefix>/share/doc/trainmem, beside <prefix>/bin) or, when the app runs
// from a build, in the source tree's docs/.
#include <vector>

#include <QString>
#include <QStringList>

namespace trainmem::ui {

struct DocPage {
    QString title;  // "The desktop app"
    QString file;   // "gui.md"
};
const std::vector<DocPage>& docPages();

// The places docs are looked for, in order, for an app in `app_dir`.
QStringList docsCandidates(const QString& app_dir);
// The first candidate that holds the pages; empty when none does.
QString docsDirectory(const QString& app_dir);

}  // namespace trainmem::ui
