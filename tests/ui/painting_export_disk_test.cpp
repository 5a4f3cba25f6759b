// Exports onto a full disk (issue 15, D08): the export must fail with a
// message and leave the previous file as it was, for every format. Run on a
// 64 KiB tmpfs filled to the brim; skipped where mounting is not allowed.
#include <sys/mount.h>
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QPainter>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include "ui/painting_export.h"

namespace trainmem::ui {
namespace {

void paintSomething(QPainter& painter, const QRectF& area) {
    painter.fillRect(area, Qt::white);
    for (int i = 0; i < 200; ++i) painter.drawText(QPointF(10, 10 + i * 3), QStringLiteral("component %1").arg(i));
}

class FullDisk : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(dir_.isValid());
        mount_point_ = dir_.filePath("full");
        ASSERT_TRUE(QDir().mkpath(mount_point_));
        if (::geteuid() != 0 || ::mount("tmpfs", QFile::encodeName(mount_point_).constData(), "tmpfs", 0, "size=64k") != 0)
            GTEST_SKIP() << "cannot mount a small tmpfs here (needs root)";
        mounted_ = true;
    }
    void TearDown() override {
        if (mounted_) ::umount(QFile::encodeName(mount_point_).constData());
    }

    // Writes the previous export, then fills the file system to the last byte.
    QString previousFileOnAFullDisk(const QString& name) {
        const QString path = mount_point_ + "/" + name;
        QFile previous(path);
        EXPECT_TRUE(previous.open(QIODevice::WriteOnly));
        previous.write(kPrevious);
        previous.close();
        QFile filler(mount_point_ + "/filler");
        EXPECT_TRUE(filler.open(QIODevice::WriteOnly | QIODevice::Unbuffered));
        const QByteArray block(4096, 'x');
        while (filler.write(block) > 0) {
        }
        const QByteArray byte(1, 'x');
        while (filler.write(byte) > 0) {
        }
        filler.close();
        return path;
    }

    static QByteArray contents(const QString& path) {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }

    const QByteArray kPrevious = QByteArray("the previous export\n");
    QTemporaryDir dir_;
    QString mount_point_;
    bool mounted_ = false;
};

TEST_F(FullDisk, EveryFormatFailsAndKeepsThePreviousFile) {
    for (const char* name : {"chart.svg", "chart.png", "chart.pdf"}) {
        SCOPED_TRACE(name);
        const QString path = previousFileOnAFullDisk(name);
        const ExportResult r = exportPainting(paintSomething, ExportMetadata{}, path, QSize(400, 300), 1);
        EXPECT_FALSE(r.ok);
        EXPECT_TRUE(r.error.contains(path)) << r.error.toStdString();
        EXPECT_EQ(contents(path), kPrevious);
        QFile::remove(mount_point_ + "/filler");
        QFile::remove(path);
    }
}

TEST(PaintingExport, APngTooLargeForMemoryIsRefusedUpFrontNamingTheLimit) {
    QTemporaryDir dir;
    const QString path = dir.filePath("chart.png");
    const ExportResult r = exportPainting(paintSomething, ExportMetadata{}, path, QSize(20000, 20000), 8);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(r.error.contains("at most 100 million")) << r.error.toStdString();
    EXPECT_FALSE(QFile::exists(path));
    // SVG and PDF are vectors: the same size is fine for them.
    EXPECT_TRUE(exportPainting(paintSomething, ExportMetadata{}, dir.filePath("chart.svg"), QSize(20000, 20000), 8).ok);
}

}  // namespace
}  // namespace trainmem::ui
