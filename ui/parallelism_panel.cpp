#include "ui/parallelism_panel.h"

#include <QVBoxLayout>

#include "core/scenario/batch.h"
#include "ui/display_names.h"

namespace trainmem::ui {

namespace {

// A scenario file may state its GPU count as a check on the degrees; while the
// degrees are edited here, that count follows them instead of turning every
// edit into "8 GPUs given, but ... = 16".
void setDegree(Scenario& s, int64_t ParallelConfig::*degree, int64_t value) {
    s.parallelism.*degree = value;
    if (s.parallelism.gpus) s.parallelism.gpus = s.parallelism.totalGpus();
}

}  // namespace

ParallelismPanel::ParallelismPanel(ScenarioDocument* document, FieldBindings* bindings, QWidget* parent)
    : QGroupBox(tr("Parallelism"), parent), document_(document) {
    auto* column = new QVBoxLayout(this);
    form_ = new FieldForm(document, bindings, this);
    column->addWidget(form_);
    FieldForm& f = *form_;
    constexpr int kMaxDegree = 1 << 20;

    QLabel* gpus = f.addReadout(tr("GPUs"), tr("data x tensor x pipeline x context"), [this] {
        const ParallelConfig& p = document_->scenario().parallelism;
        // "×" as the chart writes it: "x" made the label wrap when TP changed.
        return tr("<b>%1</b> = %2 DP × %3 TP × %4 PP × %5 CP").arg(p.totalGpus()).arg(p.data).arg(p.tensor).arg(p.pipeline).arg(p.context);
    });
    bindings->bind({"parallelism.gpus"}, gpus);
    f.addReadout(tr("Effective batch"), tr("Sequences per optimizer step: micro-batch x accumulation (or pipeline micro-batches) x data parallel."),
                 [this] {
                     const BatchPlan plan = planBatch(document_->scenario());
                     return tr("<b>%1</b> sequences, %2 tokens per step")
                         .arg(plan.effective_batch)
                         .arg(QLocale().toString(static_cast<qlonglong>(plan.tokens_per_step)));
                 });
    f.addInteger({tr("Data parallel"), {"parallelism.data"},
                  tr("DP: model replicas (or ZeRO shards) each on its own data. 8-1024 in large runs.")},
                 1, kMaxDegree, [](const Scenario& s) { return s.parallelism.data; },
                 [](Scenario& s, int64_t v) { setDegree(s, &ParallelConfig::data, v); });
    f.addChoice<int64_t>({tr("ZeRO stage"), {"parallelism.zero_stage"},
                          tr("0 = plain DDP; 1 shards optimizer states (and master weights) over DP; 2 also gradients; "
                             "3 (FSDP full shard) also weights, gathering one unit at a time.")},
                         {{tr("0 (DDP)"), 0}, {tr("1 (optimizer states)"), 1}, {tr("2 (+ gradients)"), 2}, {tr("3 / FSDP (+ weights)"), 3}},
                         [](const Scenario& s) { return s.parallelism.zero_stage; },
                         [](Scenario& s, int64_t v) { s.parallelism.zero_stage = v; });
    QSpinBox* shard_group = f.addInteger({tr("  shard group"), {"parallelism.shard_group"},
                                 tr("Hybrid sharding (HSDP): ranks per shard group; 0 = shard over all data x context ranks.")},
                                0, kMaxDegree, [](const Scenario& s) { return s.parallelism.shard_group; },
                                [](Scenario& s, int64_t v) { s.parallelism.shard_group = v; });
    shard_group->setMinimum(0);  // the special text shows at the minimum, 0
    shard_group->setSpecialValueText(tr("all DP x CP ranks"));
    shard_group_ = shard_group;
    f.addInteger({tr("Tensor parallel"), {"parallelism.tensor"},
                  tr("TP (Megatron): splits attention heads and MLP columns over t GPUs of a node; 1-8. Must divide the heads.")},
                 1, kMaxDegree, [](const Scenario& s) { return s.parallelism.tensor; },
                 [](Scenario& s, int64_t v) { setDegree(s, &ParallelConfig::tensor, v); });
    f.addFlag({tr("  sequence parallel"), {"parallelism.sequence_parallel"},
               tr("Megatron SP: norm and dropout activations are split over the tensor ranks too (Korthikanti et al. 2022).")},
              [](const Scenario& s) { return s.parallelism.sequence_parallel; },
              [](Scenario& s, bool v) { s.parallelism.sequence_parallel = v; });
    f.addInteger({tr("Pipeline parallel"), {"parallelism.pipeline"},
                  tr("PP: layers split into p stages; the first stages hold the most in-flight micro-batches.")},
                 1, kMaxDegree, [](const Scenario& s) { return s.parallelism.pipeline; },
                 [](Scenario& s, int64_t v) { setDegree(s, &ParallelConfig::pipeline, v); });
    schedule_ = f.addChoice<PipelineSchedule>({tr("  schedule"), {"parallelism.pipeline_schedule", "parallelism.schedule"},
                                               tr("1F1B keeps p - i micro-batches in flight on stage i; interleaved 1F1B "
                                                  "with v chunks a little more on stage 0; GPipe all m.")},
                                              scheduleChoices(), [](const Scenario& s) { return s.parallelism.schedule; },
                                              [](Scenario& s, PipelineSchedule v) { s.parallelism.schedule = v; });
    virtual_stages_ = f.addInteger({tr("  virtual stages"), {"parallelism.virtual_stages"},
                                    tr("Model chunks per pipeline rank for interleaved 1F1B (v); 1 otherwise.")},
                                   1, 1024, [](const Scenario& s) { return s.parallelism.virtual_stages; },
                                   [](Scenario& s, int64_t v) { s.parallelism.virtual_stages = v; });
    QSpinBox* microbatches = f.addInteger({tr("  micro-batches"), {"parallelism.microbatches"},
                                  tr("Micro-batches per step through the pipeline (m); 0 = the gradient accumulation steps. "
                                     "Fewer than p leaves a bubble.")},
                                 0, 1 << 20, [](const Scenario& s) { return s.parallelism.microbatches; },
                                 [](Scenario& s, int64_t v) { s.parallelism.microbatches = v; });
    microbatches->setMinimum(0);  // the special text shows at the minimum, 0
    microbatches->setSpecialValueText(tr("= grad accumulation"));
    microbatches_ = microbatches;
    f.addInteger({tr("Context parallel"), {"parallelism.context"},
                  tr("CP: each sequence split over c GPUs (ring attention) for long contexts; 1-16.")},
                 1, kMaxDegree, [](const Scenario& s) { return s.parallelism.context; },
                 [](Scenario& s, int64_t v) { setDegree(s, &ParallelConfig::context, v); });
    f.addInteger({tr("Expert parallel"), {"parallelism.expert"},
                  tr("EP: routed experts spread over e ranks carved out of data x context; must divide both the experts and DP x CP.")},
                 1, kMaxDegree, [](const Scenario& s) { return s.parallelism.expert; },
                 [](Scenario& s, int64_t v) { s.parallelism.expert = v; });
    f.addFlag({tr("Offload optimizer"), {"parallelism.offload_optimizer"},
               tr("ZeRO-Offload: optimizer states and master weights live in host memory (needs ZeRO >= 1).")},
              [](const Scenario& s) { return s.parallelism.offload_optimizer; },
              [](Scenario& s, bool v) { s.parallelism.offload_optimizer = v; });
    offload_parameters_ = f.addFlag({tr("Offload parameters"), {"parallelism.offload_parameters"},
               tr("ZeRO-Infinity / FSDP CPU offload: parameters in host memory, fetched per unit (needs ZeRO-3).")},
              [](const Scenario& s) { return s.parallelism.offload_parameters; },
              [](Scenario& s, bool v) { s.parallelism.offload_parameters = v; });
    // FSDP2 policies (docs/memory-model.md §FSDP2 policies).
    reshard_ = f.addFlag({tr("Reshard after forward"), {"parallelism.reshard_after_forward"},
               tr("FSDP2: free each block's gathered parameters after its forward (PyTorch's default); off keeps "
                  "them until its backward (needs ZeRO-3).")},
              [](const Scenario& s) { return s.parallelism.reshard_after_forward; },
              [](Scenario& s, bool v) { s.parallelism.reshard_after_forward = v; });
    QSpinBox* reshard_ranks = f.addInteger({tr("  to ranks"), {"parallelism.reshard_after_forward_ranks"},
                   tr("FSDP2's integer reshard_after_forward: keep a 1/n copy over n ranks after forward; 0 = all.")},
                  0, kMaxDegree, [](const Scenario& s) { return s.parallelism.reshard_after_forward_ranks; },
                  [](Scenario& s, int64_t v) { s.parallelism.reshard_after_forward_ranks = v; });
    reshard_ranks->setMinimum(0);
    reshard_ranks->setSpecialValueText(tr("all shard ranks"));
    reshard_ranks_ = reshard_ranks;
    fsdp_sync_ = f.addChoice<FsdpGradientSync>({tr("FSDP gradient sync"), {"parallelism.fsdp_gradient_sync"},
                                   tr("Last micro-batch: no reshard after backward and one reduce-scatter per step "
                                      "(PyTorch pipelining with FSDP): unsharded parameters and gradients stay.")},
                                  {{tr("every micro-batch"), FsdpGradientSync::EveryMicrobatch},
                                   {tr("last micro-batch"), FsdpGradientSync::LastMicrobatch}},
                                  [](const Scenario& s) { return s.parallelism.fsdp_gradient_sync; },
                                  [](Scenario& s, FsdpGradientSync v) { s.parallelism.fsdp_gradient_sync = v; });
    fsdp_ends_ = f.addChoice<FsdpEnds>({tr("FSDP model ends"), {"parallelism.fsdp_ends"},
                           tr("Where ZeRO-3 gathers the embedding and LM head: the root unit keeps them through "
                              "forward and backward (PyTorch's default); own units free them like blocks (torchtune, "
                              "DeepSpeed); torchtitan keeps its head unit until the head's backward.")},
                          {{tr("root unit"), FsdpEnds::Root},
                           {tr("own units"), FsdpEnds::OwnUnits},
                           {tr("own units, head kept"), FsdpEnds::OwnUnitsHeadKept}},
                          [](const Scenario& s) { return s.parallelism.fsdp_ends; },
                          [](Scenario& s, FsdpEnds v) { s.parallelism.fsdp_ends = v; });

    connect(document_, &ScenarioDocument::changed, this, &ParallelismPanel::refresh);
    refresh();
}

void ParallelismPanel::refresh() {
    const ParallelConfig& p = document_->scenario().parallelism;
    form_->refresh();
    form_->setRowVisible(schedule_, p.pipeline > 1);
    form_->setRowVisible(microbatches_, p.pipeline > 1);
    form_->setRowVisible(virtual_stages_, p.pipeline > 1 && p.schedule == PipelineSchedule::Interleaved1F1B);
    form_->setRowVisible(shard_group_, p.zero_stage > 0);
    // FSDP's own settings only under ZeRO-3, as docs/gui.md promises; one set
    // away from its default stays, so the error it causes can be fixed there.
    const ParallelConfig defaults;
    const bool fsdp = p.zero_stage == 3;
    form_->setRowVisible(offload_parameters_, fsdp || p.offload_parameters != defaults.offload_parameters);
    form_->setRowVisible(reshard_, fsdp || p.reshard_after_forward != defaults.reshard_after_forward);
    form_->setRowVisible(reshard_ranks_, fsdp || p.reshard_after_forward_ranks != defaults.reshard_after_forward_ranks);
    form_->setRowVisible(fsdp_sync_, fsdp || p.fsdp_gradient_sync != defaults.fsdp_gradient_sync);
    form_->setRowVisible(fsdp_ends_, fsdp || p.fsdp_ends != defaults.fsdp_ends);
}

}  // namespace trainmem::ui
