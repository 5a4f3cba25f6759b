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
#include "core/qlora_backend.h"

#include <algorithm>
#include <array>
#include <string>

#include "core/block_linears.h"
#include "core/byte_count.h"
#include "core/byte_round.h"
#include "core/parameters.h"
#include "core/scenario.h"
#include "core/step_account.h"

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

double qloraKeptInputBytes(const Scenario& s) {
    const TrainingConfig& tr = s.training;
    if (tr.finetuning != Finetuning::Qlora || tr.qlora_backend != QloraBackend::BnbLegacy) return 0;
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
    double per_token = 0;
    for (size_t i = 0; i < width.size(); ++i) {
        if (shared[i]) continue;
        // Row-parallel inputs (the attention output, the MLP's inner width)
        // are split over the tensor ranks; the others are whole.
        const bool row_parallel = i == static_cast<size_t>(InputSlot::AttentionOut) ||
                                  i == static_cast<size_t>(InputSlot::MlpInner);
        per_token += static_cast<double>(row_parallel ? width[i] / t : width[i]);
    }
    const double tokens = static_cast<double>(tr.micro_batch_size) *
                          static_cast<double>(tr.sequence_length / s.parallelism.context);
    return per_token * tokens * bytesOf(planPrecision(tr).activations);
}

void applyQloraKeptInputs(const Scenario& s, double per_block, StepAccount& acc) {
    if (per_block <= 0) return;
    const double layers = static_cast<double>(acc.stage.num_layers);
    const double in_flight = acc.stage.in_flight;
    const ParallelConfig& par = s.parallelism;
    const double v = par.schedule == PipelineSchedule::Interleaved1F1B ? static_cast<double>(par.virtual_stages) : 1.0;
    const double others = std::max(0.0, in_flight - 1.0 / v);
    auto add = [](MemoryBreakdown& m, double bytes) {
        m[Component::Activations] = addBytes(m[Component::Activations], roundedBytes(bytes));
    };
    acc.activations_no_recompute += per_block * layers * in_flight;
    if (s.training.checkpointing == Checkpointing::None) {
        // Every block keeps its inputs until its backward.
        acc.activations_one_microbatch += per_block * layers;
        for (MemoryBreakdown* m : {&acc.forward, &acc.loss, &acc.backward_head, &acc.backward_start})
            add(*m, per_block * layers * in_flight);
        // The first block's backward: the other micro-batches' blocks and its own.
        add(acc.backward_end, per_block * (layers * others + 1.0));
        if (acc.backward_next.total() > 0) add(acc.backward_next, per_block * (layers * others + 1.0));
        return;
    }
    // Full checkpointing: only the block being recomputed keeps them.
    acc.recompute_block += per_block;
    add(acc.backward_start, per_block);
    add(acc.backward_end, per_block);
    if (acc.backward_next.total() > 0) add(acc.backward_next, per_block);
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
                            "(not mixture-of-experts or latent attention)"};
    if (t.checkpointing != Checkpointing::None && t.checkpointing != Checkpointing::Full)
        return Error{field, "bnb-legacy's kept layer inputs are modelled with training.activation_checkpointing none "
                            "or full (got " + std::string(checkpointingName(t.checkpointing)) + ")"};
    return ok();
}

}  // namespace trainmem
