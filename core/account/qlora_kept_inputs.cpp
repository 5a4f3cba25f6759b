// The inputs bitsandbytes before 0.43.2 keeps for backward (MatMul4Bit saves
// its input A), per block, and where they are alive in a stage's account.
// Terms and sources: docs/memory-model.md §QLoRA backends.
#include "core/account/qlora_kept_inputs.h"

#include <algorithm>
#include <array>

#include "core/account/qlora_backend.h"
#include "core/activations/activations.h"
#include "core/base/byte_count.h"
#include "core/base/byte_round.h"
#include "core/model/block_linears.h"
#include "core/model/parameters.h"

namespace trainmem {
namespace {

// Which saved input a Linear of a dense block reads: the block's (normed)
// input for q/k/v, the attention output for its projection, the MLP's
// normed input for gate/up, the MLP's inner activation for down.
enum class InputSlot { AttentionIn, AttentionOut, MlpIn, MlpInner, Count };

InputSlot slotOf(const BlockLinear& l, int64_t hidden) {
    const bool projection = l.module == "o_proj" || l.module == "c_proj";
    if (l.part == BlockPart::Attention) return projection ? InputSlot::AttentionOut : InputSlot::AttentionIn;
    const bool down = l.module == "down_proj" || l.module == "c_proj" || l.in != hidden;
    return down ? InputSlot::MlpInner : InputSlot::MlpIn;
}

}  // namespace
namespace {

// One block's kept inputs per micro-batch: all of them, and the part that
// is the MLP's inner input (down_proj's, freed by the first backward op of
// the block).
struct KeptInputs {
    double block = 0;
    double mlp_inner = 0;
};

KeptInputs keptInputs(const Scenario& s) {
    const TrainingConfig& tr = s.training;
    if (tr.finetuning != Finetuning::Qlora || tr.qlora_backend != QloraBackend::BnbLegacy) return {};
    const ModelConfig& m = s.model;
    const int64_t hidden = m.hidden_size;
    std::array<int64_t, static_cast<size_t>(InputSlot::Count)> width{};
    std::array<bool, static_cast<size_t>(InputSlot::Count)> shared{};
    // An adapted Linear's LoRA path (lora_A(dropout(x)) with dropout the
    // identity at p = 0) saves the very tensor the 4-bit matmul keeps.
    const bool adapter_saves_input = tr.lora_dropout == 0.0;
    for (const BlockLinear& l : blockLinears(m, false)) {
        const size_t slot = static_cast<size_t>(slotOf(l, hidden));
        width[slot] = l.in;
        if (adapter_saves_input && loraAdapts(l, tr.lora_targets)) shared[slot] = true;
    }
    const int64_t t = s.parallelism.tensor;
    const double tokens = static_cast<double>(tr.micro_batch_size) *
                          static_cast<double>(tr.sequence_length / s.parallelism.context);
    const double bytes = tokens * bytesOf(planPrecision(tr).activations);
    KeptInputs k;
    for (size_t i = 0; i < width.size(); ++i) {
        if (shared[i]) continue;
        // Row-parallel inputs (the attention output, the MLP's inner width)
        // are split over the tensor ranks; the others are whole.
        const bool inner = i == static_cast<size_t>(InputSlot::MlpInner);
        const bool row_parallel = inner || i == static_cast<size_t>(InputSlot::AttentionOut);
        const double slot = static_cast<double>(row_parallel ? width[i] / t : width[i]) * bytes;
        k.block += slot;
        if (inner) k.mlp_inner = slot;
    }
    return k;
}

}  // namespace

double qloraKeptInputBytes(const Scenario& s) { return keptInputs(s).block; }

namespace {

// How a checkpointing policy treats one block's kept 4-bit inputs: kept from
// its forward to its backward (not checkpointed: none, selective, whose
// recomputed attention core has no Linear, and the blocks every-k,
// megatron-block, torchtitan-layer leave alone), or made again by the
// block's replay (checkpointed), together with the layers replayed with it
// (megatron-uniform: its chunk's layers up to it).
struct KeptInputPolicy {
    const TrainingConfig& training;
    int64_t first = 0;

    bool kept(int64_t layer) const {
        if (training.checkpointing == Checkpointing::None || training.checkpointing == Checkpointing::Selective)
            return true;
        if (training.checkpointing == Checkpointing::Full) return false;
        return !checkpointsLayer(training, layer, first);
    }
    // Blocks whose inputs exist again while `layer` runs backward.
    double replayed(int64_t layer) const {
        if (kept(layer)) return 0;
        if (training.checkpointing != Checkpointing::MegatronUniform) return 1;
        const int64_t k = std::max<int64_t>(training.checkpoint_every, 1);
        return static_cast<double>((layer - first) % k + 1);
    }
};

}  // namespace

void applyQloraKeptInputs(const Scenario& s, double per_block, StepAccount& acc) {
    if (per_block <= 0) return;
    // The block running backward, at its worst, no longer holds its MLP's
    // inner input: down_proj's backward runs first and frees it (measured:
    // validation/qlora_legacy_truth.py).
    const double running = per_block - keptInputs(s).mlp_inner;
    const PipelineStage& st = acc.stage;
    const KeptInputPolicy policy{s.training, st.first_layer};
    const int64_t end = st.first_layer + st.num_layers;
    double kept_layers = 0, largest_replay = 0;
    for (int64_t l = st.first_layer; l < end; ++l) {
        if (policy.kept(l)) kept_layers += 1;
        largest_replay = std::max(largest_replay, policy.replayed(l));
    }
    // Block `l`'s own inputs while it runs backward: kept, or made again by
    // its replay with the chunk's layers below it.
    auto own = [&](int64_t l) {
        const double replayed = policy.kept(l) ? 1.0 : policy.replayed(l);
        return (replayed - 1.0) * per_block + running;
    };
    const double in_flight = st.in_flight;
    const ParallelConfig& par = s.parallelism;
    const double v = par.schedule == PipelineSchedule::Interleaved1F1B ? static_cast<double>(par.virtual_stages) : 1.0;
    const double others = std::max(0.0, in_flight - 1.0 / v);
    auto add = [](MemoryBreakdown& m, double bytes) {
        if (bytes > 0) m[Component::Activations] = addBytes(m[Component::Activations], roundedBytes(bytes));
    };
    const double kept = per_block * kept_layers;  // one micro-batch's, from forward to backward
    acc.activations_no_recompute += per_block * static_cast<double>(st.num_layers) * in_flight;
    acc.activations_one_microbatch += kept;
    acc.recompute_block += per_block * largest_replay;
    for (MemoryBreakdown* m : {&acc.forward, &acc.loss, &acc.backward_head}) add(*m, kept * in_flight);
    if (st.num_layers == 0) return;
    // The stage's last block's backward: the blocks below it keep theirs.
    const double last_kept = policy.kept(end - 1) ? per_block : 0.0;
    add(acc.backward_start, kept * in_flight - last_kept + own(end - 1));
    // A recomputed block between the last and the first: the blocks below it
    // still keep theirs, those above have run backward.
    if (acc.backward_recompute_layer >= 0 && acc.backward_recompute.total() > 0) {
        double below = 0;
        for (int64_t l = st.first_layer; l < acc.backward_recompute_layer; ++l)
            if (policy.kept(l)) below += per_block;
        add(acc.backward_recompute, kept * (in_flight - 1.0) + below + own(acc.backward_recompute_layer));
    }
    // The stage's first block's backward: its own and the other micro-batches'.
    add(acc.backward_end, kept * others + own(st.first_layer));
    if (acc.backward_next.total() > 0) add(acc.backward_next, kept * others + own(st.first_layer));
}

}  // namespace trainmem
