// Precision recipes -> the dtype of each kind of tensor.
// Sources (docs/memory-model.md §Precision):
//  - PyTorch AMP (torch.autocast): parameters and .grad stay fp32; matmul
//    inputs are cast to 16-bit and the casts of leaf weights are cached for
//    the autocast region, so a 16-bit copy of each matmul weight lives from
//    its first use in forward until the region exits.
//  - ZeRO paper (Rajbhandari et al. 2020, §3.1): fp16 params + fp16 grads +
//    fp32 master params, momentum, variance = 2 + 2 + 12 bytes.
//  - Megatron-LM accumulates gradients in fp32 (main_grad): grad_dtype=fp32.
//  - torchtune pure bf16: bf16 params, grads and optimizer states.
//  - Transformer Engine fp8: bf16 params + fp32 master, fp8 weight copies
//    (and their transposes) cached between forward and backward.
#include "core/training/training_config.h"

namespace trainmem {

PrecisionPlan planPrecision(const TrainingConfig& t) {
    PrecisionPlan p{};
    switch (t.precision) {
        case Precision::Fp32:
            p = {DType::Fp32, DType::Fp32, std::nullopt, DType::Fp32, DType::Fp32, false, false};
            break;
        case Precision::AmpBf16:
            p = {DType::Fp32, DType::Fp32, std::nullopt, DType::Fp32, DType::Bf16, true, false};
            break;
        case Precision::AmpFp16:
            p = {DType::Fp32, DType::Fp32, std::nullopt, DType::Fp32, DType::Fp16, true, false};
            break;
        case Precision::MixedBf16:
            p = {DType::Bf16, DType::Bf16, DType::Fp32, DType::Fp32, DType::Bf16, false, false};
            break;
        case Precision::MixedFp16:
            p = {DType::Fp16, DType::Fp16, DType::Fp32, DType::Fp32, DType::Fp16, false, false};
            break;
        case Precision::PureBf16:
            p = {DType::Bf16, DType::Bf16, std::nullopt, DType::Bf16, DType::Bf16, false, false};
            break;
        case Precision::Fp8Mixed:
            p = {DType::Bf16, DType::Bf16, DType::Fp32, DType::Fp32, DType::Bf16, false, true};
            break;
    }
    if (t.grad_dtype) p.gradients = *t.grad_dtype;
    if (t.optimizer_state_dtype) p.optimizer_states = *t.optimizer_state_dtype;
    return p;
}

}  // namespace trainmem
