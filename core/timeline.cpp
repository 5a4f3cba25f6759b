// Built from the same StepAccount as estimate(): the samples at the moments
// the account evaluates (forward end, loss, backward start and end, step)
// are those breakdowns, and every other sample lies between two of them, so
// the timeline's maximum is the estimate's peak.
#include "core/timeline.h"

#include <algorithm>
#include <cmath>

#include "core/step_account.h"

namespace trainmem {
namespace {

int64_t roundBytes(double b) { return static_cast<int64_t>(std::llround(b)); }

// One pass of a chunk of blocks (a whole stage, or 1/v of it when interleaved).
struct Pass {
    bool forward;
    int64_t microbatch;
    int64_t chunk;
};

// The order in which a stage runs its passes.
std::vector<Pass> schedulePasses(const Scenario& s, const StepAccount& acc, int64_t m) {
    const int64_t p = s.parallelism.pipeline;
    const int64_t v = s.parallelism.schedule == PipelineSchedule::Interleaved1F1B ? s.parallelism.virtual_stages : 1;
    const int64_t total = m * v;
    std::vector<Pass> out;
    auto chunkPass = [&](bool fwd, int64_t k) { out.push_back({fwd, k / v, k % v}); };
    if (p <= 1) {
        for (int64_t j = 0; j < m; ++j) {
            out.push_back({true, j, 0});
            out.push_back({false, j, 0});
        }
        return out;
    }
    if (s.parallelism.schedule == PipelineSchedule::GPipe) {
        for (int64_t k = 0; k < total; ++k) chunkPass(true, k);
        for (int64_t k = 0; k < total; ++k) chunkPass(false, k);
        return out;
    }
    // 1F1B (and interleaved, in chunks): warm-up forwards, steady one
    // forward / one backward, cool-down backwards.
    const int64_t in_flight = std::clamp<int64_t>(std::llround(acc.stage.in_flight * static_cast<double>(v)), 1, total);
    int64_t f = 0, b = 0;
    for (; f < in_flight - 1; ++f) chunkPass(true, f);
    while (f < total) {
        chunkPass(true, f++);
        chunkPass(false, b++);
    }
    while (b < total) chunkPass(false, b++);
    return out;
}

}  // namespace

Expected<StepTimeline> stepTimeline(const Scenario& s, std::optional<int64_t> stage) {
    Expected<Estimate> est = estimate(s);
    if (!est) return est.error();
    const int64_t index = stage.value_or(est->peak.stage);
    if (index < 0 || index >= s.parallelism.pipeline)
        return Error{"stage", "must be between 0 and " + std::to_string(s.parallelism.pipeline - 1)};

    const StepInputs in = stepInputs(s);
    const StepAccount acc = accountStep(s, in, index);
    const PipelineStage& st = acc.stage;
    const int64_t m = in.microbatches;
    const int64_t v = s.parallelism.schedule == PipelineSchedule::Interleaved1F1B ? s.parallelism.virtual_stages : 1;
    const double blocks_per_chunk = std::max(1.0, static_cast<double>(st.num_layers) / static_cast<double>(v));
    const int64_t chunk_blocks = static_cast<int64_t>(std::ceil(blocks_per_chunk));
    const double chunk_act = acc.activations_one_microbatch / static_cast<double>(v);

    const int64_t grads_full = acc.step[Component::Gradients];
    const MemoryBreakdown& fw = acc.forward;
    const int64_t amp = acc.autocast_copies_per_microbatch;
    const int64_t ends_forward = fw[Component::LogitsLoss];
    const int64_t ends_backward_end = acc.backward_end[Component::LogitsLoss];

    StepTimeline tl;
    tl.stage = index;
    tl.microbatches = m;
    tl.capacity_bytes = est->capacity_bytes;

    double time = 0;
    double chunks_alive = 0;         // chunks of saved activations, across micro-batches
    int64_t microbatches_alive = 0;  // micro-batches whose autocast casts are alive
    int64_t backward_chunks_done = 0;
    // Gradients: present from the start with a persistent buffer; otherwise
    // they appear block by block during the first micro-batch's backward.
    double grad_fraction = acc.persistent_grads ? 1.0 : 0.0;

    auto emit = [&](Phase phase, int64_t micro, int64_t layer, const MemoryBreakdown& b) {
        TimelineSample x;
        x.time = time;
        x.phase = phase;
        x.microbatch = micro;
        x.layer = layer;
        x.bytes = b;
        tl.samples.push_back(x);
    };
    auto frame = [&](double act, double grads, int64_t copies, int64_t logits, int64_t comm) {
        MemoryBreakdown b = acc.resident;
        b[Component::GatheredWeights] = fw[Component::GatheredWeights];
        b[Component::CommBuffers] = comm;
        b[Component::Gradients] = roundBytes(grads * static_cast<double>(grads_full));
        b[Component::WeightCopies] = copies;
        b[Component::Activations] = roundBytes(act);
        b[Component::LogitsLoss] = logits;
        return b;
    };

    for (const Pass& pass : schedulePasses(s, acc, m)) {
        const int64_t first_layer = st.first_layer + pass.chunk * chunk_blocks;
        if (pass.forward) {
            if (pass.chunk == 0) ++microbatches_alive;
            const int64_t copies = amp * microbatches_alive + acc.lasting_copies;
            for (int64_t k = 0; k < chunk_blocks; ++k) {
                time += 1;
                const double act = (chunks_alive + static_cast<double>(k + 1) / static_cast<double>(chunk_blocks)) * chunk_act;
                emit(Phase::Forward, pass.microbatch, first_layer + k,
                     frame(act, grad_fraction, copies, ends_forward, fw[Component::CommBuffers]));
            }
            chunks_alive += 1;
            if (st.has_lm_head && pass.chunk == v - 1) {  // the loss follows the last chunk
                time += 1;
                emit(Phase::Loss, pass.microbatch, -1,
                     frame(chunks_alive * chunk_act, grad_fraction, copies, acc.loss[Component::LogitsLoss],
                           acc.loss[Component::CommBuffers]));
            }
            continue;
        }
        const int64_t copies_start = amp * microbatches_alive + acc.lasting_copies;
        const double others = chunks_alive - 1.0;
        const double grads_before = grad_fraction;
        for (int64_t k = chunk_blocks - 1; k >= 0; --k) {
            time += acc.recompute_block > 0 ? 3 : 2;
            const bool first_block = k == chunk_blocks - 1;
            // Of this chunk: still saved, and blocks whose gradients exist.
            const double left = static_cast<double>(k) / static_cast<double>(chunk_blocks);
            const double done = first_block ? 0.0 : static_cast<double>(chunk_blocks - k) / static_cast<double>(chunk_blocks);
            grad_fraction = std::max(grads_before, std::min(1.0, (static_cast<double>(backward_chunks_done) + done) / static_cast<double>(v)));
            const double act = (first_block ? chunks_alive : others + left) * chunk_act + acc.recompute_block + acc.backward_working;
            const int64_t copies = first_block ? copies_start
                                               : roundBytes(static_cast<double>(copies_start) - (1.0 - left) * static_cast<double>(amp));
            const int64_t logits = first_block ? acc.backward_start[Component::LogitsLoss]
                                               : roundBytes(static_cast<double>(ends_backward_end) +
                                                            left * static_cast<double>(ends_forward - ends_backward_end));
            emit(Phase::Backward, pass.microbatch, first_layer + k,
                 frame(act, grad_fraction, copies, logits, acc.backward_start[Component::CommBuffers]));
        }
        chunks_alive -= 1;
        ++backward_chunks_done;
        if (pass.chunk == 0) --microbatches_alive;
    }
    // Optimizer step, then zero_grad frees the gradients (set_to_none).
    time += 2;
    emit(Phase::OptimizerStep, -1, -1, acc.step);

    tl.peak_index = 0;
    for (size_t i = 0; i < tl.samples.size(); ++i)
        if (tl.samples[i].bytes.total() > tl.samples[tl.peak_index].bytes.total()) tl.peak_index = i;
    return tl;
}

}  // namespace trainmem
