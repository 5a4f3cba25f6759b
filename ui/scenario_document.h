#pragma once
// The open scenario and what it last estimated. Panels edit the scenario
// through edit(); every accepted edit re-estimates at once (the estimate takes
// microseconds), and an invalid scenario keeps the last valid result, marked
// stale, with the error naming the field to fix.
#include <functional>
#include <optional>
#include <vector>

#include <QObject>
#include <QString>

#include "core/estimate.h"
#include "core/scenario.h"

namespace trainmem::ui {

class ScenarioDocument : public QObject {
    Q_OBJECT
public:
    explicit ScenarioDocument(QObject* parent = nullptr);

    const Scenario& scenario() const { return scenario_; }

    // Applies `change` to a copy; when the copy equals the current scenario
    // nothing happens and false is returned (this is what stops feedback
    // loops between widgets and the document).
    bool edit(const std::function<void(Scenario&)>& change);
    // A whole new scenario (preset, opened file, New). `path` is the file it
    // came from, empty for presets.
    void replace(const Scenario& scenario, const QString& path = {});

    // The last valid result, and the scenario it belongs to (the call-outs
    // explain that scenario, not the invalid one being edited).
    bool hasResult() const { return result_.has_value(); }
    const Estimate& result() const { return result_->estimate; }
    const std::vector<StageEstimate>& stages() const { return result_->stages; }
    const Scenario& resultScenario() const { return result_->scenario; }
    // True when the current scenario is invalid and the result is older.
    bool stale() const { return error_.has_value(); }
    const std::optional<Error>& error() const { return error_; }

    const QString& path() const { return path_; }
    bool dirty() const { return dirty_; }
    void setSavedAs(const QString& path);  // after a successful save

signals:
    void changed();           // scenario edited or replaced; result updated or stale
    void replaced();          // the whole scenario was swapped: widgets reload every field
    void fileStateChanged();  // path or dirty flag

private:
    void reestimate();
    void setDirty(bool dirty);

    struct Result {
        Scenario scenario;
        Estimate estimate;
        std::vector<StageEstimate> stages;
    };
    Scenario scenario_;
    std::optional<Result> result_;
    std::optional<Error> error_;
    QString path_;
    bool dirty_ = false;
};

}  // namespace trainmem::ui
