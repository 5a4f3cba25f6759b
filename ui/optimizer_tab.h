#pragma once
// Tab 2: the current configuration under every optimizer, in bytes per GPU or
// in buffers per parameter (the seed figure).
#include "ui/chart_tab.h"
#include "ui/chart_views.h"

class QRadioButton;

namespace trainmem::ui {

class OptimizerTab : public ChartTab {
    Q_OBJECT
public:
    explicit OptimizerTab(ScenarioDocument* document, QWidget* parent = nullptr);
    void setScale(OptimizerScale scale);
    OptimizerScale scale() const;

protected:
    ChartSpec buildSpec() const override;

private:
    QRadioButton* bytes_;
    QRadioButton* times_params_;
};

}  // namespace trainmem::ui
