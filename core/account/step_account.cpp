// The full account of one stage: every moment's breakdown (for the
// timeline, the per-stage view and the estimate's unusual recipes), built
// from the moments' terms (core/account/step_moments.h), then adjusted by the
// recipes that change moments after they are made: FSDP's policies
// (core/account/fsdp_policy.h), QLoRA's kept inputs (core/account/qlora_backend.h) and the
// optimizer step in backward. What does not change with the layout is
// prepared in step_account_prepare.cpp; every-k's block-by-block parts are
// in step_account_blocks.cpp. Terms and sources: docs/memory-model.md §The
// peak of one step.
#include "core/base/byte_count.h"
#include "core/account/step_account.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/account/fsdp_policy.h"
#include "core/training/optimizer_state.h"
#include "core/account/qlora_backend.h"
#include "core/account/qlora_kept_inputs.h"
#include "core/account/step_moments.h"

namespace trainmem {
static_assert(std::is_trivially_destructible_v<StepAccount>);
namespace {

// Every field of a default StepAccount but the six moments accountStep
// copies whole, and the stage and model states it sets at once (see there). The size check makes a field added to
// StepAccount fail to build here until it is reset too.
struct AccountLayoutCheck {
    PipelineStage stage;
    StageModelStates states;
    MemoryBreakdown moments[9];
    int64_t layer;
    bool flags[2];
    int64_t copies[2];
    double activations[6];
    double ends[5];
    int64_t gradients[2];
};
static_assert(sizeof(StepAccount) == sizeof(AccountLayoutCheck), "a new StepAccount field: reset it in resetAccount");
inline void resetAccount(StepAccount& a) {
    // stage, states and resident: accountStep sets them first thing.
    a.backward_recompute = MemoryBreakdown{};
    a.backward_recompute_layer = -1;
    a.backward_next = MemoryBreakdown{};
    a.grads_in_forward = false;
    a.persistent_grads = false;
    a.autocast_copies_per_microbatch = 0;
    a.lasting_copies = 0;
    a.activations_one_microbatch = 0;
    a.activations_no_recompute = 0;
    a.recompute_block = 0;
    a.recompute_block_kept = 0;
    a.backward_working = 0;
    a.recompute_fraction = 0;
    a.embedding_saved = 0;
    a.head_saved = 0;
    a.final_norm_saved = 0;
    a.loss_peak = 0;
    a.loss_backward_peak = 0;
    a.head_gradients = 0;
    a.late_gradients = 0;
}

void applyStepInBackward(const Scenario& s, const PreparedScenario& prep, StepAccount& acc);

// The ends' unsharded gradient at the backward moments, as momentBreakdown
// counts it (StageFacts::ends; the next chunk as gatheredEndsAt takes it).
EndsGradients endsGradients(const Scenario& s, const StageFacts& f) {
    const StageFacts::GatheredEnds& e = f.ends;
    const bool whole_chunks =
        s.parallelism.schedule != PipelineSchedule::Interleaved1F1B || s.parallelism.virtual_stages == 1;
    return {e.gradient_head_backward, e.gradient_backward_start, e.gradient_backward_end,
            f.stage.has_lm_head && whole_chunks ? e.gradient_head_backward : e.gradient_backward_end};
}
}  // namespace

int64_t weightCopiesAlive(int64_t autocast_per_microbatch, int64_t lasting, double microbatches_alive) {
    return weightCopiesOf(autocast_per_microbatch, lasting, microbatches_alive);
}

StepAccount accountStep(const Scenario& s, const StepInputs& in, int64_t stage_index) {
    return accountStep(s, in.prepared, in.activations, in.microbatches, stageFacts(s, in.prepared, stage_index));
}

StepAccount accountStep(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                        int64_t microbatches, const StageFacts& facts) {
    StepAccount acc;
    accountStep(s, prep, blocks, microbatches, facts, acc);
    return acc;
}

void accountStep(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                 int64_t microbatches, const StageFacts& facts, StepAccount& acc) {
    const ParallelConfig& par = s.parallelism;
    MomentTerms t;
    const bool by_block = checkpointsSomeLayers(s.training.checkpointing);
    momentTerms(s, prep, blocks, microbatches, facts, t, by_block);

    // A fresh account in place (what `StepAccount acc;` would be), without
    // zeroing the six moments written whole below before anything reads them.
    resetAccount(acc);
    acc.stage = t.stage;
    const PipelineStage& st = acc.stage;
    acc.states = facts.states;
    acc.states.host_bytes = addBytes(acc.states.host_bytes, offloadedActivationHostBytes(
                                         blocks.kinds, blocks.ends, st));  // activation offloading
    acc.resident = facts.resident;  // always resident (stageResident, once per stage in its facts)

    acc.persistent_grads = prep.plan.master.has_value() && !s.training.optimizer_in_backward;
    acc.grads_in_forward = t.grads_in_forward;
    acc.autocast_copies_per_microbatch = facts.autocast_copies;
    acc.lasting_copies = facts.lasting_copies;
    const EndsSaved ends = endsSaved(blocks.ends, st);
    acc.embedding_saved = ends.embedding;
    acc.head_saved = ends.head;
    acc.final_norm_saved = ends.final_norm;
    acc.loss_peak = ends.loss_peak;
    acc.loss_backward_peak = ends.loss_backward_peak;
    acc.head_gradients = t.head_gradients;
    acc.late_gradients = t.late_gradients;

    const StageActivations& act = t.act;
    acc.activations_one_microbatch = act.one_microbatch;
    acc.activations_no_recompute = act.no_recompute * st.in_flight;
    acc.recompute_block = act.recompute_block;
    acc.recompute_block_kept = act.recompute_block_kept;
    acc.backward_working = act.backward_working;
    acc.recompute_fraction = act.recompute_fraction;

    momentBreakdown(facts, t, t, kForward, acc.forward);
    momentBreakdown(facts, t, t, kLoss, acc.loss);
    momentBreakdown(facts, t, t, kBackwardHead, acc.backward_head);
    momentBreakdown(facts, t, t, kBackwardStart, acc.backward_start);
    if (by_block) recomputedBlockMoment(s, prep, blocks, t, acc);
    momentBreakdown(facts, t, t, kBackwardEnd, acc.backward_end);
    if (t.backward_next) momentBreakdown(facts, t, t, kBackwardNext, acc.backward_next);

    if (par.zero_stage >= 3 || par.offload_parameters)
        applyFsdpPolicy(par, fsdpStageBytes(s, facts.params, prep.plan, facts.gathered_units, microbatches),
                        facts.gathered, endsGradients(s, facts), acc);
    applyQloraKeptInputs(s, blocks.qlora_kept_inputs, acc);
    if (t.step_in_backward) applyStepInBackward(s, prep, acc);
    momentBreakdown(facts, t, t, kStep, acc.step);
}

namespace {

// Optimizer step in backward (torchtune optimizer_in_bwd, torchtitan
// early_step_in_backward): a hook steps each parameter with its own optimizer
// as soon as its gradient is accumulated, then frees the gradient. At a
// backward moment one parameter's gradient exists, with that one-tensor
// step's temporaries. The head's loss backward (its worst moment) comes
// before any gradient exists (measured: validation/step_truth.py); the head's
// weight gradient follows with the activations still alive, so the blocks'
// moments take the larger of it and the largest block tensor
// (docs/memory-model.md).
void applyStepInBackward(const Scenario& s, const PreparedScenario& prep, StepAccount& acc) {
    const TrainingConfig& tr = s.training;
    const ParallelConfig& par = s.parallelism;
    const ParameterLayout& lay = prep.layout;
    const PrecisionPlan& plan = prep.plan;
    const bool full_ft = tr.finetuning == Finetuning::Full;
    auto oneTensor = [&](int64_t elements, MemoryBreakdown& m) {
        m[Component::Gradients] = roundBytes(static_cast<double>(elements) * bytesOf(plan.gradients));
        double transient = optimizerStepTransientBytes(tr.optimizer, tr.optimizer_impl, plan.optimizer_states,
                                                       elements, elements);
        if (plan.master && plan.gradients != DType::Fp32) transient += 4.0 * static_cast<double>(elements);
        m[Component::OptimizerTransient] = roundBytes(transient);
    };
    int64_t block = acc.states.largest_trainable;
    int64_t head = acc.states.largest_trainable;
    if (full_ft) {
        block = 0;
        for (const LayerParameters* l : {&lay.dense_layer, &lay.moe_layer})
            for (const TensorGroup* g : {&l->attention, &l->dense_mlp, &l->routed_experts, &l->shared_experts})
                block = std::max(block, g->largest_tensor);
        for (const LayerParameters& l : lay.hybrid_layer)  // all zero but a hybrid's
            for (const TensorGroup* g : {&l.attention, &l.dense_mlp, &l.routed_experts, &l.shared_experts})
                block = std::max(block, g->largest_tensor);
        block /= par.tensor;
        const int64_t head_matrix = lay.lm_head.params > 0 ? lay.lm_head.params : lay.embedding.matrix_params;
        head = acc.stage.has_lm_head ? head_matrix / par.tensor : block;
    }
    acc.backward_head[Component::Gradients] = 0;
    const int64_t largest = std::max(head, block);
    for (MemoryBreakdown* m : {&acc.backward_start, &acc.backward_end, &acc.backward_next})
        if (m->total() > 0) oneTensor(largest, *m);
    if (acc.backward_recompute_layer >= 0) oneTensor(largest, acc.backward_recompute);
}

}  // namespace

int64_t endsBytes(const StepAccount& a, double micro_alive, double heads_saved, EndsMoment moment) {
    const EndsSaved ends{a.embedding_saved, a.head_saved, a.final_norm_saved, a.loss_peak, a.loss_backward_peak};
    return endsBytesOf(ends, micro_alive, heads_saved, moment);
}

StagePeak stagePeak(const StepAccount& a) {
    const StagePeak candidates[] = {{Phase::Forward, &a.forward},
                                    {Phase::Loss, &a.loss},
                                    {Phase::Backward, &a.backward_head},
                                    {Phase::Backward, &a.backward_start},
                                    {Phase::Backward, &a.backward_recompute},
                                    {Phase::Backward, &a.backward_end},
                                    {Phase::Backward, &a.backward_next},
                                    {Phase::OptimizerStep, &a.step}};
    StagePeak best = candidates[0];
    for (const StagePeak& c : candidates)
        if (c.breakdown->total() > best.breakdown->total()) best = c;
    return best;
}

}  // namespace trainmem
