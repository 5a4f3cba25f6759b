// UI tests run offscreen. gtest_discover_tests runs this binary at build time
// without the test's ENVIRONMENT property, so the platform is chosen here,
// before QApplication exists. Settings go to a folder of this process's
// own, so the tests never read or change a user's settings, and ctest -j's
// parallel test processes never clear or change each other's (a units test
// read back another process's cleared settings).
#include <gtest/gtest.h>

#include <QApplication>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>

#include "core/scenario/presets.h"

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("trainmem-tests"));
    QApplication::setApplicationName(QStringLiteral("trainmem-tests"));
    const QTemporaryDir settings_dir;
    if (!settings_dir.isValid()) return 3;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settings_dir.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings_dir.path());
    trainmem::setPresetsDirectory(TRAINMEM_PRESETS_DIR);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
