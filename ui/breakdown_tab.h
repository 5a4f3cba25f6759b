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

protected:
    ChartSpec buildSpec() const override;

private:
    QCheckBox* per_stage_;
};

}  // namespace trainmem::ui
