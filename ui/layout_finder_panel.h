#pragma once
// "Find a layout": every way to spread the open scenario over N GPUs that
// fits (core/search/layout_search.h), ranked, with the closest misses and why, and
// Apply, which writes the chosen layout's settings into the document so every
// panel and tab follows. The search runs on a worker thread; the widgets only
// read the form into options and show what the core returned.
// Live (issue 14): every change of the scenario or of the form starts a new
// search while the panel is shown, with no Search button. A generation
// counter stops a search that is out of date (the core polls it every 2^16
// layouts) and drops its result, so however large a search is, the window
// never waits for it and the table only ever shows the latest one.
#include <atomic>
#include <memory>
#include <optional>

#include <QPointer>
#include <QThread>
#include <QWidget>

#include "core/search/layout_search.h"
#include "core/report/report.h"
#include "ui/scenario_document.h"
#include "ui/gpu_choice.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace trainmem::ui {

class LayoutFinderPanel : public QWidget {
    Q_OBJECT
public:
    explicit LayoutFinderPanel(ScenarioDocument* document, QWidget* parent = nullptr);
    ~LayoutFinderPanel() override;  // waits for a running search

    // The form back to the open scenario's GPU count and GPU.
    void takeScenarioDefaults();
    void setUnits(Units units);

    // Starts a search with the form's options now, stopping an out-of-date
    // one; false when the scenario has an error. searchFinished follows.
    bool search();
    bool searching() const { return worker_ != nullptr; }
    // Writes the ranked layout in `row` into the document; false, with the
    // reason in the status line, when there is no such row or a setting is refused.
    bool apply(int row);

    QSpinBox* gpuCount() const { return gpus_; }
    QComboBox* gpuModel() const { return gpu_; }
    QSpinBox* globalBatch() const { return global_batch_; }
    // Off (the default): every listed layout trains the scenario's global batch.
    QCheckBox* otherGlobalBatch() const { return other_batch_; }
    QSpinBox* topK() const { return top_; }
    QTableWidget* layoutTable() const { return table_; }
    QTableWidget* rejectedTable() const { return rejected_table_; }
    QString largestMicroBatchText() const;
    QString statusText() const;
    // The settings Apply writes for `row` ("parallelism.tensor" = "2", ...).
    std::vector<std::pair<std::string, std::string>> settingsFor(int row) const;

signals:
    void searchFinished();

protected:
    void showEvent(QShowEvent* event) override;

private:
    struct Outcome;
    void finish(const std::shared_ptr<Outcome>& outcome);
    // A search at the next turn of the event loop (several changes of the
    // form in one turn make one search), or when the panel is next shown.
    // An edit of the scenario searches at once (searchIfChanged).
    void scheduleSearch();
    // Starts the search for the scenario and the form as they are now,
    // unless it is the one running, waiting or shown.
    void searchIfChanged();
    void startSearch(std::shared_ptr<Outcome> outcome);
    std::shared_ptr<Outcome> outcomeForForm() const;
    void showResult();
    void refreshLargest();
    void showStatus(const QString& text, bool error);
    int64_t scenarioBatch() const;  // sequences per optimizer step of the open scenario

    ScenarioDocument* document_;
    QSpinBox* gpus_;
    GpuChoice* gpu_;
    QCheckBox* other_batch_;
    QSpinBox* global_batch_;
    QSpinBox* top_;
    QPushButton* apply_;
    QLabel* largest_;
    QLabel* summary_;
    QLabel* status_;
    QTableWidget* table_;
    QTableWidget* rejected_table_;
    Units units_ = Units::GiB;
    QPointer<QThread> worker_;
    std::shared_ptr<Outcome> running_;  // what worker_ computes
    std::shared_ptr<Outcome> pending_;  // asked for while an out-of-date search stops
    std::shared_ptr<Outcome> last_;     // what the tables show
    // Bumped by every new search; a search whose number is behind stops.
    std::shared_ptr<std::atomic<int64_t>> generation_ = std::make_shared<std::atomic<int64_t>>(0);
    bool search_scheduled_ = false;
    bool search_due_ = false;  // a change came while the panel was hidden
};

}  // namespace trainmem::ui
