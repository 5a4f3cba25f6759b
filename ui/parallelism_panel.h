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
    // ZeRO-3 (FSDP) only: hidden under ZeRO 0-2 while at their defaults.
    QWidget* offload_parameters_ = nullptr;
    QWidget* reshard_ = nullptr;
    QWidget* reshard_ranks_ = nullptr;
    QWidget* fsdp_sync_ = nullptr;
    QWidget* fsdp_ends_ = nullptr;
};

}  // namespace trainmem::ui
