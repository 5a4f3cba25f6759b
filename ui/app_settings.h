#pragma once
// Everything the app remembers between runs, typed, with its keys in one
// place. Bump kVersion when a key changes meaning; older values are then
// dropped instead of misread.
#include <memory>

#include <QByteArray>
#include <QSettings>
#include <QSize>
#include <QString>
#include <QStringList>

#include "core/report/report.h"

class QTemporaryDir;

namespace trainmem::ui {

class AppSettings {
public:
    static constexpr int kVersion = 1;  // 1: first release
    static constexpr int kMaxRecentFiles = 8;

    AppSettings();  // QSettings for organisation "trainmem", application "trainmem"
    ~AppSettings();

    // Why settings are not remembered this run, empty when they are: the
    // settings file is a folder, a FIFO, a device (also behind a symlink:
    // reading a FIFO would hang the start, writing would replace it), or
    // over kMaxFileBytes. The app says it in the status bar; the settings
    // then live in memory for the run.
    QString problem() const { return problem_; }
    // Writes pending changes; false, with problem() saying why, when the
    // file cannot be written (a read-only folder, a full disk).
    bool sync();
    // The folder the settings file is in; the session file lives there too.
    QString folder() const { return folder_; }
    static constexpr qint64 kMaxFileBytes = 16 << 20;

    QByteArray windowGeometry() const;
    void setWindowGeometry(const QByteArray& geometry);
    QByteArray windowState() const;
    void setWindowState(const QByteArray& state);
    QByteArray splitterState() const;
    void setSplitterState(const QByteArray& state);

    QString lastScenarioPath() const;
    void setLastScenarioPath(const QString& path);

    Units units() const;
    void setUnits(Units units);

    QString exportFolder() const;  // home when never set
    void setExportFolder(const QString& folder);
    QSize exportSize() const;
    void setExportSize(QSize size);
    double exportScale() const;
    void setExportScale(double scale);

    // The last session as releases before the session file kept it (JSON
    // text, empty when there is none); read once, then removed.
    QString legacySession() const;
    void removeLegacySession();

    QStringList recentFiles() const;  // at most kMaxRecentFiles, whatever the file holds
    void addRecentFile(const QString& path);  // most recent first, no duplicates, at most kMaxRecentFiles
    void removeRecentFile(const QString& path);

private:
    QString problem_;
    QString folder_;
    std::unique_ptr<QTemporaryDir> memory_;  // where settings live for a run when the file cannot be used
    std::unique_ptr<QSettings> owned_;
    QSettings& settings_;
};

}  // namespace trainmem::ui
