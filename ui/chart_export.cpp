#include "ui/chart_export.h"

#include <QApplication>
#include <QClipboard>
#include <QFileInfo>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>

#include "ui/memory_chart.h"

namespace trainmem::ui {

namespace {

ExportResult openTarget(QSaveFile& file) {
    if (!file.open(QIODevice::WriteOnly))
        return ExportResult::failure(QStringLiteral("%1: cannot write (%2)").arg(file.fileName(), file.errorString()));
    return {};
}

ExportResult commit(QSaveFile& file) {
    if (!file.commit())
        return ExportResult::failure(QStringLiteral("%1: cannot write (%2)").arg(file.fileName(), file.errorString()));
    return {};
}

ExportResult checkSize(QSize size) {
    if (size.width() < 100 || size.height() < 80 || size.width() > 20000 || size.height() > 20000)
        return ExportResult::failure(
            QStringLiteral("size %1x%2: width must be 100-20000 and height 80-20000").arg(size.width()).arg(size.height()));
    return {};
}

}  // namespace

std::optional<ExportFormat> exportFormatFor(const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == "png") return ExportFormat::Png;
    if (suffix == "svg") return ExportFormat::Svg;
    if (suffix == "pdf") return ExportFormat::Pdf;
    return std::nullopt;
}

ExportResult exportPng(const ChartSpec& spec, const QString& path, QSize size, qreal scale) {
    if (ExportResult r = checkSize(size); !r) return r;
    if (!(scale >= 0.25 && scale <= 8)) return ExportResult::failure(QStringLiteral("scale %1: must be 0.25-8").arg(scale));
    const QImage image = MemoryChart::renderImage(spec, size, scale);
    QSaveFile file(path);
    if (ExportResult r = openTarget(file); !r) return r;
    if (!image.save(&file, "PNG")) {
        file.cancelWriting();
        return ExportResult::failure(QStringLiteral("%1: PNG encoding failed").arg(path));
    }
    return commit(file);
}

ExportResult exportSvg(const ChartSpec& spec, const QString& path, QSize size) {
    if (ExportResult r = checkSize(size); !r) return r;
    QSaveFile file(path);
    if (ExportResult r = openTarget(file); !r) return r;
    QSvgGenerator svg;
    svg.setOutputDevice(&file);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle(spec.title);
    svg.setDescription(QStringLiteral("trainmem: ") + spec.subtitle);
    {
        QPainter painter(&svg);
        MemoryChart::render(spec, painter, QRectF(QPointF(0, 0), QSizeF(size)), QSizeF(size));
    }
    return commit(file);
}

ExportResult exportPdf(const ChartSpec& spec, const QString& path, QSize size) {
    if (ExportResult r = checkSize(size); !r) return r;
    QSaveFile file(path);
    if (ExportResult r = openTarget(file); !r) return r;
    {
        QPdfWriter pdf(&file);
        pdf.setTitle(spec.title);
        pdf.setCreator(QStringLiteral("trainmem"));
        // One page exactly the chart's size, 1 logical pixel = 1 point.
        pdf.setResolution(72);
        pdf.setPageSize(QPageSize(QSizeF(size), QPageSize::Point, QString(), QPageSize::ExactMatch));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        QPainter painter(&pdf);
        if (!painter.isActive()) {
            file.cancelWriting();
            return ExportResult::failure(QStringLiteral("%1: cannot start a PDF page").arg(path));
        }
        MemoryChart::render(spec, painter, QRectF(QPointF(0, 0), QSizeF(size)), QSizeF(size));
    }
    return commit(file);
}

ExportResult exportChart(const ChartSpec& spec, const QString& path, QSize size, qreal scale) {
    const std::optional<ExportFormat> format = exportFormatFor(path);
    if (!format) return ExportResult::failure(QStringLiteral("%1: the file name must end in .png, .svg or .pdf").arg(path));
    switch (*format) {
        case ExportFormat::Png: return exportPng(spec, path, size, scale);
        case ExportFormat::Svg: return exportSvg(spec, path, size);
        case ExportFormat::Pdf: return exportPdf(spec, path, size);
    }
    return ExportResult::failure(QStringLiteral("unknown format"));
}

void copyChartImage(const ChartSpec& spec, QSize size, qreal scale) {
    QApplication::clipboard()->setImage(MemoryChart::renderImage(spec, size, scale));
}

void copyTableMarkdown(const Scenario& scenario, const Estimate& estimate, Units units) {
    QApplication::clipboard()->setText(QString::fromStdString(estimateToMarkdown(scenario, estimate, units)));
}

void copyTableCsv(const Scenario& scenario, const Estimate& estimate) {
    QApplication::clipboard()->setText(QString::fromStdString(estimateToCsv(scenario, estimate)));
}

}  // namespace trainmem::ui
