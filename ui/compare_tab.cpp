#include "ui/compare_tab.h"

#include <QHBoxLayout>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace trainmem::ui {

CompareTab::CompareTab(ScenarioDocument* document, QWidget* parent) : ChartTab(document, parent) {
    auto* row = new QHBoxLayout();
    pin_ = new QPushButton(tr("Pin current"), this);
    pin_->setToolTip(tr("Add the current scenario as a column (up to %1). Then change anything and pin again.").arg(kMaxPins));
    remove_ = new QPushButton(tr("Remove last"), this);
    clear_ = new QPushButton(tr("Clear"), this);
    row->addWidget(pin_);
    row->addWidget(remove_);
    row->addWidget(clear_);
    row->addStretch();
    column()->addLayout(row);
    differences_ = new QPlainTextEdit(this);
    differences_->setReadOnly(true);
    differences_->setMaximumHeight(90);
    differences_->setPlaceholderText(tr("Settings that differ between the pinned columns appear here."));
    differences_->setToolTip(tr("Every setting whose value differs between the pinned scenarios, in column order."));
    differences_->setVisible(false);
    below()->addWidget(differences_);

    connect(pin_, &QPushButton::clicked, this, &CompareTab::pin);
    connect(remove_, &QPushButton::clicked, this, &CompareTab::removeLast);
    connect(clear_, &QPushButton::clicked, this, &CompareTab::clear);
    connect(document_, &ScenarioDocument::changed, this, &CompareTab::updateControls);
    updateControls();
}

bool CompareTab::pin() {
    if (!document_->hasResult() || document_->stale() || static_cast<int>(pins_.size()) >= kMaxPins) return false;
    const QString label = QString(QChar('A' + static_cast<int>(pins_.size())));
    pins_.push_back({label, document_->resultScenario(), document_->result()});
    pinsChanged();
    return true;
}

void CompareTab::removeLast() {
    if (pins_.empty()) return;
    pins_.pop_back();
    pinsChanged();
}

void CompareTab::clear() {
    pins_.clear();
    pinsChanged();
}

void CompareTab::updateControls() {
    const bool can_pin = document_->hasResult() && !document_->stale() && static_cast<int>(pins_.size()) < kMaxPins;
    pin_->setEnabled(can_pin);
    remove_->setEnabled(!pins_.empty());
    clear_->setEnabled(!pins_.empty());
}

void CompareTab::pinsChanged() {
    updateControls();
    redrawSoon();
    std::vector<Scenario> scenarios;
    for (const auto& p : pins_) scenarios.push_back(p.scenario);
    const QStringList differences = pins_.size() > 1 ? scenarioDifferences(scenarios) : QStringList();
    differences_->setPlainText(differences.join('\n'));
    // The chart's footer lists up to seven; the box is for longer lists.
    differences_->setVisible(differences.size() > 7);
}

ChartSpec CompareTab::buildSpec() const { return compareChart(pins_, units()); }

}  // namespace trainmem::ui
