#pragma once
// Tab 1: one stacked bar for the heaviest GPU, like the seed figure, or one
// bar per pipeline stage.
#include "ui/chart_tab.h"

class QCheckBox;

namespace trainmem::ui {

class BreakdownTab : public ChartTab {
    Q_OBJECT
public:
    explicit BreakdownTab(ScenarioDocument* document, QWidget* parent = nullptr);
    void setPerStage(bool on);
    bool perStage() const;

signals:
    // One bar per stage: a stage's bar was clicked (0-based stage), or the
    // view went back to the heaviest GPU (-1). The table under the tabs shows it.
    void stageChosen(int stage);

protected:
    ChartSpec buildSpec() const override;

private:
    QCheckBox* per_stage_;
};

}  // namespace trainmem::ui
