#pragma once
// Writes any QPainter drawing as PNG, SVG or PDF, with the same checks and
// atomic writes as the chart exports (chart_export.h), for views that paint
// themselves instead of going through MemoryChart (the step timeline).
#include <functional>

#include <QImage>
#include <QRectF>
#include <QSize>
#include <QString>

#include "ui/chart_export.h"

class QPainter;

namespace trainmem::ui {

// Paints a whole picture into `target` (logical pixels).
using Painting = std::function<void(QPainter& painter, const QRectF& target)>;

// `size` in logical pixels (PNG: times `scale` device pixels; PDF: points);
// the format follows the suffix. `title` goes into the SVG and PDF metadata.
ExportResult exportPainting(const Painting& paint, const QString& title, const QString& path, QSize size, qreal scale = 1.0);

// The picture as an image of size x scale device pixels.
QImage paintingImage(const Painting& paint, QSize size, qreal scale = 1.0);

}  // namespace trainmem::ui
