#pragma once
// Data, tensor (+ sequence), pipeline (schedule, virtual stages, micro-batches),
// context and expert parallelism, ZeRO stage and offload, with the GPU count
// and effective batch they imply.
#include <QGroupBox>

#include "ui/field_form.h"

namespace trainmem::ui {

class ParallelismPanel : public QGroupBox {
    Q_OBJECT
public:
    ParallelismPanel(ScenarioDocument* document, FieldBindings* bindings, QWidget* parent = nullptr);

private:
    void refresh();

    ScenarioDocument* document_;
    FieldForm* form_;
    QWidget* schedule_;
    QWidget* virtual_stages_;
    QWidget* microbatches_;
    QWidget* shard_group_;
};

}  // namespace trainmem::ui
