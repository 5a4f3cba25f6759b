// QLoRA backends. Sources (docs/memory-model.md §QLoRA backends):
//  - bitsandbytes NF4 storage: Dettmers et al. 2023 (QLoRA) §3, double
//    quantisation with blocksize 64 and 256 (the constant trainmem used
//    before backends existed).
//  - torchao torchao/dtypes/nf4tensor.py (pytorch/ao 0598012907d6):
//    to_nf4(block_size=64, scaler_block_size=256); quantized_data two 4-bit
//    codes per uint8, quantized_scalers int8 per block, quantization_factor
//    one per scaler block in the input dtype; fsdp_pre_all_gather gathers
//    those three tensors (packed), not a dequantised weight.
//  - bitsandbytes bitsandbytes/autograd/_functions.py MatMul4Bit.forward:
//    `ctx.tensors = (A, B)` in the older code (TimDettmers/bitsandbytes
//    29e3420c6de4), `ctx.tensors = (None, B)` in the newer
//    (bitsandbytes-foundation/bitsandbytes 60a0d8a5084f): A is the layer's
//    input. The release boundary (0.43.2) is the issue's; the changelog
//    read here stops at 0.40.
#include "core/account/qlora_backend.h"

#include <algorithm>
#include <array>
#include <string>

#include "core/activations/activations.h"
#include "core/model/block_linears.h"
#include "core/base/byte_count.h"
#include "core/base/byte_round.h"
#include "core/model/parameters.h"
#include "core/scenario/scenario.h"
#include "core/account/step_account.h"

namespace trainmem {
namespace {

constexpr std::array<EnumName<QloraBackend>, 3> kBackendNames{{
    {QloraBackend::Bnb, "bnb"},
    {QloraBackend::BnbLegacy, "bnb-legacy"},
    {QloraBackend::TorchaoNf4, "torchao-nf4"},
}};

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

template <>
std::span<const EnumName<QloraBackend>> enumNames<QloraBackend>() { return kBackendNames; }

double qloraBaseBytesPerParam(QloraBackend backend) {
    switch (backend) {
        case QloraBackend::Bnb:
        case QloraBackend::BnbLegacy: return 0.5 + 1.0 / 64.0 + 4.0 / (64.0 * 256.0);
        case QloraBackend::TorchaoNf4: return 0.5 + 1.0 / 64.0 + 2.0 / (64.0 * 256.0);
    }
    return 0.5;
}

double qloraGatheredBlockBytes(const ParameterLayout& lay, int64_t t, int64_t e, bool dense_blocks, bool moe_blocks,
                               QloraBackend backend, double compute_bytes) {
    const double nf4 = qloraBaseBytesPerParam(backend);
    auto block = [&](const LayerParameters& lp) {
        // As stage_parameters.cpp splits them: matrices over the tensor
        // ranks, routed experts over tensor x expert ranks, norms and router whole.
        const double matmul = static_cast<double>((lp.attention.matrix_params + lp.dense_mlp.matrix_params +
                                                   lp.shared_experts.matrix_params) / t + lp.router.matrix_params +
                                                  lp.routed_experts.matrix_params / (t * e));
        const double all = static_cast<double>((lp.attention.params + lp.dense_mlp.params + lp.shared_experts.params) / t +
                                               lp.router.params + lp.norms.params + lp.routed_experts.params / (t * e));
        return matmul * nf4 + (all - matmul) * compute_bytes;
    };
    double bytes = 0;
    if (dense_blocks) bytes = std::max(bytes, block(lay.dense_layer));
    if (moe_blocks) bytes = std::max(bytes, block(lay.moe_layer));
    return bytes;
}

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

Status validateQloraBackend(const Scenario& s) {
    const TrainingConfig& t = s.training;
    constexpr const char* field = "training.qlora_backend";
    if (t.qlora_backend == QloraBackend::Bnb) return ok();
    const std::string name(enumName(t.qlora_backend));
    if (t.finetuning != Finetuning::Qlora)
        return Error{field, name + " is a 4-bit base for QLoRA; training.finetuning is " +
                                std::string(finetuningName(t.finetuning)) + " (set finetuning = qlora, or leave the "
                                "backend at bnb)"};
    if (t.qlora_backend != QloraBackend::BnbLegacy) return ok();
    if (s.model.isMoe() || s.model.mla)
        return Error{field, "bnb-legacy's kept layer inputs are modelled for dense blocks with standard attention "
                            "(not mixture-of-experts or latent attention): use bnb or torchao-nf4 for this model"};
    if (t.checkpointing == Checkpointing::Op)
        return Error{field, "bnb-legacy's kept layer inputs are modelled with training.activation_checkpointing none, "
                            "selective, full, every-k, megatron-block, torchtitan-layer or megatron-uniform (not op: "
                            "whether a save list keeps a 4-bit layer's input was not read)"};
    return ok();
}

}  // namespace trainmem
