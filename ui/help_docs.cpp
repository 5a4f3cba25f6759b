#include "ui/help_docs.h"

#include <QDir>
#include <QFileInfo>

namespace trainmem::ui {

const std::vector<DocPage>& docPages() {
    static const std::vector<DocPage> pages = {
        {QStringLiteral("The desktop app"), QStringLiteral("gui.md")},
        {QStringLiteral("Timeline, snapshots and Find a Layout"), QStringLiteral("gui-timeline.md")},
        {QStringLiteral("The memory model: every term and its source"), QStringLiteral("memory-model.md")},
        {QStringLiteral("What the hybrids' layers save for backward (measured)"), QStringLiteral("hybrid-activations.md")},
        {QStringLiteral("Accuracy against measurements"), QStringLiteral("accuracy.md")},
        {QStringLiteral("Scenario file format"), QStringLiteral("scenario-format.md")},
        {QStringLiteral("Command line (trainmem-cli)"), QStringLiteral("cli.md")},
        {QStringLiteral("Training frameworks"), QStringLiteral("frameworks.md")},
        {QStringLiteral("Memory snapshots"), QStringLiteral("snapshots.md")},
        {QStringLiteral("Finding a layout"), QStringLiteral("layout-search.md")},
        {QStringLiteral("Step time: how fast, not only whether it fits"), QStringLiteral("step-time.md")},
        {QStringLiteral("Step time against published throughput"), QStringLiteral("accuracy-throughput.md")},
        {QStringLiteral("Adding models, optimizers and GPUs"), QStringLiteral("extending.md")},
        {QStringLiteral("Performance"), QStringLiteral("performance.md")},
        {QStringLiteral("Performance: how it got here"), QStringLiteral("performance-history.md")},
        {QStringLiteral("Robustness against bad input"), QStringLiteral("robustness.md")},
        {QStringLiteral("Run configs of the training stacks"), QStringLiteral("run-configs.md")},
        {QStringLiteral("How the code is laid out"), QStringLiteral("architecture.md")},
    };
    return pages;
}

QStringList docsCandidates(const QString& app_dir) {
    QStringList out;
    // The .deb: <prefix>/bin/trainmem and <prefix>/share/doc/trainmem (CMAKE_INSTALL_DOCDIR).
    out << QDir::cleanPath(app_dir + QStringLiteral("/../share/doc/trainmem"));
#ifdef TRAINMEM_SOURCE_DOCS_DIR
    out << QStringLiteral(TRAINMEM_SOURCE_DOCS_DIR);  // run from a build of this source tree
#endif
    return out;
}

QString docsDirectory(const QString& app_dir) {
    for (const QString& dir : docsCandidates(app_dir))
        if (QFileInfo(dir + "/" + docPages().front().file).isFile()) return dir;
    return {};
}

}  // namespace trainmem::ui
