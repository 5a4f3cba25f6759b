#include "ui/scenario_document.h"

namespace trainmem::ui {

ScenarioDocument::ScenarioDocument(QObject* parent) : QObject(parent) { reestimate(); }

bool ScenarioDocument::edit(const std::function<void(Scenario&)>& change) {
    Scenario next = scenario_;
    change(next);
    if (next == scenario_) return false;
    // A hand-edited model is no longer the preset it came from (the file
    // format writes {"preset": NAME} only while the numbers are the preset's).
    if (next.model != scenario_.model && next.model_preset == scenario_.model_preset) next.model_preset.clear();
    scenario_ = std::move(next);
    reestimate();
    setDirty(true);
    emit changed();
    return true;
}

void ScenarioDocument::replace(const Scenario& scenario, const QString& path) {
    scenario_ = scenario;
    path_ = path;
    // A previous model's result would be misleading next to a new model.
    result_.reset();
    reestimate();
    dirty_ = false;
    emit replaced();
    emit changed();
    emit fileStateChanged();
}

void ScenarioDocument::setSavedAs(const QString& path) {
    path_ = path;
    dirty_ = false;
    emit fileStateChanged();
}

void ScenarioDocument::setDirty(bool dirty) {
    if (dirty_ == dirty) return;
    dirty_ = dirty;
    emit fileStateChanged();
}

void ScenarioDocument::reestimate() {
    Expected<Estimate> estimated = estimate(scenario_);
    if (!estimated) {
        error_ = estimated.error();
        return;
    }
    Expected<std::vector<StageEstimate>> stages = estimateStages(scenario_);
    if (!stages) {
        error_ = stages.error();
        return;
    }
    error_.reset();
    result_ = Result{scenario_, std::move(estimated).value(), std::move(stages).value()};
}

}  // namespace trainmem::ui
