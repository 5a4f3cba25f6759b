#pragma once
// The GPU (catalogue or a custom size) and, under "Advanced", the fixed costs
// beside the model's tensors: CUDA context, cuBLAS workspace, NCCL and DDP
// buffers, FSDP prefetch and allocator fragmentation.
#include <QGroupBox>

#include "core/report/report.h"
#include "ui/field_form.h"
#include "ui/gpu_choice.h"

class QComboBox;
class QToolButton;

namespace trainmem::ui {

class HardwarePanel : public QGroupBox {
    Q_OBJECT
public:
    HardwarePanel(ScenarioDocument* document, FieldBindings* bindings, QWidget* parent = nullptr);
    // The GPU list shows each device's memory in the app's units.
    void setUnits(Units units);
    QComboBox* gpuList() const { return gpu_; }

private:
    void refresh();

    ScenarioDocument* document_;
    FieldForm* form_;
    GpuChoice* gpu_;
    QWidget* custom_memory_;
    QToolButton* expander_;
    FieldForm* advanced_;
    QWidget* cublas_;
};

}  // namespace trainmem::ui
