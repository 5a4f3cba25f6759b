#pragma once
// A form of inputs bound to fields of the open scenario. Each row knows how
// to read its field from a Scenario and how to write it back; the form writes
// through ScenarioDocument::edit (which ignores no-op edits) and reloads its
// widgets from the scenario with signals blocked, so widget and document can
// never ping-pong.
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QWidget>

#include "core/scenario/scenario.h"
#include "ui/field_bindings.h"
#include "ui/scenario_document.h"

namespace trainmem::ui {

template <class T>
using Getter = std::function<T(const Scenario&)>;
template <class T>
using Setter = std::function<void(Scenario&, T)>;

// What a row is called and what its tooltip says; `fields` are the dotted
// paths the core uses for it in errors (first one is the canonical key).
struct FieldInfo {
    QString label;
    QStringList fields;
    QString tip;  // what it is, typical values
};

// How many characters a choice shows before the column must widen: a combo
// box sized to its longest entry ("AMP bf16 with fp32 master weights") made
// the column ~490 px, half a 1000 px window. The open list still shows each
// entry whole, and the current one's full text is in the tooltip.
constexpr int kFieldChars = 16;
// Lets a field's widget narrow to that (combo boxes) or wrap (read-outs).
void letShrink(QWidget* widget);

class FieldForm : public QWidget {
    Q_OBJECT
public:
    FieldForm(ScenarioDocument* document, FieldBindings* bindings, QWidget* parent = nullptr);

    QSpinBox* addInteger(const FieldInfo& info, int minimum, int maximum, Getter<int64_t> get, Setter<int64_t> set);
    QDoubleSpinBox* addReal(const FieldInfo& info, double minimum, double maximum, int decimals, double step,
                            Getter<double> get, Setter<double> set, const QString& suffix = {});
    QCheckBox* addFlag(const FieldInfo& info, Getter<bool> get, Setter<bool> set);
    QLineEdit* addText(const FieldInfo& info, Getter<std::string> get, Setter<std::string> set);
    // A choice among names (an activation function): nothing else can be
    // typed. A name read from a file that is not in the list is shown as it
    // is, added at the end, so loading never changes it silently.
    QComboBox* addNamedChoice(const FieldInfo& info, const QStringList& names, Getter<std::string> get,
                              Setter<std::string> set);

    // A choice among enum values, shown by name.
    template <class E>
    QComboBox* addChoice(const FieldInfo& info, const std::vector<std::pair<QString, E>>& choices, Getter<E> get,
                         Setter<E> set) {
        auto* box = new QComboBox(this);
        for (const auto& [name, value] : choices) box->addItem(name, static_cast<int>(value));
        connect(box, &QComboBox::currentIndexChanged, this, [this, box, set, what = info.label.trimmed()](int) {
            const E value = static_cast<E>(box->currentData().toInt());
            document_->edit([&](Scenario& s) { set(s, value); }, what);
        });
        refreshers_.push_back([this, box, get] {
            const int index = box->findData(static_cast<int>(get(document_->scenario())));
            if (index != box->currentIndex()) {
                QSignalBlocker block(box);
                box->setCurrentIndex(index);
            }
        });
        addRow(info, box);
        return box;
    }

    // A row that shows but does not edit (derived values such as GPU count).
    QLabel* addReadout(const QString& label, const QString& tip, std::function<QString()> text);
    // Any other widget, bound for error marks only.
    void addRow(const FieldInfo& info, QWidget* widget);
    // Shows or hides a row with its label (fields that apply only sometimes).
    void setRowVisible(QWidget* field, bool visible);

    // Reloads every widget from the document's scenario, emitting nothing.
    void refresh();

private:
    ScenarioDocument* document_;
    FieldBindings* bindings_;
    QFormLayout* layout_;
    std::vector<std::function<void()>> refreshers_;
};

}  // namespace trainmem::ui
