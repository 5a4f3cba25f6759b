// Built from the same StepAccount as estimate(), with the same count-based
// terms (activations per chunk in flight, weightCopiesAlive, endsBytes), so
// the samples at the account's moments (forward end, loss, backward start,
// end and next, step) equal its breakdowns and the samples between them lie
// below: the timeline's maximum is the estimate's peak.
#include "core/base/byte_count.h"
#include "core/account/timeline.h"

#include "core/account/fsdp_policy.h"

#include <algorithm>
#include <cmath>

#include "core/account/step_account.h"

namespace trainmem {
namespace {

// Saturating: past 2^62 the estimate is "too large to represent" (byte_count.h).
int64_t roundBytes(double b) { return saturatedBytes(b); }

// One pass of a chunk of blocks: the whole stage, or 1/v of it when interleaved.
struct Pass {
    bool forward;
    int64_t microbatch;
    int64_t chunk;
};

int64_t virtualStages(const Scenario& s) {
    return s.parallelism.schedule == PipelineSchedule::Interleaved1F1B ? s.parallelism.virtual_stages : 1;
}

// The order in which a stage runs its passes. Forward chunks go micro-batch
// by micro-batch, 0..v-1; backward chunks v-1..0.
std::vector<Pass> schedulePasses(const Scenario& s, const StepAccount& acc, int64_t m) {
    const int64_t p = s.parallelism.pipeline;
    const int64_t v = virtualStages(s);
    const int64_t total = m * v;
    std::vector<Pass> out;
    out.reserve(static_cast<size_t>(2 * total));
    auto forward = [&](int64_t k) { out.push_back({true, k / v, k % v}); };
    auto backward = [&](int64_t k) { out.push_back({false, k / v, v - 1 - k % v}); };
    if (p <= 1) {
        for (int64_t j = 0; j < m; ++j) {
            forward(j);
            backward(j);
        }
    } else if (s.parallelism.schedule == PipelineSchedule::GPipe) {
        for (int64_t k = 0; k < total; ++k) forward(k);
        for (int64_t k = 0; k < total; ++k) backward(k);
    } else {
        // 1F1B: warm-up forwards, steady one forward / one backward, cool-down.
        const int64_t in_flight =
            std::clamp<int64_t>(std::llround(acc.stage.in_flight * static_cast<double>(v)), 1, total);
        int64_t f = 0, b = 0;
        for (; f < in_flight - 1; ++f) forward(f);
        while (f < total) {
            forward(f++);
            backward(b++);
        }
        while (b < total) backward(b++);
    }
    return out;
}

}  // namespace

Expected<StepTimeline> stepTimeline(const Scenario& s, std::optional<int64_t> stage) {
    Expected<Estimate> est = estimate(s);
    if (!est) return est.error();
    const int64_t index = stage.value_or(est->peak.stage);
    if (index < 0 || index >= s.parallelism.pipeline)
        return Error{"stage", "must be between 0 and " + std::to_string(s.parallelism.pipeline - 1) +
                                  " (the pipeline has " + std::to_string(s.parallelism.pipeline) + " stages)"};

    const StepInputs in = stepInputs(s);
    const StepAccount acc = accountStep(s, in, index);
    const PipelineStage& st = acc.stage;
    const int64_t m = in.microbatches;
    const int64_t v = virtualStages(s);
    const double vd = static_cast<double>(v);
    const int64_t chunk_blocks = std::max<int64_t>(1, (st.num_layers + v - 1) / v);
    const double micro_act = acc.activations_one_microbatch;
    // FSDP deferring its reduce-scatter holds unsharded gradients until the
    // step (core/account/fsdp_policy.h): the backward's full gradients are those.
    const int64_t grads_full = fsdpKeepsUnshardedGradients(s, m) ? acc.backward_end[Component::Gradients]
                                                                 : acc.step[Component::Gradients];
    const int64_t amp = acc.autocast_copies_per_microbatch;
    const double other_heads_max = st.head_in_flight - 1.0;

    StepTimeline tl;
    tl.stage = index;
    tl.microbatches = m;
    tl.capacity_bytes = est->capacity_bytes;

    double time = 0;
    int64_t chunks_alive = 0;  // chunks of saved activations, across micro-batches
    double heads_saved = 0;    // micro-batches whose loss buffers wait for their backward
    int64_t backward_chunks_done = 0;
    // Gradients: present from the start with a persistent buffer; otherwise
    // they appear block by block during the first micro-batch's backward.
    double grads = acc.persistent_grads ? 1.0 : 0.0;

    // What FSDP holds gathered: the forward's through the first backward,
    // then, block by block, what it holds at the stage's first block.
    int64_t gathered = acc.forward[Component::GatheredWeights];
    const double kept = static_cast<double>(acc.backward_start[Component::GatheredWeights]);
    const double gathered_end = static_cast<double>(acc.backward_end[Component::GatheredWeights]);
    auto sample = [&](Phase phase, int64_t micro, int64_t layer, double activations, double copies_alive,
                      int64_t ends, int64_t comm) {
        MemoryBreakdown b = acc.resident;
        b[Component::GatheredWeights] = gathered;
        b[Component::CommBuffers] = comm;
        b[Component::Gradients] = roundBytes(grads * static_cast<double>(grads_full));
        b[Component::WeightCopies] = weightCopiesAlive(amp, acc.lasting_copies, copies_alive);
        b[Component::Activations] = roundBytes(activations);
        b[Component::LogitsLoss] = ends;
        TimelineSample x;
        x.time = time;
        x.phase = phase;
        x.microbatch = micro;
        x.layer = layer;
        x.bytes = b;
        tl.samples.push_back(x);
    };
    // Optimizer step in backward: one parameter's gradient and its step's
    // temporaries at each backward moment, as accountStep puts them.
    auto oneTensorStep = [&](MemoryBreakdown& b, const MemoryBreakdown& moment) {
        if (!s.training.optimizer_in_backward) return;
        b[Component::Gradients] = moment[Component::Gradients];
        b[Component::OptimizerTransient] = moment[Component::OptimizerTransient];
    };
    const int64_t comm_forward = acc.forward[Component::CommBuffers];
    const int64_t comm_backward = acc.backward_start[Component::CommBuffers];

    for (const Pass& pass : schedulePasses(s, acc, m)) {
        const int64_t first_layer = st.first_layer + pass.chunk * chunk_blocks;
        const bool head_chunk = st.has_lm_head && pass.chunk == v - 1;
        if (pass.forward) {
            gathered = acc.forward[Component::GatheredWeights];
            ++chunks_alive;
            const double alive = static_cast<double>(chunks_alive) / vd;
            for (int64_t k = 0; k < chunk_blocks; ++k) {
                time += 1;
                const double done = static_cast<double>(k + 1) / static_cast<double>(chunk_blocks);
                const bool last = head_chunk && k == chunk_blocks - 1;
                const double saved = (static_cast<double>(chunks_alive - 1) + done) / vd;
                sample(Phase::Forward, pass.microbatch, first_layer + k, saved * micro_act, saved,
                       endsBytes(acc, alive, heads_saved, last ? EndsMoment::AfterForward : EndsMoment::Between),
                       comm_forward);
            }
            if (head_chunk) {  // the loss follows the last chunk
                time += 1;
                sample(Phase::Loss, pass.microbatch, -1, alive * micro_act, alive,
                       endsBytes(acc, alive, heads_saved, EndsMoment::Loss), acc.loss[Component::CommBuffers]);
                heads_saved = std::min(heads_saved + 1.0, other_heads_max + 1.0);
            }
            continue;
        }
        if (head_chunk) heads_saved = std::max(0.0, heads_saved - 1.0);  // this micro-batch's head runs backward now
        const double alive = static_cast<double>(chunks_alive) / vd;
        const double grads_before = grads;
        // The head's backward, before the first block's (as in accountStep),
        // half-way there: the blocks keep their places on the time axis.
        if (head_chunk) {
            sample(Phase::Backward, pass.microbatch, -1, alive * micro_act, alive,
                   endsBytes(acc, alive, heads_saved, EndsMoment::HeadBackward), comm_backward);
            tl.samples.back().time = time + 1;
        }
        for (int64_t k = chunk_blocks - 1; k >= 0; --k) {
            time += acc.recompute_block > 0 ? 3 : 2;
            const bool first_block = k == chunk_blocks - 1;
            // This chunk's blocks still saved, and its blocks whose gradients exist.
            const double left = first_block ? 1.0 : static_cast<double>(k) / static_cast<double>(chunk_blocks);
            const double done = first_block ? 0.0 : static_cast<double>(chunk_blocks - k) / static_cast<double>(chunk_blocks);
            // Interleaved chunks are treated like whole stages here, as in the
            // estimate: their first backward allocates the stage's gradients
            // (Megatron, the only framework that interleaves, keeps a
            // persistent buffer anyway).
            grads = std::max(grads_before, std::min(1.0, static_cast<double>(backward_chunks_done) + done));
            const double saved = (static_cast<double>(chunks_alive - 1) + left) / vd;
            gathered = roundBytes(gathered_end + (kept - gathered_end) * left);
            const int64_t layer = first_layer + k;
            const bool recomputed = checkpointsLayer(s.training, layer, first_layer);
            // Op-level checkpointing: a block below the first holds what it
            // kept beside its replay (the first one's is in `saved`).
            const double replay = acc.recompute_block + (first_block ? 0.0 : acc.recompute_block_kept);
            const double activations = saved * micro_act + (recomputed ? replay : 0.0) + acc.backward_working;
            const int64_t ends = endsBytes(acc, saved, heads_saved, EndsMoment::Between);
            sample(Phase::Backward, pass.microbatch, first_layer + k, activations, saved, ends,
                   comm_backward);
            MemoryBreakdown& b = tl.samples.back().bytes;
            if (acc.late_gradients > 0 && grads_before == 0.0 && chunk_blocks > 1) {
                // As accountStep: the head's gradient at the first block, all
                // but the late ones at the last, linear in between.
                const double head = static_cast<double>(acc.head_gradients);
                const double ramp = static_cast<double>(chunk_blocks - 1 - k) / static_cast<double>(chunk_blocks - 1);
                b[Component::Gradients] =
                    roundBytes(head + (static_cast<double>(grads_full - acc.late_gradients) - head) * ramp);
            } else if (head_chunk && grads == 0.0) {  // the LM head's gradient, allocated by the head's backward
                b[Component::Gradients] += acc.head_gradients;
            }
            oneTensorStep(b, acc.backward_start);
            // every-k: the first recomputed block's backward is one of the
            // account's moments; its sample is that moment.
            if (layer == acc.backward_recompute_layer && backward_chunks_done == 0) b = acc.backward_recompute;
        }
        --chunks_alive;
        ++backward_chunks_done;
    }
    // The optimizer step; zero_grad (set_to_none) then frees the gradients.
    time += 2;
    TimelineSample step;
    step.time = time;
    step.phase = Phase::OptimizerStep;
    step.bytes = acc.step;
    tl.samples.push_back(step);

    for (size_t i = 0; i < tl.samples.size(); ++i)
        if (tl.samples[i].bytes.total() > tl.samples[tl.peak_index].bytes.total()) tl.peak_index = i;
    return tl;
}

}  // namespace trainmem
