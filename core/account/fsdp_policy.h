#pragma once
// FSDP2's policies on one rank of a pipeline stage (ZeRO-3 in trainmem's
// terms): which unsharded parameters and gradients are alive at each moment
// of the step. Terms and sources: docs/memory-model.md §FSDP2 policies.
//
//  - reshard_after_forward (PyTorch fully_shard): true frees a block's
//    unsharded parameters after its forward and gathers them again in
//    backward; false keeps them from forward to backward; an integer n keeps
//    a 1/n copy (resharded to n ranks) and gathers from it in backward.
//  - fsdp_gradient_sync = last-microbatch (PyTorch pipelining's
//    backward_maybe_with_nosync, or user code that turns off gradient sync
//    for accumulation): nothing is resharded after backward and the
//    reduce-scatter waits for the last micro-batch, so after the first
//    backward the rank holds its whole stage unsharded, and unsharded
//    gradients accumulated in the reduce dtype.
//  - MixedPrecisionPolicy: param_dtype is the recipe's compute dtype
//    (PrecisionPlan::activations), reduce_dtype its gradient dtype, the
//    sharded storage its weight dtype; no key of its own.
#include <cstdint>
#include <span>

#include "core/base/error.h"
#include "core/training/names.h"
#include "core/training/parallel_config.h"

namespace trainmem {

struct Scenario;
struct ParameterLayout;
struct PipelineStage;
struct StepAccount;
struct StageParameters;
struct PrecisionPlan;

// What one rank of a stage gathers, in bytes of the gathered dtype.
struct FsdpStageBytes {
    double units = 0;        // the computing unit and the prefetched ones (every policy gathers these)
    double stage_blocks = 0; // every block of the stage, unsharded
    double stage_gradients = 0;  // the stage's unsharded gradients in the reduce dtype (0 when frozen)
    int64_t microbatches = 1;    // micro-batches per step through this stage
};

// The stage's bytes for the policy: `units` is what the account gathers per
// unit today (current + prefetched units); the rest from the stage's
// parameters (a frozen LoRA/QLoRA base in its stored form) and the recipe.
FsdpStageBytes fsdpStageBytes(const Scenario& scenario, const StageParameters& params, const PrecisionPlan& plan,
                              double units, int64_t microbatches);

// GatheredWeights between a block's forward and its backward (the forward,
// loss and first backward moments): what reshard_after_forward keeps.
double fsdpKeptAfterForward(const ParallelConfig& par, const FsdpStageBytes& b);
// GatheredWeights while the stage's first block runs backward (and a next
// backward follows): the units, or the whole stage when nothing is
// resharded after backward.
double fsdpGatheredAtBackwardEnd(const ParallelConfig& par, const FsdpStageBytes& b);
// Whether the unsharded gradients stay until the last micro-batch.
bool fsdpDefersGradients(const ParallelConfig& par, const FsdpStageBytes& b);

// Whether the scenario's stages keep unsharded gradients until the step
// (ZeRO-3, last-microbatch, more than one micro-batch per step).
bool fsdpKeepsUnshardedGradients(const Scenario& scenario, int64_t microbatches);

// Rewrites the account's gathered weights and gradients by the policy; the
// account was built with today's per-unit FSDP (true, every micro-batch),
// which this leaves unchanged, with the ends' terms (fsdpEndsTerms) beside
// `units_bytes` (the units, rounded) in its gathered weights and their
// gradient in its communication buffers (`ends_gradient`, per moment as
// StepAccount names them: head backward, backward start, backward end, next).
struct EndsGradients {
    int64_t head_backward = 0, backward_start = 0, backward_end = 0, backward_next = 0;
};
void applyFsdpPolicy(const ParallelConfig& par, const FsdpStageBytes& b, int64_t units_bytes,
                     const EndsGradients& ends_gradient, StepAccount& acc);

// The model's ends on one rank of a stage under ZeRO-3 (parallelism.fsdp_ends),
// unsharded, in the compute dtype (MixedPrecisionPolicy.param_dtype): what
// the per-unit count (the blocks) leaves out.
struct FsdpEndsBytes {
    double embedding = 0;      // the token embedding (the stage that has it)
    double head = 0;           // the final norm and the LM head (the last stage); tied: the embedding matrix
    bool one_unit = false;     // tied embeddings on a stage that holds both ends: one unit, gathered once
    double head_gradient = 0;  // the head's unsharded gradient (trainable heads only), in the compute dtype
};
FsdpEndsBytes fsdpEndsBytes(const Scenario& scenario, const ParameterLayout& layout, const PipelineStage& stage,
                            const PrecisionPlan& plan);

// What the ends add at each moment of the step: gathered weights, and
// unsharded gradients waiting for their reduce-scatter (communication
// buffers), beside the blocks' units. Nothing at the optimizer step.
struct FsdpEndsTerms {
    double forward = 0, loss = 0, head_backward = 0, backward_start = 0, backward_end = 0;
    double gradient_head_backward = 0, gradient_backward_start = 0, gradient_backward_end = 0;
};
FsdpEndsTerms fsdpEndsTerms(const ParallelConfig& par, const FsdpEndsBytes& b);

// The policy's keys and their combinations (docs/scenario-format.md §Validation).
Status validateFsdpPolicy(const Scenario& scenario);

}  // namespace trainmem
