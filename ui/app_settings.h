#pragma once
// Everything the app remembers between runs, typed, with its keys in one
// place. Bump kVersion when a key changes meaning; older values are then
// dropped instead of misread.
#include <QByteArray>
#include <QSettings>
#include <QSize>
#include <QString>
#include <QStringList>

#include "core/report/report.h"

namespace trainmem::ui {

class AppSettings {
public:
    static constexpr int kVersion = 1;  // 1: first release
    static constexpr int kMaxRecentFiles = 8;

    AppSettings();  // QSettings for organisation "trainmem", application "trainmem"

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

    // The last session as the window left it (MainWindow::saveSession): JSON
    // text, empty when there is none.
    QString session() const;
    void setSession(const QString& json);

    QStringList recentFiles() const;
    void addRecentFile(const QString& path);  // most recent first, no duplicates, at most kMaxRecentFiles
    void removeRecentFile(const QString& path);

private:
    mutable QSettings settings_;
};

}  // namespace trainmem::ui
