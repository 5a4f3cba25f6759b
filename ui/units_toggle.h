#pragma once
// GiB | GB at the right end of the tab bar: the View menu's two unit actions
// as a segmented control beside the numbers they change. A button mirrors
// its action's check state, so the menu and the toggle cannot disagree.
#include <QWidget>

class QActionGroup;

namespace trainmem::ui {

class UnitsToggle : public QWidget {
    Q_OBJECT
public:
    // One button per action of `units` (objectName "units_" + its icon text).
    explicit UnitsToggle(QActionGroup* units, QWidget* parent = nullptr);

protected:
    void changeEvent(QEvent* event) override;

private:
    void restyle();  // from the palette, again whenever it changes
};

// WCAG 2 contrast ratio of two colours (1 to 21).
double contrastRatio(const QColor& a, const QColor& b);

}  // namespace trainmem::ui
