// FSDP2 policies. Sources (docs/memory-model.md §FSDP2 policies):
//  - PyTorch fully_shard's reshard_after_forward (bool or int), as documented
//    in torchtitan's docs/fsdp.md (precompile-loss-v1-748-gb5bcd76c6):
//    True frees the unsharded parameters after forward and all-gathers them
//    again in backward; False keeps them (FSDP1 SHARD_GRAD_OP, ZeRO-2); an
//    int reshards to that smaller world size after forward (ZeRO++ hpZ).
//  - PyTorch torch/distributed/pipelining/stage.py (pytorch/pytorch
//    0138610331c9) backward_maybe_with_nosync: an FSDP stage runs every
//    backward with set_reshard_after_backward(False) and
//    set_requires_gradient_sync(False); the gradients are reduced once after
//    the last. torch/distributed/fsdp/_fully_shard/_fsdp_param.py
//    (17a7e1e09b3e) to_accumulated_grad_if_needed: the unsharded gradient is
//    kept in reduce_dtype while gradients are not synced.
//  - The ends (parallelism.fsdp_ends): torch/distributed/fsdp/_fully_shard/
//    _fsdp_state.py (pytorch/pytorch 1fd469d0c96e) FSDPState._lazy_init sets
//    the root's post_forward_mesh_info = None ("for the root, do not reshard
//    after forward"), and the root's post-backward runs in
//    _root_post_backward_final_callback, after the whole backward, because
//    its forward inputs (token ids) need no gradient. torchtitan
//    torchtitan/distributed/fsdp.py apply_fsdp_to_decoder
//    (precompile-loss-v1-748-gb5bcd76c6): tok_embeddings its own unit under
//    the blocks' policy; [norm, lm_head] one unit with reshard_after_forward
//    only under "always"; tied embeddings one unit of all three, likewise.
//    torchtune torchtune/training/_distributed.py shard_model (v0.6.0-rc1-220):
//    the model last as the root (reshard_after_forward=False), and the
//    modules named in custom_sharded_layers (recipes/configs/llama3_1/
//    8B_full.yaml: tok_embeddings, output) as units of their own.
#include "core/account/fsdp_policy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "core/base/byte_count.h"
#include "core/model/parameters.h"
#include "core/training/pipeline.h"
#include "core/account/qlora_backend.h"
#include "core/scenario/scenario.h"
#include "core/account/stage_parameters.h"
#include "core/account/account_types.h"

namespace trainmem {
namespace {

int64_t bytesOfDouble(double b) { return saturatedBytes(b); }

std::string str(int64_t v) { return std::to_string(v); }

}  // namespace

FsdpEndsBytes fsdpEndsBytes(const Scenario& s, const ParameterLayout& lay, const PipelineStage& st,
                            const PrecisionPlan& plan) {
    FsdpEndsBytes b;
    const double compute = bytesOf(plan.activations);
    const double t = static_cast<double>(s.parallelism.tensor);  // vocab-parallel under tensor parallelism
    const bool tied = lay.lm_head.params == 0;
    if (st.has_embedding) b.embedding = static_cast<double>(lay.embedding.params) / t * compute;
    double head_params = 0;
    if (st.has_lm_head) head_params += static_cast<double>(tied ? lay.embedding.matrix_params : lay.lm_head.params) / t;
    if (st.has_final_norm) head_params += static_cast<double>(lay.final_norm.params);
    b.head = head_params * compute;
    // Tied, with both ends on the stage: the head is the embedding matrix,
    // one tensor in one unit (torchtitan groups the three modules; under a
    // root unit they are one parameter anyway).
    b.one_unit = tied && st.has_embedding && st.has_lm_head;
    if (b.one_unit) b.head = static_cast<double>(lay.final_norm.params) * compute;
    if (s.training.finetuning == Finetuning::Full) b.head_gradient = head_params * compute;
    return b;
}

FsdpEndsTerms fsdpEndsTerms(const ParallelConfig& par, const FsdpEndsBytes& b) {
    FsdpEndsTerms t;
    const double both = b.embedding + b.head;
    if (par.fsdp_ends == FsdpEnds::Root || (par.fsdp_ends == FsdpEnds::OwnUnitsHeadKept && b.one_unit)) {
        // The root, or torchtitan's one unit of tied ends: gathered from the
        // unit's first forward to its post-backward after the whole
        // backward; the head's gradient from the head's backward on.
        t.forward = t.loss = t.head_backward = t.backward_start = t.backward_end = both;
        t.gradient_head_backward = t.gradient_backward_start = t.gradient_backward_end = b.head_gradient;
        return t;
    }
    // Units of their own. The head's unit is gathered for its backward and
    // its post-backward (after the norm's backward, whose input needs a
    // gradient) frees it and reduce-scatters its gradient before the last
    // block's backward; the embedding's unit is prefetched for its backward
    // during the first block's. Tied ends are one unit, for both.
    t.head_backward = b.one_unit ? both : b.head;
    t.gradient_head_backward = b.head_gradient;
    t.backward_end = b.one_unit ? both : b.embedding;
    // torchtitan keeps [norm, lm_head] from its forward (reshards it only
    // under "always"; describe that as own-units).
    if (par.fsdp_ends == FsdpEnds::OwnUnitsHeadKept) t.forward = t.loss = b.head;
    // Not resharded after forward, like the blocks: kept from forward on.
    if (!par.reshard_after_forward) t.forward = t.loss = t.head_backward = t.backward_start = t.backward_end = both;
    return t;
}

FsdpStageBytes fsdpStageBytes(const Scenario& s, const StageParameters& sp, const PrecisionPlan& plan, double units,
                              int64_t microbatches) {
    FsdpStageBytes b;
    b.units = units;
    b.microbatches = microbatches;
    const double compute = bytesOf(plan.activations);  // MixedPrecisionPolicy.param_dtype
    const double reduce = bytesOf(plan.gradients);     // MixedPrecisionPolicy.reduce_dtype
    const TrainingConfig& tr = s.training;
    if (tr.finetuning == Finetuning::Full) {
        const double params = static_cast<double>(sp.dense.params + sp.experts.params);
        b.stage_blocks = params * compute;
        b.stage_gradients = params * reduce;
    } else {
        const double base = tr.finetuning == Finetuning::Qlora ? qloraBaseBytesPerParam(tr.qlora_backend) : compute;
        b.stage_blocks = static_cast<double>(sp.frozen_matmul) * base +
                         static_cast<double>(sp.frozen_other + sp.adapters) * compute;
        b.stage_gradients = static_cast<double>(sp.adapters) * reduce;
    }
    return b;
}

bool fsdpDefersGradients(const ParallelConfig& par, const FsdpStageBytes& b) {
    return par.fsdp_gradient_sync == FsdpGradientSync::LastMicrobatch && b.microbatches > 1;
}

bool fsdpKeepsUnshardedGradients(const Scenario& s, int64_t microbatches) {
    return (s.parallelism.zero_stage >= 3 || s.parallelism.offload_parameters) && microbatches > 1 &&
           s.parallelism.fsdp_gradient_sync == FsdpGradientSync::LastMicrobatch;
}

double fsdpKeptAfterForward(const ParallelConfig& par, const FsdpStageBytes& b) {
    if (!par.reshard_after_forward) return std::max(b.units, b.stage_blocks);
    // The int form: every block of the stage keeps its 1/n copy until its
    // backward, beside the units gathered in full (counting the computing
    // unit's own 1/n too: an upper bound by one block's 1/n).
    if (par.reshard_after_forward_ranks > 1)
        return b.units + b.stage_blocks / static_cast<double>(par.reshard_after_forward_ranks);
    return b.units;
}

double fsdpGatheredAtBackwardEnd(const ParallelConfig& par, const FsdpStageBytes& b) {
    // Nothing is resharded after backward: by the stage's first block every
    // block has been gathered for a backward and is still unsharded.
    if (fsdpDefersGradients(par, b)) return std::max(b.units, b.stage_blocks);
    return b.units;
}

void applyFsdpPolicy(const ParallelConfig& par, const FsdpStageBytes& b, int64_t units_bytes,
                     const EndsGradients& ends_gradient, StepAccount& acc) {
    const double kept = fsdpKeptAfterForward(par, b);
    const double end = fsdpGatheredAtBackwardEnd(par, b);
    const bool defer = fsdpDefersGradients(par, b);
    if (kept == b.units && end == b.units && !defer) return;  // today's per-unit account
    const int64_t kept_bytes = bytesOfDouble(kept), end_bytes = bytesOfDouble(end);
    // A whole stage unsharded (S) holds the ends already; beside the units
    // (and the int form's 1/n copies) the moment keeps the ends' own terms.
    const bool kept_whole = !par.reshard_after_forward, end_whole = defer;
    auto gathered = [&](MemoryBreakdown& m, int64_t value, bool whole) {
        const int64_t ends_here = std::max<int64_t>(0, m[Component::GatheredWeights] - units_bytes);
        m[Component::GatheredWeights] = whole ? value : value + ends_here;
    };
    for (MemoryBreakdown* m : {&acc.forward, &acc.loss, &acc.backward_head, &acc.backward_start})
        gathered(*m, kept_bytes, kept_whole);
    if (acc.backward_recompute_layer >= 0) gathered(acc.backward_recompute, kept_bytes, kept_whole);
    gathered(acc.backward_end, end_bytes, end_whole);
    if (acc.backward_next.total() > 0) gathered(acc.backward_next, end_bytes, end_whole);
    if (!defer || b.stage_gradients <= 0) return;
    // Wherever the account holds the (sharded) gradients during the step,
    // the rank holds the unsharded ones instead, accumulated in the reduce
    // dtype; the sharded ones exist from the last reduce-scatter (the step).
    // They include the head's, so its own unsharded gradient goes.
    const int64_t unsharded = bytesOfDouble(b.stage_gradients);
    const std::pair<MemoryBreakdown*, int64_t> moments[] = {
        {&acc.forward, 0}, {&acc.loss, 0}, {&acc.backward_head, ends_gradient.head_backward},
        {&acc.backward_start, ends_gradient.backward_start}, {&acc.backward_recompute, ends_gradient.backward_start},
        {&acc.backward_end, ends_gradient.backward_end}, {&acc.backward_next, ends_gradient.backward_next}};
    for (const auto& [m, head] : moments)
        if ((*m)[Component::Gradients] > 0) {
            (*m)[Component::Gradients] = unsharded;
            (*m)[Component::CommBuffers] -= std::min(head, (*m)[Component::CommBuffers]);
        }
}

Status validateFsdpPolicy(const Scenario& s) {
    const ParallelConfig& p = s.parallelism;
    const bool fsdp = p.zero_stage == 3;
    const std::string zero = " (parallelism.zero_stage = " + str(p.zero_stage) + ")";
    if (!p.reshard_after_forward && !fsdp)
        return Error{"parallelism.reshard_after_forward",
                     "false keeps FSDP's unsharded parameters from forward to backward; it needs parallelism.zero_stage "
                     "3, where parameters are sharded" + zero};
    if (p.reshard_after_forward_ranks < 0 || p.reshard_after_forward_ranks > (int64_t{1} << 24))
        return Error{"parallelism.reshard_after_forward_ranks",
                     "must be 0 (reshard to all shard ranks) or a rank count" +
                         std::string(" (got ") + str(p.reshard_after_forward_ranks) + ")"};
    if (p.reshard_after_forward_ranks > 0) {
        if (!fsdp)
            return Error{"parallelism.reshard_after_forward_ranks",
                         "resharding to fewer ranks after forward needs parallelism.zero_stage 3" + zero};
        if (!p.reshard_after_forward)
            return Error{"parallelism.reshard_after_forward_ranks",
                         "parallelism.reshard_after_forward = false keeps the whole unsharded parameters; a rank "
                         "count only applies with reshard_after_forward = true"};
        const int64_t ranks = denseShardRanks(p);
        const int64_t n = p.reshard_after_forward_ranks;
        // PyTorch: a non-trivial divisor of the shard group (1 and the whole
        // group are True's own behaviour).
        if (n == 1 || n >= ranks || ranks % n != 0)
            return Error{"parallelism.reshard_after_forward_ranks",
                         "must divide the " + str(ranks) + " ranks parameters are sharded over (data x context, or "
                         "parallelism.shard_group) and be between 2 and " + str(ranks / 2) + "; 0 reshards to all of "
                         "them (got " + str(n) + ")"};
    }
    if (p.fsdp_gradient_sync == FsdpGradientSync::LastMicrobatch) {
        if (!fsdp)
            return Error{"parallelism.fsdp_gradient_sync",
                         "last-microbatch defers FSDP's reduce-scatter and keeps the unsharded parameters; it needs "
                         "parallelism.zero_stage 3" + zero};
        const int64_t micro = p.microbatches > 0 ? p.microbatches : s.training.gradient_accumulation_steps;
        if (micro < 2)
            return Error{"parallelism.fsdp_gradient_sync",
                         "last-microbatch defers the reduce-scatter to the last micro-batch of a step, but a step has "
                         "one (training.gradient_accumulation_steps / parallelism.microbatches = 1)"};
    }
    return ok();
}

}  // namespace trainmem
