#pragma once
// Which pipeline stages the estimate accounts (inside the core: layout_account.cpp
// and the tests read it): the candidate stages that can be the heaviest, and
// the later candidates a layout can leave out because they provably stay
// within stage 0. Terms: docs/layout-search.md §How it is computed.
#include <algorithm>
#include <cstdint>

#include "core/training/pipeline.h"
#include "core/account/step_account.h"
#include "core/account/step_moments.h"

namespace trainmem {

// Stages that can be the heaviest, in increasing order (the first of equal
// peaks is the estimate's). Stages between the first and the last with the
// same blocks (as many, as many MoE blocks, the same kind first) differ
// only in how many micro-batches they keep in flight, which does not grow
// with the index under any schedule; every moment of a later one is at most
// a moment of the earlier one (a later stage can hold the gradients at its
// forward peak, m > in flight, but then the earlier one's last backward
// holds them too with at least as many activations), so only the first of
// each kind counts. Uniform models: 0, 1, the first stage with an extra
// block, and the last. Models whose blocks differ along the depth (leading
// dense blocks, a layer frequency) have a few kinds of stages more.
// Every-k checkpointing (and Megatron's block and torchtitan's layer
// policies) recomputes blocks by depth, so there stages are
// compared one by one unless every block is alike and p > 4 (the rule above).
template <class F>
void forEachCandidateStage(const Scenario& s, const PreparedScenario& prep, F&& visit) {
    const int64_t p = s.parallelism.pipeline;
    const int64_t layers = s.model.num_layers;
    const int64_t extra = layers % p;
    if (checkpointsSomeLayers(s.training.checkpointing)) {
        if (!prep.uniform_blocks || p <= 4) {
            for (int64_t i = 0; i < p; ++i) visit(i);
            return;
        }
        visit(0);
        visit(1);
        if (extra > 0 && p - extra > 1 && p - extra < p - 1) visit(p - extra);
        visit(p - 1);
        return;
    }
    visit(0);
    if (p == 1) return;
    if (prep.uniform_blocks) {
        if (p > 2) visit(1);
        if (extra > 0 && p - extra > 1 && p - extra < p - 1) visit(p - extra);
        visit(p - 1);
        return;
    }
    // Kinds of middle stages seen so far: (blocks, MoE blocks, NoPE blocks,
    // NoPE MoE blocks, first is MoE, first is NoPE).
    struct Kind {
        int64_t layers, moe, nope, nope_moe;
        bool first_moe, first_nope;
    };
    constexpr int kKinds = 32;
    Kind seen[kKinds];
    int count = 0;
    const int64_t base = layers / p;
    for (int64_t i = 1; i < p - 1; ++i) {
        const int64_t first = i * base + std::max<int64_t>(0, i - (p - extra));
        const int64_t n = base + (i >= p - extra ? 1 : 0);
        const Kind k{n,
                     moeLayersIn(s.model, first, n),
                     nopeLayersIn(s.model, first, n),
                     nopeMoeLayersIn(s.model, first, n),
                     s.model.isMoeLayer(first),
                     !s.model.isRopeLayer(first)};
        bool known = false;
        for (int j = 0; j < count && !known; ++j)
            known = seen[j].layers == k.layers && seen[j].moe == k.moe && seen[j].nope == k.nope &&
                    seen[j].nope_moe == k.nope_moe && seen[j].first_moe == k.first_moe &&
                    seen[j].first_nope == k.first_nope;
        if (known) continue;
        if (count < kKinds) seen[count++] = k;  // past that, visiting more stages is only slower
        visit(i);
    }
    visit(p - 1);
}

// Same kinds and counts of blocks: the same StageActivations.
inline bool sameBlocks(const PipelineStage& a, const PipelineStage& b) {
    return a.num_layers == b.num_layers && a.num_moe_layers == b.num_moe_layers &&
           a.num_nope_layers == b.num_nope_layers && a.num_nope_moe_layers == b.num_nope_moe_layers &&
           a.hybrid_layers == b.hybrid_layers;
}

// Stage j's stage-only terms against stage 0's (the premises of leaving it
// out that depend on the plan only, below): planStages sets
// StageFacts::within_first from it.
bool stageOnlyWithinFirst(const StageFacts& first, const StageFacts& f);

// Whether a later stage marked within_first (planStages) can be left out
// of a layout's estimate: no moment of it exceeds stage 0's peak, so it
// is never the heaviest (stage 0 comes first and wins ties), and its host
// bytes are at most stage 0's. Two parts: the schedule's
// (scheduledWithinFirst: once per plan, schedule and micro-batches, stored
// in ScheduledStage::within_first) and the layout's (activationsWithinFirst:
// stage 0's activations are not negative).
//
// Why. Both stages have the same blocks (same kinds and counts), so the
// same StageActivations, and neither has the LM head; stage j has no ends
// (not first, not last), stage 0 only the embedding's (>= 0). Every moment
// is the resident set plus terms (momentTotals), and the plan checked
// each stage-only term of j against stage 0's: resident bytes, gradients
// (with and without the late ones), gathered units and scatter, fp8 and
// AMP copies, the step's temporaries, host bytes. The layout's terms are
// non-decreasing in the micro-batches in flight (activations and copies:
// a per-micro-batch amount >= 0 times the count, rounded; the rounding is
// monotone), and f_j <= f_0 (checked below), so o_j <= o_0 too (o = f - 1/v).
//  - Gradients at the forward peak alike (both or neither): each moment
//    of j is at most the same moment of 0, term by term (backward_next of
//    j exists only if 0's does; on stage 0 its ends are backward_end's).
//  - j holds them and 0 does not (m > f_j, m <= f_0): j's forward, loss,
//    head and first-block backward moments hold G_j + f_j micro-batches'
//    activations and copies; stage 0's backward_end holds G_0 (no late
//    gradients: checked) and o_0 >= f_j micro-batches (checked) plus
//    recompute_block + recompute_block_kept + backward_working, which is
//    at least j's first-block extra recompute_block + backward_working when
//    recompute_block_kept >= 0 (checked). j's later moments compare as in
//    the first case (j has no late gradients: they need grads to grow, and
//    j holds them from the forward). 0 holding them and j not cannot
//    happen (m > f_0 >= f_j, or master weights for both); it is refused.
// Every term of j is then at most one of 0's, all below 2^56, so j's
// totals are plain sums too and j raises no too-large flag.
// tests/core/step_account_moments_test.cpp holds the conclusion against
// full accounts of both stages.
inline bool scheduledWithinFirst(const ScheduledStage& first, const ScheduledStage& j, const StageFacts& facts) {
    if (!facts.within_first || j.stage.in_flight > first.stage.in_flight) return false;
    if (j.grads_in_forward == first.grads_in_forward) return true;
    return j.grads_in_forward && first.late_gradients == 0 && first.others >= j.stage.in_flight;
}
// `first` is stage 0's activations for the layout.
inline bool activationsWithinFirst(const StageActivations& first) {
    return first.one_microbatch >= 0 && first.recompute_block_kept >= 0 && first.recompute_block >= 0 &&
           first.backward_working >= 0;
}

}  // namespace trainmem
