#include "ui/optimizer_tab.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QRadioButton>
#include <QVBoxLayout>

namespace trainmem::ui {

OptimizerTab::OptimizerTab(ScenarioDocument* document, QWidget* parent) : ChartTab(document, parent) {
    auto* row = new QHBoxLayout();
    row->addWidget(new QLabel(tr("Show:"), this));
    bytes_ = new QRadioButton(tr("Memory per GPU"), this);
    bytes_->setToolTip(tr("The whole per-GPU breakdown of this scenario under each optimizer."));
    times_params_ = new QRadioButton(tr("Optimizer state (× params)"), this);
    times_params_->setToolTip(tr("State buffers per trainable parameter, each named inside its bar."));
    bytes_->setChecked(true);
    row->addWidget(bytes_);
    row->addWidget(times_params_);
    row->addStretch();
    column()->addLayout(row);
    connect(bytes_, &QRadioButton::toggled, this, &OptimizerTab::redrawSoon);
}

void OptimizerTab::setScale(OptimizerScale scale) {
    (scale == OptimizerScale::Bytes ? bytes_ : times_params_)->setChecked(true);
}

OptimizerScale OptimizerTab::scale() const {
    return bytes_->isChecked() ? OptimizerScale::Bytes : OptimizerScale::TimesParams;
}

ChartSpec OptimizerTab::buildSpec() const {
    // While the scenario being edited is invalid, compare the last valid one
    // (under the stale banner) rather than ten columns of the same error.
    const Scenario& s = document_->stale() && document_->hasResult() ? document_->resultScenario() : document_->scenario();
    ChartSpec spec = optimizerChart(s, estimateEveryOptimizer(s), scale(), units());
    spec.staleNotice = staleNotice(*document_);
    return spec;
}

}  // namespace trainmem::ui
