#pragma once
// The step's moments of one stage, for one layout (inside the core: the
// account, the estimate and the search's floor use it; the rest of the
// project reads StepAccount and Estimate).
//
// Each moment (the end of the forward, the loss, the head's backward, ...)
// is the stage's resident set plus a few terms that depend on the layout.
// The terms are computed once per stage and layout (momentTerms); the full
// account (accountStep) builds every moment's breakdown from them, and the
// estimate's usual path (accountLayout) only adds them up per moment and
// builds the one breakdown it reports, the heaviest stage's peak moment
// (momentBreakdown). Both take their numbers from the same terms, so the
// peak and its breakdown are the account's by construction.
// blockByBlockActivations and recomputedBlockMoment are in step_account_blocks.cpp.
#include <cstdint>
#include <algorithm>
#include <iterator>

#include "core/base/byte_round.h"
#include "core/account/account_types.h"
#include "core/account/estimate_result.h"
#include "core/training/pipeline.h"

namespace trainmem {

// Saturating: past 2^62 the estimate is "too large to represent" (byte_count.h).
inline int64_t roundBytes(double b) { return roundedBytes(b); }

// What the stage's blocks save, as checkpointing leaves them.
struct StageActivations {
    double one_microbatch = 0;
    double no_recompute = 0;  // one micro-batch, nothing recomputed
    double recompute_block = 0;
    double recompute_block_kept = 0;  // Op: the replayed block's own kept bytes
    double backward_working = 0;
    double recompute_fraction = 0;
    bool last_recomputed = false;  // the stage's last block (the first to run backward) is recomputed
};
StageActivations stageActivations(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                                  const PipelineStage& st);
// The same, `by_block` being checkpointsSomeLayers(s.training.checkpointing).
StageActivations stageActivations(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                                  const PipelineStage& st, bool by_block);
// The same, written over `a` (momentTerms: into its terms, not copied there).
void stageActivations(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                      const PipelineStage& st, bool by_block, StageActivations& a);
// Every-k, megatron-block, torchtitan-layer and megatron-uniform: which
// blocks are recomputed depends on their depth, so block by block
// (step_account_blocks.cpp).
void blockByBlockActivations(const Scenario& s, const LayoutActivations& blocks, const PipelineStage& st,
                             StageActivations& a, int64_t& recomputed);

// One micro-batch of the stage's blocks as checkpointing leaves them, for
// the policies that treat every block alike (not every-k and its kin): the
// sum over the block kinds (dense / MoE, rotary / NoPE) of blocks x per
// block. stageActivations and stagePeakFloor both take it from here.
double uniformMicrobatchActivations(Checkpointing policy, const LayoutActivations& blocks, const PipelineStage& st);

// Gradients are allocated at the forward peak (see momentTerms).
inline bool gradientsAtForward(const TrainingConfig& tr, const PrecisionPlan& plan, int64_t microbatches,
                               double in_flight) {
    return !tr.optimizer_in_backward &&
           (plan.master.has_value() || static_cast<double>(microbatches) > in_flight);
}

inline int64_t weightCopiesOf(int64_t autocast_per_microbatch, int64_t lasting, double microbatches_alive) {
    // Each block's casts are saved by that block's matmuls and freed by its
    // backward, so they come and go with the saved activations. (No casts:
    // 0 x a finite count rounds to 0.)
    if (autocast_per_microbatch == 0) return addBytes(0, lasting);
    return addBytes(roundBytes(static_cast<double>(autocast_per_microbatch) * microbatches_alive), lasting);
}

// The model's ends a stage keeps, per micro-batch (zero where absent).
struct EndsSaved {
    double embedding = 0;   // first stage
    double head = 0;        // last stage: final norm + logits kept until the head's backward
    double final_norm = 0;
    double loss_peak = 0;   // the current micro-batch's loss, at its worst (includes its logits)
    double loss_backward_peak = 0;  // the current micro-batch's head backward, at its worst
};
// The ends stage `st` keeps, from the layout's end activations.
inline EndsSaved endsSaved(const EndActivations& ends, const PipelineStage& st) {
    EndsSaved e;
    if (st.index == 0) e.embedding = static_cast<double>(ends.embedding_saved);
    if (st.has_lm_head) {
        e.final_norm = static_cast<double>(ends.final_norm_saved);
        e.head = e.final_norm + static_cast<double>(ends.logits_saved);
        e.loss_peak = static_cast<double>(ends.loss_peak);
        e.loss_backward_peak = static_cast<double>(ends.loss_backward_peak);
    }
    return e;
}
inline int64_t endsBytesOf(const EndsSaved& e, double micro_alive, double heads_saved, EndsMoment moment) {
    double b = e.embedding * micro_alive + e.head * heads_saved;
    switch (moment) {
        case EndsMoment::Between: break;
        case EndsMoment::AfterForward: b += e.final_norm; break;
        case EndsMoment::Loss: b += e.final_norm + e.loss_peak; break;
        case EndsMoment::HeadBackward: b += e.final_norm + e.loss_backward_peak; break;
    }
    return roundBytes(b);
}

// The moments, in the order the peak is chosen among them (the first of
// equal totals is the peak: stagePeak, the estimate).
enum Moment : int {
    kForward,
    kLoss,
    kBackwardHead,
    kBackwardStart,
    kBackwardRecompute,
    kBackwardEnd,
    kBackwardNext,
    kStep,
    kMomentCount
};
inline constexpr Phase kMomentPhases[kMomentCount] = {Phase::Forward,  Phase::Loss,     Phase::Backward,
                                                      Phase::Backward, Phase::Backward, Phase::Backward,
                                                      Phase::Backward, Phase::OptimizerStep};

// The terms of one stage's moments for one layout that depend on its
// activations, each rounded to bytes once (the rest is its ScheduledStage).
struct LayoutTerms {
    StageActivations act;
    int64_t all_to_all = 0;  // expert parallelism's dispatch + combine buffers of one MoE block
    int64_t activations_forward = 0;
    int64_t activations_backward_start = 0;
    int64_t activations_backward_end = 0;
    int64_t ends_forward = 0, ends_loss = 0, ends_head_backward = 0;
    int64_t ends_backward_start = 0, ends_backward_end = 0, ends_backward_next = 0;
};
// Everything one stage's moments hold beyond the resident set, for one layout.
struct MomentTerms : ScheduledStage, LayoutTerms {};
static_assert(kMomentCount == std::size(ScheduledStage{}.base));

// The stage's terms for the scenario's schedule and `microbatches` per step.
void scheduledStage(const Scenario& s, const PreparedScenario& prep, int64_t microbatches, const StageFacts& facts,
                    ScheduledStage& t);
// The stage's terms for the layout's activations: layoutTerms, inline at
// the end of this header. Both:
void momentTerms(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                 int64_t microbatches, const StageFacts& facts, MomentTerms& t, bool by_block);

// Every-k and its kin: the worst backward of a recomputed block between the
// stage's last and first (StepAccount::backward_recompute and its layer),
// made from acc.backward_start (step_account_blocks.cpp).
void recomputedBlockMoment(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                           const MomentTerms& t, StepAccount& acc);

// Moment `m`'s breakdown as the terms make it, before the recipes that
// adjust the moments afterwards (FSDP's policies, QLoRA's kept inputs, the
// step in backward) and without every-k's recomputed-block moment
// (kBackwardRecompute: zero here, accountStep makes it).
// `sched` is the stage's ScheduledStage, `t` its layout terms.
MemoryBreakdown momentBreakdown(const StageFacts& facts, const ScheduledStage& sched, const LayoutTerms& t, int m);
// The same, written over `out`.
void momentBreakdown(const StageFacts& facts, const ScheduledStage& sched, const LayoutTerms& t, int m,
                     MemoryBreakdown& out);

// The eight moments' totals without their breakdowns: the totals of
// momentBreakdown(facts, t, m), from the stage's ScheduledStage (whose
// `base` holds its terms' sums) and its layout terms. Exact while every
// term is below 2^56 bytes (then no sum saturates); false, with nothing
// written, otherwise.
inline bool momentTotals(const ScheduledStage& sched, const LayoutTerms& t, int64_t (&totals)[kMomentCount]) {
    // Every term in [0, 2^56): a component is a sum of at most four terms
    // and a moment of eleven components, so nothing reaches 2^62 and the
    // plain sums are momentBreakdown's saturated totals (and no component of
    // a moment is negative or too large, the estimate's too_large check).
    const uint64_t a2a = static_cast<uint64_t>(t.all_to_all);
    const uint64_t fwd = static_cast<uint64_t>(t.activations_forward);
    const uint64_t start = static_cast<uint64_t>(t.activations_backward_start);
    const uint64_t end = static_cast<uint64_t>(t.activations_backward_end);
    const uint64_t e[6] = {static_cast<uint64_t>(t.ends_forward),        static_cast<uint64_t>(t.ends_loss),
                           static_cast<uint64_t>(t.ends_head_backward),  static_cast<uint64_t>(t.ends_backward_start),
                           static_cast<uint64_t>(t.ends_backward_end),   static_cast<uint64_t>(t.ends_backward_next)};
    if (((sched.bits | a2a | fwd | start | end | e[0] | e[1] | e[2] | e[3] | e[4] | e[5]) >> 56) != 0) return false;
    const uint64_t* b = sched.base;
    totals[kForward] = static_cast<int64_t>(b[kForward] + a2a + fwd + e[0]);
    totals[kLoss] = static_cast<int64_t>(b[kLoss] + fwd + e[1]);  // no all-to-all while the loss runs
    totals[kBackwardHead] = static_cast<int64_t>(b[kBackwardHead] + a2a + fwd + e[2]);
    totals[kBackwardStart] = static_cast<int64_t>(b[kBackwardStart] + a2a + start + e[3]);
    totals[kBackwardRecompute] = 0;
    totals[kBackwardEnd] = static_cast<int64_t>(b[kBackwardEnd] + a2a + end + e[4]);
    totals[kBackwardNext] = sched.backward_next ? static_cast<int64_t>(b[kBackwardNext] + a2a + end + e[5]) : 0;
    totals[kStep] = static_cast<int64_t>(b[kStep]);
    return true;
}

// Whether the recipe leaves the moments as momentBreakdown makes them (no
// FSDP policy that keeps more than the units, QLoRA kept inputs, step in
// backward or block-by-block recomputation): then the totals above are the
// account's.
// `by_block` as for momentTerms.
bool momentsAsTermsMakeThem(const Scenario& s, const LayoutActivations& blocks, int64_t microbatches, bool by_block);
// Its two parts: the recipe's and the schedule's (once per plan and
// schedule: StagePlan::moments_as_terms), and the layout's activations'.
bool scheduleKeepsMomentsAsTerms(const Scenario& s, int64_t microbatches);
inline bool layoutKeepsMomentsAsTerms(const LayoutActivations& blocks, bool by_block) {
    return blocks.qlora_kept_inputs <= 0 && !by_block;
}

// ---- layoutTerms, inline: it runs once per candidate stage of every layout
// a search accounts (accountLayout, layout_account.cpp), and a call costs a
// tenth of it. It and stageActivations call each other's halves, so they
// are one unit.
// The unit of the stage's blocks when they are all of one rotary kind
// (every block of a uniform model, and most stages of the others) and the
// layout's activations were made for this policy: then
// BlockKindActivations::sum is the blocks times that kind's field (the
// other kinds add 0 x their field, +0.0) and largest is that field (at
// least 0), as the unit holds them. nullptr when the stage mixes kinds or
// has no block.
inline const LayoutActivations::BlockUnit* singleKindUnit(const LayoutActivations& blocks, const PipelineStage& st,
                                                   Checkpointing policy) {
    if (st.num_layers <= 0 || st.num_nope_layers != 0 || blocks.unit_policy != policy || blocks.kinds.hybrid)
        return nullptr;
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
        const LayerParameters& unit = prep.layout.hybrid ? blockParameters(prep.layout, s.model, 0) : prep.layout.dense_layer;
        const double block = 2.0 * static_cast<double>(unit.matmulParams());
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
