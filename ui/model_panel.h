#pragma once
// Every architecture field of the model, one widget per row of the
// model-field table (core/model/model_fields.h); the MoE block only for MoE
// models, the MLA block only for MLA models, and a hybrid's mixer sizes only
// for hybrids (with its layer pattern above them).
#include <array>
#include <optional>
#include <string>

#include <QGroupBox>

#include "core/model/model_fields.h"

#include "ui/field_form.h"

class QCheckBox;
class QToolButton;

namespace trainmem::ui {

class LayerPatternStrip;

class ModelPanel : public QGroupBox {
    Q_OBJECT
public:
    ModelPanel(ScenarioDocument* document, FieldBindings* bindings, QWidget* parent = nullptr);
    // Opens or closes the architecture fields (closed at start).
    void setArchitectureShown(bool shown);
    bool architectureShown() const;
    // The widget that edits the field.
    QWidget* fieldWidget(ModelField field) const;

private:
    void refresh();
    QWidget* addField(FieldForm* form, const ModelFieldRow& row);
    // Binds the family's own key spellings to their widgets (errors name those).
    void bindFamily(const std::string& family);

    ScenarioDocument* document_;
    FieldBindings* bindings_;
    std::array<QWidget*, kModelFieldCount> widgets_{};
    std::optional<std::string> bound_family_;
    FieldForm* shape_;  // every dense-model field, in one form so labels align
    QCheckBox* moe_toggle_;
    QGroupBox* moe_box_;
    FieldForm* moe_;
    QCheckBox* mla_toggle_;
    QGroupBox* mla_box_;
    FieldForm* mla_;
    QGroupBox* mixers_box_;  // a hybrid's Gated DeltaNet, Mamba-2 and short-conv sizes
    FieldForm* mixers_;
    QLabel* parameters_;
    LayerPatternStrip* pattern_;  // a hybrid's layers by kind and stage
    QToolButton* expander_;
    QWidget* architecture_;
};

}  // namespace trainmem::ui
