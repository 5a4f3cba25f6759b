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

#include "core/account/stage_blocks.h"
#include "core/activations/activations.h"
#include "core/model/block_linears.h"
#include "core/base/byte_count.h"
#include "core/base/byte_round.h"
#include "core/model/parameters.h"
#include "core/scenario/scenario.h"

namespace trainmem {

double qloraBaseBytesPerParam(QloraBackend backend) {
    switch (backend) {
        case QloraBackend::Bnb:
        case QloraBackend::BnbLegacy: return 0.5 + 1.0 / 64.0 + 4.0 / (64.0 * 256.0);
        case QloraBackend::TorchaoNf4: return 0.5 + 1.0 / 64.0 + 2.0 / (64.0 * 256.0);
    }
    return 0.5;
}

double qloraGatheredBlockBytes(const ParameterLayout& lay, int64_t t, int64_t e, const PipelineStage& stage,
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
    forEachStageBlockKind(lay, LoraParameters{}, stage,
                          [&](const LayerParameters& lp, int64_t, int64_t) { bytes = std::max(bytes, block(lp)); });
    return bytes;
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
