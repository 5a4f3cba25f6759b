#include "ui/app_settings.h"

#include <QDir>
#include <QFileInfo>

#include "ui/chart_export.h"

namespace trainmem::ui {

namespace {
namespace key {
const QString kVersion = QStringLiteral("version");
const QString kGeometry = QStringLiteral("window/geometry");
const QString kState = QStringLiteral("window/state");
const QString kSplitter = QStringLiteral("window/splitter");
const QString kLastScenario = QStringLiteral("files/lastScenario");
const QString kRecent = QStringLiteral("files/recent");
const QString kUnits = QStringLiteral("display/units");
const QString kExportFolder = QStringLiteral("export/folder");
const QString kExportSize = QStringLiteral("export/size");
const QString kExportScale = QStringLiteral("export/scale");
const QString kSession = QStringLiteral("session/last");
}  // namespace key
}  // namespace

AppSettings::AppSettings() : settings_(QStringLiteral("trainmem"), QStringLiteral("trainmem")) {
    if (settings_.value(key::kVersion, 0).toInt() != kVersion) {
        settings_.clear();
        settings_.setValue(key::kVersion, kVersion);
    }
}

QByteArray AppSettings::windowGeometry() const { return settings_.value(key::kGeometry).toByteArray(); }
void AppSettings::setWindowGeometry(const QByteArray& g) { settings_.setValue(key::kGeometry, g); }
QByteArray AppSettings::windowState() const { return settings_.value(key::kState).toByteArray(); }
void AppSettings::setWindowState(const QByteArray& s) { settings_.setValue(key::kState, s); }
QByteArray AppSettings::splitterState() const { return settings_.value(key::kSplitter).toByteArray(); }
void AppSettings::setSplitterState(const QByteArray& s) { settings_.setValue(key::kSplitter, s); }

QString AppSettings::lastScenarioPath() const { return settings_.value(key::kLastScenario).toString(); }
void AppSettings::setLastScenarioPath(const QString& path) { settings_.setValue(key::kLastScenario, path); }

Units AppSettings::units() const {
    return settings_.value(key::kUnits, QStringLiteral("GiB")).toString() == QStringLiteral("GB") ? Units::GB : Units::GiB;
}
void AppSettings::setUnits(Units units) {
    settings_.setValue(key::kUnits, units == Units::GB ? QStringLiteral("GB") : QStringLiteral("GiB"));
}

QString AppSettings::exportFolder() const {
    const QString folder = settings_.value(key::kExportFolder).toString();
    return folder.isEmpty() || !QFileInfo(folder).isDir() ? QDir::homePath() : folder;
}
void AppSettings::setExportFolder(const QString& folder) { settings_.setValue(key::kExportFolder, folder); }

QSize AppSettings::exportSize() const {
    const QSize size = settings_.value(key::kExportSize, kDefaultExportSize).toSize();
    return size.isValid() ? size : kDefaultExportSize;
}
void AppSettings::setExportSize(QSize size) { settings_.setValue(key::kExportSize, size); }
double AppSettings::exportScale() const {
    const double scale = settings_.value(key::kExportScale, 2.0).toDouble();
    return scale >= 0.25 && scale <= 8 ? scale : 2.0;
}
void AppSettings::setExportScale(double scale) { settings_.setValue(key::kExportScale, scale); }

QString AppSettings::session() const { return settings_.value(key::kSession).toString(); }
void AppSettings::setSession(const QString& json) { settings_.setValue(key::kSession, json); }

QStringList AppSettings::recentFiles() const { return settings_.value(key::kRecent).toStringList(); }
void AppSettings::addRecentFile(const QString& path) {
    QStringList files = recentFiles();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    files.removeAll(absolute);
    files.prepend(absolute);
    while (files.size() > kMaxRecentFiles) files.removeLast();
    settings_.setValue(key::kRecent, files);
}
void AppSettings::removeRecentFile(const QString& path) {
    QStringList files = recentFiles();
    files.removeAll(QFileInfo(path).absoluteFilePath());
    settings_.setValue(key::kRecent, files);
}

}  // namespace trainmem::ui
