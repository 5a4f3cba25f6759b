#pragma once
// "Find a layout": every way to spread the open scenario over N GPUs that
// fits (core/layout_search.h), ranked, with the closest misses and why, and
// Apply, which writes the chosen layout's settings into the document so every
// panel and tab follows. The search runs on a worker thread; the widgets only
// read the form into options and show what the core returned.
#include <memory>
#include <optional>

#include <QPointer>
#include <QThread>
#include <QWidget>

#include "core/layout_search.h"
#include "core/report.h"
#include "ui/scenario_document.h"

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

    // Starts a search with the form's options; false when one is running.
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
    void showResult();
    void refreshLargest();
    void showStatus(const QString& text, bool error);
    int64_t scenarioBatch() const;  // sequences per optimizer step of the open scenario

    ScenarioDocument* document_;
    QSpinBox* gpus_;
    QComboBox* gpu_;
    QCheckBox* other_batch_;
    QSpinBox* global_batch_;
    QSpinBox* top_;
    QPushButton* search_;
    QPushButton* apply_;
    QLabel* largest_;
    QLabel* summary_;
    QLabel* status_;
    QTableWidget* table_;
    QTableWidget* rejected_table_;
    Units units_ = Units::GiB;
    QPointer<QThread> worker_;
    std::shared_ptr<Outcome> last_;
};

}  // namespace trainmem::ui
