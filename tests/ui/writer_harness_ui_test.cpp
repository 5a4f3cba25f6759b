// The writer harness (tests/support/hostile_targets.h) on the app's writers:
// chart exports in each format (N04: a truncated SVG replaced the old file
// on a disk that filled during the write; N05: a symlinked FIFO or device
// was replaced by a regular file) and scenario saves through the window.
#include <QMessageBox>
#include <QPainter>
#include <QTimer>

#include "ui/painting_export.h"
#include "ui_test_support.h"
#include "tests/support/hostile_targets.h"

namespace trainmem::ui {
namespace {

using test_support::HostileTargets;
namespace fs = std::filesystem;

// Enough text that half of each file is more than a page of the full disk.
void paintSomething(QPainter& painter, const QRectF& area) {
    painter.fillRect(area, Qt::white);
    for (int i = 0; i < 400; ++i) {
        painter.setPen(QColor::fromHsv(i % 360, 200, 200));
        painter.drawText(QPointF(10 + (i % 7) * 50, 10 + i * 2), QStringLiteral("component %1 of the chart").arg(i));
    }
}

TEST(WriterHarnessUi, ChartExportsInEveryFormat) {
    for (const char* name : {"chart.svg", "chart.png", "chart.pdf"}) {
        SCOPED_TRACE(name);
        HostileTargets targets;
        targets.check(
            [](const fs::path& p) {
                const ExportResult r =
                    exportPainting(paintSomething, ExportMetadata{}, QString::fromStdString(p.string()), QSize(900, 800), 2);
                return r.ok ? std::string() : r.error.toStdString();
            },
            name);
    }
}

TEST(WriterHarnessUi, ScenarioSavesFromTheWindow) {
    auto window = test::openWindow(test::presetScenario("llama3.1-8b-fsdp-8xh100"));
    HostileTargets targets;
    targets.check(
        [&](const fs::path& p) {
            // A failed save says why in a message box: read it and close it.
            QString said;
            QTimer::singleShot(0, [&] {
                if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
                    said = box->text();
                    box->accept();
                }
            });
            const bool saved = window->saveTo(QString::fromStdString(p.string()));
            QApplication::processEvents();
            return saved ? std::string() : (said.isEmpty() ? std::string("failed, saying nothing") : said.toStdString());
        },
        "run.json");
}

}  // namespace
}  // namespace trainmem::ui
