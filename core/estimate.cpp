// The peak of one training step, per pipeline stage. Each phase of the step
// (forward, loss, backward, optimizer step) is a sum of components alive at
// its worst moment; the stage's peak is the largest phase and the estimate's
// peak the heaviest stage. Terms and sources: docs/memory-model.md.
#include "core/estimate.h"

#include <algorithm>
#include <cmath>

#include "core/activations.h"
#include "core/batch.h"
#include "core/optimizer_state.h"
#include "core/pipeline.h"
#include "core/stage_parameters.h"

namespace trainmem {
namespace {

int64_t roundBytes(double b) { return static_cast<int64_t>(std::llround(b)); }

// PyTorch's caching allocator hands out memory in segments rounded to 2 MiB
// for large blocks (c10/cuda/CUDACachingAllocator.cpp, kRoundLarge).
int64_t roundUpTo2MiB(int64_t b) { return (b + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB); }

// NCCL communicators this rank belongs to (groups of size > 1).
int64_t communicators(const ParallelConfig& par) {
    int64_t n = 0;
    if (par.data * par.context > 1) ++n;  // gradient reduction / ZeRO group
    if (par.tensor > 1) ++n;
    if (par.pipeline > 1) ++n;             // p2p with neighbours
    if (par.context > 1) ++n;              // ring attention
    if (par.expert > 1) ++n;               // all-to-all
    return n;
}

struct Activation {
    double stage_saved = 0;       // all in-flight micro-batches, as checkpointing leaves them
    double stage_no_recompute = 0;
    double one_microbatch = 0;    // one micro-batch of this stage's blocks
    double recompute_layer = 0;   // saved tensors of one block recomputed during backward
    double backward_working = 0;
    double recompute_fraction = 0;
};

Activation stageActivations(const Scenario& s, const PipelineStage& st) {
    const ModelConfig& m = s.model;
    const TrainingConfig& tr = s.training;
    const LayerActivations dense = layerActivations(m, tr, s.parallelism, false);
    const LayerActivations moe = m.isMoe() ? layerActivations(m, tr, s.parallelism, true) : dense;
    Activation a;
    double kept = 0, full = 0;
    int64_t recomputed = 0;
    for (int64_t l = st.first_layer; l < st.first_layer + st.num_layers; ++l) {
        const LayerActivations& la = m.isMoeLayer(l) ? moe : dense;
        full += static_cast<double>(la.saved);
        bool checkpointed = false;
        switch (tr.checkpointing) {
            case Checkpointing::None: kept += static_cast<double>(la.saved); break;
            case Checkpointing::Selective: kept += static_cast<double>(la.saved_selective); break;
            case Checkpointing::Full: checkpointed = true; break;
            case Checkpointing::EveryK: checkpointed = (l % std::max<int64_t>(tr.checkpoint_every, 1)) == 0; break;
        }
        if (checkpointed) {
            kept += static_cast<double>(la.checkpoint_input);
            ++recomputed;
            a.recompute_layer = std::max(a.recompute_layer, static_cast<double>(la.saved));
        } else if (tr.checkpointing == Checkpointing::EveryK) {
            kept += static_cast<double>(la.saved);
        }
        a.backward_working = std::max(a.backward_working, static_cast<double>(la.backward_working));
    }
    a.one_microbatch = kept;
    a.stage_saved = kept * st.in_flight;
    a.stage_no_recompute = full * st.in_flight;
    if (st.num_layers > 0) {
        // Recomputing a block's forward costs a third of its forward+backward
        // (backward ~ 2x forward). Selective recomputation repeats only the
        // attention core: 4bs^2(H d) of the block's 2bs(matmul params) + 4bs^2(H d) flops.
        const double frac_layers = static_cast<double>(recomputed) / static_cast<double>(st.num_layers);
        a.recompute_fraction = frac_layers / 3.0;
        if (tr.checkpointing == Checkpointing::Selective) {
            const double s_len = static_cast<double>(tr.sequence_length);
            const double core = 4.0 * s_len * static_cast<double>(m.num_heads * m.head_dim);
            const ParameterLayout lay = parameterLayout(m);
            const double dense_flops = 2.0 * static_cast<double>(lay.dense_layer.matmulParams());
            a.recompute_fraction = core / (3.0 * (dense_flops + core));
        }
    }
    return a;
}

struct PhaseTotals {
    MemoryBreakdown forward, loss, backward_start, backward_end, step;
};

StageEstimate estimateStage(const Scenario& s, const ParameterLayout& lay, int64_t stage_index, int64_t m,
                            double* recompute_fraction, int64_t* no_recompute, int64_t* host) {
    const TrainingConfig& tr = s.training;
    const ParallelConfig& par = s.parallelism;
    const Overheads& ov = s.hardware.overheads;
    const PrecisionPlan plan = planPrecision(tr);
    const PipelineStage st = pipelineStage(s.model, par, m, stage_index);
    const StageParameters sp = stageParameters(s, lay, st);
    const StageModelStates ms = stageModelStates(s, sp);
    const Activation act = stageActivations(s, st);
    const EndActivations ends = endActivations(s.model, tr, par);
    const bool full_ft = tr.finetuning == Finetuning::Full;

    // Always resident.
    MemoryBreakdown base;
    base[Component::Weights] = ms.gpu.weights;
    base[Component::MasterWeights] = ms.gpu.master_weights;
    base[Component::OptimizerStates] = ms.gpu.optimizer_states;
    const GpuSpec* gpu = findGpu(s.hardware.gpu);
    base[Component::Workspace] = ov.cublas_workspace_bytes.value_or(gpu ? gpu->cublas_workspace_bytes : 8519680);

    // Communication buffers inside the allocator.
    const int64_t dp = par.data * par.context;
    const double grad_bytes = bytesOf(plan.gradients);
    if (dp > 1) {
        if (par.zero_stage == 0 && !ov.ddp_gradient_as_bucket_view) {
            // DDP's Reducer keeps flat bucket tensors covering every gradient.
            base[Component::CommBuffers] += ms.gpu.gradients;
        } else {
            base[Component::CommBuffers] += ov.ddp_bucket_bytes;  // one reduce bucket in flight
        }
    }
    // ZeRO-3 / FSDP: the unit being computed plus the prefetched ones, gathered
    // in the compute dtype, and one unit's unsharded gradient before reduce-scatter.
    int64_t gathered = 0, scatter = 0;
    if (par.zero_stage >= 3 || par.offload_parameters) {
        const double units = 1.0 + static_cast<double>(ov.fsdp_prefetch_units);
        const double gather_dtype = full_ft ? bytesOf(plan.activations) : bytesOf(plan.activations);
        gathered = roundBytes(units * static_cast<double>(sp.largest_block) * gather_dtype);
        if (full_ft) scatter = roundBytes(static_cast<double>(sp.largest_block) * grad_bytes);
    }
    // Expert parallelism: all-to-all dispatch and combine buffers of one MoE
    // block's tokens (b s k h in the compute dtype).
    int64_t all_to_all = 0;
    if (par.expert > 1 && st.num_moe_layers > 0 && s.model.moe) {
        const double tokens = static_cast<double>(tr.micro_batch_size * tr.sequence_length / par.context);
        all_to_all = roundBytes(2.0 * tokens * static_cast<double>(s.model.moe->experts_per_token) *
                                static_cast<double>(s.model.hidden_size) * bytesOf(plan.activations));
    }

    // 16-bit weight copies: AMP's autocast cache (the casts matmuls save for
    // backward) unless ZeRO-3 already gathers 16-bit units; FP8 caches.
    int64_t weight_copies = 0;
    if (plan.autocast_weight_cache && full_ft && par.zero_stage < 3)
        weight_copies += roundBytes(static_cast<double>(sp.matmul_params) * bytesOf(plan.activations));
    if (plan.fp8_weight_cache)  // fp8 weight + its transpose (Transformer Engine, Hopper)
        weight_copies += roundBytes(2.0 * static_cast<double>(sp.matmul_params - (st.has_lm_head ? lay.lm_head.params / par.tensor : 0)));
    if (tr.finetuning == Finetuning::Qlora)  // one block's matrix dequantised to 16-bit at a time
        weight_copies += roundBytes(2.0 * static_cast<double>(std::max(lay.dense_layer.attention.largest_tensor,
                                                                        lay.dense_layer.dense_mlp.largest_tensor)) /
                                    static_cast<double>(par.tensor));

    // Gradients are alive in forward when they accumulate over micro-batches
    // (the peak micro-batch is not the first) or when the framework keeps a
    // persistent contiguous gradient buffer (Megatron / DeepSpeed recipes with
    // master weights).
    const bool grads_in_forward = m > 1 || plan.master.has_value();

    const double end_first = st.has_embedding && st.index == 0 ? static_cast<double>(ends.embedding_saved) * st.in_flight : 0.0;
    const double end_last = st.has_lm_head ? static_cast<double>(ends.final_norm_saved) * st.head_in_flight : 0.0;
    const double logits_saved = st.has_lm_head ? static_cast<double>(ends.logits_saved) * st.head_in_flight : 0.0;

    PhaseTotals ph;
    // Forward, end of the last block of the peak micro-batch.
    ph.forward = base;
    ph.forward[Component::Gradients] = grads_in_forward ? ms.gpu.gradients : 0;
    ph.forward[Component::WeightCopies] = weight_copies;
    ph.forward[Component::GatheredWeights] = gathered;
    ph.forward[Component::CommBuffers] += all_to_all;
    ph.forward[Component::Activations] = roundBytes(act.stage_saved);
    ph.forward[Component::LogitsLoss] = roundBytes(end_first + end_last);
    // Loss: the last stage adds the logits and cross-entropy's buffers.
    ph.loss = ph.forward;
    ph.loss[Component::CommBuffers] -= all_to_all;
    if (st.has_lm_head)
        ph.loss[Component::LogitsLoss] =
            roundBytes(end_first + end_last + logits_saved - static_cast<double>(ends.logits_saved) + static_cast<double>(ends.loss_peak));
    // Backward start: everything saved is still alive, the head's backward
    // runs, the first block's backward (and its recomputation) begins.
    ph.backward_start = ph.forward;
    ph.backward_start[Component::CommBuffers] += scatter;
    ph.backward_start[Component::Activations] =
        roundBytes(act.stage_saved + act.recompute_layer + act.backward_working);
    if (st.has_lm_head)
        ph.backward_start[Component::LogitsLoss] =
            roundBytes(end_first + end_last + logits_saved - static_cast<double>(ends.logits_saved) + static_cast<double>(ends.loss_backward_peak));
    // Backward end: this micro-batch's activations are gone, all gradients
    // exist; other in-flight micro-batches (pipelining) are still saved.
    ph.backward_end = base;
    ph.backward_end[Component::Gradients] = ms.gpu.gradients;
    ph.backward_end[Component::GatheredWeights] = gathered;
    ph.backward_end[Component::CommBuffers] += scatter + all_to_all;
    ph.backward_end[Component::WeightCopies] = tr.finetuning == Finetuning::Qlora ? ph.forward[Component::WeightCopies] : 0;
    ph.backward_end[Component::Activations] =
        roundBytes(act.one_microbatch * std::max(0.0, st.in_flight - 1.0) + act.backward_working);
    ph.backward_end[Component::LogitsLoss] = roundBytes(end_first * std::max(0.0, st.in_flight - 1.0) / std::max(1.0, st.in_flight));
    // Optimizer step: gradients complete, the step's temporaries; with master
    // weights and 16-bit gradients the step reads an fp32 copy of its shard.
    ph.step = base;
    ph.step[Component::Gradients] = ms.gpu.gradients;
    if (!par.offload_optimizer) {
        const DType sd = plan.optimizer_states;
        double transient = optimizerStepTransientBytes(tr.optimizer, tr.optimizer_impl, sd, ms.trainable_local,
                                                       ms.largest_trainable);
        if (plan.master && plan.gradients != DType::Fp32)
            transient += 4.0 * static_cast<double>(ms.trainable_local);
        ph.step[Component::OptimizerTransient] = roundBytes(transient);
    }

    struct Candidate { Phase phase; const MemoryBreakdown* b; };
    const Candidate candidates[] = {{Phase::Forward, &ph.forward}, {Phase::Loss, &ph.loss},
                                    {Phase::Backward, &ph.backward_start}, {Phase::Backward, &ph.backward_end},
                                    {Phase::OptimizerStep, &ph.step}};
    const Candidate* best = &candidates[0];
    for (const Candidate& c : candidates)
        if (c.b->total() > best->b->total()) best = &c;

    StageEstimate e;
    e.stage = st.index;
    e.first_layer = st.first_layer;
    e.num_layers = st.num_layers;
    e.in_flight_microbatches = st.in_flight;
    e.model_states = ms.gpu;
    e.peak_phase = best->phase;
    e.at_peak = *best->b;
    e.allocated_bytes = e.at_peak.total();
    e.reserved_bytes = roundUpTo2MiB(roundBytes(static_cast<double>(e.allocated_bytes) * (1.0 + ov.fragmentation)));
    e.device_bytes = e.reserved_bytes + ov.cuda_context_bytes + communicators(par) * ov.nccl_bytes_per_group;
    if (recompute_fraction) *recompute_fraction = act.recompute_fraction;
    if (no_recompute) *no_recompute = roundBytes(act.stage_no_recompute);
    if (host) *host = ms.host_bytes;
    return e;
}

}  // namespace

std::string_view phaseName(Phase p) {
    switch (p) {
        case Phase::Forward: return "forward";
        case Phase::Loss: return "loss";
        case Phase::Backward: return "backward";
        case Phase::OptimizerStep: return "optimizer step";
    }
    return "forward";
}

int64_t MemoryBreakdown::total() const {
    int64_t t = 0;
    for (int64_t b : bytes) t += b;
    return t;
}

Estimate estimateValidated(const Scenario& s) {
    Estimate est;
    const ParameterLayout lay = parameterLayout(s.model);
    est.parameters = countParameters(s.model, s.training.finetuning == Finetuning::Full ? 0 : s.training.lora_rank,
                                     s.training.lora_targets);
    const int64_t m = microbatchesPerStep(s);
    const int64_t p = s.parallelism.pipeline;
    est.num_stages = p;
    est.total_gpus = s.parallelism.totalGpus();
    est.effective_batch = s.training.micro_batch_size * m * s.parallelism.data;
    bool first = true;
    for (int64_t i = 0; i < p; ++i) {
        double rf = 0;
        int64_t no_rc = 0, host = 0;
        StageEstimate st = estimateStage(s, lay, i, m, &rf, &no_rc, &host);
        if (first || st.allocated_bytes > est.peak.allocated_bytes) {
            est.peak = st;
            est.activations_without_recompute = no_rc;
            est.recompute_fraction = rf;
        }
        est.host_bytes = std::max(est.host_bytes, host);
        first = false;
    }
    est.capacity_bytes = capacityBytes(s.hardware).ok() ? *capacityBytes(s.hardware) : 0;
    est.headroom_bytes = est.capacity_bytes - est.peak.device_bytes;
    est.fits = est.headroom_bytes >= 0;
    if (est.fits && est.headroom_bytes < est.capacity_bytes / 20) est.warnings |= kWarnTinyHeadroom;
    if (p > 1 && s.model.num_layers % p != 0) est.warnings |= kWarnUnevenPipeline;
    if (p > 1 && m < p) est.warnings |= kWarnPipelineBubble;
    if (s.training.precision == Precision::MixedFp16 && s.training.optimizer_state_dtype == DType::Fp16)
        est.warnings |= kWarnFp16WithoutScaler;
    if ((s.parallelism.offload_optimizer || s.parallelism.offload_parameters) && s.parallelism.zero_stage == 0)
        est.warnings |= kWarnOffloadNeedsZero;
    if (est.host_bytes > 256 * kGiB) est.warnings |= kWarnHostMemory;
    return est;
}

Expected<Estimate> estimate(const Scenario& s) {
    if (Status st = validate(s); !st) return st.error();
    return estimateValidated(s);
}

Expected<std::vector<StageEstimate>> estimateStages(const Scenario& s) {
    if (Status st = validate(s); !st) return st.error();
    const ParameterLayout lay = parameterLayout(s.model);
    const int64_t m = microbatchesPerStep(s);
    std::vector<StageEstimate> out;
    out.reserve(static_cast<size_t>(s.parallelism.pipeline));
    for (int64_t i = 0; i < s.parallelism.pipeline; ++i)
        out.push_back(estimateStage(s, lay, i, m, nullptr, nullptr, nullptr));
    return out;
}

}  // namespace trainmem
