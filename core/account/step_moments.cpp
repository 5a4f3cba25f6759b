// The terms of a stage's moments for one layout, the moments' breakdowns
// and their totals (core/account/step_moments.h). Terms and sources:
// docs/memory-model.md §The peak of one step.
#include "core/account/step_moments.h"


#include <algorithm>

#include "core/activations/activations.h"

namespace trainmem {

double uniformMicrobatchActivations(Checkpointing policy, const LayoutActivations& blocks, const PipelineStage& st) {
    auto sum = [&](int64_t LayerActivations::*field) { return blocks.kinds.sum(st, field); };
    switch (policy) {
        case Checkpointing::Full: return sum(&LayerActivations::checkpoint_input);
        case Checkpointing::Op: return sum(&LayerActivations::op_kept);  // each block's input and save list
        case Checkpointing::Selective: return sum(&LayerActivations::saved_selective);
        default: return sum(&LayerActivations::saved);
    }
}

namespace {

// What `policy` leaves of blocks whose sums and largest values are `sum`
// and `largest` (one block of a kind: blockUnit; a stage's blocks of
// several kinds: stageActivations).
template <class Sum, class Largest>
LayoutActivations::BlockUnit blocksAsCheckpointed(Checkpointing policy, Sum sum, Largest largest) {
    LayoutActivations::BlockUnit u;
    u.saved = sum(&LayerActivations::saved);
    u.backward_working = largest(&LayerActivations::backward_working);
    switch (policy) {
        case Checkpointing::Full: {
            // Activation offloading and DeepSpeed's checkpoints: what backward
            // brings back (or gathers) beside the replay, at the first block
            // and below it (core/activations/activations_offload.cpp).
            u.kept = sum(&LayerActivations::checkpoint_input);
            const double brought_back = largest(&LayerActivations::offload_brought_back);
            u.recompute_block = largest(&LayerActivations::saved) + brought_back;
            u.recompute_block_kept = largest(&LayerActivations::offload_brought_back_below) - brought_back;
            u.recomputed = true;
            break;
        }
        case Checkpointing::Op:
            // Every block kept: its input and the save list's outputs; backward
            // replays one block at a time.
            u.kept = sum(&LayerActivations::op_kept);
            u.recompute_block = largest(&LayerActivations::op_recompute);
            u.recompute_block_kept = largest(&LayerActivations::op_kept);
            u.recomputed = true;
            break;
        case Checkpointing::Selective: u.kept = sum(&LayerActivations::saved_selective); break;
        default: u.kept = u.saved; break;
    }
    return u;
}

}  // namespace

LayoutActivations::BlockUnit blockUnit(Checkpointing policy, const LayerActivations& kind) {
    // A one-block stage: sums are the field, largest values the field but at least 0.
    return blocksAsCheckpointed(
        policy, [&](int64_t LayerActivations::*field) { return static_cast<double>(kind.*field); },
        [&](int64_t LayerActivations::*field) { return std::max(0.0, static_cast<double>(kind.*field)); });
}


StageActivations stageActivations(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                                  const PipelineStage& st) {
    return stageActivations(s, prep, blocks, st, checkpointsSomeLayers(s.training.checkpointing));
}

StageActivations stageActivations(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                                  const PipelineStage& st, bool by_block) {
    StageActivations a;
    stageActivations(s, prep, blocks, st, by_block, a);
    return a;
}


void stageActivations(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                      const PipelineStage& st, bool by_block, StageActivations& a) {
    const TrainingConfig& tr = s.training;
    if (!by_block) {
        if (const LayoutActivations::BlockUnit* unit = singleKindUnit(blocks, st, tr.checkpointing)) {
            unitStageActivations(s, prep, blocks, *unit, st, a);
            return;
        }
    }
    a = StageActivations{};
    int64_t recomputed = 0;
    if (by_block) {
        blockByBlockActivations(s, blocks, st, a, recomputed);
    } else {
        // Every block alike but for its kind (dense / MoE, rotary / NoPE):
        // counted, O(1) in the depth.
        const LayoutActivations::BlockUnit u = blocksAsCheckpointed(
            tr.checkpointing, [&](int64_t LayerActivations::*field) { return blocks.kinds.sum(st, field); },
            [&](int64_t LayerActivations::*field) { return blocks.kinds.largest(st, field); });
        a.no_recompute = u.saved;
        a.one_microbatch = u.kept;
        a.backward_working = u.backward_working;
        a.recompute_block = u.recompute_block;
        a.recompute_block_kept = u.recompute_block_kept;
        a.last_recomputed = u.recomputed && st.num_layers > 0;
        recomputed = u.recomputed ? st.num_layers : 0;
    }
    a.recompute_fraction = recomputeFraction(s, prep, blocks, recomputed, st.num_layers);
}

void scheduledStage(const Scenario& s, const PreparedScenario& prep, int64_t microbatches, const StageFacts& facts,
                    ScheduledStage& t) {
    const TrainingConfig& tr = s.training;
    const ParallelConfig& par = s.parallelism;
    const bool full_ft = tr.finetuning == Finetuning::Full;
    const bool step_in_backward = tr.optimizer_in_backward;

    t.step_in_backward = step_in_backward;
    t.optimizer_offloaded = par.offload_optimizer;
    t.within_first = false;  // scheduleStagePlan decides it against stage 0
    t.stage = facts.stage;
    setStageInFlight(t.stage, par, microbatches);
    const PipelineStage& st = t.stage;
    const double in_flight = st.in_flight;

    // AMP's casts: one set per micro-batch in flight (StageFacts::autocast_copies).
    t.weight_copies = weightCopiesOf(facts.autocast_copies, facts.lasting_copies, in_flight);

    // Gradients exist at the forward peak when the framework keeps a
    // persistent contiguous buffer (recipes with master weights: Megatron-LM,
    // DeepSpeed), or when the moment of most micro-batches in flight recurs
    // after a first backward: there are more micro-batches than fit in flight
    // (plain accumulation: m > 1; 1F1B stage i: m > p - i; GPipe: never).
    // With the step in backward no gradient outlives its parameter's step.
    t.grads_in_forward = gradientsAtForward(tr, prep.plan, microbatches, in_flight);
    t.gradients_forward = t.grads_in_forward ? facts.states.gpu.gradients : 0;
    // Gradients that grow during backward (no persistent buffer, not sharded
    // by ZeRO-2/3, not stepped in backward).
    const bool grads_grow = full_ft && !t.grads_in_forward && par.zero_stage < 2 && !step_in_backward;
    t.other_heads = st.head_in_flight - 1.0;

    // The first block's backward: the head's weight gradient already allocated.
    t.head_gradients = st.has_lm_head && grads_grow ? facts.head_gradient_bytes : 0;
    // Backward of one chunk (the whole stage, or 1/v of it when interleaved)
    // frees that chunk; the rest stays in flight.
    t.chunks = par.schedule == PipelineSchedule::Interleaved1F1B ? static_cast<double>(par.virtual_stages) : 1.0;
    t.others = std::max(0.0, in_flight - 1.0 / t.chunks);
    // One micro-batch per step: the stage's last block's own gradients are
    // not allocated yet at its worst (StageFacts::late_gradient_bytes); with
    // several, a later backward ends with all of them allocated.
    t.late_gradients = grads_grow && microbatches == 1 && st.num_layers > 0 ? facts.late_gradient_bytes : 0;
    t.weight_copies_end = weightCopiesOf(facts.autocast_copies, facts.lasting_copies, t.others);
    // Two backward chunks in a row (GPipe; 1F1B's cool-down): the next one
    // starts with every gradient allocated and one chunk fewer in flight; with
    // whole-stage chunks it is the next micro-batch's head backward.
    t.backward_next = in_flight * t.chunks >= 2.0;
    t.all_to_all = par.expert > 1 && st.num_moe_layers > 0 && s.model.moe;

    // The moments' totals less the layout's terms (momentTotals adds those):
    // the moments as momentBreakdown makes them, summed. Unsigned: a term
    // past 2^56 is caught by `bits` before any of these is read.
    auto u = [](int64_t b) { return static_cast<uint64_t>(b); };
    const int64_t gradients_end = facts.states.gpu.gradients - t.late_gradients;
    // The stage's own terms are in stage_bits; these are the schedule's (the
    // gradients less the late ones where they apply, which is where they
    // cannot be negative).
    t.bits = facts.stage_bits | u(gradients_end) | u(t.weight_copies) | u(t.weight_copies_end);
    const uint64_t held = u(facts.resident_bytes) + u(t.gradients_forward) + u(t.weight_copies) + u(facts.gathered);
    // The ends under ZeRO-3 (StageFacts::ends; in stage_bits): gathered + gradient.
    const StageFacts::GatheredEnds& e = facts.ends;
    const uint64_t ends_head_backward = u(e.head_backward) + u(e.gradient_head_backward);
    const uint64_t ends_end = u(e.backward_end) + u(e.gradient_backward_end);
    t.base[kForward] = held + u(e.forward);
    t.base[kLoss] = held + u(e.loss);
    t.base[kBackwardHead] = held + u(facts.scatter) + ends_head_backward;
    t.base[kBackwardStart] = held + u(t.head_gradients) + u(facts.scatter) + u(e.backward_start) +
                             u(e.gradient_backward_start);
    t.base[kBackwardRecompute] = 0;
    const uint64_t end = u(facts.resident_bytes) + u(gradients_end) + u(facts.gathered) + u(facts.scatter) +
                         u(t.weight_copies_end);
    t.base[kBackwardEnd] = end + ends_end;
    // The next backward chunk is the next micro-batch's head backward with
    // whole-stage chunks on the last stage, else like the backward's end
    // (gatheredEndsAt below).
    t.base[kBackwardNext] =
        !t.backward_next ? 0 : end + (st.has_lm_head && t.chunks == 1.0 ? ends_head_backward : ends_end);
    const uint64_t transient = t.optimizer_offloaded ? 0 : u(facts.step_transient_bytes);
    t.base[kStep] = step_in_backward ? u(facts.resident_bytes)
                                     : u(facts.resident_bytes) + u(facts.states.gpu.gradients) + u(facts.fp8_copies) +
                                           transient;
}

void momentTerms(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                 int64_t microbatches, const StageFacts& facts, MomentTerms& t, bool by_block) {
    scheduledStage(s, prep, microbatches, facts, t);
    layoutTerms(s, prep, blocks, t, t, by_block);
}

namespace {

// What the model's ends add under ZeRO-3 at moment m (StageFacts::ends):
// gathered weights, and their unsharded gradient. The next backward chunk is
// the next micro-batch's head backward with whole-stage chunks on the last
// stage, else like the backward's end.
struct EndsAt {
    int64_t gathered = 0, gradient = 0;
};
EndsAt gatheredEndsAt(const StageFacts& f, const ScheduledStage& t, int m) {
    const StageFacts::GatheredEnds& e = f.ends;
    switch (m) {
        case kForward: return {e.forward, 0};
        case kLoss: return {e.loss, 0};
        case kBackwardHead: return {e.head_backward, e.gradient_head_backward};
        case kBackwardStart: return {e.backward_start, e.gradient_backward_start};
        case kBackwardEnd: return {e.backward_end, e.gradient_backward_end};
        case kBackwardNext:
            if (t.stage.has_lm_head && t.chunks == 1.0) return {e.head_backward, e.gradient_head_backward};
            return {e.backward_end, e.gradient_backward_end};
        default: return {};
    }
}

}  // namespace

MemoryBreakdown momentBreakdown(const StageFacts& f, const ScheduledStage& sched, const LayoutTerms& t, int m) {
    MemoryBreakdown b;
    momentBreakdown(f, sched, t, m, b);
    return b;
}

void momentBreakdown(const StageFacts& f, const ScheduledStage& sched, const LayoutTerms& t, int m,
                     MemoryBreakdown& b) {
    // The resident set holds weights, master weights, optimizer states,
    // workspace and comm buffers only (stageResident): the other components
    // are set here, comm buffers added to.
    b = f.resident;
    const EndsAt ends = gatheredEndsAt(f, sched, m);
    switch (m) {
        case kForward:
        case kLoss:
        case kBackwardHead:
        case kBackwardStart:
            b[Component::Gradients] = sched.gradients_forward;
            b[Component::WeightCopies] = sched.weight_copies;
            b[Component::GatheredWeights] = f.gathered + ends.gathered;
            b[Component::CommBuffers] += ends.gradient;
            b[Component::Activations] = t.activations_forward;
            if (m != kLoss) b[Component::CommBuffers] += t.all_to_all;  // not while the loss runs
            if (m == kForward) b[Component::LogitsLoss] = t.ends_forward;
            if (m == kLoss) b[Component::LogitsLoss] = t.ends_loss;
            if (m == kBackwardHead) {
                b[Component::CommBuffers] += f.scatter;
                b[Component::LogitsLoss] = t.ends_head_backward;
            }
            if (m == kBackwardStart) {
                b[Component::CommBuffers] += f.scatter;
                b[Component::Gradients] += sched.head_gradients;
                b[Component::Activations] = t.activations_backward_start;
                b[Component::LogitsLoss] = t.ends_backward_start;
            }
            return;
        case kBackwardEnd:
        case kBackwardNext:
            if (m == kBackwardNext && !sched.backward_next) {
                b = MemoryBreakdown{};
                return;
            }
            b[Component::Gradients] = f.states.gpu.gradients - sched.late_gradients;
            b[Component::GatheredWeights] = f.gathered + ends.gathered;
            b[Component::CommBuffers] += f.scatter + t.all_to_all + ends.gradient;
            b[Component::WeightCopies] = sched.weight_copies_end;
            b[Component::Activations] = t.activations_backward_end;
            b[Component::LogitsLoss] = m == kBackwardEnd ? t.ends_backward_end : t.ends_backward_next;
            return;
        case kStep:
            if (sched.step_in_backward) return;  // nothing is left to step
            b[Component::Gradients] = f.states.gpu.gradients;
            b[Component::WeightCopies] = f.fp8_copies;
            if (!sched.optimizer_offloaded) b[Component::OptimizerTransient] = f.step_transient_bytes;
            return;
        default: b = MemoryBreakdown{};  // kBackwardRecompute: accountStep's, block by block
    }
}

bool scheduleKeepsMomentsAsTerms(const Scenario& s, int64_t microbatches) {
    const ParallelConfig& par = s.parallelism;
    // ZeRO-3 / FSDP and parameter offloading: applyFsdpPolicy changes no
    // moment (its early return, core/account/fsdp_policy.cpp) when the parameters
    // are resharded to all ranks after forward (kept = the units) and the
    // gradients are reduced every micro-batch (end = the units, no deferred
    // gradients); the gathered units and scatter are then the terms'.
    const bool fsdp = par.zero_stage >= 3 || par.offload_parameters;
    const bool fsdp_per_unit = par.reshard_after_forward && par.reshard_after_forward_ranks <= 1 &&
                               !(par.fsdp_gradient_sync == FsdpGradientSync::LastMicrobatch && microbatches > 1);
    return (!fsdp || fsdp_per_unit) && !s.training.optimizer_in_backward;
}

bool momentsAsTermsMakeThem(const Scenario& s, const LayoutActivations& blocks, int64_t microbatches, bool by_block) {
    return scheduleKeepsMomentsAsTerms(s, microbatches) && layoutKeepsMomentsAsTerms(blocks, by_block);
}

}  // namespace trainmem
