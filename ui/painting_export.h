#pragma once
// Writes any QPainter drawing as PNG, SVG or PDF: the one place that checks
// sizes, picks the format and writes the file atomically. The chart exports
// (chart_export.h) and the step timeline both go through it.
#include <functional>
#include <optional>

#include <QImage>
#include <QRectF>
#include <QSize>
#include <QString>

class QPainter;

namespace trainmem::ui {

struct ExportResult {
    bool ok = true;
    QString error;  // what went wrong, with the path, when !ok
    explicit operator bool() const { return ok; }
    static ExportResult failure(QString message) { return {false, std::move(message)}; }
};

enum class ExportFormat { Png, Svg, Pdf };
// By file suffix (.png, .svg, .pdf), case-insensitive; nullopt otherwise.
std::optional<ExportFormat> exportFormatFor(const QString& path);

constexpr QSize kDefaultExportSize{1200, 750};

// Paints a whole picture into `target` (logical pixels).
using Painting = std::function<void(QPainter& painter, const QRectF& target)>;

// What a file carries besides the picture: the title (SVG and PDF) and the
// SVG description.
struct ExportMetadata {
    QString title;
    QString description = QStringLiteral("trainmem");
};

// `size` in logical pixels (PNG: times `scale` device pixels; PDF: points).
// Sizes outside 100-20000 x 80-20000 and scales outside 0.25-8 fail with a
// message; files are written atomically.
ExportResult exportPainting(const Painting& paint, ExportFormat format, const ExportMetadata& metadata, const QString& path,
                            QSize size, qreal scale = 1.0);
// The format follows the suffix of `path`.
ExportResult exportPainting(const Painting& paint, const ExportMetadata& metadata, const QString& path, QSize size,
                            qreal scale = 1.0);

// The picture as an image of size x scale device pixels.
QImage paintingImage(const Painting& paint, QSize size, qreal scale = 1.0);

}  // namespace trainmem::ui
