// UI tests run offscreen. gtest_discover_tests runs this binary at build time
// without the test's ENVIRONMENT property, so the platform is chosen here,
// before QApplication exists. Settings go to Qt's test location, so the
// tests never read or change a user's settings.
#include <gtest/gtest.h>

#include <QApplication>
#include <QSettings>
#include <QStandardPaths>

#include "core/presets.h"

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("trainmem-tests"));
    QApplication::setApplicationName(QStringLiteral("trainmem-tests"));
    QSettings(QStringLiteral("trainmem"), QStringLiteral("trainmem")).clear();
    trainmem::setPresetsDirectory(TRAINMEM_PRESETS_DIR);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
