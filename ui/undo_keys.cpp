#include "ui/undo_keys.h"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QKeyEvent>
#include <QPointer>
#include <QWidget>

namespace trainmem::ui {

namespace {

class UndoKeysToWindow : public QObject {
public:
    UndoKeysToWindow(QWidget* window) : QObject(window), window_(window) {}

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() != QEvent::ShortcutOverride) return false;
        auto* key = static_cast<QKeyEvent*>(event);
        if (!key->matches(QKeySequence::Undo) && !key->matches(QKeySequence::Redo)) return false;
        auto* widget = qobject_cast<QWidget*>(watched);
        if (!widget || widget->window() != window_) return false;  // a floating dock keeps its own undo
        for (QWidget* w = widget; w; w = w->parentWidget())
            if (qobject_cast<QAbstractSpinBox*>(w)) {
                // Left unaccepted, the shortcut map gives the key to Edit > Undo / Redo.
                event->ignore();
                return true;
            }
        return false;
    }

private:
    QPointer<QWidget> window_;
};

}  // namespace

void sendUndoKeysToWindow(QWidget* window) { qApp->installEventFilter(new UndoKeysToWindow(window)); }

}  // namespace trainmem::ui
