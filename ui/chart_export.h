#pragma once
// Chart and table exports. Each takes a path (and size) and says whether it
// worked, so the window, the headless mode and the tests call the same code;
// file dialogs stay in the window.
#include <QImage>
#include <QSize>
#include <QString>

#include "core/estimate.h"
#include "core/report.h"
#include "core/scenario.h"
#include "ui/chart_spec.h"

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

// `size` in logical pixels (PNG: also times `scale` device pixels per logical
// pixel; PDF: points). Files are written atomically.
ExportResult exportPng(const ChartSpec& spec, const QString& path, QSize size, qreal scale = 1.0);
ExportResult exportSvg(const ChartSpec& spec, const QString& path, QSize size);
ExportResult exportPdf(const ChartSpec& spec, const QString& path, QSize size);
ExportResult exportChart(const ChartSpec& spec, const QString& path, QSize size, qreal scale = 1.0);

constexpr QSize kDefaultExportSize{1200, 750};

// Clipboard: the chart as an image, the breakdown table as Markdown or CSV
// (trainmem::estimateToMarkdown / estimateToCsv).
void copyChartImage(const ChartSpec& spec, QSize size, qreal scale = 1.0);
void copyTableMarkdown(const Scenario& scenario, const Estimate& estimate, Units units);
void copyTableCsv(const Scenario& scenario, const Estimate& estimate);

}  // namespace trainmem::ui
