#pragma once
// Tab 3: pin the current scenario as a column, change anything, pin again:
// up to six columns side by side, with the settings that differ listed.
#include <vector>

#include "ui/chart_tab.h"
#include "ui/chart_views.h"

class QPushButton;
class QPlainTextEdit;

namespace trainmem::ui {

class CompareTab : public ChartTab {
    Q_OBJECT
public:
    static constexpr int kMaxPins = 6;
    explicit CompareTab(ScenarioDocument* document, QWidget* parent = nullptr);

    bool pin();  // false when there is no valid result or six pins already
    void removeLast();
    void clear();
    const std::vector<PinnedScenario>& pins() const { return pins_; }

protected:
    ChartSpec buildSpec() const override;

private:
    void updateControls();
    void pinsChanged();

    std::vector<PinnedScenario> pins_;
    QPushButton* pin_;
    QPushButton* remove_;
    QPushButton* clear_;
    QPlainTextEdit* differences_;
};

}  // namespace trainmem::ui
