// Every-k checkpointing and its kin (megatron-block, torchtitan-layer,
// megatron-uniform): which blocks are recomputed depends on their depth, so
// the stage's activations and its recomputed-block moment go block by block.
// Every other policy treats the blocks of a kind alike and is counted
// (step_moments.cpp). Terms and sources: docs/memory-model.md §The peak of one step.
#include <algorithm>

#include "core/activations/activations.h"
#include "core/account/step_moments.h"

namespace trainmem {

void blockByBlockActivations(const Scenario& s, const LayoutActivations& blocks, const PipelineStage& st,
                             StageActivations& a, int64_t& recomputed) {
    const TrainingConfig& tr = s.training;
    for (int64_t l = st.first_layer; l < st.first_layer + st.num_layers; ++l) {
        const LayerActivations& la = blocks.kinds.of(s.model, l);
        a.no_recompute += static_cast<double>(la.saved);
        const bool checkpointed = checkpointsLayer(tr, l, st.first_layer);
        a.last_recomputed = checkpointed;
        a.one_microbatch += static_cast<double>(checkpointKeptBytes(tr, l, st.first_layer, la));
        if (checkpointed) {
            a.recompute_block = std::max(a.recompute_block, static_cast<double>(la.saved));
            ++recomputed;
        }
        a.backward_working = std::max(a.backward_working, static_cast<double>(la.backward_working));
    }
    if (tr.checkpointing == Checkpointing::MegatronUniform && st.num_layers > 0) {
        // A chunk replays together: the last block's backward holds its
        // chunk's replay, the first block's its own (core/activations/activations_op_policy.cpp).
        const int64_t last = st.first_layer + st.num_layers - 1;
        a.recompute_block = recomputedBytes(tr, s.model, blocks.kinds, last, st.first_layer);
        a.recompute_block_kept =
            recomputedBytes(tr, s.model, blocks.kinds, st.first_layer, st.first_layer) - a.recompute_block;
    }
}

// The backward of a recomputed block between the last and the first: the
// blocks above it have run backward (their saved tensors freed, their
// gradients made), the blocks below it still hold what they kept. Of these
// moments the one holding the most (measured: validation/step_truth.py,
// torchtitan-layer with the last block recomputed peaks at a lower
// recomputed block). The stage's last block's moment is backward_start, its
// first's backward_end.
void recomputedBlockMoment(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                           const MomentTerms& t, StepAccount& acc) {
    const TrainingConfig& tr = s.training;
    const ParallelConfig& par = s.parallelism;
    const PrecisionPlan& plan = prep.plan;
    const ParameterLayout& lay = prep.layout;
    const PipelineStage& st = t.stage;
    const bool full_ft = tr.finetuning == Finetuning::Full;
    const bool grads_grow = full_ft && !t.grads_in_forward && par.zero_stage < 2 && !tr.optimizer_in_backward;
    const int64_t end = st.first_layer + st.num_layers;
    auto params = [&](int64_t l) {
        return static_cast<double>(blockParameters(lay, s.model, l).total().params);
    };
    double stage_params = 0;
    for (int64_t l = st.first_layer; l < end; ++l) stage_params += params(l);
    double below = 0, upto = 0, best = -1, best_kept = 0, best_replay = 0;
    int64_t best_above = 0;
    for (int64_t l = st.first_layer; l < end; ++l) {
        const LayerActivations& la = blocks.kinds.of(s.model, l);
        const bool checkpointed = checkpointsLayer(tr, l, st.first_layer);
        upto += params(l);
        if (checkpointed && l != end - 1 && l != st.first_layer) {
            // The gradients of the blocks above, and the block's own MLP
            // output projection's, made first in its backward (as
            // late_gradients).
            const double own = static_cast<double>(blockParameters(lay, s.model, l).dense_mlp.largest_tensor);
            const int64_t above = grads_grow ? roundBytes((stage_params - upto + own) / static_cast<double>(par.tensor) *
                                                          bytesOf(plan.gradients))
                                             : 0;
            const double replay = recomputedBytes(tr, s.model, blocks.kinds, l, st.first_layer);
            if (below + replay + static_cast<double>(above) > best) {
                best = below + replay + static_cast<double>(above);
                best_kept = below, best_replay = replay, best_above = above;
                acc.backward_recompute_layer = l;
            }
        }
        below += static_cast<double>(checkpointKeptBytes(tr, l, st.first_layer, la));
    }
    if (acc.backward_recompute_layer >= 0) {
        MemoryBreakdown& br = acc.backward_recompute;
        br = acc.backward_start;
        br[Component::Gradients] += best_above;
        const double others_alive = (st.in_flight - 1.0) * t.act.one_microbatch;
        br[Component::Activations] = roundBytes(others_alive + best_kept + best_replay + t.act.backward_working);
    }
}

}  // namespace trainmem
