// The terms of a stage's moments for one layout, the moments' breakdowns
// and their totals (core/step_moments.h). Terms and sources:
// docs/memory-model.md §The peak of one step.
#include "core/step_moments.h"

#include <algorithm>

#include "core/activations.h"

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

// The stage's blocks when they are all of one kind (every block of a
// uniform model, and most stages of the others): then
// BlockKindActivations::sum is the blocks times that kind's field (the
// other kinds add 0 x their field, +0.0) and largest is that field (at
// least 0), computed here without walking the four kinds per field.
// nullptr when the stage mixes kinds or has no block.
const LayerActivations* singleKind(const BlockKindActivations& kinds, const PipelineStage& st) {
    if (st.num_layers <= 0 || st.num_nope_layers != 0) return nullptr;
    if (st.num_moe_layers == 0) return &kinds.dense;
    if (st.num_moe_layers == st.num_layers) return &kinds.moe;
    return nullptr;
}

}  // namespace

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
    a = StageActivations{};
    int64_t recomputed = 0;
    if (by_block) {
        blockByBlockActivations(s, blocks, st, a, recomputed);
    } else if (const LayerActivations* kind = singleKind(blocks.kinds, st)) {
        // As below, for one kind of block.
        const double n = static_cast<double>(st.num_layers);
        auto sum = [&](int64_t LayerActivations::*field) { return n * static_cast<double>(kind->*field); };
        auto largest = [&](int64_t LayerActivations::*field) {
            return std::max(0.0, static_cast<double>(kind->*field));
        };
        a.no_recompute = sum(&LayerActivations::saved);
        a.backward_working = largest(&LayerActivations::backward_working);
        switch (tr.checkpointing) {
            case Checkpointing::Full: {
                a.one_microbatch = sum(&LayerActivations::checkpoint_input);
                const double brought_back = largest(&LayerActivations::offload_brought_back);
                a.recompute_block = largest(&LayerActivations::saved) + brought_back;
                a.recompute_block_kept = largest(&LayerActivations::offload_brought_back_below) - brought_back;
                a.last_recomputed = true;
                recomputed = st.num_layers;
                break;
            }
            case Checkpointing::Op:
                a.one_microbatch = sum(&LayerActivations::op_kept);
                a.recompute_block = largest(&LayerActivations::op_recompute);
                a.recompute_block_kept = largest(&LayerActivations::op_kept);
                a.last_recomputed = true;
                recomputed = st.num_layers;
                break;
            case Checkpointing::Selective: a.one_microbatch = sum(&LayerActivations::saved_selective); break;
            default: a.one_microbatch = a.no_recompute; break;
        }
    } else {
        // Every block alike but for its kind (dense / MoE, rotary / NoPE):
        // counted, O(1) in the depth.
        auto sum = [&](int64_t LayerActivations::*field) { return blocks.kinds.sum(st, field); };
        auto largest = [&](int64_t LayerActivations::*field) { return blocks.kinds.largest(st, field); };
        a.no_recompute = sum(&LayerActivations::saved);
        a.backward_working = largest(&LayerActivations::backward_working);
        a.one_microbatch = uniformMicrobatchActivations(tr.checkpointing, blocks, st);
        if (tr.checkpointing == Checkpointing::Full) {
            // Activation offloading and DeepSpeed's checkpoints: what backward
            // brings back (or gathers) beside the replay, at the first block
            // and below it (core/activations_offload.cpp).
            const double brought_back = largest(&LayerActivations::offload_brought_back);
            a.recompute_block = largest(&LayerActivations::saved) + brought_back;
            a.recompute_block_kept = largest(&LayerActivations::offload_brought_back_below) - brought_back;
            a.last_recomputed = st.num_layers > 0;
            recomputed = st.num_layers;
        } else if (tr.checkpointing == Checkpointing::Op) {
            // Every block kept: its input and the save list's outputs; backward
            // replays one block at a time.
            a.recompute_block = largest(&LayerActivations::op_recompute);
            a.recompute_block_kept = largest(&LayerActivations::op_kept);
            a.last_recomputed = st.num_layers > 0;
            recomputed = st.num_layers;
        }
    }
    if (st.num_layers > 0) {
        // Recomputing a block's forward costs a third of its forward + backward.
        a.recompute_fraction = static_cast<double>(recomputed) / static_cast<double>(st.num_layers) / 3.0;
        if (tr.checkpointing == Checkpointing::Op) a.recompute_fraction *= blocks.kinds.dense.op_recomputed_matmul_share;
        if (tr.checkpointing == Checkpointing::Selective) {
            // Only the attention core: 4 b s^2 (H d) of 2 b s (matmul params) + 4 b s^2 (H d) flops.
            const double core = 4.0 * static_cast<double>(tr.sequence_length) *
                                static_cast<double>(s.model.num_heads * s.model.head_dim);
            const double block = 2.0 * static_cast<double>(prep.layout.dense_layer.matmulParams());
            a.recompute_fraction = core / (3.0 * (block + core));
        }
    }
}

void momentTerms(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                 int64_t microbatches, const StageFacts& facts, MomentTerms& t, bool by_block,
                 const StageActivations* known) {
    const TrainingConfig& tr = s.training;
    const ParallelConfig& par = s.parallelism;
    const bool full_ft = tr.finetuning == Finetuning::Full;
    const bool step_in_backward = tr.optimizer_in_backward;

    t.step_in_backward = step_in_backward;
    t.optimizer_offloaded = par.offload_optimizer;
    t.stage = facts.stage;
    setStageInFlight(t.stage, par, microbatches);
    const PipelineStage& st = t.stage;
    if (known && !by_block) {
        if (known != &t.act) t.act = *known;  // else already these terms' own (accountLayout)
    } else
        stageActivations(s, prep, blocks, st, by_block, t.act);
    const StageActivations& act = t.act;
    const double in_flight = st.in_flight;

    // Expert parallelism: all-to-all dispatch + combine buffers of one MoE block.
    t.all_to_all = 0;
    if (par.expert > 1 && st.num_moe_layers > 0 && s.model.moe) {
        const double tokens = static_cast<double>(tr.micro_batch_size * tr.sequence_length / par.context);
        t.all_to_all = roundBytes(2.0 * tokens * static_cast<double>(s.model.moe->experts_per_token) *
                                  static_cast<double>(s.model.hidden_size) * bytesOf(prep.plan.activations));
    }
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

    const EndActivations& ends = blocks.ends;
    t.ends = EndsSaved{};
    if (st.index == 0) t.ends.embedding = static_cast<double>(ends.embedding_saved);
    if (st.has_lm_head) {
        t.ends.final_norm = static_cast<double>(ends.final_norm_saved);
        t.ends.head = t.ends.final_norm + static_cast<double>(ends.logits_saved);
        t.ends.loss_peak = static_cast<double>(ends.loss_peak);
        t.ends.loss_backward_peak = static_cast<double>(ends.loss_backward_peak);
    }
    t.other_heads = st.head_in_flight - 1.0;

    // A stage without the model's ends (neither first nor last) keeps none
    // at any moment: every endsBytesOf below would round 0.
    const bool has_ends = st.index == 0 || st.has_lm_head;

    t.activations_forward = roundBytes(act.one_microbatch * in_flight);
    if (has_ends && !st.has_lm_head) {
        // The first stage's ends are its embedding's output alone (no final
        // norm, logits or loss: every other term is +0.0), the same at
        // every moment with `in_flight` micro-batches alive.
        t.ends_forward = t.ends_loss = t.ends_head_backward = endsBytesOf(t.ends, in_flight, 0.0, EndsMoment::Between);
    } else if (has_ends) {
        t.ends_forward = endsBytesOf(t.ends, in_flight, t.other_heads, EndsMoment::AfterForward);
        t.ends_loss = endsBytesOf(t.ends, in_flight, t.other_heads, EndsMoment::Loss);
        // The head's backward (log-softmax and nll gradients, the logits' gradient)
        // runs and frees its buffers before the first block's backward starts, so
        // the two are separate moments (measured: validation/step_truth.py).
        t.ends_head_backward = endsBytesOf(t.ends, in_flight, t.other_heads, EndsMoment::HeadBackward);
    } else {
        t.ends_forward = t.ends_loss = t.ends_head_backward = 0;
    }

    // The first block's backward: its working memory (+ its recomputed
    // activations), the head's weight gradient already allocated.
    t.head_gradients = st.has_lm_head && grads_grow ? facts.head_gradient_bytes : 0;
    // every-k may leave the last block unrecomputed: nothing is recomputed yet.
    const double first_recompute = !by_block || act.last_recomputed ? act.recompute_block : 0.0;
    t.activations_backward_start = roundBytes(act.one_microbatch * in_flight + first_recompute + act.backward_working);
    t.ends_backward_start = !has_ends ? 0
                            : !st.has_lm_head ? t.ends_forward
                                              : endsBytesOf(t.ends, in_flight, t.other_heads, EndsMoment::Between);

    // Backward of one chunk (the whole stage, or 1/v of it when interleaved)
    // frees that chunk; the rest stays in flight.
    t.chunks = par.schedule == PipelineSchedule::Interleaved1F1B ? static_cast<double>(par.virtual_stages) : 1.0;
    t.others = std::max(0.0, in_flight - 1.0 / t.chunks);
    // One micro-batch per step: the stage's last block's own gradients are
    // not allocated yet at its worst (StageFacts::late_gradient_bytes); with
    // several, a later backward ends with all of them allocated.
    t.late_gradients = grads_grow && microbatches == 1 && st.num_layers > 0 ? facts.late_gradient_bytes : 0;
    t.weight_copies_end = weightCopiesOf(facts.autocast_copies, facts.lasting_copies, t.others);
    // The last block's backward: all gradients exist while it is recomputed
    // (checkpointing) and its intermediates' gradients are alive.
    t.activations_backward_end = roundBytes(act.one_microbatch * t.others + act.recompute_block +
                                            act.recompute_block_kept + act.backward_working);
    t.ends_backward_end = has_ends ? endsBytesOf(t.ends, t.others, t.other_heads, EndsMoment::Between) : 0;

    // Two backward chunks in a row (GPipe; 1F1B's cool-down): the next one
    // starts with every gradient allocated and one chunk fewer in flight; with
    // whole-stage chunks it is the next micro-batch's head backward.
    t.backward_next = in_flight * t.chunks >= 2.0;
    t.ends_backward_next = 0;
    if (t.backward_next && has_ends && !st.has_lm_head)
        t.ends_backward_next = t.ends_backward_end;  // the embedding's alone, as backward_end's
    else if (t.backward_next && has_ends)
        t.ends_backward_next =
            t.chunks == 1.0 ? endsBytesOf(t.ends, t.others, std::max(0.0, t.other_heads - 1.0), EndsMoment::HeadBackward)
                            : t.ends_backward_end;
}

namespace {

// What the model's ends add under ZeRO-3 at moment m (StageFacts::ends):
// gathered weights, and their unsharded gradient. The next backward chunk is
// the next micro-batch's head backward with whole-stage chunks on the last
// stage, else like the backward's end.
struct EndsAt {
    int64_t gathered = 0, gradient = 0;
};
EndsAt gatheredEndsAt(const StageFacts& f, const MomentTerms& t, int m) {
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

MemoryBreakdown momentBreakdown(const StageFacts& f, const MomentTerms& t, int m) {
    MemoryBreakdown b;
    momentBreakdown(f, t, m, b);
    return b;
}

void momentBreakdown(const StageFacts& f, const MomentTerms& t, int m, MemoryBreakdown& b) {
    // The resident set holds weights, master weights, optimizer states,
    // workspace and comm buffers only (stageResident): the other components
    // are set here, comm buffers added to.
    b = f.resident;
    const EndsAt ends = gatheredEndsAt(f, t, m);
    switch (m) {
        case kForward:
        case kLoss:
        case kBackwardHead:
        case kBackwardStart:
            b[Component::Gradients] = t.gradients_forward;
            b[Component::WeightCopies] = t.weight_copies;
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
                b[Component::Gradients] += t.head_gradients;
                b[Component::Activations] = t.activations_backward_start;
                b[Component::LogitsLoss] = t.ends_backward_start;
            }
            return;
        case kBackwardEnd:
        case kBackwardNext:
            if (m == kBackwardNext && !t.backward_next) {
                b = MemoryBreakdown{};
                return;
            }
            b[Component::Gradients] = f.states.gpu.gradients - t.late_gradients;
            b[Component::GatheredWeights] = f.gathered + ends.gathered;
            b[Component::CommBuffers] += f.scatter + t.all_to_all + ends.gradient;
            b[Component::WeightCopies] = t.weight_copies_end;
            b[Component::Activations] = t.activations_backward_end;
            b[Component::LogitsLoss] = m == kBackwardEnd ? t.ends_backward_end : t.ends_backward_next;
            return;
        case kStep:
            if (t.step_in_backward) return;  // nothing is left to step
            b[Component::Gradients] = f.states.gpu.gradients;
            b[Component::WeightCopies] = f.fp8_copies;
            if (!t.optimizer_offloaded) b[Component::OptimizerTransient] = f.step_transient_bytes;
            return;
        default: b = MemoryBreakdown{};  // kBackwardRecompute: accountStep's, block by block
    }
}

bool momentTotals(const StageFacts& f, const MomentTerms& t, int64_t (&totals)[kMomentCount]) {
    const int64_t gradients = f.states.gpu.gradients;
    const int64_t gradients_end = gradients - t.late_gradients;
    const int64_t transient = t.optimizer_offloaded ? 0 : f.step_transient_bytes;
    // Every term in [0, 2^56): a component is a sum of at most four terms
    // and a moment of eleven components, so nothing reaches 2^62 and the
    // plain sums are momentBreakdown's saturated totals (and no component of
    // a moment is negative or too large, the estimate's too_large check).
    // The stage's own terms (gradients, the late and the head's ones,
    // gathered units, fp8 copies, the step's temporaries) are in
    // stage_bits; these are the layout's (the gradients less the late ones
    // where they apply, which is where they cannot be negative).
    const uint64_t bits =
        f.stage_bits | static_cast<uint64_t>(gradients_end) | static_cast<uint64_t>(t.weight_copies) | static_cast<uint64_t>(t.weight_copies_end) |
        static_cast<uint64_t>(t.all_to_all) | static_cast<uint64_t>(t.activations_forward) |
        static_cast<uint64_t>(t.activations_backward_start) | static_cast<uint64_t>(t.activations_backward_end) |
        static_cast<uint64_t>(t.ends_forward) | static_cast<uint64_t>(t.ends_loss) |
        static_cast<uint64_t>(t.ends_head_backward) | static_cast<uint64_t>(t.ends_backward_start) |
        static_cast<uint64_t>(t.ends_backward_end) | static_cast<uint64_t>(t.ends_backward_next);
    if ((bits >> 56) != 0) return false;
    // The moments as momentBreakdown makes them, summed.
    const int64_t held = f.resident_bytes + t.gradients_forward + t.weight_copies + f.gathered;
    // The ends under ZeRO-3 (StageFacts::ends; in stage_bits): gathered + gradient.
    auto ends = [&](int m) {
        const EndsAt e = gatheredEndsAt(f, t, m);
        return e.gathered + e.gradient;
    };
    totals[kForward] = held + t.all_to_all + t.activations_forward + t.ends_forward + ends(kForward);
    totals[kLoss] = held + t.activations_forward + t.ends_loss + ends(kLoss);
    totals[kBackwardHead] =
        held + t.all_to_all + f.scatter + t.activations_forward + t.ends_head_backward + ends(kBackwardHead);
    totals[kBackwardStart] = held + t.head_gradients + t.all_to_all + f.scatter + t.activations_backward_start +
                             t.ends_backward_start + ends(kBackwardStart);
    totals[kBackwardRecompute] = 0;
    const int64_t end = f.resident_bytes + gradients_end + f.gathered + f.scatter + t.all_to_all + t.weight_copies_end +
                        t.activations_backward_end;
    totals[kBackwardEnd] = end + t.ends_backward_end + ends(kBackwardEnd);
    totals[kBackwardNext] = t.backward_next ? end + t.ends_backward_next + ends(kBackwardNext) : 0;
    totals[kStep] = t.step_in_backward ? f.resident_bytes : f.resident_bytes + gradients + f.fp8_copies + transient;
    return true;
}

bool momentsAsTermsMakeThem(const Scenario& s, const LayoutActivations& blocks, int64_t microbatches, bool by_block) {
    const ParallelConfig& par = s.parallelism;
    // ZeRO-3 / FSDP and parameter offloading: applyFsdpPolicy changes no
    // moment (its early return, core/fsdp_policy.cpp) when the parameters
    // are resharded to all ranks after forward (kept = the units) and the
    // gradients are reduced every micro-batch (end = the units, no deferred
    // gradients); the gathered units and scatter are then the terms'.
    const bool fsdp = par.zero_stage >= 3 || par.offload_parameters;
    const bool fsdp_per_unit = par.reshard_after_forward && par.reshard_after_forward_ranks <= 1 &&
                               !(par.fsdp_gradient_sync == FsdpGradientSync::LastMicrobatch && microbatches > 1);
    return (!fsdp || fsdp_per_unit) && blocks.qlora_kept_inputs <= 0 && !s.training.optimizer_in_backward &&
           !by_block;
}

}  // namespace trainmem
