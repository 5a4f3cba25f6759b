#pragma once
// The account's value types: what is prepared once per scenario, a layout's
// activations, a stage's facts and schedule, and the account of one stage's
// moments. The functions that make them are in step_account.h (and
// layout_account.h for whole layouts); the policies that write into a
// StepAccount (fsdp_policy, qlora_backend) need only these types.
#include <cstdint>
#include <vector>

#include "core/account/estimate_result.h"
#include "core/account/stage_parameters.h"
#include "core/activations/activations.h"
#include "core/model/parameters.h"
#include "core/training/pipeline.h"

namespace trainmem {

// Everything that depends only on the model and the training recipe
// (precision, optimizer, fine-tuning, GPU, overheads): computed once per
// scenario and reused for every layout (issue 14). No string is looked at
// after this: the GPU's workspace and capacity are numbers here.
struct PreparedScenario {
    ParameterLayout layout;
    ParameterCount parameters;  // whole model (estimate's `parameters`)
    LoraParameters lora;        // adapters per block (zero for full fine-tuning)
    PrecisionPlan plan;
    int64_t workspace_bytes = 0;
    int64_t capacity_bytes = 0;
    // Every block alike (dense, or MoE in every layer): stages differ only
    // in their block count, ends and micro-batches in flight.
    bool uniform_blocks = true;
};

// Per-block and end activations: they depend on the layout only through the
// micro-batch, tensor, sequence and context parallelism (and the recipe).
struct LayoutActivations {
    BlockKindActivations kinds;  // dense / MoE, rotary / NoPE blocks
    EndActivations ends;
    double qlora_kept_inputs = 0;  // per block and micro-batch (core/account/qlora_backend.h)
    // Some block or end offloads to the host (offloadedActivationHostBytes
    // is 0 otherwise): the account looks for host copies only then.
    bool offloads_to_host = false;
    // One block of each rotary kind as `unit_policy` (the scenario's
    // checkpointing) leaves it, for the policies that treat every block
    // alike: a stage of n blocks of one kind is n times its sums
    // (stageActivations; the same doubles it would multiply), made once
    // here instead of once per stage and layout.
    struct BlockUnit {
        double saved = 0;  // nothing recomputed
        double kept = 0;   // one micro-batch, as checkpointing leaves it
        double recompute_block = 0, recompute_block_kept = 0, backward_working = 0;
        bool recomputed = false;  // the policy replays every block
    };
    BlockUnit dense_unit, moe_unit;
    Checkpointing unit_policy = Checkpointing::None;
    // Expert parallelism's dispatch + combine buffers of one MoE block
    // (0 for a dense model): a stage with MoE blocks holds them when EP > 1.
    int64_t all_to_all = 0;
};

// Inputs that do not depend on the stage, computed once per estimate.
struct StepInputs {
    PreparedScenario prepared;
    LayoutActivations activations;
    int64_t microbatches = 1;
};

// What a stage holds: its blocks and ends, its parameters and model states.
// Depends on the model, the recipe, the degrees and ZeRO, not on the
// schedule, the micro-batch or checkpointing (in_flight is set per layout).
struct StageFacts {
    PipelineStage stage;
    StageParameters params;
    StageModelStates states;
    // The optimizer step's temporaries (bytes, before rounding): they depend
    // only on the recipe and the stage's trainable shard, so once per stage.
    double step_transient = 0;
    // What every moment of the step holds (weights, master weights,
    // optimizer states, workspace, the data-parallel comm buffers): it
    // depends on the stage's states, ZeRO, the data x context degree and the
    // overheads only, so once per stage (stageResident in step_account.cpp,
    // where one more additive term on a stage's resident bytes goes).
    MemoryBreakdown resident;
    int64_t resident_bytes = 0;  // resident.total()
    // resident's components and every stage-only term below that a moment
    // may hold, OR'ed: the moments' totals check them (core/account/step_moments.h).
    uint64_t stage_bits = 0;
    // The terms of the moments that depend on the stage and the recipe only
    // (not on the schedule, micro-batches, their size or checkpointing), so
    // once per stage too (core/account/step_moments.h):
    int64_t step_transient_bytes = 0;    // step_transient, rounded
    int64_t autocast_copies = 0;         // AMP's casts of one micro-batch's graph
    int64_t fp8_copies = 0;              // Transformer Engine's fp8 weights and transposes
    int64_t lasting_copies = 0;          // fp8_copies + QLoRA's dequantised matrix
    double gathered_units = 0;           // ZeRO-3 / FSDP: the gathered units before rounding
    int64_t gathered = 0;                // ... rounded
    int64_t scatter = 0;                 // one unit's unsharded gradient before reduce-scatter
    // ZeRO-3 / FSDP: what the model's ends add (parallelism.fsdp_ends,
    // fsdpEndsTerms in core/account/fsdp_policy.h, rounded): gathered weights, and
    // their unsharded gradient in the communication buffers.
    struct GatheredEnds {
        int64_t forward = 0, loss = 0, head_backward = 0, backward_start = 0, backward_end = 0;
        int64_t gradient_head_backward = 0, gradient_backward_start = 0, gradient_backward_end = 0;
        bool atMost(const GatheredEnds& o) const {
            return forward <= o.forward && loss <= o.loss && head_backward <= o.head_backward &&
                   backward_start <= o.backward_start && backward_end <= o.backward_end &&
                   gradient_head_backward <= o.gradient_head_backward &&
                   gradient_backward_start <= o.gradient_backward_start && gradient_backward_end <= o.gradient_backward_end;
        }
    } ends;
    int64_t head_gradient_bytes = 0;     // the LM head's weight gradient (StepAccount::head_gradients when it applies)
    int64_t late_gradient_bytes = 0;     // StepAccount::late_gradients when it applies
    // planStages: a later stage with the blocks of the plan's first stage
    // (stage 0), neither holding the LM head, whose every stage-only term
    // is at most stage 0's (scheduledWithinFirst in estimate_stages.h: then, with a
    // few checks per layout, no moment of it exceeds stage 0's peak).
    bool within_first = false;
    // planStages: the plan's previous stage has the same blocks (sameBlocks,
    // estimate_stages.h), so the same activations for every layout.
    bool same_blocks_as_previous = false;
};

// What a stage's moments hold that depends on the schedule and the
// micro-batches per step but not on the activations (the micro-batch size,
// sequence parallelism, checkpointing): computed once per (stage plan,
// schedule, micro-batches) for the search (scheduleStagePlan), or per
// account (scheduledStage, core/account/step_moments.h).
struct ScheduledStage {
    PipelineStage stage;     // with the layout's micro-batches in flight
    double others = 0;       // micro-batches still in flight after one chunk's backward
    double other_heads = 0;  // other micro-batches whose heads the last stage keeps (GPipe: m - 1)
    double chunks = 1;       // v: chunks per stage (interleaved 1F1B), 1 otherwise
    bool grads_in_forward = false;
    bool step_in_backward = false;     // training.optimizer_in_backward: no step moment
    bool optimizer_offloaded = false;  // the step runs on the host: no temporaries on the GPU
    bool backward_next = false;        // two backward chunks in a row: the backward_next moment exists
    bool all_to_all = false;           // MoE blocks under expert parallelism: LayoutActivations::all_to_all
    // A later stage of the plan whose moments stay within stage 0's for any
    // activations that are not negative (scheduledWithinFirst, estimate_stages.h).
    bool within_first = false;
    int64_t gradients_forward = 0;  // the gradients alive at the forward peak
    int64_t head_gradients = 0;     // StepAccount::head_gradients
    int64_t late_gradients = 0;     // StepAccount::late_gradients
    int64_t weight_copies = 0;      // with every micro-batch in flight
    int64_t weight_copies_end = 0;  // with `others` in flight
    // Each moment's total less its activations, the model's ends'
    // activations and the all-to-all buffers (momentTotals adds them), as
    // unsigned sums: meaningful while `bits` is below 2^56.
    uint64_t base[8] = {};
    uint64_t bits = 0;  // StageFacts::stage_bits and the terms above, OR'ed
};

struct StepAccount {
    PipelineStage stage;
    StageModelStates states;
    MemoryBreakdown resident;       // weights, master, optimizer states, workspace, comm buffers
    MemoryBreakdown forward;        // end of the forward pass of the peak micro-batch
    MemoryBreakdown loss;           // worst moment of the loss (last stage; = forward elsewhere)
    MemoryBreakdown backward_head;  // the head's backward at its worst (last stage; = forward elsewhere)
    MemoryBreakdown backward_start; // first block's backward (+ recompute), after the head's has freed its buffers
    MemoryBreakdown backward_recompute; // every-k with the last block kept: the first recomputed block's
                                        // backward (zero otherwise)
    int64_t backward_recompute_layer = -1;  // that block (-1: no such moment)
    MemoryBreakdown backward_end;   // all gradients, other micro-batches still in flight
    // The next backward right after (GPipe, or 1F1B with m <= in flight):
    // all gradients exist and the head's backward runs again. Zero when the
    // stage never runs two backwards in a row with micro-batches left.
    MemoryBreakdown backward_next;
    MemoryBreakdown step;           // optimizer step with its temporaries
    bool grads_in_forward = false;
    bool persistent_grads = false;          // a gradient buffer exists from the start of the step
    int64_t autocast_copies_per_microbatch = 0;  // AMP casts one micro-batch's graph keeps
    int64_t lasting_copies = 0;             // FP8 caches, QLoRA's dequantised matrix
    double activations_one_microbatch = 0;  // this stage's blocks, as checkpointing leaves them
    double activations_no_recompute = 0;    // all in-flight micro-batches, nothing recomputed
    double recompute_block = 0;             // saved tensors of the largest block being recomputed
    // Op-level checkpointing: what a block keeps from its forward (input and
    // the save list's outputs), alive while it is replayed; the other
    // policies' block input is not counted there. Activation offloading: what
    // is brought back beside a lower block's replay, less what recompute_block
    // holds for the first block's.
    double recompute_block_kept = 0;
    double backward_working = 0;
    double recompute_fraction = 0;
    // The model's ends, per micro-batch, on this stage (zero where absent).
    double embedding_saved = 0;   // first stage
    double head_saved = 0;        // last stage: final norm + logits kept until the head's backward
    double final_norm_saved = 0;
    double loss_peak = 0;         // the current micro-batch's loss, at its worst (includes its logits)
    double loss_backward_peak = 0;// the current micro-batch's head backward, at its worst
    int64_t head_gradients = 0;   // LM head's weight gradient, allocated by the head's backward (0 when it
                                  // is frozen, when gradients already exist, or under ZeRO-2/3)
    // Gradients not yet allocated at the worst moment of the stage's last
    // block backward (one micro-batch per step, gradients not kept between
    // steps): that block's own, but its MLP output projection's (computed
    // first), and on the first stage the untied embedding's (computed last).
    int64_t late_gradients = 0;
};

// The moments at which the model's ends are counted (endsBytes, endsBytesOf).
enum class EndsMoment { Between, AfterForward, Loss, HeadBackward };

// The worst of the account's moments (every backward_* counts as Backward).
struct StagePeak {
    Phase phase;
    const MemoryBreakdown* breakdown;
};

}  // namespace trainmem
