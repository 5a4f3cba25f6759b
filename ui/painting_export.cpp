#include "ui/painting_export.h"

#include <QBuffer>
#include <QFileInfo>
#include <QFontInfo>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QSvgGenerator>

#include "core/base/file_output.h"

namespace trainmem::ui {

namespace {

// Largest PNG, in pixels (width x height x scale^2): 400 MB of image in
// memory (docs/robustness.md).
constexpr qint64 kMaxExportPixels = 100'000'000;

ExportResult checkSize(ExportFormat format, QSize size, qreal scale) {
    if (size.width() < 100 || size.height() < 80 || size.width() > 20000 || size.height() > 20000)
        return ExportResult::failure(
            QStringLiteral("size %1x%2: width must be 100-20000 and height 80-20000").arg(size.width()).arg(size.height()));
    if (!(scale >= 0.25 && scale <= 8)) return ExportResult::failure(QStringLiteral("scale %1: must be 0.25-8").arg(scale));
    // A PNG is painted into memory first: 4 bytes a pixel. Refused up front,
    // naming the limit, instead of a failed QImage and a painter that is not active.
    const double pixels = double(size.width()) * scale * double(size.height()) * scale;
    if (format == ExportFormat::Png && pixels > double(kMaxExportPixels))
        return ExportResult::failure(
            QStringLiteral("size %1x%2 at scale %3 is %4 million pixels; a PNG may have at most %5 million "
                           "(width x height x scale^2)")
                .arg(size.width())
                .arg(size.height())
                .arg(scale)
                .arg(qRound64(pixels / 1e6))
                .arg(kMaxExportPixels / 1000000));
    return {};
}

// QSvgGenerator names a font by the family asked for, which for the charts
// is Qt's generic "Sans Serif": a name no browser or editor knows, so each
// would pick its own default (often a serif). Every font-family becomes the
// family fontconfig drew it with, then the generic family CSS defines, so
// any viewer draws a sans-serif of about the same metrics.
QByteArray withFallbackFonts(const QByteArray& svg) {
    static const QRegularExpression family(QStringLiteral("font-family=\"([^\"]*)\""));
    QString text = QString::fromUtf8(svg);
    QString out;
    out.reserve(text.size() + text.size() / 8);
    qsizetype last = 0;
    for (auto it = family.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        const QString asked = m.captured(1);
        QStringList names;
        const QString drawn = QFontInfo(QFont(asked)).family();
        if (!drawn.isEmpty()) names << drawn;
        if (!asked.isEmpty() && asked != drawn && asked != QLatin1String("Sans Serif")) names << asked;
        names << QStringLiteral("sans-serif");
        out += QStringView(text).mid(last, m.capturedStart() - last);
        out += QStringLiteral("font-family=\"%1\"").arg(names.join(QStringLiteral(", ")));
        last = m.capturedEnd();
    }
    out += QStringView(text).mid(last);
    return out.toUtf8();
}

}  // namespace

std::optional<ExportFormat> exportFormatFor(const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == "png") return ExportFormat::Png;
    if (suffix == "svg") return ExportFormat::Svg;
    if (suffix == "pdf") return ExportFormat::Pdf;
    return std::nullopt;
}

QImage paintingImage(const Painting& paint, QSize size, qreal scale) {
    QImage image(size * scale, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(scale);
    image.fill(Qt::white);
    QPainter painter(&image);
    paint(painter, QRectF(QPointF(0, 0), QSizeF(size)));
    return image;
}

ExportResult exportPainting(const Painting& paint, ExportFormat format, const ExportMetadata& metadata, const QString& path,
                            QSize size, qreal scale) {
    if (ExportResult r = checkSize(format, size, scale); !r) return r;
    // The whole file is drawn in memory first, then written by the core's
    // one writer (core/base/file_output.h): every byte checked, the size compared
    // with what was meant, a rename over the old file only then. QSaveFile
    // committed a truncated SVG on a disk that filled during the write
    // (issue 28, N04) and replaced a symlinked FIFO or device (N05).
    QBuffer bytes;
    bytes.open(QIODevice::WriteOnly);
    const QRectF target(QPointF(0, 0), QSizeF(size));
    switch (format) {
        case ExportFormat::Png:
            if (!paintingImage(paint, size, scale).save(&bytes, "PNG"))
                return ExportResult::failure(QStringLiteral("%1: PNG encoding failed").arg(path));
            break;
        case ExportFormat::Svg: {
            // One logical pixel is one point: the generator's 72 dpi makes
            // width and height millimetres (454 pt = 160.2 mm), so a figure
            // has a physical size and its 9-17 px text is 9-17 pt there.
            QBuffer drawing;
            drawing.open(QIODevice::WriteOnly);
            {
                QSvgGenerator svg;
                svg.setOutputDevice(&drawing);
                svg.setResolution(72);
                svg.setSize(size);
                svg.setViewBox(QRect(QPoint(0, 0), size));
                svg.setTitle(metadata.title);
                svg.setDescription(metadata.description);
                QPainter painter(&svg);
                paint(painter, target);
            }
            bytes.buffer() = withFallbackFonts(drawing.data());
            break;
        }
        case ExportFormat::Pdf: {
            QPdfWriter pdf(&bytes);
            pdf.setTitle(metadata.title);
            pdf.setCreator(QStringLiteral("trainmem"));
            // One page exactly the picture's size, 1 logical pixel = 1 point.
            pdf.setResolution(72);
            pdf.setPageSize(QPageSize(QSizeF(size), QPageSize::Point, QString(), QPageSize::ExactMatch));
            pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
            QPainter painter(&pdf);
            if (!painter.isActive()) return ExportResult::failure(QStringLiteral("%1: cannot start a PDF page").arg(path));
            paint(painter, target);
            break;
        }
    }
    const QByteArray& data = bytes.data();
    const Status written = writeFileAtomically(path.toStdString(), std::string_view(data.constData(), size_t(data.size())));
    if (!written) return ExportResult::failure(QString::fromStdString(written.error().message));
    return {};
}

ExportResult exportPainting(const Painting& paint, const ExportMetadata& metadata, const QString& path, QSize size,
                            qreal scale) {
    const std::optional<ExportFormat> format = exportFormatFor(path);
    if (!format) return ExportResult::failure(QStringLiteral("%1: the file name must end in .png, .svg or .pdf").arg(path));
    return exportPainting(paint, *format, metadata, path, size, scale);
}

}  // namespace trainmem::ui
