#include "ui/step_time_tab.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "ui/step_time_views.h"

namespace trainmem::ui {

StepTimeTab::StepTimeTab(ScenarioDocument* document, QWidget* parent) : ChartTab(document, parent) {
    auto* row = new QHBoxLayout();
    per_stage_ = new QCheckBox(tr("One bar per pipeline stage"), this);
    per_stage_->setToolTip(tr("One micro-batch of every stage: forward, backward, recomputation and exposed "
                              "communication. The step waits for the slowest."));
    row->addWidget(per_stage_);
    row->addStretch();
    assumptions_ = new QLabel(QStringLiteral("<a href=\"step-time.md\">%1</a>").arg(tr("How this is modelled")), this);
    assumptions_->setTextInteractionFlags(Qt::LinksAccessibleByMouse | Qt::LinksAccessibleByKeyboard);
    row->addWidget(assumptions_);
    column()->addLayout(row);
    connect(assumptions_, &QLabel::linkActivated, this, &StepTimeTab::docPageRequested);
    connect(per_stage_, &QCheckBox::toggled, this, &StepTimeTab::redrawSoon);
}

void StepTimeTab::setPerStage(bool on) { per_stage_->setChecked(on); }
bool StepTimeTab::perStage() const { return per_stage_->isChecked(); }

ChartSpec StepTimeTab::buildSpec() const {
    ChartSpec empty;
    empty.title = tr("Where the step's time goes (per GPU)");
    const StepTime* time = document_->stepTime();
    const StepTimeModel* model = document_->stepTimeModel();
    // Only a pipeline has stages to tell apart.
    const bool stages = document_->hasResult() && document_->resultScenario().parallelism.pipeline > 1;
    per_stage_->setEnabled(stages);
    if (!time || !model) {
        assumptions_->setToolTip(tr("docs/step-time.md: every formula, constant and source of the step time"));
        if (!document_->hasResult())
            empty.emptyNotice = document_->error()
                                    ? tr("Fix the marked field: %1").arg(QString::fromStdString(document_->error()->text()))
                                    : tr("Choose a preset or open a config.json");
        else if (const std::optional<Error> why = document_->stepTimeError())
            empty.emptyNotice = tr("The step time is not modelled here: %1").arg(QString::fromStdString(why->text()));
        return empty;
    }
    const Scenario& scenario = document_->resultScenario();
    assumptions_->setToolTip(stepTimeAssumptions(scenario, *model));
    const QString stale = staleNotice(*document_);
    if (stages && per_stage_->isChecked())
        return stageTimesChart(scenario, *model, *time, document_->stageTimes(), stale);
    return stepTimeChart(scenario, *model, *time, stale);
}

}  // namespace trainmem::ui
