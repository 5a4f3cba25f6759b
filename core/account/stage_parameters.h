#pragma once
// The parameters one GPU holds for its pipeline stage, after tensor and
// expert parallelism, before ZeRO sharding; and the model states they cost.
#include <cstdint>

#include "core/account/estimate_result.h"
#include "core/account/stage_blocks.h"
#include "core/model/parameters.h"
#include "core/training/pipeline.h"
#include "core/scenario/scenario.h"

namespace trainmem {

struct StageParameters {
    // Parameters replicated over the data-parallel group (everything but routed experts).
    TensorGroup dense;
    // Routed experts: replicated only over the expert-data-parallel group.
    TensorGroup experts;
    // Embedding / LM head part of `dense` (Muon keeps AdamW states for them).
    TensorGroup embedding_head;
    // Parameters used as matmul weights (AMP casts them, FP8 caches them).
    int64_t matmul_params = 0;
    // Largest per-block unit gathered by ZeRO-3 / FSDP (one transformer block).
    int64_t largest_block = 0;
    // Frozen base for LoRA/QLoRA (the trainable part is the adapters in `dense`).
    int64_t frozen_matmul = 0;   // base matmul weights (NF4 under QLoRA)
    int64_t frozen_other = 0;    // embeddings, head, norms of the frozen base (16-bit)
    int64_t adapters = 0;        // LoRA parameters on this stage
};

StageParameters stageParameters(const Scenario& scenario, const ParameterLayout& layout,
                                const PipelineStage& stage);
// The same with the adapters' counts computed before (loraParameters of the
// scenario's model, rank and targets): no string is looked at.
StageParameters stageParameters(const Scenario& scenario, const ParameterLayout& layout, const LoraParameters& lora,
                                const PipelineStage& stage);

// Model states and host memory for a stage; `shard_dense` / `shard_experts`
// are the ZeRO partition sizes of the two replication groups.
struct StageModelStates {
    ModelStates gpu;
    int64_t host_bytes = 0;
    int64_t trainable_local = 0;  // trainable parameters this rank updates (after sharding)
    int64_t largest_trainable = 0;
    int64_t managed_bytes = 0;  // paged optimizer states: CUDA managed memory (core/account/paged_states.h)
};

StageModelStates stageModelStates(const Scenario& scenario, const StageParameters& sp);

// Ranks a dense (resp. expert) parameter shard is spread over by ZeRO.
int64_t denseShardRanks(const ParallelConfig& par);
int64_t expertShardRanks(const ParallelConfig& par);

}  // namespace trainmem
