#include "ui/field_form.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <type_traits>

namespace trainmem::ui {

FieldForm::FieldForm(ScenarioDocument* document, FieldBindings* bindings, QWidget* parent)
    : QWidget(parent), document_(document), bindings_(bindings), layout_(new QFormLayout(this)) {
    layout_->setContentsMargins(0, 0, 0, 0);
    layout_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    layout_->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
    layout_->setVerticalSpacing(4);
}

void letShrink(QWidget* widget) {
    if (auto* box = qobject_cast<QComboBox*>(widget)) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(kFieldChars);
    } else if (auto* label = qobject_cast<QLabel*>(widget)) {
        label->setWordWrap(true);
    }
}

void FieldForm::addRow(const FieldInfo& info, QWidget* widget) {
    letShrink(widget);
    widget->setToolTip(info.tip);
    auto* label = new QLabel(info.label, this);
    label->setToolTip(info.tip);
    label->setBuddy(widget);
    layout_->addRow(label, widget);
    if (bindings_ && !info.fields.isEmpty()) bindings_->bind(info.fields, widget);
}

namespace {

QString stepName(const FieldInfo& info) { return info.label.trimmed(); }

}  // namespace

// The arrows and keys step within the usual range, but a typed value is
// taken as typed: the widget's own range is as wide as the type, so
// "99999999", "0" or "-1" reach the core, which says what is allowed and the
// field is marked, instead of becoming another number. One template serves
// the integer and the real field (QSpinBox, QDoubleSpinBox).
template <class SpinBox, class Value>
class StepBoundedField : public SpinBox {
public:
    StepBoundedField(Value step_minimum, Value step_maximum, Value widest, QWidget* parent)
        : SpinBox(parent), step_minimum_(step_minimum), step_maximum_(step_maximum) {
        this->setRange(-widest, widest);
    }
    void stepBy(int steps) override {
        // In long double: an int field's value plus steps x step must not overflow int.
        const long double next = std::clamp<long double>(
            static_cast<long double>(this->value()) + static_cast<long double>(steps) * this->singleStep(),
            step_minimum_, step_maximum_);
        this->setValue(static_cast<Value>(next));
        this->selectAll();
    }
    // As wide as the usual range needs, not as "-2,147,483,647".
    QSize sizeHint() const override { return hints().first; }
    QSize minimumSizeHint() const override { return hints().second; }

protected:
    typename SpinBox::StepEnabled stepEnabled() const override {
        typename SpinBox::StepEnabled on = SpinBox::StepNone;
        if (this->value() < step_maximum_) on |= SpinBox::StepUpEnabled;
        if (this->value() > step_minimum_) on |= SpinBox::StepDownEnabled;
        return on;
    }

private:
    static constexpr bool kReal = std::is_floating_point_v<Value>;
    int decimalsShown() const {
        if constexpr (kReal) return this->decimals();
        return 0;
    }
    std::pair<QSize, QSize> hints() const {
        const QString key = this->font().key() + this->suffix() + this->specialValueText() +
                            QString::number(decimalsShown()) + QString::number(this->minimum());
        if (key != hint_key_) {
            SpinBox probe;
            probe.setFont(this->font());
            if constexpr (kReal) probe.setDecimals(this->decimals());
            probe.setRange(std::max(this->minimum(), step_minimum_), step_maximum_);
            probe.setGroupSeparatorShown(this->isGroupSeparatorShown());
            probe.setSuffix(this->suffix());
            probe.setSpecialValueText(this->specialValueText());
            hint_ = {probe.sizeHint(), probe.minimumSizeHint()};
            hint_key_ = key;
        }
        return hint_;
    }
    Value step_minimum_, step_maximum_;
    mutable QString hint_key_;
    mutable std::pair<QSize, QSize> hint_;
};

// INT_MIN itself cannot be typed back ("-2147483648" overflows on the way): the range is +-INT_MAX.
class IntegerField : public StepBoundedField<QSpinBox, int> {
public:
    IntegerField(int step_minimum, int step_maximum, QWidget* parent)
        : StepBoundedField(step_minimum, step_maximum, INT_MAX, parent) {}
};

class RealField : public StepBoundedField<QDoubleSpinBox, double> {
public:
    RealField(double step_minimum, double step_maximum, QWidget* parent)
        : StepBoundedField(step_minimum, step_maximum, 1e12, parent) {}
};

QSpinBox* FieldForm::addInteger(const FieldInfo& info, int minimum, int maximum, Getter<int64_t> get,
                                Setter<int64_t> set) {
    auto* spin = new IntegerField(minimum, maximum, this);
    spin->setGroupSeparatorShown(true);
    spin->setAccelerated(true);
    connect(spin, &QSpinBox::valueChanged, this, [this, set, what = stepName(info)](int v) {
        document_->edit([&](Scenario& s) { set(s, v); }, what);
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
    auto* spin = new RealField(minimum, maximum, this);
    spin->setDecimals(decimals);
    spin->setSingleStep(step);
    spin->setSuffix(suffix);
    connect(spin, &QDoubleSpinBox::valueChanged, this, [this, set, what = stepName(info)](double v) {
        document_->edit([&](Scenario& s) { set(s, v); }, what);
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
    connect(box, &QCheckBox::toggled, this,
            [this, set, what = stepName(info)](bool v) { document_->edit([&](Scenario& s) { set(s, v); }, what); });
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
    connect(edit, &QLineEdit::textEdited, this, [this, set, what = stepName(info)](const QString& text) {
        document_->edit([&](Scenario& s) { set(s, text.toStdString()); }, what);
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

QComboBox* FieldForm::addNamedChoice(const FieldInfo& info, const QStringList& names, Getter<std::string> get,
                                     Setter<std::string> set) {
    auto* box = new QComboBox(this);
    box->addItems(names);
    connect(box, &QComboBox::currentIndexChanged, this, [this, box, set, what = stepName(info)](int) {
        const std::string v = box->currentText().toStdString();
        document_->edit([&](Scenario& s) { set(s, v); }, what);
    });
    refreshers_.push_back([this, box, get] {
        const QString v = QString::fromStdString(get(document_->scenario()));
        if (v == box->currentText()) return;
        QSignalBlocker block(box);
        if (box->findText(v) < 0) box->addItem(v);
        box->setCurrentIndex(box->findText(v));
    });
    addRow(info, box);
    return box;
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
