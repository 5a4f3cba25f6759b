#pragma once
// Every architecture field of the model; the MoE block only for MoE models
// and the MLA block only for MLA models.
#include <QGroupBox>

#include "ui/field_form.h"

class QCheckBox;
class QToolButton;

namespace trainmem::ui {

class ModelPanel : public QGroupBox {
    Q_OBJECT
public:
    ModelPanel(ScenarioDocument* document, FieldBindings* bindings, QWidget* parent = nullptr);
    // Opens or closes the architecture fields (closed at start).
    void setArchitectureShown(bool shown);
    bool architectureShown() const;

private:
    void refresh();

    ScenarioDocument* document_;
    FieldForm* shape_;  // every dense-model field, in one form so labels align
    QCheckBox* moe_toggle_;
    QGroupBox* moe_box_;
    FieldForm* moe_;
    QCheckBox* mla_toggle_;
    QGroupBox* mla_box_;
    FieldForm* mla_;
    QLabel* parameters_;
    QToolButton* expander_;
    QWidget* architecture_;
};

}  // namespace trainmem::ui
