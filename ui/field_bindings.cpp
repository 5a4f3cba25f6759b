#include "ui/field_bindings.h"

#include <QScrollArea>

namespace trainmem::ui {

void FieldBindings::bind(const QStringList& fields, QWidget* widget) {
    for (const QString& f : fields) widgets_.insert(f, widget);
}

QWidget* FieldBindings::widgetFor(const QString& field) const {
    // Exact path first, then the nearest enclosing one: an error about
    // "training.lora_targets[2]" belongs to the widget for "training.lora_targets".
    QString path = field;
    while (!path.isEmpty()) {
        const auto it = widgets_.find(path);
        if (it != widgets_.end() && *it) return *it;
        const qsizetype cut = std::max(path.lastIndexOf('.'), path.lastIndexOf('['));
        if (cut <= 0) break;
        path.truncate(cut);
    }
    return nullptr;
}

QWidget* FieldBindings::show(const std::optional<Error>& error) {
    QWidget* target = error ? widgetFor(QString::fromStdString(error->field)) : nullptr;
    if (target != marked_) unmark();
    if (!target) return nullptr;
    if (marked_ != target) {
        marked_ = target;
        marked_tooltip_ = target->toolTip();
        marked_style_ = target->styleSheet();
    }
    target->setStyleSheet(QStringLiteral("%1 { border: 2px solid #c0392b; border-radius: 3px; background: #fdecea; }")
                              .arg(QString::fromLatin1(target->metaObject()->className())));
    target->setToolTip(QStringLiteral("<b style='color:#c0392b'>%1</b><br>%2")
                           .arg(QString::fromStdString(error->message).toHtmlEscaped(), marked_tooltip_));
    // Bring the marked field into view in the scrolling column of panels.
    for (QWidget* p = target->parentWidget(); p; p = p->parentWidget())
        if (auto* scroll = qobject_cast<QScrollArea*>(p)) {
            if (target->isVisible()) scroll->ensureWidgetVisible(target);
            break;
        }
    return target;
}

void FieldBindings::unmark() {
    if (marked_) {
        marked_->setStyleSheet(marked_style_);
        marked_->setToolTip(marked_tooltip_);
    }
    marked_ = nullptr;
}

}  // namespace trainmem::ui
