#pragma once
// Tab 3: pin the current scenario as a column, change anything, pin again:
// up to six columns side by side. Each bar's caption names what differs; the
// table under the chart lists every differing setting once and each
// component per pin, with its change against a chosen baseline pin.
#include <vector>

#include "ui/chart_tab.h"
#include "ui/chart_views.h"

class QComboBox;
class QPushButton;
class QSplitter;
class QTableWidget;

namespace trainmem::ui {

class CompareTab : public ChartTab {
    Q_OBJECT
public:
    static constexpr int kMaxPins = 6;
    explicit CompareTab(ScenarioDocument* document, QWidget* parent = nullptr);

    // Pins are part of the scenario file, so each change below is one step
    // of the document's undo stack: it marks the file unsaved and Undo takes
    // it back.
    bool pin();  // false when there is no valid result or six pins already
    void removeLast();
    void clear();
    // Replaces every pin with the file they came from (a scenario file's, a
    // restored session's): not a step, as the history starts there.
    void setPins(std::vector<PinnedScenario> pins);
    // Replaces every pin as one undo step named `what`; nothing when the
    // same pins (names and scenarios, in order) are there already.
    void changePinsTo(std::vector<PinnedScenario> pins, const QString& what);
    static bool samePins(const std::vector<PinnedScenario>& a, const std::vector<PinnedScenario>& b);
    // One pin by its column (also from the table header's context menu).
    bool removePin(int index);
    bool renamePin(int index, const QString& label);  // false for an empty or taken name
    bool movePin(int index, int to);
    const std::vector<PinnedScenario>& pins() const { return pins_; }
    // The comparison table: differing settings, then components and totals.
    QTableWidget* table() const { return table_; }
    // Index of the pin the table's changes are measured against.
    QComboBox* baseline() const { return baseline_; }

    // With the comparison table under the plot (and the legend when a small
    // figure leaves the component rows out).
    ChartSpec figureSpec() override;
    // The table's rows against the chosen base: what Copy Table copies here.
    FigureTable comparison() const;

protected:
    ChartSpec buildSpec() const override;
    void unitsChanged() override;

protected:
    void resizeEvent(QResizeEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    friend class PinsStep;
    // Pushes the change from pins_ to `after` as one undo step named `what`.
    void changePins(std::vector<PinnedScenario> after, const QString& what);
    void showPins(const std::vector<PinnedScenario>& pins);  // what a step sets
    void updateControls();
    void fitTable();  // the table's rows in view, the chart keeping most of the height
    void pinsChanged();
    void fillTable();

    std::vector<PinnedScenario> pins_;
    QPushButton* pin_;
    QPushButton* remove_;
    QPushButton* clear_;
    QComboBox* baseline_;
    QTableWidget* table_;
    QSplitter* split_;
};

}  // namespace trainmem::ui
