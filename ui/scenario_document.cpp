#include "ui/scenario_document.h"

#include <QElapsedTimer>
#include <QUndoCommand>

namespace trainmem::ui {

// One undoable step: the scenario (and, for loads, the path) before and after.
class ScenarioStep : public QUndoCommand {
public:
    ScenarioStep(ScenarioDocument* doc, Scenario before, Scenario after, QString path_before, QString path_after,
                 bool whole, const QString& what)
        : QUndoCommand(what), doc_(doc), before_(std::move(before)), after_(std::move(after)),
          path_before_(std::move(path_before)), path_after_(std::move(path_after)), whole_(whole),
          mergeable_(!whole && !what.isEmpty()) {
        age_.start();
    }

    void redo() override { doc_->apply(after_, path_after_, whole_); }
    void undo() override { doc_->apply(before_, path_before_, whole_); }
    int id() const override { return mergeable_ ? 1 : -1; }
    bool mergeWith(const QUndoCommand* other) override {
        const auto* next = static_cast<const ScenarioStep*>(other);
        if (!next->mergeable_ || next->text() != text() || age_.elapsed() > ScenarioDocument::kMergeMs) return false;
        after_ = next->after_;
        age_.restart();
        setObsolete(after_ == before_);  // typed back to where it started: no step at all
        return true;
    }

private:
    ScenarioDocument* doc_;
    Scenario before_, after_;
    QString path_before_, path_after_;
    bool whole_;
    bool mergeable_;
    QElapsedTimer age_;  // since the last merged edit
};

ScenarioDocument::ScenarioDocument(QObject* parent) : QObject(parent) {
    reestimate();
    connect(&undo_, &QUndoStack::cleanChanged, this, &ScenarioDocument::fileStateChanged);
}

// QUndoStack says cleanChanged as it is destroyed; by then the window that
// listens to fileStateChanged is half destroyed (UBSan: a slot called on a
// QWidget that is no longer a MainWindow). Nothing is listening any more.
ScenarioDocument::~ScenarioDocument() { undo_.disconnect(this); }

bool ScenarioDocument::edit(const std::function<void(Scenario&)>& change, const QString& what) {
    Scenario next = scenario_;
    change(next);
    if (next == scenario_) return false;
    // A hand-edited model is no longer the preset it came from (the file
    // format writes {"preset": NAME} only while the numbers are the preset's).
    if (next.model != scenario_.model && next.model_preset == scenario_.model_preset) next.model_preset.clear();
    // Nor may titles and saved files keep describing the model it was: a hand
    // edit says so in the model's name, and another model (a model preset, a
    // config.json) drops the scenario's name and description, which were
    // about the old one. The window title then falls back to the model.
    if (next.model != scenario_.model) {
        static const std::string kEdited = " (edited)";
        const bool renamed = next.model.name != scenario_.model.name;
        const bool hand_edit = !renamed && next.model_preset.empty();
        if (hand_edit && !next.model.name.ends_with(kEdited)) next.model.name += kEdited;
        if (renamed) next.name.clear();
        next.description.clear();
    }
    undo_.push(new ScenarioStep(this, scenario_, std::move(next), path_, path_, false,
                                what.isEmpty() ? tr("Edit") : what));
    return true;
}

void ScenarioDocument::replace(const Scenario& scenario, const QString& path) {
    undo_.clear();  // a new history; clear() also makes the stack clean
    apply(scenario, path, true);
}

void ScenarioDocument::load(const Scenario& scenario, const QString& what) {
    if (scenario == scenario_ && path_.isEmpty()) return;  // the same preset again (a double-click)
    undo_.push(new ScenarioStep(this, scenario_, scenario, path_, QString(), true, what));
    undo_.setClean();
}

void ScenarioDocument::apply(const Scenario& scenario, const QString& path, bool whole) {
    scenario_ = scenario;
    if (whole) {
        path_ = path;
        // A previous model's result would be misleading next to a new model.
        result_.reset();
    }
    reestimate();
    if (whole) emit replaced();
    emit changed();
    if (whole) emit fileStateChanged();
}

void ScenarioDocument::setSavedAs(const QString& path) {
    path_ = path;
    undo_.setClean();
    emit fileStateChanged();
}

void ScenarioDocument::reestimate() {
    // One validation and one preparation for the estimate and every stage;
    // the preparation is kept for Find a Layout's search of this scenario.
    Expected<ScenarioEstimate> estimated = estimateWithStages(scenario_);
    if (!estimated) {
        error_ = estimated.error();
        return;
    }
    error_.reset();
    ScenarioEstimate& e = *estimated;
    result_ = Result{scenario_, std::move(e.estimate), std::move(e.stages), std::move(e.prepared), {}, {}, {}, {}};
    // The step time of the same scenario, validated above: the GPU's rates
    // once, then the step and every stage's micro-batch (microseconds, O(1)
    // in layers), so every view of it draws what was computed here.
    Expected<StepTimeModel> model = prepareStepTime(scenario_);
    if (!model) {
        result_->step_time_error = model.error();
        return;
    }
    result_->step_time = trainmem::stepTime(*model, scenario_);
    result_->stage_times = trainmem::stageTimes(*model, scenario_);
    result_->step_time_model = std::make_shared<const StepTimeModel>(std::move(*model));
}

}  // namespace trainmem::ui
