#pragma once
// Chart and table exports. Each takes a path (and size) and says whether it
// worked, so the window, the headless mode and the tests call the same code;
// file dialogs stay in the window. The files are written by
// painting_export.h, which the step timeline uses as well.
#include <QImage>
#include <QSize>
#include <QString>

#include "core/account/estimate.h"
#include "core/report/report.h"
#include "core/scenario/scenario.h"
#include "ui/chart_spec.h"
#include "ui/painting_export.h"

namespace trainmem::ui {

// `size` in logical pixels (PNG: also times `scale` device pixels per logical
// pixel; PDF: points). Files are written atomically.
ExportResult exportPng(const ChartSpec& spec, const QString& path, QSize size, qreal scale = 1.0);
ExportResult exportSvg(const ChartSpec& spec, const QString& path, QSize size);
ExportResult exportPdf(const ChartSpec& spec, const QString& path, QSize size);
// The format follows the suffix.
ExportResult exportChart(const ChartSpec& spec, const QString& path, QSize size, qreal scale = 1.0);

// Clipboard: the chart as an image, the breakdown table as Markdown or CSV
// (trainmem::estimateToMarkdown / estimateToCsv).
void copyChartImage(const ChartSpec& spec, QSize size, qreal scale = 1.0);
void copyTableMarkdown(const Scenario& scenario, const Estimate& estimate, Units units);
void copyTableCsv(const Scenario& scenario, const Estimate& estimate);

}  // namespace trainmem::ui
