#include "ui/breakdown_tab.h"

#include "ui/memory_chart.h"

#include <QCheckBox>
#include <QVBoxLayout>

#include "ui/chart_views.h"

namespace trainmem::ui {

BreakdownTab::BreakdownTab(ScenarioDocument* document, QWidget* parent) : ChartTab(document, parent) {
    per_stage_ = new QCheckBox(tr("One bar per pipeline stage"), this);
    per_stage_->setToolTip(tr("Every stage at its own peak: the first stages keep more micro-batches in flight, "
                              "the last one holds the logits and loss."));
    column()->addWidget(per_stage_);
    connect(per_stage_, &QCheckBox::toggled, this, &BreakdownTab::redrawSoon);
    connect(per_stage_, &QCheckBox::toggled, this, [this](bool on) {
        if (!on) emit stageChosen(-1);
    });
    connect(chart(), &MemoryChart::barClicked, this, [this](int bar) {
        if (per_stage_->isChecked()) emit stageChosen(bar);
    });
}

void BreakdownTab::setPerStage(bool on) { per_stage_->setChecked(on); }
bool BreakdownTab::perStage() const { return per_stage_->isChecked(); }

ChartSpec BreakdownTab::buildSpec() const {
    if (!document_->hasResult()) {
        ChartSpec empty;
        empty.title = tr("Training memory breakdown (per GPU)");
        empty.emptyNotice = document_->error() ? tr("Fix the marked field: %1").arg(QString::fromStdString(document_->error()->text()))
                                               : tr("Choose a preset or open a config.json");
        return empty;
    }
    const QString stale = staleNotice(*document_);
    if (per_stage_->isChecked())
        return stagesChart(document_->resultScenario(), document_->result(), document_->stages(), units(), stale);
    return breakdownChart(document_->resultScenario(), document_->result(), units(), stale);
}

}  // namespace trainmem::ui
