#include "ui/chart_tab.h"

#include <QVBoxLayout>

#include "ui/memory_chart.h"

namespace trainmem::ui {

ChartTab::ChartTab(ScenarioDocument* document, QWidget* parent) : QWidget(parent), document_(document) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    column_ = new QVBoxLayout();
    layout->addLayout(column_);
    chart_ = new MemoryChart(this);
    layout->addWidget(chart_, 1);
    below_ = new QVBoxLayout();
    layout->addLayout(below_);
    connect(document_, &ScenarioDocument::changed, this, &ChartTab::redrawSoon);
}

void ChartTab::setUnits(Units units) {
    if (units_ == units) return;
    units_ = units;
    unitsChanged();
    redrawSoon();
}

ChartSpec ChartTab::currentSpec() {
    if (outdated_) redraw();
    return chart_->spec();
}

void ChartTab::redrawSoon() {
    outdated_ = true;
    if (isVisible()) redraw();
}

void ChartTab::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (outdated_) redraw();
}

void ChartTab::redraw() {
    outdated_ = false;
    chart_->setSpec(buildSpec());
}

QString staleNotice(const ScenarioDocument& document) {
    if (!document.stale()) return {};
    return QObject::tr("Stale: fix the marked field (%1)").arg(QString::fromStdString(document.error()->text()));
}

}  // namespace trainmem::ui
