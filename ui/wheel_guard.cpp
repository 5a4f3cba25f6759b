#include "ui/wheel_guard.h"

#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QApplication>
#include <QScrollBar>
#include <QWheelEvent>

namespace trainmem::ui {

namespace {

// One filter for the whole application: stateless, so it can be shared.
class WheelToScrollArea : public QObject {
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() != QEvent::Wheel) return false;
        auto* field = qobject_cast<QWidget*>(watched);
        if (!field || field->hasFocus()) return false;
        // An open combo popup or a focused spin box's line edit has focus
        // inside the field: that is still "the user is in this field".
        if (QWidget* focus = QApplication::focusWidget(); focus && field->isAncestorOf(focus)) return false;
        for (QWidget* p = field->parentWidget(); p; p = p->parentWidget())
            if (auto* area = qobject_cast<QAbstractScrollArea*>(p)) {
                auto* wheel = static_cast<QWheelEvent*>(event);
                QScrollBar* bar = wheel->angleDelta().y() == 0 && wheel->angleDelta().x() != 0
                                      ? area->horizontalScrollBar()
                                      : area->verticalScrollBar();
                QCoreApplication::sendEvent(bar, event);
                return true;
            }
        event->ignore();  // no scroll area: let the parent have it
        return true;
    }
};

QObject* sharedFilter() {
    static QObject* filter = new WheelToScrollArea(QCoreApplication::instance());
    return filter;
}

void guard(QWidget* field) {
    field->setFocusPolicy(Qt::StrongFocus);
    field->removeEventFilter(sharedFilter());  // calling guardWheel twice must not install it twice
    field->installEventFilter(sharedFilter());
}

}  // namespace

void guardWheel(QWidget* root) {
    for (QAbstractSpinBox* spin : root->findChildren<QAbstractSpinBox*>()) guard(spin);
    for (QComboBox* combo : root->findChildren<QComboBox*>()) guard(combo);
}

}  // namespace trainmem::ui
