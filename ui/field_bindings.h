#pragma once
// Which widget edits which input field, by the dotted path the core names in
// its errors ("training.micro_batch_size", "model.num_attention_heads"), so a
// validation error marks the right widget: red border, message as tooltip.
#include <optional>

#include <QHash>
#include <QPointer>
#include <QString>
#include <QWidget>

#include "core/base/error.h"

namespace trainmem::ui {

class FieldBindings {
public:
    // A widget may answer to several paths (HF aliases: num_local_experts,
    // n_routed_experts and num_experts are all "the number of experts").
    void bind(const QStringList& fields, QWidget* widget);

    // Marks the widget bound to the error's field and clears the previous
    // mark; nullopt clears. Returns the marked widget, nullptr when no widget
    // edits that field (the status line still shows the message).
    QWidget* show(const std::optional<Error>& error);
    QWidget* marked() const { return marked_; }
    QWidget* widgetFor(const QString& field) const;

private:
    void unmark();

    QHash<QString, QPointer<QWidget>> widgets_;
    QPointer<QWidget> marked_;
    QString marked_tooltip_;   // the widget's own tooltip, restored on unmark
    QString marked_style_;
};

}  // namespace trainmem::ui
