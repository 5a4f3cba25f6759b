#pragma once
// What the older bitsandbytes keeps for backward under QLoRA, and where it is
// alive in a stage's account (qlora_kept_inputs.cpp).
#include "core/account/account_types.h"
#include "core/scenario/scenario.h"

namespace trainmem {

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

}  // namespace trainmem
