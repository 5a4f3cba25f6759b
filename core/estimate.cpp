// The estimate: the heaviest pipeline stage at its peak moment, with the
// reserved and device totals around it. The per-stage account is in
// step_account.cpp; terms and sources in docs/memory-model.md.
#include "core/byte_count.h"
#include "core/estimate.h"

#include <algorithm>
#include <cmath>

#include "core/step_account.h"

namespace trainmem {
namespace {

// Saturating: past 2^62 the estimate is "too large to represent" (byte_count.h).
int64_t roundBytes(double b) { return saturatedBytes(b); }

// PyTorch's caching allocator maps large blocks in 2 MiB pages
// (c10/cuda/CUDACachingAllocator.cpp, kRoundLarge).
int64_t roundUpTo2MiB(int64_t b) {
    if (b >= kTooLargeBytes) return kTooLargeBytes;
    return (b + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB);
}

// NCCL communicators this rank belongs to (groups of size > 1).
int64_t communicators(const ParallelConfig& par) {
    int64_t n = 0;
    if (par.data * par.context > 1) ++n;  // gradient reduction / ZeRO
    if (par.tensor > 1) ++n;
    if (par.pipeline > 1) ++n;             // p2p with neighbours
    if (par.context > 1) ++n;              // ring attention
    if (par.expert > 1) ++n;               // all-to-all
    return n;
}

StageEstimate toStageEstimate(const Scenario& s, const StepAccount& acc) {
    const StagePeak peak = stagePeak(acc);
    const Overheads& ov = s.hardware.overheads;
    StageEstimate e;
    e.stage = acc.stage.index;
    e.first_layer = acc.stage.first_layer;
    e.num_layers = acc.stage.num_layers;
    e.in_flight_microbatches = acc.stage.in_flight;
    e.model_states = acc.states.gpu;
    e.peak_phase = peak.phase;
    e.at_peak = *peak.breakdown;
    e.allocated_bytes = e.at_peak.total();
    // Every moment holds the same workspace, so leaving it out moves no peak.
    auto exact = [](const MemoryBreakdown& b) { return b.total() - b[Component::Workspace]; };
    e.exact_allocated_bytes = exact(e.at_peak);
    auto& phases = e.exact_phase_bytes;
    auto keep = [&](Phase p, const MemoryBreakdown& b) {
        int64_t& slot = phases[static_cast<size_t>(p)];
        slot = std::max(slot, exact(b));
    };
    keep(Phase::Forward, acc.forward);
    if (acc.stage.has_lm_head) keep(Phase::Loss, acc.loss);
    keep(Phase::Backward, acc.backward_head);
    keep(Phase::Backward, acc.backward_start);
    keep(Phase::Backward, acc.backward_recompute);
    keep(Phase::Backward, acc.backward_end);
    keep(Phase::Backward, acc.backward_next);
    keep(Phase::OptimizerStep, acc.step);
    e.reserved_bytes = roundUpTo2MiB(roundBytes(static_cast<double>(e.allocated_bytes) * (1.0 + ov.fragmentation)));
    e.device_bytes = roundBytes(static_cast<double>(e.reserved_bytes) + static_cast<double>(ov.cuda_context_bytes) +
                                static_cast<double>(communicators(s.parallelism)) *
                                    static_cast<double>(ov.nccl_bytes_per_group));
    // Every count is at most kTooLargeBytes, so one look at the totals and the
    // components catches a saturated one anywhere in the account.
    e.too_large = e.device_bytes >= kTooLargeBytes || e.reserved_bytes >= kTooLargeBytes ||
                  e.allocated_bytes >= kTooLargeBytes || e.model_states.weights >= kTooLargeBytes;
    for (int64_t b : e.at_peak.bytes) e.too_large = e.too_large || b >= kTooLargeBytes || b < 0;
    return e;
}

// Stages that can be the heaviest. Stages between the first and the last
// differ only in how many micro-batches they keep in flight (non-increasing
// with the index) and, past the remainder split, in one more block; so the
// candidates are 0, 1, the first stage with an extra block, and the last.
// Models whose blocks differ along the depth (MoE with leading dense blocks
// or a layer frequency) are checked stage by stage.
template <class F>
void forEachCandidateStage(const Scenario& s, F&& visit) {
    const int64_t p = s.parallelism.pipeline;
    const bool uniform = !s.model.isMoe() || (s.model.moe->first_dense_layers == 0 && s.model.moe->layer_frequency == 1);
    if (!uniform || p <= 4) {
        for (int64_t i = 0; i < p; ++i) visit(i);
        return;
    }
    const int64_t extra = s.model.num_layers % p;
    visit(0);
    visit(1);
    if (extra > 0 && p - extra > 1 && p - extra < p - 1) visit(p - extra);
    visit(p - 1);
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
    for (int64_t b : bytes) t = addBytes(t, b);
    return t;
}

Estimate estimateValidated(const Scenario& s) {
    Estimate est;
    const StepInputs in = stepInputs(s);
    const bool full_ft = s.training.finetuning == Finetuning::Full;
    est.parameters = countParameters(s.model, full_ft ? 0 : s.training.lora_rank, s.training.lora_targets);
    est.num_stages = s.parallelism.pipeline;
    est.total_gpus = s.parallelism.totalGpus();
    est.effective_batch = s.training.micro_batch_size * in.microbatches * s.parallelism.data;
    bool first = true;
    forEachCandidateStage(s, [&](int64_t i) {
        const StepAccount acc = accountStep(s, in, i);
        const StageEstimate st = toStageEstimate(s, acc);
        if (first || st.allocated_bytes > est.peak.allocated_bytes) {
            est.peak = st;
            est.activations_without_recompute = roundBytes(acc.activations_no_recompute);
            est.recompute_fraction = acc.recompute_fraction;
        }
        est.host_bytes = std::max(est.host_bytes, acc.states.host_bytes);
        est.too_large = est.too_large || st.too_large || acc.states.host_bytes >= kTooLargeBytes;
        first = false;
    });
    const Expected<int64_t> capacity = capacityBytes(s.hardware);
    est.capacity_bytes = capacity.ok() ? *capacity : 0;
    est.headroom_bytes = est.capacity_bytes - est.peak.device_bytes;
    est.fits = !est.too_large && est.headroom_bytes >= 0;

    const int64_t p = s.parallelism.pipeline;
    if (est.fits && est.headroom_bytes < est.capacity_bytes / 20) est.warnings |= kWarnTinyHeadroom;
    if (p > 1 && s.model.num_layers % p != 0) est.warnings |= kWarnUnevenPipeline;
    if (p > 1 && in.microbatches < p) est.warnings |= kWarnPipelineBubble;
    if (s.training.optimizer_state_dtype == DType::Fp16) est.warnings |= kWarnFp16WithoutScaler;
    if ((s.parallelism.offload_optimizer || s.parallelism.offload_parameters) && s.parallelism.zero_stage == 0)
        est.warnings |= kWarnOffloadNeedsZero;
    if (est.host_bytes > 256 * kGiB) est.warnings |= kWarnHostMemory;
    return est;
}

static Error tooLargeError() {
    return Error{"", "the estimate is too large to represent: some byte count passes 2^62 bytes (4 EiB) per GPU; "
                     "check the sizes (sequence length, batch, hidden size, overheads)"};
}

Expected<Estimate> estimate(const Scenario& s) {
    if (Status st = validate(s); !st) return st.error();
    Estimate est = estimateValidated(s);
    if (est.too_large) return tooLargeError();
    return est;
}

Expected<std::vector<StageEstimate>> estimateStages(const Scenario& s) {
    if (Status st = validate(s); !st) return st.error();
    const StepInputs in = stepInputs(s);
    std::vector<StageEstimate> out;
    out.reserve(static_cast<size_t>(s.parallelism.pipeline));
    for (int64_t i = 0; i < s.parallelism.pipeline; ++i) {
        out.push_back(toStageEstimate(s, accountStep(s, in, i)));
        if (out.back().too_large) return tooLargeError();
    }
    return out;
}

}  // namespace trainmem
