#pragma once
// "Step time": where the step's time goes, beside where the memory goes.
// Draws the step time the document computed with its estimate (one bar for
// the step, or one per pipeline stage), the model's assumptions in a
// tooltip and a link to docs/step-time.md.
#include "ui/chart_tab.h"

class QCheckBox;
class QLabel;

namespace trainmem::ui {

class StepTimeTab : public ChartTab {
    Q_OBJECT
public:
    explicit StepTimeTab(ScenarioDocument* document, QWidget* parent = nullptr);
    void setPerStage(bool on);
    bool perStage() const;
    // "How it is modelled": its tooltip holds the assumptions for this GPU.
    QLabel* assumptionsLink() const { return assumptions_; }

signals:
    // A docs page to open ("step-time.md"): the window opens it.
    void docPageRequested(const QString& file);

protected:
    ChartSpec buildSpec() const override;

private:
    QCheckBox* per_stage_;
    QLabel* assumptions_;
};

}  // namespace trainmem::ui
