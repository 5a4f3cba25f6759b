#pragma once
// layoutTerms (core/account/step_moments.h), inline: it runs once per candidate
// stage of every layout a search accounts (accountLayout, estimate.cpp),
// and a call costs a tenth of it. Only the account's files include this
// (step_moments.cpp, estimate.cpp, and step_account_prepare.cpp for the
// search's floor).
#include <algorithm>

#include "core/account/step_moments.h"

namespace trainmem {

// The unit of the stage's blocks when they are all of one rotary kind
// (every block of a uniform model, and most stages of the others) and the
// layout's activations were made for this policy: then
// BlockKindActivations::sum is the blocks times that kind's field (the
// other kinds add 0 x their field, +0.0) and largest is that field (at
// least 0), as the unit holds them. nullptr when the stage mixes kinds or
// has no block.
inline const LayoutActivations::BlockUnit* singleKindUnit(const LayoutActivations& blocks, const PipelineStage& st,
                                                   Checkpointing policy) {
    if (st.num_layers <= 0 || st.num_nope_layers != 0 || blocks.unit_policy != policy) return nullptr;
    if (st.num_moe_layers == 0) return &blocks.dense_unit;
    if (st.num_moe_layers == st.num_layers) return &blocks.moe_unit;
    return nullptr;
}

// The extra forward compute recomputation costs, as a fraction of the
// stage's forward + backward: a recomputed block's forward is a third of
// its forward + backward.
inline double recomputeFraction(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                                int64_t recomputed, int64_t layers) {
    const TrainingConfig& tr = s.training;
    if (layers <= 0) return 0;
    if (tr.checkpointing == Checkpointing::Selective) {
        // Only the attention core: 4 b s^2 (H d) of 2 b s (matmul params) + 4 b s^2 (H d) flops.
        const double core = 4.0 * static_cast<double>(tr.sequence_length) *
                            static_cast<double>(s.model.num_heads * s.model.head_dim);
        const double block = 2.0 * static_cast<double>(prep.layout.dense_layer.matmulParams());
        return core / (3.0 * (block + core));
    }
    const double f = static_cast<double>(recomputed) / static_cast<double>(layers) / 3.0;
    return tr.checkpointing == Checkpointing::Op ? f * blocks.kinds.dense.op_recomputed_matmul_share : f;
}

// A stage whose blocks are all of `unit`'s kind: n times its sums. Writes
// every field of `a`.
inline void unitStageActivations(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                                 const LayoutActivations::BlockUnit& unit, const PipelineStage& st,
                                 StageActivations& a) {
    const double n = static_cast<double>(st.num_layers);
    a.no_recompute = n * unit.saved;
    a.one_microbatch = n * unit.kept;
    a.backward_working = unit.backward_working;
    a.recompute_block = unit.recompute_block;
    a.recompute_block_kept = unit.recompute_block_kept;
    a.last_recomputed = unit.recomputed;
    a.recompute_fraction = recomputeFraction(s, prep, blocks, unit.recomputed ? st.num_layers : 0, st.num_layers);
}

// The stage's terms for the layout's activations, `sched` being its
// ScheduledStage. `by_block` is checkpointsSomeLayers(s.training.checkpointing),
// which every caller has at hand. `known`: the stage's activations when
// already computed for a stage with the same blocks (stageActivations
// depends on the kinds' counts only); it may be t.act itself (nothing
// before it writes t.act).
[[gnu::always_inline]] inline void layoutTerms(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                 const ScheduledStage& sched, LayoutTerms& t, bool by_block, const StageActivations* known = nullptr) {
    const TrainingConfig& tr = s.training;
    const PipelineStage& st = sched.stage;
    if (known && !by_block) {
        if (known != &t.act) t.act = *known;  // else already these terms' own (accountLayout)
    } else if (const LayoutActivations::BlockUnit* unit = by_block ? nullptr : singleKindUnit(blocks, st, tr.checkpointing)) {
        unitStageActivations(s, prep, blocks, *unit, st, t.act);  // stageActivations' usual case, inline
    } else {
        stageActivations(s, prep, blocks, st, by_block, t.act);
    }
    const StageActivations& act = t.act;
    const double in_flight = st.in_flight;

    // Expert parallelism: all-to-all dispatch + combine buffers of one MoE block.
    t.all_to_all = sched.all_to_all ? blocks.all_to_all : 0;

    // A stage without the model's ends (neither first nor last) keeps none
    // at any moment: every endsBytesOf below would round 0.
    const bool has_ends = st.index == 0 || st.has_lm_head;
    const EndsSaved ends = has_ends ? endsSaved(blocks.ends, st) : EndsSaved{};

    t.activations_forward = roundBytes(act.one_microbatch * in_flight);
    if (has_ends && !st.has_lm_head) {
        // The first stage's ends are its embedding's output alone (no final
        // norm, logits or loss: every other term is +0.0), the same at
        // every moment with `in_flight` micro-batches alive.
        t.ends_forward = t.ends_loss = t.ends_head_backward = endsBytesOf(ends, in_flight, 0.0, EndsMoment::Between);
    } else if (has_ends) {
        t.ends_forward = endsBytesOf(ends, in_flight, sched.other_heads, EndsMoment::AfterForward);
        t.ends_loss = endsBytesOf(ends, in_flight, sched.other_heads, EndsMoment::Loss);
        // The head's backward (log-softmax and nll gradients, the logits' gradient)
        // runs and frees its buffers before the first block's backward starts, so
        // the two are separate moments (measured: validation/step_truth.py).
        t.ends_head_backward = endsBytesOf(ends, in_flight, sched.other_heads, EndsMoment::HeadBackward);
    } else {
        t.ends_forward = t.ends_loss = t.ends_head_backward = 0;
    }

    // The first block's backward: its working memory (+ its recomputed
    // activations). every-k may leave the last block unrecomputed: nothing
    // is recomputed yet.
    const double first_recompute = !by_block || act.last_recomputed ? act.recompute_block : 0.0;
    t.activations_backward_start = roundBytes(act.one_microbatch * in_flight + first_recompute + act.backward_working);
    t.ends_backward_start = !has_ends ? 0
                            : !st.has_lm_head ? t.ends_forward
                                              : endsBytesOf(ends, in_flight, sched.other_heads, EndsMoment::Between);

    // The last block's backward: all gradients exist while it is recomputed
    // (checkpointing) and its intermediates' gradients are alive; `others`
    // micro-batches stay in flight.
    t.activations_backward_end = roundBytes(act.one_microbatch * sched.others + act.recompute_block +
                                            act.recompute_block_kept + act.backward_working);
    t.ends_backward_end = has_ends ? endsBytesOf(ends, sched.others, sched.other_heads, EndsMoment::Between) : 0;

    t.ends_backward_next = 0;
    if (sched.backward_next && has_ends && !st.has_lm_head)
        t.ends_backward_next = t.ends_backward_end;  // the embedding's alone, as backward_end's
    else if (sched.backward_next && has_ends)
        t.ends_backward_next = sched.chunks == 1.0 ? endsBytesOf(ends, sched.others,
                                                                 std::max(0.0, sched.other_heads - 1.0),
                                                                 EndsMoment::HeadBackward)
                                                   : t.ends_backward_end;
}

}  // namespace trainmem
