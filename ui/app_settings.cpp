#include "ui/app_settings.h"

#include <sys/stat.h>

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>

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

namespace {

// Where QSettings("trainmem", "trainmem") keeps its file, found without
// reading it: QSettings reads its file when constructed, and a FIFO there
// would block the start for good. A probe of the same scope and
// organisation under a name of its own shares the folder.
QString settingsFolder() {
    const QSettings probe(QSettings::NativeFormat, QSettings::UserScope, QStringLiteral("trainmem"),
                          QStringLiteral(".trainmem-folder-probe"));
    return QFileInfo(probe.fileName()).absolutePath();
}

// Why the settings file cannot be used, empty when it can (or is absent).
QString unusable(const QString& path) {
    struct stat info {};
    if (::stat(QFile::encodeName(path).constData(), &info) != 0) return {};
    const char* kind = S_ISDIR(info.st_mode)    ? "a folder"
                       : S_ISFIFO(info.st_mode) ? "a FIFO"
                       : S_ISCHR(info.st_mode)  ? "a character device"
                       : S_ISBLK(info.st_mode)  ? "a block device"
                       : S_ISSOCK(info.st_mode) ? "a socket"
                                                : nullptr;
    if (kind) return QObject::tr("%1 is %2, not a regular file").arg(path, QString::fromLatin1(kind));
    if (info.st_size > AppSettings::kMaxFileBytes)
        return QObject::tr("%1 is %2 MB, over the %3 MiB a settings file may have")
            .arg(path)
            .arg(info.st_size / 1000000)
            .arg(AppSettings::kMaxFileBytes >> 20);
    return {};
}

}  // namespace

AppSettings::AppSettings() : settings_([this]() -> QSettings& {
      folder_ = settingsFolder();
      const QString file = folder_ + QStringLiteral("/trainmem.conf");
      if (const QString why = unusable(file); !why.isEmpty()) {
          problem_ = QObject::tr("Settings are not remembered: %1").arg(why);
          memory_ = std::make_unique<QTemporaryDir>();
          owned_ = std::make_unique<QSettings>(memory_->filePath(QStringLiteral("trainmem.conf")), QSettings::IniFormat);
      } else {
          owned_ = std::make_unique<QSettings>(QStringLiteral("trainmem"), QStringLiteral("trainmem"));
      }
      return *owned_;
  }()) {
    if (settings_.value(key::kVersion, 0).toInt() != kVersion) {
        settings_.clear();
        settings_.setValue(key::kVersion, kVersion);
    }
    // files/recent was capped only when adding: 100,000 entries made every
    // start take 5 s. Cap what was read, and write it back capped.
    const QStringList recent = settings_.value(key::kRecent).toStringList();
    if (recent.size() > kMaxRecentFiles) settings_.setValue(key::kRecent, recent.mid(0, kMaxRecentFiles));
    sync();
}

AppSettings::~AppSettings() = default;

bool AppSettings::sync() {
    settings_.sync();
    if (settings_.status() == QSettings::NoError) return true;
    if (problem_.isEmpty())
        problem_ = QObject::tr("Settings are not remembered: %1 cannot be written").arg(settings_.fileName());
    return false;
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

QString AppSettings::legacySession() const { return settings_.value(key::kSession).toString(); }
void AppSettings::removeLegacySession() { settings_.remove(key::kSession); }

QStringList AppSettings::recentFiles() const { return settings_.value(key::kRecent).toStringList().mid(0, kMaxRecentFiles); }
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
