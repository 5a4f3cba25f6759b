#pragma once
// Batch, precision recipe, optimizer, recomputation, kernels, loss and
// fine-tuning method.
#include <vector>

#include <QGroupBox>

#include "ui/field_form.h"

namespace trainmem::ui {

class TrainingPanel : public QGroupBox {
    Q_OBJECT
public:
    TrainingPanel(ScenarioDocument* document, FieldBindings* bindings, QWidget* parent = nullptr);

private:
    void refresh();

    ScenarioDocument* document_;
    FieldForm* form_;
    QWidget* checkpoint_every_;
    QWidget* checkpoint_save_ops_;
    QWidget* loss_chunks_;
    QWidget* lora_rank_;
    QWidget* lora_dropout_;
    QWidget* lora_targets_;
    QWidget* qlora_backend_ = nullptr;  // QLoRA only, unless set away from its default
    std::vector<std::pair<std::string, QCheckBox*>> target_boxes_;
    std::vector<std::pair<std::string, QCheckBox*>> save_op_boxes_;  // training.checkpoint_save_ops
    std::vector<std::string> offered_targets_;  // the names laid out in the grid now
};

}  // namespace trainmem::ui
