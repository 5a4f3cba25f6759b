#pragma once
// QLoRA's 4-bit base by backend: the bytes each frozen matmul weight is
// stored in, what ZeRO-3/FSDP gathers of it, and what the older
// bitsandbytes keeps for backward. Terms and sources: docs/memory-model.md
// §QLoRA backends.
#include <cstdint>
#include <span>

#include "core/base/error.h"
#include "core/training/names.h"
#include "core/training/training_config.h"

namespace trainmem {

struct Scenario;
struct ParameterLayout;
struct PipelineStage;

// Bytes per frozen matmul weight, quantisation constants included:
// bitsandbytes NF4 (blocksize 64, double quantisation: an 8-bit absmax per
// 64 weights and an fp32 scale per 256 absmax) 0.5 + 1/64 + 4/16384;
// torchao NF4Tensor (block_size 64, scaler_block_size 256, its
// quantization_factor in the bf16 input dtype) 0.5 + 1/64 + 2/16384.
double qloraBaseBytesPerParam(QloraBackend backend);

// One ZeRO-3/FSDP unit of the frozen base as gathered: the block's matmul
// weights packed 4-bit with their constants, the rest (norms, biases,
// routers' and experts' parameters the backend leaves unquantised are
// counted as matmul weights) in the compute dtype. The largest block kind
// present on the stage, after tensor (and expert) parallelism.
double qloraGatheredBlockBytes(const ParameterLayout& layout, int64_t tensor, int64_t expert, const PipelineStage& stage,
                               QloraBackend backend, double compute_bytes);

// The older bitsandbytes' kept inputs and their place in the account:
// core/account/qlora_kept_inputs.h.

// training.qlora_backend and its combinations (docs/scenario-format.md).
Status validateQloraBackend(const Scenario& scenario);

}  // namespace trainmem
