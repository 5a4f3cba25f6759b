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
struct StepAccount;
struct ParameterLayout;

template <>
std::span<const EnumName<QloraBackend>> enumNames<QloraBackend>();

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
double qloraGatheredBlockBytes(const ParameterLayout& layout, int64_t tensor, int64_t expert, bool dense_blocks,
                               bool moe_blocks, QloraBackend backend, double compute_bytes);

// bitsandbytes before 0.43.2: MatMul4Bit saves its input A for backward.
// The bytes per block and micro-batch that nothing else keeps (inputs
// shared with an adapted Linear, whose LoRA path saves the same tensor when
// lora_dropout is 0, are not counted twice). 0 for the other backends.
double qloraKeptInputBytes(const Scenario& scenario);

// Adds the kept inputs to the account's activations: a block that is not
// checkpointed (none, selective, and the blocks every-k, megatron-block and
// torchtitan-layer leave alone) keeps them from its forward to its
// backward, in every micro-batch in flight; a checkpointed block has them
// again only while it is replayed (megatron-uniform: with its chunk's
// layers below it). Dense blocks only (validateQloraBackend).
void applyQloraKeptInputs(const Scenario& scenario, double per_block, StepAccount& acc);

// training.qlora_backend and its combinations (docs/scenario-format.md).
Status validateQloraBackend(const Scenario& scenario);

}  // namespace trainmem
