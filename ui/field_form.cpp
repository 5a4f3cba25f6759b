#include "ui/field_form.h"

#include <cmath>

namespace trainmem::ui {

FieldForm::FieldForm(ScenarioDocument* document, FieldBindings* bindings, QWidget* parent)
    : QWidget(parent), document_(document), bindings_(bindings), layout_(new QFormLayout(this)) {
    layout_->setContentsMargins(0, 0, 0, 0);
    layout_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    layout_->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
    layout_->setVerticalSpacing(4);
}

void FieldForm::addRow(const FieldInfo& info, QWidget* widget) {
    widget->setToolTip(info.tip);
    auto* label = new QLabel(info.label, this);
    label->setToolTip(info.tip);
    label->setBuddy(widget);
    layout_->addRow(label, widget);
    if (bindings_ && !info.fields.isEmpty()) bindings_->bind(info.fields, widget);
}

QSpinBox* FieldForm::addInteger(const FieldInfo& info, int minimum, int maximum, Getter<int64_t> get,
                                Setter<int64_t> set) {
    auto* spin = new QSpinBox(this);
    spin->setRange(minimum, maximum);
    spin->setGroupSeparatorShown(true);
    spin->setAccelerated(true);
    connect(spin, &QSpinBox::valueChanged, this, [this, set](int v) {
        document_->edit([&](Scenario& s) { set(s, v); });
    });
    refreshers_.push_back([this, spin, get] {
        const int64_t v = get(document_->scenario());
        if (v != spin->value()) {
            QSignalBlocker block(spin);
            // A value outside the spin box's range would be clamped silently;
            // widen the range instead so the widget shows the true value.
            if (v > spin->maximum() && v <= INT32_MAX) spin->setMaximum(static_cast<int>(v));
            if (v < spin->minimum() && v >= INT32_MIN) spin->setMinimum(static_cast<int>(v));
            spin->setValue(static_cast<int>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX)));
        }
    });
    addRow(info, spin);
    return spin;
}

QDoubleSpinBox* FieldForm::addReal(const FieldInfo& info, double minimum, double maximum, int decimals, double step,
                                   Getter<double> get, Setter<double> set, const QString& suffix) {
    auto* spin = new QDoubleSpinBox(this);
    spin->setRange(minimum, maximum);
    spin->setDecimals(decimals);
    spin->setSingleStep(step);
    spin->setSuffix(suffix);
    connect(spin, &QDoubleSpinBox::valueChanged, this, [this, set](double v) {
        document_->edit([&](Scenario& s) { set(s, v); });
    });
    refreshers_.push_back([this, spin, get] {
        const double v = get(document_->scenario());
        // Compare at the displayed precision, or reloading would write back a
        // rounded value and mark the scenario dirty.
        if (std::abs(v - spin->value()) > 0.5 * std::pow(10.0, -spin->decimals())) {
            QSignalBlocker block(spin);
            spin->setValue(v);
        }
    });
    addRow(info, spin);
    return spin;
}

QCheckBox* FieldForm::addFlag(const FieldInfo& info, Getter<bool> get, Setter<bool> set) {
    auto* box = new QCheckBox(this);
    connect(box, &QCheckBox::toggled, this, [this, set](bool v) { document_->edit([&](Scenario& s) { set(s, v); }); });
    refreshers_.push_back([this, box, get] {
        const bool v = get(document_->scenario());
        if (v != box->isChecked()) {
            QSignalBlocker block(box);
            box->setChecked(v);
        }
    });
    addRow(info, box);
    return box;
}

QLineEdit* FieldForm::addText(const FieldInfo& info, Getter<std::string> get, Setter<std::string> set) {
    auto* edit = new QLineEdit(this);
    connect(edit, &QLineEdit::textEdited, this, [this, set](const QString& text) {
        document_->edit([&](Scenario& s) { set(s, text.toStdString()); });
    });
    refreshers_.push_back([this, edit, get] {
        const QString v = QString::fromStdString(get(document_->scenario()));
        if (v != edit->text()) {
            QSignalBlocker block(edit);
            edit->setText(v);
        }
    });
    addRow(info, edit);
    return edit;
}

QLabel* FieldForm::addReadout(const QString& label, const QString& tip, std::function<QString()> text) {
    auto* value = new QLabel(this);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    refreshers_.push_back([value, text] { value->setText(text()); });
    addRow(FieldInfo{label, {}, tip}, value);
    return value;
}

void FieldForm::setRowVisible(QWidget* field, bool visible) { layout_->setRowVisible(field, visible); }

void FieldForm::refresh() {
    for (const auto& r : refreshers_) r();
}

}  // namespace trainmem::ui
