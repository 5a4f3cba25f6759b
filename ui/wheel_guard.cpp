#include "ui/wheel_guard.h"

#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QFocusEvent>
#include <QLineEdit>
#include <QApplication>
#include <QScrollBar>
#include <QWheelEvent>

namespace trainmem::ui {

namespace {

constexpr const char* kClicked = "trainmem_wheel_clicked";  // on the field: focus came by a click

// The guarded field `watched` is or is inside (a spin box's line edit).
QWidget* fieldOf(QObject* watched) {
    for (auto* w = qobject_cast<QWidget*>(watched); w; w = w->parentWidget())
        if (qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QComboBox*>(w)) return w;
    return nullptr;
}

// One filter for the whole application, shared; what it keeps is a
// property of each field.
class WheelToScrollArea : public QObject {
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        // Whether the user clicked into the field: Tab moving through the
        // column gives focus too, and the wheel then turned the number the
        // Tab landed on instead of scrolling (issue 27).
        if (event->type() == QEvent::FocusIn || event->type() == QEvent::MouseButtonPress) {
            if (QWidget* field = fieldOf(watched)) {
                const bool clicked = event->type() == QEvent::MouseButtonPress ||
                                     static_cast<QFocusEvent*>(event)->reason() == Qt::MouseFocusReason;
                if (clicked || event->type() == QEvent::FocusIn) field->setProperty(kClicked, clicked);
            }
            return false;
        }
        if (event->type() != QEvent::Wheel) return false;
        QWidget* field = fieldOf(watched);
        if (!field) return false;
        const bool clicked = field->property(kClicked).toBool();
        if (field->hasFocus() && clicked) return false;
        // An open combo popup or a focused spin box's line edit has focus
        // inside the field: that is still "the user is in this field".
        if (QWidget* focus = QApplication::focusWidget(); focus && field->isAncestorOf(focus) && clicked) return false;
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
    // The field and what a click lands on inside it (a spin box's line
    // edit; not a combo's popup, which takes the wheel when open).
    QList<QWidget*> parts{field};
    for (QLineEdit* edit : field->findChildren<QLineEdit*>()) parts << edit;
    for (QWidget* part : parts) {
        part->removeEventFilter(sharedFilter());  // calling guardWheel twice must not install it twice
        part->installEventFilter(sharedFilter());
    }
}

}  // namespace

void guardWheel(QWidget* root) {
    for (QAbstractSpinBox* spin : root->findChildren<QAbstractSpinBox*>()) guard(spin);
    for (QComboBox* combo : root->findChildren<QComboBox*>()) guard(combo);
}

}  // namespace trainmem::ui
