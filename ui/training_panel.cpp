#include "ui/training_panel.h"

#include <algorithm>

#include <QGridLayout>
#include <QVBoxLayout>

#include "core/activations/activations.h"
#include "core/scenario/batch.h"
#include "core/scenario/frameworks.h"
#include "core/model/parameters.h"
#include "ui/display_names.h"

namespace trainmem::ui {

namespace {

// Optional dtype overrides: "recipe default" or a dtype.
// The dtypes the scenario format accepts for each override.
Choices<int> dtypeOverrideChoices(std::initializer_list<DType> dtypes) {
    Choices<int> out{{QStringLiteral("recipe default"), -1}};
    for (DType d : dtypes) out.emplace_back(dtypeLabel(d), static_cast<int>(d));
    return out;
}
int fromOptional(const std::optional<DType>& d) { return d ? static_cast<int>(*d) : -1; }
std::optional<DType> toOptional(int v) { return v < 0 ? std::nullopt : std::optional<DType>(static_cast<DType>(v)); }

}  // namespace

TrainingPanel::TrainingPanel(ScenarioDocument* document, FieldBindings* bindings, QWidget* parent)
    : QGroupBox(tr("Training"), parent), document_(document) {
    auto* column = new QVBoxLayout(this);
    form_ = new FieldForm(document, bindings, this);
    column->addWidget(form_);
    FieldForm& f = *form_;

    // The stack first: choosing it sets its keys' defaults (core/scenario/frameworks.h);
    // the readout says which values came from it and which were changed.
    f.addChoice<Framework>({tr("Framework"), {"training.framework"},
                            tr("The training stack: sets what it does out of the box (precision, optimizer kernel, "
                               "checkpointing, loss, how FSDP wraps the model's ends; docs/frameworks.md). Keys "
                               "changed afterwards override it.")},
                           frameworkChoices(), [](const Scenario& s) { return s.training.framework; },
                           [](Scenario& s, Framework v) {
                               s.training.framework = v;
                               applyFrameworkDefaults(s, v);
                           });
    QLabel* from_framework = f.addReadout(tr("  from the framework"),
                 tr("Keys the framework sets; struck out: changed since (the scenario's value is used)."),
                 [this] {
                     QStringList parts;
                     bool struck = false;
                     for (const FrameworkValue& v : frameworkValues(document_->scenario())) {
                         const QString text = QString::fromStdString(v.key.substr(v.key.find('.') + 1) + " " + v.value);
                         parts << (v.overridden ? QStringLiteral("<s>%1</s>").arg(text.toHtmlEscaped()) : text.toHtmlEscaped());
                         struck = struck || v.overridden;
                     }
                     if (parts.isEmpty()) return tr("<i>nothing</i>");
                     // What the strike means, said where it is seen (issue 27).
                     const QString legend = struck ? tr("<br><small><i><s>struck out</s>: changed since; the field's "
                                                        "value is used</i></small>")
                                                   : QString();
                     return parts.join(QStringLiteral(", ")) + legend;
                 });
    from_framework->setTextFormat(Qt::RichText);
    from_framework->setWordWrap(true);

    f.addInteger({tr("Micro-batch"), {"training.micro_batch_size"},
                  tr("Sequences per GPU per forward pass. Activations grow linearly with it. Typical: 1-8 for LLM pre-training.")},
                 1, 1 << 20, [](const Scenario& s) { return s.training.micro_batch_size; },
                 [](Scenario& s, int64_t v) { s.training.micro_batch_size = v; });
    f.addInteger({tr("Sequence length"), {"training.sequence_length"},
                  tr("Tokens per sequence: 2048-8192 for pre-training, up to 128k for long-context stages. "
                     "Activations grow linearly (quadratically with eager attention).")},
                 1, 1 << 30, [](const Scenario& s) { return s.training.sequence_length; },
                 [](Scenario& s, int64_t v) { s.training.sequence_length = v; });
    f.addInteger({tr("Grad accumulation"), {"training.gradient_accumulation_steps"},
                  tr("Micro-batches per optimizer step on each data-parallel rank. Raises the effective batch without "
                     "raising activation memory (gradients stay allocated between micro-batches).")},
                 1, 1 << 20, [](const Scenario& s) { return s.training.gradient_accumulation_steps; },
                 [](Scenario& s, int64_t v) { s.training.gradient_accumulation_steps = v; });
    f.addChoice<Precision>({tr("Precision"), {"training.precision"},
                            tr("Which dtypes weights, gradients, master weights and optimizer states use. Mixed bf16 + fp32 "
                               "master (Megatron, DeepSpeed) is the usual LLM recipe; AMP keeps fp32 weights and grads; "
                               "pure bf16 (torchtune) keeps no fp32 copy.")},
                           precisionChoices(), [](const Scenario& s) { return s.training.precision; },
                           [](Scenario& s, Precision v) { s.training.precision = v; });
    f.addChoice<int>({tr("Gradient dtype"), {"training.grad_dtype"},
                      tr("Overrides the recipe's gradient dtype: fp32 for Megatron's main_grad accumulation.")},
                     dtypeOverrideChoices({DType::Fp32, DType::Bf16, DType::Fp16}),
                     [](const Scenario& s) { return fromOptional(s.training.grad_dtype); },
                     [](Scenario& s, int v) { s.training.grad_dtype = toOptional(v); });
    f.addChoice<int>({tr("Optimizer-state dtype"), {"training.optimizer_state_dtype"},
                      tr("Overrides the recipe's optimizer-state dtype (bf16 states halve Adam's 8 bytes per parameter).")},
                     dtypeOverrideChoices({DType::Fp32, DType::Bf16}),
                     [](const Scenario& s) { return fromOptional(s.training.optimizer_state_dtype); },
                     [](Scenario& s, int v) { s.training.optimizer_state_dtype = toOptional(v); });
    f.addChoice<OptimizerKind>({tr("Optimizer"), {"training.optimizer"},
                                tr("Adam/AdamW keep two states per parameter (m, v); SGD+momentum, Lion and Muon one; "
                                   "8-bit AdamW quantises m and v to one byte; Adafactor factors v.")},
                               optimizerChoices(), [](const Scenario& s) { return s.training.optimizer; },
                               [](Scenario& s, OptimizerKind v) { s.training.optimizer = v; });
    f.addChoice<OptimizerImpl>({tr("Optimizer kernel"), {"training.optimizer_impl"},
                                tr("PyTorch's foreach implementation (the default on CUDA) allocates temporaries as large as "
                                   "the parameters during step(); fused kernels do not.")},
                               optimizerImplChoices(), [](const Scenario& s) { return s.training.optimizer_impl; },
                               [](Scenario& s, OptimizerImpl v) { s.training.optimizer_impl = v; });
    f.addFlag({tr("  step in backward"), {"training.optimizer_in_backward"},
               tr("Optimizer step in backward (torchtune optimizer_in_bwd, torchtitan early_step_in_backward): "
                  "each gradient is applied and freed as soon as it is complete, so the gradients never exist in "
                  "full. Needs gradient accumulation 1.")},
              [](const Scenario& s) { return s.training.optimizer_in_backward; },
              [](Scenario& s, bool v) { s.training.optimizer_in_backward = v; });
    f.addChoice<Checkpointing>({tr("Checkpointing"), {"training.activation_checkpointing", "training.checkpointing"},
                                tr("Activation recomputation. Selective recomputes the attention core (Korthikanti et al. 2022); "
                                   "full keeps only each block's input and costs about one extra forward pass.")},
                               checkpointingChoices(), [](const Scenario& s) { return s.training.checkpointing; },
                               [](Scenario& s, Checkpointing v) { s.training.checkpointing = v; });
    checkpoint_every_ = f.addInteger({tr("  k"), {"training.checkpoint_every"},
                                      tr("Every k-th block: one block in every k (about sqrt(L) for the least memory x "
                                         "recompute); Megatron block: the first k blocks of each stage; Megatron uniform: chunks of k blocks, "
                                         "each recomputed together.")},
                                     1, 100000, [](const Scenario& s) { return s.training.checkpoint_every; },
                                     [](Scenario& s, int64_t v) { s.training.checkpoint_every = v; });
    // Op-level checkpointing's save list: one check box per op name the core knows.
    auto* save_ops = new QWidget(this);
    auto* save_grid = new QGridLayout(save_ops);
    save_grid->setContentsMargins(0, 0, 0, 0);
    save_grid->setSpacing(2);
    for (std::string_view op : checkpointSaveOpNames()) {
        auto* box = new QCheckBox(QString::fromUtf8(op.data(), static_cast<qsizetype>(op.size())), save_ops);
        save_grid->addWidget(box, static_cast<int>(save_op_boxes_.size()) / 2, static_cast<int>(save_op_boxes_.size()) % 2);
        save_op_boxes_.emplace_back(std::string(op), box);
        connect(box, &QCheckBox::toggled, this, [this] {
            std::vector<std::string> chosen;
            for (const auto& [n, b] : save_op_boxes_)
                if (b->isChecked()) chosen.push_back(n);
            document_->edit([&](Scenario& s) { s.training.checkpoint_save_ops = chosen; }, tr("Ops kept"));
        });
    }
    f.addRow({tr("  ops kept"), {"training.checkpoint_save_ops"},
              tr("Ops whose outputs op-level checkpointing keeps (the rest is recomputed in backward). torchtitan's "
                 "list: mm-every-second (the 1st, 3rd, ... matmul of a block), attention, reduce_scatter, max.")},
             save_ops);
    checkpoint_save_ops_ = save_ops;
    f.addChoice<ActivationOffloading>(
        {tr("  offloading"), {"training.activation_offloading"},
         tr("torchtune's activation offloading: what checkpointed blocks keep (their inputs, the final norm's "
            "tensors) waits for backward in host memory (shown as Host). With streams the device also keeps the "
            "copies in flight. Needs full checkpointing and eager kernels.")},
        {{tr("none"), ActivationOffloading::None},
         {tr("torchtune (streams)"), ActivationOffloading::Torchtune},
         {tr("torchtune, no streams"), ActivationOffloading::TorchtuneNoStreams}},
        [](const Scenario& s) { return s.training.activation_offloading; },
        [](Scenario& s, ActivationOffloading v) { s.training.activation_offloading = v; });
    f.addFlag({tr("  DeepSpeed partition"), {"training.deepspeed_partition_activations"},
               tr("DeepSpeed partition_activations: each checkpointed block's input is split over the tensor-parallel "
                  "ranks and all-gathered before its recomputation. Needs full checkpointing.")},
              [](const Scenario& s) { return s.training.deepspeed_partition_activations; },
              [](Scenario& s, bool v) { s.training.deepspeed_partition_activations = v; });
    f.addFlag({tr("  DeepSpeed to CPU"), {"training.deepspeed_cpu_checkpointing"},
               tr("DeepSpeed cpu_checkpointing: the checkpointed blocks' inputs (or their partitions) wait in host "
                  "memory (shown as Host) and come back for recomputation. Needs full checkpointing.")},
              [](const Scenario& s) { return s.training.deepspeed_cpu_checkpointing; },
              [](Scenario& s, bool v) { s.training.deepspeed_cpu_checkpointing = v; });
    f.addChoice<AttentionImpl>({tr("Attention"), {"training.attention"},
                                tr("Flash/SDPA keeps no s x s scores (only q, k, v, output and a logsumexp); eager attention "
                                   "saves the softmax of every head: quadratic in sequence length.")},
                               attentionChoices(), [](const Scenario& s) { return s.training.attention; },
                               [](Scenario& s, AttentionImpl v) { s.training.attention = v; });
    f.addChoice<KernelProfile>({tr("Kernels"), {"training.kernels"},
                                tr("What the block's other ops save: eager PyTorch (HF modeling files, fp32 norm upcasts), "
                                   "fused kernels (Liger, Apex, Transformer Engine), Megatron-LM's accounting, or torch.compile "
                                   "per block (what AOTAutograd's min-cut partitioner keeps). "
                                   "The loss is chosen apart (Loss).")},
                               kernelChoices(), [](const Scenario& s) { return s.training.kernels; },
                               [](Scenario& s, KernelProfile v) { s.training.kernels = v; });
    f.addChoice<LossImpl>({tr("Loss"), {"training.loss"},
                           tr("Standard cross-entropy materialises fp32 logits (4 x seq x batch x vocab bytes); "
                              "chunked cross-entropy works on sequence chunks; torchtune's chunked output runs the "
                              "LM head and the loss chunk by chunk; Liger's fused linear cross-entropy never "
                              "materialises the logits; Megatron-LM's vocab-parallel cross-entropy (fused or not) "
                              "keeps one fp32 softmax. Independent of the kernel profile, but for Standard under "
                              "Megatron-LM's, which is Megatron's loss.")},
                          lossChoices(), [](const Scenario& s) { return s.training.loss; },
                          [](Scenario& s, LossImpl v) { s.training.loss = v; });
    loss_chunks_ = f.addInteger({tr("  chunks"), {"training.loss_chunks"}, tr("Sequence chunks of the chunked losses (torchtune: 8).")},
                                1, 1 << 20, [](const Scenario& s) { return s.training.loss_chunks; },
                                [](Scenario& s, int64_t v) { s.training.loss_chunks = v; });
    f.addChoice<Finetuning>({tr("Fine-tuning"), {"training.finetuning"},
                             tr("Full training, LoRA adapters on a frozen 16-bit base, or QLoRA on a 4-bit NF4 base.")},
                            finetuningChoices(), [](const Scenario& s) { return s.training.finetuning; },
                            [](Scenario& s, Finetuning v) { s.training.finetuning = v; });
    lora_rank_ = f.addInteger({tr("  LoRA rank"), {"training.lora_rank"}, tr("Adapter rank r: 8-64 typical; each adapter adds r x (in + out) parameters.")},
                              1, 1 << 16, [](const Scenario& s) { return s.training.lora_rank; },
                              [](Scenario& s, int64_t v) { s.training.lora_rank = v; });
    lora_dropout_ = f.addReal({tr("  LoRA dropout"), {"training.lora_dropout"}, tr("Dropout on the adapter input (PEFT lora_dropout: 0.05 typical).")},
                              0, 1, 2, 0.05, [](const Scenario& s) { return s.training.lora_dropout; },
                              [](Scenario& s, double v) { s.training.lora_dropout = v; });

    // Targets: one check box per module name the core knows.
    auto* targets = new QWidget(this);
    auto* grid = new QGridLayout(targets);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setSpacing(2);
    int index = 0;
    for (const std::string& name : loraTargetNames()) {
        auto* box = new QCheckBox(QString::fromStdString(name), targets);
        grid->addWidget(box, index / 2, index % 2);
        ++index;
        target_boxes_.emplace_back(name, box);
        connect(box, &QCheckBox::toggled, this, [this] {
            std::vector<std::string> chosen;
            for (const auto& [n, b] : target_boxes_)
                if (b->isChecked()) chosen.push_back(n);
            document_->edit([&](Scenario& s) { s.training.lora_targets = chosen; }, tr("LoRA targets"));
        });
    }
    f.addRow({tr("  LoRA targets"), {"training.lora_targets"},
              tr("Modules that get adapters: attention projections (q, k, v, o) and/or MLP matrices; all-linear = every one.")},
             targets);
    lora_targets_ = targets;

    // Batch and learning rate (the seed lecture notes' large-batch rules).
    QSpinBox* base_batch = f.addInteger({tr("Base batch"), {"training.base_batch_size"},
                  tr("Batch size the base learning rate was tuned at (B0); 0 = no learning-rate scaling shown.")},
                 0, 1 << 30, [](const Scenario& s) { return s.training.base_batch_size.value_or(0); },
                 [](Scenario& s, int64_t v) { s.training.base_batch_size = v > 0 ? std::optional<int64_t>(v) : std::nullopt; });
    base_batch->setMinimum(0);  // the special text shows at the minimum, 0
    base_batch->setSpecialValueText(tr("none"));
    QDoubleSpinBox* base_lr = f.addReal({tr("Base learning rate"), {"training.base_learning_rate"},
               tr("Learning rate tuned at the base batch (e.g. 3e-4); 0 = none.")},
              0, 10, 6, 1e-4, [](const Scenario& s) { return s.training.base_learning_rate.value_or(0.0); },
              [](Scenario& s, double v) { s.training.base_learning_rate = v > 0 ? std::optional<double>(v) : std::nullopt; });
    base_lr->setMinimum(0);  // the special text shows at the minimum, 0
    base_lr->setSpecialValueText(tr("none"));
    f.addInteger({tr("Warmup steps"), {"training.warmup_steps"},
                  tr("Gradual warmup: lr_t = lr x t / T_w for the first T_w steps (Goyal et al. 2017).")},
                 0, 1 << 30, [](const Scenario& s) { return s.training.warmup_steps; },
                 [](Scenario& s, int64_t v) { s.training.warmup_steps = v; });
    f.addReadout(tr("Scaled LR"),
                 tr("For the effective batch B: linear rule lr x B / B0 (SGD, Goyal et al. 2017); square-root rule "
                    "lr x sqrt(B / B0) (adaptive optimizers)."),
                 [this] {
                     const BatchPlan plan = planBatch(document_->scenario());
                     if (!plan.lr_linear || !plan.lr_sqrt) return tr("<i>set a base batch and learning rate</i>");
                     return tr("linear %1, sqrt %2 at batch %3")
                         .arg(*plan.lr_linear, 0, 'g', 3)
                         .arg(*plan.lr_sqrt, 0, 'g', 3)
                         .arg(plan.effective_batch);
                 });

    // QLoRA backend and paged optimizer states (docs/memory-model.md).
    qlora_backend_ = f.addChoice<QloraBackend>({tr("QLoRA backend"), {"training.qlora_backend"},
                               tr("The 4-bit base of QLoRA: bitsandbytes from 0.43.2, older bitsandbytes (keeps each "
                                  "4-bit layer's input for backward), or torchao NF4 (torchtune).")},
                              {{tr("bitsandbytes"), QloraBackend::Bnb},
                               {tr("bitsandbytes < 0.43.2"), QloraBackend::BnbLegacy},
                               {tr("torchao NF4"), QloraBackend::TorchaoNf4}},
                              [](const Scenario& s) { return s.training.qlora_backend; },
                              [](Scenario& s, QloraBackend v) { s.training.qlora_backend = v; });
    f.addFlag({tr("Paged optimizer"), {"training.optimizer_paged"},
               tr("bitsandbytes Paged* optimizers: states of large tensors in CUDA managed memory, counted in the "
                  "device total but not in PyTorch's allocated or reserved memory.")},
              [](const Scenario& s) { return s.training.optimizer_paged; },
              [](Scenario& s, bool v) { s.training.optimizer_paged = v; });

    connect(document_, &ScenarioDocument::changed, this, &TrainingPanel::refresh);
    refresh();
}

void TrainingPanel::refresh() {
    const TrainingConfig& t = document_->scenario().training;
    form_->refresh();
    form_->setRowVisible(checkpoint_every_, checkpointsSomeLayers(t.checkpointing));
    form_->setRowVisible(checkpoint_save_ops_, t.checkpointing == Checkpointing::Op);
    for (const auto& [name, box] : save_op_boxes_) {
        const bool on = std::find(t.checkpoint_save_ops.begin(), t.checkpoint_save_ops.end(), name) !=
                        t.checkpoint_save_ops.end();
        if (box->isChecked() != on) {
            QSignalBlocker block(box);
            box->setChecked(on);
        }
    }
    form_->setRowVisible(loss_chunks_, t.loss == LossImpl::Chunked || t.loss == LossImpl::ChunkedOutput);
    const bool lora = t.finetuning != Finetuning::Full;
    for (QWidget* w : {lora_rank_, lora_dropout_, lora_targets_}) form_->setRowVisible(w, lora);
    form_->setRowVisible(qlora_backend_, t.finetuning == Finetuning::Qlora || t.qlora_backend != TrainingConfig().qlora_backend);
    // Only this architecture's module names (GPT-2 has c_attn, not gate_proj);
    // a chosen name it lacks stays shown, so it can be unticked.
    const std::vector<std::string> names = loraTargetNames(document_->scenario().model);
    std::vector<std::string> offered;
    for (const auto& [name, box] : target_boxes_)
        if (std::find(names.begin(), names.end(), name) != names.end() ||
            std::find(t.lora_targets.begin(), t.lora_targets.end(), name) != t.lora_targets.end())
            offered.push_back(name);
    if (offered != offered_targets_) {
        // Re-lay the grid with only the offered boxes, two per row, no holes.
        auto* grid = static_cast<QGridLayout*>(lora_targets_->layout());
        for (const auto& [name, box] : target_boxes_) grid->removeWidget(box);
        int index = 0;
        for (const auto& [name, box] : target_boxes_) {
            const bool shown = std::find(offered.begin(), offered.end(), name) != offered.end();
            box->setVisible(shown);
            if (shown) {
                grid->addWidget(box, index / 2, index % 2);
                ++index;
            }
        }
        offered_targets_ = offered;
    }
    for (const auto& [name, box] : target_boxes_) {
        const bool on = std::find(t.lora_targets.begin(), t.lora_targets.end(), name) != t.lora_targets.end();
        if (box->isChecked() != on) {
            QSignalBlocker block(box);
            box->setChecked(on);
        }
    }
}

}  // namespace trainmem::ui
