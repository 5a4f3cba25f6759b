// Prepare: what the account reads that does not change with the layout
// (once per scenario), or changes only with the degrees and ZeRO stage
// (once per stage of a StagePlan), so that the account per layout is a few
// sums (core/account/step_moments.h). Terms and sources: docs/memory-model.md.
#include <algorithm>

#include "core/scenario/batch.h"
#include "core/training/optimizer_state.h"
#include "core/account/qlora_backend.h"
#include "core/account/qlora_kept_inputs.h"
#include "core/account/fsdp_policy.h"
#include "core/account/step_account.h"
#include "core/account/step_moments.h"

namespace trainmem {

PreparedScenario prepareScenario(const Scenario& s) {
    PreparedScenario prep;
    const TrainingConfig& tr = s.training;
    const bool full_ft = tr.finetuning == Finetuning::Full;
    prep.layout = parameterLayout(s.model);
    prep.parameters = countParameters(s.model, prep.layout, full_ft ? 0 : tr.lora_rank, tr.lora_targets);
    if (!full_ft) prep.lora = loraParameters(s.model, tr.lora_rank, tr.lora_targets);
    prep.plan = planPrecision(tr);
    const Overheads& ov = s.hardware.overheads;
    const GpuSpec* gpu = findGpu(s.hardware.gpu);
    prep.workspace_bytes = ov.cublas_workspace_bytes.value_or(gpu ? gpu->cublas_workspace_bytes : 8519680);
    const Expected<int64_t> capacity = capacityBytes(s.hardware);
    prep.capacity_bytes = capacity.ok() ? *capacity : 0;
    // Llama 4's NoPE blocks (every no_rope_layer_interval-th) differ from the rotary ones.
    const bool nope_layers = s.model.no_rope_layer_interval > 0 && s.model.no_rope_layer_interval <= s.model.num_layers;
    prep.uniform_blocks =
        !nope_layers && !s.model.isHybrid() &&
        (!s.model.isMoe() || (s.model.moe->first_dense_layers == 0 && s.model.moe->layer_frequency == 1));
    return prep;
}

LayoutActivations layoutActivations(const Scenario& s) {
    LayoutActivations a;
    a.kinds = blockKindActivations(s.model, s.training, s.parallelism);
    a.ends = endActivations(s.model, s.training, s.parallelism);
    a.qlora_kept_inputs = qloraKeptInputBytes(s);
    const BlockKindActivations& k = a.kinds;
    a.offloads_to_host = k.dense.offloaded_host != 0 || k.moe.offloaded_host != 0 || k.nope_dense.offloaded_host != 0 ||
                         k.nope_moe.offloaded_host != 0 || a.ends.offloaded_host != 0;
    if (s.model.moe) {
        const TrainingConfig& tr = s.training;
        const double tokens = static_cast<double>(tr.micro_batch_size * tr.sequence_length / s.parallelism.context);
        a.all_to_all = roundBytes(2.0 * tokens * static_cast<double>(s.model.moe->experts_per_token) *
                                  static_cast<double>(s.model.hidden_size) * bytesOf(planPrecision(tr).activations));
    }
    a.unit_policy = s.training.checkpointing;
    if (!checkpointsSomeLayers(a.unit_policy)) {
        a.dense_unit = blockUnit(a.unit_policy, k.dense);
        a.moe_unit = blockUnit(a.unit_policy, k.moe);
    }
    return a;
}

StepInputs stepInputs(const Scenario& s) {
    StepInputs in;
    in.prepared = prepareScenario(s);
    in.activations = layoutActivations(s);
    in.microbatches = microbatchesPerStep(s);
    return in;
}

namespace {

// What every moment of the stage holds. One more additive term on a
// stage's resident bytes goes here: every moment, the timeline and the
// search's floor (stagePeakFloor) take it from StageFacts::resident. Only
// weights, master weights, optimizer states, workspace and comm buffers:
// momentBreakdown sets the other components.
void stageResident(const Scenario& s, const PreparedScenario& prep, const StageModelStates& ms, MemoryBreakdown& base) {
    const ParallelConfig& par = s.parallelism;
    const Overheads& ov = s.hardware.overheads;
    base = MemoryBreakdown{};
    base[Component::Weights] = ms.gpu.weights;
    base[Component::MasterWeights] = ms.gpu.master_weights;
    base[Component::OptimizerStates] = ms.gpu.optimizer_states;
    base[Component::Workspace] = prep.workspace_bytes;
    if (par.data * par.context > 1) {
        if (par.zero_stage == 0 && !ov.ddp_gradient_as_bucket_view)
            base[Component::CommBuffers] += ms.gpu.gradients;  // DDP's flat buckets copy every gradient
        else
            base[Component::CommBuffers] += ov.ddp_bucket_bytes;  // one reduce bucket in flight
    }
}

// The moments' terms that depend on the stage and the recipe only.
void stageTerms(const Scenario& s, const PreparedScenario& prep, StageFacts& f) {
    const TrainingConfig& tr = s.training;
    const ParallelConfig& par = s.parallelism;
    const Overheads& ov = s.hardware.overheads;
    const PrecisionPlan& plan = prep.plan;
    const ParameterLayout& lay = prep.layout;
    const PipelineStage& st = f.stage;
    const StageParameters& sp = f.params;
    const bool full_ft = tr.finetuning == Finetuning::Full;

    f.step_transient_bytes = roundBytes(f.step_transient);

    // ZeRO-3 / FSDP: the unit computing plus prefetched units, gathered in the
    // compute dtype, and one unit's unsharded gradient before reduce-scatter.
    if (par.zero_stage >= 3 || par.offload_parameters) {
        const double units = 1.0 + static_cast<double>(ov.fsdp_prefetch_units);
        // QLoRA's frozen base is gathered packed (core/account/qlora_backend.h).
        f.gathered_units = units * (tr.finetuning == Finetuning::Qlora
                                        ? qloraGatheredBlockBytes(lay, par.tensor, std::max<int64_t>(par.expert, 1), st,
                                                                  tr.qlora_backend,
                                                                  bytesOf(plan.activations))
                                        : static_cast<double>(sp.largest_block) * bytesOf(plan.activations));
        f.gathered = roundBytes(f.gathered_units);
        if (full_ft) f.scatter = roundBytes(static_cast<double>(sp.largest_block) * bytesOf(plan.gradients));
        // The model's ends, beside the blocks' units (core/account/fsdp_policy.h).
        const FsdpEndsTerms e = fsdpEndsTerms(par, fsdpEndsBytes(s, lay, st, plan));
        f.ends = {roundBytes(e.forward),        roundBytes(e.loss),
                  roundBytes(e.head_backward),  roundBytes(e.backward_start),
                  roundBytes(e.backward_end),   roundBytes(e.gradient_head_backward),
                  roundBytes(e.gradient_backward_start), roundBytes(e.gradient_backward_end)};
    }
    // Weight copies. AMP: the 16-bit casts matmuls save for backward (none
    // under ZeRO-3, which gathers 16-bit units already), one set per
    // micro-batch in flight since each graph keeps its own (the cache is
    // cleared when each autocast region exits).
    if (plan.autocast_weight_cache && full_ft && par.zero_stage < 3)
        f.autocast_copies = roundBytes(static_cast<double>(sp.matmul_params) * bytesOf(plan.activations));
    // Transformer Engine keeps fp8 weights and their transposes as module
    // buffers (Hopper), through the optimizer step too; the head stays 16-bit.
    if (plan.fp8_weight_cache) {
        const int64_t head =
            st.has_lm_head ? (lay.lm_head.params > 0 ? lay.lm_head.params : lay.embedding.matrix_params) / par.tensor : 0;
        f.fp8_copies = 2 * (sp.matmul_params - head);
    }
    f.lasting_copies = f.fp8_copies;  // alive through forward and backward
    if (tr.finetuning == Finetuning::Qlora) {  // one matrix dequantised to 16-bit at a time
        int64_t largest = std::max(lay.dense_layer.attention.largest_tensor, lay.dense_layer.dense_mlp.largest_tensor);
        for (const LayerParameters& l : lay.hybrid_layer)  // all zero but a hybrid's
            largest = std::max({largest, l.attention.largest_tensor, l.dense_mlp.largest_tensor});
        f.lasting_copies += roundBytes(2.0 * static_cast<double>(largest) / static_cast<double>(par.tensor));
    }

    // The LM head's weight gradient, allocated by the head's backward (when
    // gradients grow during backward: momentTerms).
    const int64_t head = lay.lm_head.params > 0 ? lay.lm_head.params : lay.embedding.matrix_params;
    f.head_gradient_bytes =
        roundBytes(static_cast<double>(head) / static_cast<double>(par.tensor) * bytesOf(plan.gradients));
    // Gradients appear as backward produces them. While the stage's last
    // block runs backward at its worst (its MLP, the first part of a block to
    // run backward), its own gradients are not allocated yet but for the MLP
    // output projection's, and the embedding's backward has not run (an
    // untied embedding; a tied one got its gradient from the head's
    // backward). Measured: validation/step_truth.py. (The stage's first
    // block is the last to run backward.)
    const LayerParameters& block = blockParameters(lay, s.model, st.first_layer);
    const int64_t output_projection = block.dense_mlp.largest_tensor;  // 0 in a MoE block
    double late = static_cast<double>(block.total().params - output_projection);
    if (st.index == 0 && lay.lm_head.params > 0) late += static_cast<double>(lay.embedding.params);
    f.late_gradient_bytes = roundBytes(late / static_cast<double>(par.tensor) * bytesOf(plan.gradients));
}

}  // namespace

StageFacts stageFacts(const Scenario& s, const PreparedScenario& prep, int64_t stage) {
    StageFacts f;
    f.stage = pipelineStage(s.model, s.parallelism, 1, stage);
    f.params = stageParameters(s, prep.layout, prep.lora, f.stage);
    f.states = stageModelStates(s, f.params);
    const TrainingConfig& tr = s.training;
    f.step_transient = optimizerStepTransientBytes(tr.optimizer, tr.optimizer_impl, prep.plan.optimizer_states,
                                                   f.states.trainable_local, f.states.largest_trainable);
    if (prep.plan.master && prep.plan.gradients != DType::Fp32)  // the step reads an fp32 copy of its gradient shard
        f.step_transient += 4.0 * static_cast<double>(f.states.trainable_local);
    if (tr.optimizer_paged) f.step_transient = 0;  // bitsandbytes' kernels update in place (core/account/paged_states.h)
    stageResident(s, prep, f.states, f.resident);
    f.resident_bytes = f.resident.total();
    stageTerms(s, prep, f);
    for (int64_t b : f.resident.bytes) f.stage_bits |= static_cast<uint64_t>(b);
    const int64_t gradients = f.states.gpu.gradients;
    const StageFacts::GatheredEnds& e = f.ends;
    for (int64_t b : {gradients, f.late_gradient_bytes, f.head_gradient_bytes, f.gathered, f.scatter, f.fp8_copies,
                      f.step_transient_bytes, e.forward, e.loss, e.head_backward, e.backward_start, e.backward_end,
                      e.gradient_head_backward, e.gradient_backward_start, e.gradient_backward_end})
        f.stage_bits |= static_cast<uint64_t>(b);
    return f;
}

// Every moment's components are >= 0 (a negative one is a defect, which the
// estimate reports as too large), and a moment's total is their sum
// saturated at kTooLargeBytes, so it is at least the saturated sum of any of
// them. The forward moment of this stage holds the resident set (its comm
// buffers plus the all-to-all's), Gradients exactly as below and Activations
// = roundBytes(one micro-batch x in flight), computed here by the same
// functions as in scheduledStage and layoutTerms; the peak is at least the forward moment.
// Every-k and its kin (activations block by block) get the resident set and
// the gradients only.
int64_t stagePeakFloor(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                       int64_t microbatches, const StageFacts& facts) {
    const TrainingConfig& tr = s.training;
    const ParallelConfig& par = s.parallelism;
    const PipelineStage& st = facts.stage;
    const double in_flight = inFlightMicrobatches(par.schedule, std::max<int64_t>(par.pipeline, 1),
                                                  std::max<int64_t>(par.virtual_stages, 1), microbatches, st.index);
    int64_t floor = facts.resident_bytes;
    if (gradientsAtForward(tr, prep.plan, microbatches, in_flight)) floor = addBytes(floor, facts.states.gpu.gradients);
    if (!checkpointsSomeLayers(tr.checkpointing)) {
        // One micro-batch of the stage's blocks as the account has it
        // (StageActivations::one_microbatch: a unit's n times when the
        // blocks are of one kind, the same doubles as the kinds' sums).
        const LayoutActivations::BlockUnit* unit = singleKindUnit(blocks, st, tr.checkpointing);
        const double one = unit ? static_cast<double>(st.num_layers) * unit->kept
                                : uniformMicrobatchActivations(tr.checkpointing, blocks, st);
        floor = addBytes(floor, roundBytes(one * in_flight));
    }
    return floor;
}

}  // namespace trainmem
