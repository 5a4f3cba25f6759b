#include "ui/hardware_panel.h"

#include <cmath>

#include <QToolButton>
#include <QVBoxLayout>

#include "core/training/hardware.h"

namespace trainmem::ui {

namespace {

constexpr double kMiBd = 1024.0 * 1024.0;
constexpr double kGiBd = 1024.0 * kMiBd;
const QString& kCustom = GpuChoice::kCustom;

int64_t fromMiB(double v) { return static_cast<int64_t>(std::llround(v * kMiBd)); }

}  // namespace

HardwarePanel::HardwarePanel(ScenarioDocument* document, FieldBindings* bindings, QWidget* parent)
    : QGroupBox(tr("Hardware"), parent), document_(document) {
    auto* column = new QVBoxLayout(this);
    form_ = new FieldForm(document, bindings, this);
    column->addWidget(form_);

    // GPU: catalogue names plus "custom"; the combo's data is the name itself.
    auto* gpu = new GpuChoice(true, form_);
    connect(gpu, &QComboBox::currentIndexChanged, this, [this, gpu](int) {
        const std::string name = gpu->currentData().toString().toStdString();
        document_->edit([&](Scenario& s) {
            s.hardware.gpu = name;
            if (name == kCustom.toStdString()) {
                if (!s.hardware.memory_bytes) s.hardware.memory_bytes = 80 * kGiB;
            } else {
                s.hardware.memory_bytes.reset();
            }
        }, tr("GPU"));
    });
    form_->addRow({tr("GPU"), {"hardware.gpu"}, tr("Device whose memory the estimate must fit into, as cudaMemGetInfo reports its total.")},
                  gpu);
    custom_memory_ = form_->addReal(
        {tr("  memory"), {"hardware.memory_gib"}, tr("Usable device memory of the custom GPU.")}, 1, 100000, 1, 1,
        [](const Scenario& s) { return s.hardware.memory_bytes.value_or(0) / kGiBd; },
        [](Scenario& s, double v) { s.hardware.memory_bytes = static_cast<int64_t>(std::llround(v * kGiBd)); }, tr(" GiB"));
    gpu_ = gpu;

    expander_ = new QToolButton(this);
    expander_->setText(tr("Advanced"));
    expander_->setCheckable(true);
    expander_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    expander_->setArrowType(Qt::RightArrow);
    expander_->setAutoRaise(true);
    expander_->setToolTip(tr("Overheads beside the model's tensors. Defaults and sources: docs/memory-model.md, Overheads."));
    column->addWidget(expander_);
    advanced_ = new FieldForm(document, bindings, this);
    advanced_->setVisible(false);
    column->addWidget(advanced_);
    connect(expander_, &QToolButton::toggled, this, [this](bool open) {
        advanced_->setVisible(open);
        expander_->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
    });

    FieldForm& a = *advanced_;
    a.addReal({tr("CUDA context"), {"hardware.cuda_context_mib"},
               tr("CUDA context and kernel images, outside PyTorch's allocator: about 300-500 MiB with lazy loading, over 1 GiB on old CUDA.")},
              0, 1e6, 0, 50, [](const Scenario& s) { return s.hardware.overheads.cuda_context_bytes / kMiBd; },
              [](Scenario& s, double v) { s.hardware.overheads.cuda_context_bytes = fromMiB(v); }, tr(" MiB"));
    a.addFlag({tr("GPU's cuBLAS default"), {}, tr("Use the GPU's default cuBLAS workspace (8 MiB per handle and stream, 32 MiB on Hopper).")},
              [](const Scenario& s) { return !s.hardware.overheads.cublas_workspace_bytes.has_value(); },
              [](Scenario& s, bool v) {
                  if (v)
                      s.hardware.overheads.cublas_workspace_bytes.reset();
                  else if (!s.hardware.overheads.cublas_workspace_bytes)
                      s.hardware.overheads.cublas_workspace_bytes = 32 * kMiB;
              });
    cublas_ = a.addReal({tr("  cuBLAS workspace"), {"hardware.cublas_workspace_mib"},
                         tr("cuBLAS workspace per handle and stream, inside the allocator (CUBLAS_WORKSPACE_CONFIG): PyTorch's default is "
                            "8.1 MiB (:4096:2:16:8), 32 MiB on Hopper and later.")},
                        0, 1e5, 1, 1, [](const Scenario& s) { return s.hardware.overheads.cublas_workspace_bytes.value_or(0) / kMiBd; },
                        [](Scenario& s, double v) { s.hardware.overheads.cublas_workspace_bytes = fromMiB(v); }, tr(" MiB"));
    a.addReal({tr("NCCL per group"), {"hardware.nccl_mib_per_group"},
               tr("NCCL buffers per communicator of size > 1, outside the allocator: users measure 0.5-1.6 GiB each.")},
              0, 1e6, 0, 50, [](const Scenario& s) { return s.hardware.overheads.nccl_bytes_per_group / kMiBd; },
              [](Scenario& s, double v) { s.hardware.overheads.nccl_bytes_per_group = fromMiB(v); }, tr(" MiB"));
    a.addReal({tr("DDP bucket"), {"hardware.ddp_bucket_mib"},
               tr("DDP bucket_cap_mb (25 MiB default).")},
              0, 1e5, 0, 5, [](const Scenario& s) { return s.hardware.overheads.ddp_bucket_bytes / kMiBd; },
              [](Scenario& s, double v) { s.hardware.overheads.ddp_bucket_bytes = fromMiB(v); }, tr(" MiB"));
    a.addFlag({tr("Grads as bucket view"), {"hardware.ddp_gradient_as_bucket_view"},
               tr("DDP gradient_as_bucket_view=True: gradients live inside the buckets instead of a second copy.")},
              [](const Scenario& s) { return s.hardware.overheads.ddp_gradient_as_bucket_view; },
              [](Scenario& s, bool v) { s.hardware.overheads.ddp_gradient_as_bucket_view = v; });
    a.addInteger({tr("FSDP prefetch units"), {"hardware.fsdp_prefetch_units"},
                  tr("ZeRO-3/FSDP: units all-gathered ahead of the one computing (1 = FSDP's default forward prefetch).")},
                 0, 64, [](const Scenario& s) { return s.hardware.overheads.fsdp_prefetch_units; },
                 [](Scenario& s, int64_t v) { s.hardware.overheads.fsdp_prefetch_units = v; });
    a.addReal({tr("Fragmentation"), {"hardware.fragmentation"},
               tr("(reserved - allocated) / allocated at the peak: 15% average, up to 33%, over 8 LLMs (GMLake, ASPLOS'24); "
                  "expandable_segments lowers it.")},
              0, 200, 1, 1, [](const Scenario& s) { return s.hardware.overheads.fragmentation * 100; },
              [](Scenario& s, double v) { s.hardware.overheads.fragmentation = v / 100; }, tr(" %"));

    // The interconnect the step time reads (docs/step-time.md); 0 = the
    // GPU's reference system.
    a.addInteger({tr("GPUs per node"), {"hardware.gpus_per_node"},
                  tr("GPUs behind one NVLink / Infinity Fabric domain; groups larger than it cross the network.")},
                 0, 65536, [](const Scenario& s) { return s.hardware.gpus_per_node.value_or(0); },
                 [](Scenario& s, int64_t v) {
                     if (v > 0) s.hardware.gpus_per_node = v;
                     else s.hardware.gpus_per_node.reset();
                 })
        ->setSpecialValueText(tr("GPU's"));
    a.addReal({tr("Scale-up"), {"hardware.scale_up_gb_s"},
               tr("NVLink / Infinity Fabric bandwidth per GPU, two-way total as datasheets give it.")},
              0, 1e6, 0, 50, [](const Scenario& s) { return s.hardware.scale_up_gb_s.value_or(0); },
              [](Scenario& s, double v) {
                  if (v > 0) s.hardware.scale_up_gb_s = v;
                  else s.hardware.scale_up_gb_s.reset();
              }, tr(" GB/s"))
        ->setSpecialValueText(tr("GPU's"));
    a.addReal({tr("Scale-out"), {"hardware.scale_out_gb_s"},
               tr("Network bandwidth per GPU, one way (400 Gb/s = 50 GB/s).")},
              0, 1e6, 1, 5, [](const Scenario& s) { return s.hardware.scale_out_gb_s.value_or(0); },
              [](Scenario& s, double v) {
                  if (v > 0) s.hardware.scale_out_gb_s = v;
                  else s.hardware.scale_out_gb_s.reset();
              }, tr(" GB/s"))
        ->setSpecialValueText(tr("GPU's"));

    connect(document_, &ScenarioDocument::changed, this, &HardwarePanel::refresh);
    refresh();
}

void HardwarePanel::refresh() {
    const HardwareConfig& h = document_->scenario().hardware;
    form_->refresh();
    advanced_->refresh();
    const int index = gpu_->findData(QString::fromStdString(h.gpu));
    if (index != gpu_->currentIndex()) {
        QSignalBlocker block(gpu_);
        gpu_->setCurrentIndex(index);
    }
    form_->setRowVisible(custom_memory_, h.gpu == kCustom.toStdString());
    advanced_->setRowVisible(cublas_, h.overheads.cublas_workspace_bytes.has_value());
}

void HardwarePanel::setUnits(Units units) {
    gpu_->setUnits(units);
}

}  // namespace trainmem::ui
