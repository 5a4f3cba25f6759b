#pragma once
// The open scenario and what it last estimated. Panels edit the scenario
// through edit(); every accepted edit re-estimates at once (the estimate takes
// microseconds), and an invalid scenario keeps the last valid result, marked
// stale, with the error naming the field to fix. Every edit and every loaded
// preset or model goes through the undo stack, so nothing is lost that Ctrl+Z
// cannot bring back; "unsaved" means "not at the stack's clean index".
#include <functional>
#include <optional>
#include <vector>

#include <QObject>
#include <QString>
#include <QUndoStack>

#include "core/account/estimate.h"
#include "core/steptime/step_time.h"
#include "core/scenario/scenario.h"

namespace trainmem::ui {

class ScenarioDocument : public QObject {
    Q_OBJECT
public:
    explicit ScenarioDocument(QObject* parent = nullptr);
    ~ScenarioDocument() override;

    const Scenario& scenario() const { return scenario_; }

    // Applies `change` to a copy; when the copy equals the current scenario
    // nothing happens and false is returned (this is what stops feedback
    // loops between widgets and the document). Otherwise the change is one
    // undoable step named `what` ("Micro-batch"); consecutive edits with the
    // same non-empty `what` within kMergeMs merge into one step, so typing
    // "4096" or clicking an arrow five times is undone at once.
    bool edit(const std::function<void(Scenario&)>& change, const QString& what = {});
    // A whole new scenario that starts a new history (opened scenario file,
    // New, the scenario given on the command line): the user was asked about
    // unsaved changes before. `path` is the file it came from.
    void replace(const Scenario& scenario, const QString& path = {});
    // A whole new scenario as one undoable step (a scenario preset): the edits
    // it replaces come back with Undo instead of being asked about. The path
    // is cleared (a preset is not the file that was open) and the new state
    // counts as saved, as after replace().
    void load(const Scenario& scenario, const QString& what);

    QUndoStack* undoStack() { return &undo_; }
    static constexpr int kMergeMs = 1500;

    // The last valid result, and the scenario it belongs to (the call-outs
    // explain that scenario, not the invalid one being edited).
    bool hasResult() const { return result_.has_value(); }
    const Estimate& result() const { return result_->estimate; }
    const std::vector<StageEstimate>& stages() const { return result_->stages; }
    // The last estimate's preparation of the model, recipe and GPU (what a
    // layout search of this scenario starts from); null before the first.
    std::shared_ptr<const PreparedScenario> prepared() const { return result_ ? result_->prepared : nullptr; }
    const Scenario& resultScenario() const { return result_->scenario; }
    // The step time of that scenario (docs/step-time.md), timed once per
    // re-estimate beside the memory: null when it is not modelled, and then
    // stepTimeError() says why (a GPU without published rates names
    // hardware.gpu). The Step time tab draws it; nothing else times it.
    const StepTime* stepTime() const { return result_ && result_->step_time ? &*result_->step_time : nullptr; }
    const std::vector<StageTime>& stageTimes() const { return result_->stage_times; }
    const StepTimeModel* stepTimeModel() const { return result_ ? result_->step_time_model.get() : nullptr; }
    std::optional<Error> stepTimeError() const { return result_ ? result_->step_time_error : std::nullopt; }
    // True when the current scenario is invalid and the result is older.
    bool stale() const { return error_.has_value(); }
    const std::optional<Error>& error() const { return error_; }

    const QString& path() const { return path_; }
    bool dirty() const { return !undo_.isClean(); }
    void setSavedAs(const QString& path);  // after a successful save

signals:
    void changed();           // scenario edited or replaced; result updated or stale
    void replaced();          // the whole scenario was swapped: widgets reload every field
    void fileStateChanged();  // path or dirty flag

private:
    friend class ScenarioStep;
    // Sets the state an undo step recorded; `whole` = a different scenario
    // altogether (widgets reload everything, the old result is dropped).
    void apply(const Scenario& scenario, const QString& path, bool whole);
    void reestimate();

    struct Result {
        Scenario scenario;
        Estimate estimate;
        std::vector<StageEstimate> stages;
        std::shared_ptr<const PreparedScenario> prepared;
        std::optional<StepTime> step_time;
        std::vector<StageTime> stage_times;
        std::shared_ptr<const StepTimeModel> step_time_model;  // the GPU's rates and constants it used
        std::optional<Error> step_time_error;
    };
    Scenario scenario_;
    std::optional<Result> result_;
    std::optional<Error> error_;
    QString path_;
    QUndoStack undo_;
};

}  // namespace trainmem::ui
