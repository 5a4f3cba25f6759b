// Terms and sources: docs/memory-model.md §The peak of one step.
#include "core/byte_count.h"
#include "core/byte_round.h"
#include "core/step_account.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/batch.h"
#include "core/fsdp_policy.h"
#include "core/qlora_backend.h"
#include "core/optimizer_state.h"

namespace trainmem {
static_assert(std::is_trivially_destructible_v<StepAccount>);
namespace {

// Saturating: past 2^62 the estimate is "too large to represent" (byte_count.h).
int64_t roundBytes(double b) { return roundedBytes(b); }

struct StageActivations {
    double one_microbatch = 0;
    double no_recompute = 0;  // one micro-batch, nothing recomputed
    double recompute_block = 0;
    double recompute_block_kept = 0;  // Op: the replayed block's own kept bytes
    double backward_working = 0;
    double recompute_fraction = 0;
    bool last_recomputed = false;  // the stage's last block (the first to run backward) is recomputed
};

// One micro-batch of the stage's blocks as checkpointing leaves them, for
// the policies that treat every block alike (not every-k and its kin):
// the sum over the block kinds (dense / MoE, rotary / NoPE) of blocks x per
// block. stageActivations and stagePeakFloor both take it from here.
double uniformMicrobatchActivations(Checkpointing policy, const LayoutActivations& blocks, const PipelineStage& st) {
    auto sum = [&](int64_t LayerActivations::*field) { return blocks.kinds.sum(st, field); };
    switch (policy) {
        case Checkpointing::Full: return sum(&LayerActivations::checkpoint_input);
        case Checkpointing::Op: return sum(&LayerActivations::op_kept);  // each block's input and save list
        case Checkpointing::Selective: return sum(&LayerActivations::saved_selective);
        default: return sum(&LayerActivations::saved);
    }
}

// Gradients are allocated at the forward peak (see accountStep).
inline bool gradientsAtForward(const TrainingConfig& tr, const PrecisionPlan& plan, int64_t microbatches,
                               double in_flight) {
    return !tr.optimizer_in_backward &&
           (plan.master.has_value() || static_cast<double>(microbatches) > in_flight);
}

StageActivations stageActivations(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                                  const PipelineStage& st) {
    const TrainingConfig& tr = s.training;
    StageActivations a;
    int64_t recomputed = 0;
    if (checkpointsSomeLayers(tr.checkpointing)) {
        // Which blocks are recomputed depends on their depth: block by block.
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
            // chunk's replay, the first block's its own (core/activations_op_policy.cpp).
            const int64_t last = st.first_layer + st.num_layers - 1;
            a.recompute_block = recomputedBytes(tr, s.model, blocks.kinds, last, st.first_layer);
            a.recompute_block_kept =
                recomputedBytes(tr, s.model, blocks.kinds, st.first_layer, st.first_layer) - a.recompute_block;
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
            a.recompute_block = largest(&LayerActivations::saved) + largest(&LayerActivations::offload_brought_back);
            a.recompute_block_kept = largest(&LayerActivations::offload_brought_back_below) -
                                     largest(&LayerActivations::offload_brought_back);
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
    return a;
}

// NCCL communicators are outside the allocator; see estimate.cpp.

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

// endsBytes and weightCopiesAlive, inline here: the account calls them eight
// times per stage with constant moments (the switch folds away).
inline int64_t endsBytesOf(const StepAccount& a, double micro_alive, double heads_saved, EndsMoment moment) {
    double b = a.embedding_saved * micro_alive + a.head_saved * heads_saved;
    switch (moment) {
        case EndsMoment::Between: break;
        case EndsMoment::AfterForward: b += a.final_norm_saved; break;
        case EndsMoment::Loss: b += a.final_norm_saved + a.loss_peak; break;
        case EndsMoment::HeadBackward: b += a.final_norm_saved + a.loss_backward_peak; break;
    }
    return roundBytes(b);
}

inline int64_t weightCopiesOf(int64_t autocast_per_microbatch, int64_t lasting, double microbatches_alive) {
    // Each block's casts are saved by that block's matmuls and freed by its
    // backward, so they come and go with the saved activations.
    return addBytes(roundBytes(static_cast<double>(autocast_per_microbatch) * microbatches_alive), lasting);
}

void applyStepInBackward(const Scenario& s, const PreparedScenario& prep, StepAccount& acc);
}  // namespace

int64_t weightCopiesAlive(int64_t autocast_per_microbatch, int64_t lasting, double microbatches_alive) {
    return weightCopiesOf(autocast_per_microbatch, lasting, microbatches_alive);
}

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
        !nope_layers &&
        (!s.model.isMoe() || (s.model.moe->first_dense_layers == 0 && s.model.moe->layer_frequency == 1));
    return prep;
}

LayoutActivations layoutActivations(const Scenario& s) {
    LayoutActivations a;
    a.kinds = blockKindActivations(s.model, s.training, s.parallelism);
    a.ends = endActivations(s.model, s.training, s.parallelism);
    a.qlora_kept_inputs = qloraKeptInputBytes(s);
    return a;
}

StepInputs stepInputs(const Scenario& s) {
    StepInputs in;
    in.prepared = prepareScenario(s);
    in.activations = layoutActivations(s);
    in.microbatches = microbatchesPerStep(s);
    return in;
}

// What every moment of the stage holds. One more additive term on a
// stage's resident bytes goes here: every moment, the timeline and the
// search's floor (stagePeakFloor) take it from StageFacts::resident.
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
    if (tr.optimizer_paged) f.step_transient = 0;  // bitsandbytes' kernels update in place (core/paged_states.h)
    stageResident(s, prep, f.states, f.resident);
    f.resident_bytes = f.resident.total();
    return f;
}

// Every moment's components are >= 0 (a negative one is a defect, which the
// estimate reports as too large), and a moment's total is their sum
// saturated at kTooLargeBytes, so it is at least the saturated sum of any of
// them. The forward moment of this stage holds the resident set (its comm
// buffers plus the all-to-all's), Gradients exactly as below and Activations
// = roundBytes(one micro-batch x in flight), computed here by the same
// functions as in accountStep; the peak is at least the forward moment.
// Every-k and its kin (activations block by block) get the resident set and
// the gradients only.
int64_t stagePeakFloor(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& blocks,
                       int64_t microbatches, const StageFacts& facts) {
    const TrainingConfig& tr = s.training;
    PipelineStage st = facts.stage;
    setStageInFlight(st, s.parallelism, microbatches);
    int64_t floor = facts.resident_bytes;
    if (gradientsAtForward(tr, prep.plan, microbatches, st.in_flight))
        floor = addBytes(floor, facts.states.gpu.gradients);
    if (!checkpointsSomeLayers(tr.checkpointing))
        floor = addBytes(floor, roundBytes(uniformMicrobatchActivations(tr.checkpointing, blocks, st) * st.in_flight));
    return floor;
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
    const TrainingConfig& tr = s.training;
    const ParallelConfig& par = s.parallelism;
    const Overheads& ov = s.hardware.overheads;
    const PrecisionPlan& plan = prep.plan;
    const ParameterLayout& lay = prep.layout;
    const bool full_ft = tr.finetuning == Finetuning::Full;

    // A fresh account in place (what `StepAccount acc;` would be), without
    // zeroing the six moments every path below writes whole before anything
    // reads them (forward, loss, backward_head, backward_start, backward_end
    // and step are copies of resident or forward): half the account's bytes.
    resetAccount(acc);
    acc.stage = facts.stage;
    setStageInFlight(acc.stage, par, microbatches);
    const PipelineStage& st = acc.stage;
    const StageParameters& sp = facts.params;
    const StageModelStates& ms = acc.states = facts.states;
    const StageActivations act = stageActivations(s, prep, blocks, st);
    acc.states.host_bytes = addBytes(acc.states.host_bytes, offloadedActivationHostBytes(
                                         blocks.kinds, blocks.ends, st));  // activation offloading

    // Always resident (stageResident, once per stage in its facts).
    MemoryBreakdown& base = acc.resident;
    base = facts.resident;

    // ZeRO-3 / FSDP: the unit computing plus prefetched units, gathered in the
    // compute dtype, and one unit's unsharded gradient before reduce-scatter.
    int64_t gathered = 0, scatter = 0;
    double gathered_units = 0;  // before rounding, for the FSDP policy (core/fsdp_policy.h)
    if (par.zero_stage >= 3 || par.offload_parameters) {
        const double units = 1.0 + static_cast<double>(ov.fsdp_prefetch_units);
        // QLoRA's frozen base is gathered packed (core/qlora_backend.h).
        gathered_units = units * (tr.finetuning == Finetuning::Qlora
                                      ? qloraGatheredBlockBytes(lay, par.tensor, std::max<int64_t>(par.expert, 1),
                                                                st.num_layers > st.num_moe_layers, st.num_moe_layers > 0,
                                                                tr.qlora_backend, bytesOf(plan.activations))
                                      : static_cast<double>(sp.largest_block) * bytesOf(plan.activations));
        gathered = roundBytes(gathered_units);
        if (full_ft) scatter = roundBytes(static_cast<double>(sp.largest_block) * bytesOf(plan.gradients));
    }
    // Expert parallelism: all-to-all dispatch + combine buffers of one MoE block.
    int64_t all_to_all = 0;
    if (par.expert > 1 && st.num_moe_layers > 0 && s.model.moe) {
        const double tokens = static_cast<double>(tr.micro_batch_size * tr.sequence_length / par.context);
        all_to_all = roundBytes(2.0 * tokens * static_cast<double>(s.model.moe->experts_per_token) *
                                static_cast<double>(s.model.hidden_size) * bytesOf(plan.activations));
    }
    // Weight copies. AMP: the 16-bit casts matmuls save for backward (none
    // under ZeRO-3, which gathers 16-bit units already), one set per
    // micro-batch in flight since each graph keeps its own (the cache is
    // cleared when each autocast region exits).
    int64_t amp_copies = 0;
    if (plan.autocast_weight_cache && full_ft && par.zero_stage < 3)
        amp_copies = roundBytes(static_cast<double>(sp.matmul_params) * bytesOf(plan.activations));
    // Transformer Engine keeps fp8 weights and their transposes as module
    // buffers (Hopper), through the optimizer step too; the head stays 16-bit.
    int64_t fp8_copies = 0;
    if (plan.fp8_weight_cache) {
        const int64_t head = st.has_lm_head ? (lay.lm_head.params > 0 ? lay.lm_head.params : lay.embedding.matrix_params) / par.tensor : 0;
        fp8_copies = 2 * (sp.matmul_params - head);
    }
    int64_t lasting_copies = fp8_copies;  // alive through forward and backward
    if (tr.finetuning == Finetuning::Qlora)  // one matrix dequantised to 16-bit at a time
        lasting_copies += roundBytes(2.0 * static_cast<double>(std::max(lay.dense_layer.attention.largest_tensor,
                                                                         lay.dense_layer.dense_mlp.largest_tensor)) /
                                     static_cast<double>(par.tensor));
    const int64_t weight_copies = weightCopiesOf(amp_copies, lasting_copies, st.in_flight);

    // Gradients exist at the forward peak when the framework keeps a
    // persistent contiguous buffer (recipes with master weights: Megatron-LM,
    // DeepSpeed), or when the moment of most micro-batches in flight recurs
    // after a first backward: there are more micro-batches than fit in flight
    // (plain accumulation: m > 1; 1F1B stage i: m > p - i; GPipe: never).
    // With the step in backward no gradient outlives its parameter's step.
    const bool step_in_backward = tr.optimizer_in_backward;
    acc.persistent_grads = plan.master.has_value() && !step_in_backward;
    acc.grads_in_forward = gradientsAtForward(tr, plan, microbatches, st.in_flight);
    acc.autocast_copies_per_microbatch = amp_copies;
    acc.lasting_copies = lasting_copies;

    const double in_flight = st.in_flight;
    const EndActivations& ends = blocks.ends;
    acc.embedding_saved = st.index == 0 ? static_cast<double>(ends.embedding_saved) : 0.0;
    if (st.has_lm_head) {
        acc.final_norm_saved = static_cast<double>(ends.final_norm_saved);
        acc.head_saved = acc.final_norm_saved + static_cast<double>(ends.logits_saved);
        acc.loss_peak = static_cast<double>(ends.loss_peak);
        acc.loss_backward_peak = static_cast<double>(ends.loss_backward_peak);
    }
    // Other micro-batches whose heads the last stage keeps (GPipe: m - 1).
    const double other_heads = st.head_in_flight - 1.0;

    acc.activations_one_microbatch = act.one_microbatch;
    acc.activations_no_recompute = act.no_recompute * in_flight;
    acc.recompute_block = act.recompute_block;
    acc.recompute_block_kept = act.recompute_block_kept;
    acc.backward_working = act.backward_working;
    acc.recompute_fraction = act.recompute_fraction;

    MemoryBreakdown& fw = acc.forward;
    fw = base;
    fw[Component::Gradients] = acc.grads_in_forward ? ms.gpu.gradients : 0;
    fw[Component::WeightCopies] = weight_copies;
    fw[Component::GatheredWeights] = gathered;
    fw[Component::CommBuffers] += all_to_all;
    fw[Component::Activations] = roundBytes(act.one_microbatch * in_flight);
    fw[Component::LogitsLoss] = endsBytesOf(acc, in_flight, other_heads, EndsMoment::AfterForward);

    acc.loss = fw;
    acc.loss[Component::CommBuffers] -= all_to_all;
    acc.loss[Component::LogitsLoss] = endsBytesOf(acc, in_flight, other_heads, EndsMoment::Loss);

    // The head's backward (log-softmax and nll gradients, the logits' gradient)
    // runs and frees its buffers before the first block's backward starts, so
    // the two are separate moments (measured: validation/step_truth.py).
    MemoryBreakdown& bh = acc.backward_head;
    bh = fw;
    bh[Component::CommBuffers] += scatter;
    bh[Component::LogitsLoss] = endsBytesOf(acc, in_flight, other_heads, EndsMoment::HeadBackward);

    // The first block's backward: its working memory (+ its recomputed
    // activations), the head's weight gradient already allocated.
    if (st.has_lm_head && full_ft && !acc.grads_in_forward && par.zero_stage < 2 && !step_in_backward) {
        const int64_t head = lay.lm_head.params > 0 ? lay.lm_head.params : lay.embedding.matrix_params;
        acc.head_gradients = roundBytes(static_cast<double>(head) / static_cast<double>(par.tensor) * bytesOf(plan.gradients));
    }
    MemoryBreakdown& bs = acc.backward_start;
    bs = fw;
    bs[Component::CommBuffers] += scatter;
    bs[Component::Gradients] += acc.head_gradients;
    // every-k may leave the last block unrecomputed: nothing is recomputed yet.
    const double first_recompute = !checkpointsSomeLayers(tr.checkpointing) || act.last_recomputed ? act.recompute_block : 0.0;
    bs[Component::Activations] = roundBytes(act.one_microbatch * in_flight + first_recompute + act.backward_working);
    bs[Component::LogitsLoss] = endsBytesOf(acc, in_flight, other_heads, EndsMoment::Between);

    // ... then the backward of a recomputed block between the last and the first (every-k,
    // megatron-block, torchtitan-layer): the blocks above it have run
    // backward (their saved tensors freed, their gradients made), the blocks
    // below it still hold what they kept. Of these moments the one holding
    // the most (measured: validation/step_truth.py, torchtitan-layer with the
    // last block recomputed peaks at a lower recomputed block).
    if (checkpointsSomeLayers(tr.checkpointing)) {
        const bool grads_grow = full_ft && !acc.grads_in_forward && par.zero_stage < 2 && !step_in_backward;
        const int64_t end = st.first_layer + st.num_layers;
        auto params = [&](int64_t l) {
            return static_cast<double>((s.model.isMoeLayer(l) ? lay.moe_layer : lay.dense_layer).total().params);
        };
        double stage_params = 0;
        for (int64_t l = st.first_layer; l < end; ++l) stage_params += params(l);
        double below = 0, upto = 0, best = -1, best_kept = 0, best_replay = 0;
        int64_t best_above = 0;
        for (int64_t l = st.first_layer; l < end; ++l) {
            const LayerActivations& la = blocks.kinds.of(s.model, l);
            const bool checkpointed = checkpointsLayer(tr, l, st.first_layer);
            upto += params(l);
            // The stage's last block's moment is backward_start, its first's backward_end.
            if (checkpointed && l != end - 1 && l != st.first_layer) {
                // ... and the block's own MLP output projection's, made first
                // in its backward (as late_gradients below).
                const double own = s.model.isMoeLayer(l) ? 0.0 : static_cast<double>(lay.dense_layer.dense_mlp.largest_tensor);
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
            br = bs;
            br[Component::Gradients] += best_above;
            const double others_alive = (in_flight - 1.0) * act.one_microbatch;
            br[Component::Activations] = roundBytes(others_alive + best_kept + best_replay + act.backward_working);
        }
    }

    // Backward of one chunk (the whole stage, or 1/v of it when interleaved)
    // frees that chunk; the rest stays in flight.
    const double v = par.schedule == PipelineSchedule::Interleaved1F1B ? static_cast<double>(par.virtual_stages) : 1.0;
    const double others = std::max(0.0, in_flight - 1.0 / v);
    // Gradients appear as backward produces them. While the stage's last
    // block runs backward at its worst (its MLP, the first part of a block to
    // run backward), its own gradients are not allocated yet but for the MLP
    // output projection's, and the embedding's backward has not run (an
    // untied embedding; a tied one got its gradient from the head's
    // backward). Measured: validation/step_truth.py. With several
    // micro-batches per step a later backward ends with all of them
    // allocated, so this is for one micro-batch per step only.
    if (full_ft && microbatches == 1 && !acc.grads_in_forward && par.zero_stage < 2 && st.num_layers > 0 &&
        !step_in_backward) {
        const LayerParameters& block = s.model.isMoeLayer(st.first_layer) ? lay.moe_layer : lay.dense_layer;
        const int64_t output_projection = s.model.isMoeLayer(st.first_layer) ? 0 : block.dense_mlp.largest_tensor;
        double late = static_cast<double>(block.total().params - output_projection);
        if (st.index == 0 && lay.lm_head.params > 0) late += static_cast<double>(lay.embedding.params);
        acc.late_gradients = roundBytes(late / static_cast<double>(par.tensor) * bytesOf(plan.gradients));
    }
    MemoryBreakdown& be = acc.backward_end;
    be = base;
    be[Component::Gradients] = ms.gpu.gradients - acc.late_gradients;
    be[Component::GatheredWeights] = gathered;
    be[Component::CommBuffers] += scatter + all_to_all;
    be[Component::WeightCopies] = weightCopiesOf(amp_copies, lasting_copies, others);
    // The last block's backward: all gradients exist while it is recomputed
    // (checkpointing) and its intermediates' gradients are alive.
    be[Component::Activations] =
        roundBytes(act.one_microbatch * others + act.recompute_block + act.recompute_block_kept + act.backward_working);
    be[Component::LogitsLoss] = endsBytesOf(acc, others, other_heads, EndsMoment::Between);

    // Two backward chunks in a row (GPipe; 1F1B's cool-down): the next one
    // starts with every gradient allocated and one chunk fewer in flight; with
    // whole-stage chunks it is the next micro-batch's head backward.
    if (in_flight * v >= 2.0) {
        MemoryBreakdown& bn = acc.backward_next;
        bn = be;
        bn[Component::CommBuffers] = bs[Component::CommBuffers];
        bn[Component::LogitsLoss] = v == 1.0 ? endsBytesOf(acc, others, std::max(0.0, other_heads - 1.0), EndsMoment::HeadBackward)
                                             : be[Component::LogitsLoss];
    }

    if (par.zero_stage >= 3 || par.offload_parameters)
        applyFsdpPolicy(par, fsdpStageBytes(s, sp, plan, gathered_units, microbatches), acc);
    applyQloraKeptInputs(s, blocks.qlora_kept_inputs, acc);
    if (step_in_backward) applyStepInBackward(s, prep, acc);

    MemoryBreakdown& sp_ = acc.step;
    sp_ = base;
    if (step_in_backward) return;  // nothing is left to step
    sp_[Component::Gradients] = ms.gpu.gradients;
    sp_[Component::WeightCopies] = fp8_copies;
    if (!par.offload_optimizer) sp_[Component::OptimizerTransient] = roundBytes(facts.step_transient);
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
    return endsBytesOf(a, micro_alive, heads_saved, moment);
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
