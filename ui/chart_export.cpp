#include "ui/chart_export.h"

#include <QApplication>
#include <QClipboard>
#include <QPainter>

#include "ui/memory_chart.h"

namespace trainmem::ui {

namespace {

// The chart laid out at the size of the target it is painted into, so a file
// shows what the screen shows at that size.
Painting chartPainting(const ChartSpec& spec) {
    return [&spec](QPainter& painter, const QRectF& target) { MemoryChart::render(spec, painter, target, target.size()); };
}

ExportMetadata metadataOf(const ChartSpec& spec) { return {spec.title, QStringLiteral("trainmem: ") + spec.subtitle}; }

}  // namespace

ExportResult exportPng(const ChartSpec& spec, const QString& path, QSize size, qreal scale) {
    return exportPainting(chartPainting(spec), ExportFormat::Png, metadataOf(spec), path, size, scale);
}

ExportResult exportSvg(const ChartSpec& spec, const QString& path, QSize size) {
    return exportPainting(chartPainting(spec), ExportFormat::Svg, metadataOf(spec), path, size);
}

ExportResult exportPdf(const ChartSpec& spec, const QString& path, QSize size) {
    return exportPainting(chartPainting(spec), ExportFormat::Pdf, metadataOf(spec), path, size);
}

ExportResult exportChart(const ChartSpec& spec, const QString& path, QSize size, qreal scale) {
    return exportPainting(chartPainting(spec), metadataOf(spec), path, size, scale);
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
