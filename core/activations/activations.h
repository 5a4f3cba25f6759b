#pragma once
// The activation account: what autograd saves for backward in one transformer
// block, op by op, for each implementation profile (KernelProfile), and what
// the embedding, logits and loss hold. Per-op tables: docs/memory-model.md §Activations.
// Defined in activations.cpp, except: the op-level policy (checkpointsLayer, checkpointKeptBytes,
// recomputedBytes, checkpointSaveOpNames) in activations_op_policy.cpp; offloading
// (offloadedActivationHostBytes, validateActivationOffloading) in activations_offload.cpp;
// endActivations in activation_ends.cpp.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/model/model_config.h"
#include "core/training/parallel_config.h"
#include "core/training/pipeline.h"
#include "core/training/training_config.h"

namespace trainmem {

// One tensor saved for backward (or one transient), per micro-batch, on one GPU.
struct SavedTensor {
    std::string op;       // "q_proj", "attention softmax", "mlp act_fn", ...
    std::string tensor;   // what is kept: "input", "output", "dropout mask", "logsumexp"
    int64_t bytes = 0;
    bool attention_core = false;  // dropped by selective recomputation (recomputed instead)
};

// Bytes for one block and one micro-batch on one GPU (after TP/SP/CP division).
struct LayerActivations {
    int64_t saved = 0;            // no recomputation: everything autograd keeps for backward
    int64_t saved_selective = 0;  // selective recomputation: attention core recomputed in backward
    int64_t checkpoint_input = 0; // full recomputation: only the block input is kept
    int64_t backward_working = 0; // transient while this block runs backward (gradients of its intermediates)
    // Op-level selective checkpointing (Checkpointing::Op), filled only under
    // that policy: the block input plus the kept op outputs, what the replay
    // in backward allocates beside them, and the share of the block's matmul
    // flops the replay repeats.
    int64_t op_kept = 0;
    int64_t op_recompute = 0;
    double op_recomputed_matmul_share = 0;
    // Activation offloading (training.activation_offloading, full
    // checkpointing): what the block's forward moves to host memory
    // (checkpoint_input is then what stays on the device), and what is back
    // on the device beside the replay while the block runs backward: as the
    // stage's last block, its input (with torchtune's streams also the final
    // norm's tensors its last backward node brought back); below it, with
    // streams, the input of the block above (bwd_tensor_stash).
    int64_t offloaded_host = 0;
    int64_t offload_brought_back = 0;
    int64_t offload_brought_back_below = 0;
};

// A model's blocks by kind: dense or MoE, rotary or NoPE (Llama 4's NoPE
// layers, ModelConfig::isRopeLayer false, keep no rotary or L2-norm tensors
// and their temperature scales instead). A model without NoPE layers has
// nope_dense = dense and nope_moe = moe, so every sum below is exact either way.
// A hybrid (ModelConfig::layer_kinds) has one block of each LayerKind it
// uses instead (hybridKindIndex; no hybrid has NoPE layers).
struct BlockKindActivations {
    LayerActivations dense;
    LayerActivations moe;
    LayerActivations nope_dense;
    LayerActivations nope_moe;
    bool hybrid = false;
    std::array<LayerActivations, kLayerKinds> kinds{};
    const LayerActivations& of(const ModelConfig& model, int64_t layer) const {
        if (hybrid) return kinds[hybridKindIndex(model.layerKind(layer))];
        const bool moe_layer = model.isMoeLayer(layer);
        if (model.isRopeLayer(layer)) return moe_layer ? moe : dense;
        return moe_layer ? nope_moe : nope_dense;
    }
    // The stage's blocks of each kind times their `field`, as the per-block
    // loop would add them (exact while the sums stay below 2^53 bytes), and
    // the largest `field` among the kinds the stage holds.
    double sum(const PipelineStage& stage, int64_t LayerActivations::*field) const;
    double largest(const PipelineStage& stage, int64_t LayerActivations::*field) const;
};
BlockKindActivations blockKindActivations(const ModelConfig& model, const TrainingConfig& training,
                                          const ParallelConfig& parallel);

// Whether the policy checkpoints (recomputes) layer `layer` of a stage whose
// first layer is `stage_first_layer`: full and op every block; every-k the
// layers l with l % k == 0; megatron-block the stage's first k
// (megatron/core/recompute.py, recompute_method = "block"); torchtitan-layer
// every k-th block of the stage counted from 1 (torchtitan
// distributed/activation_checkpoint.py _apply_layer_sac). k = checkpoint_every.
bool checkpointsLayer(const TrainingConfig& training, int64_t layer, int64_t stage_first_layer);
// every-k, megatron-block, torchtitan-layer and megatron-uniform: the
// account goes block by block (which blocks keep what depends on depth).
// (Inline: the account asks once per layout.)
inline bool checkpointsSomeLayers(Checkpointing p) {
    return p == Checkpointing::EveryK || p == Checkpointing::MegatronBlock || p == Checkpointing::TorchtitanLayer ||
           p == Checkpointing::MegatronUniform;
}
// Block by block (checkpointsSomeLayers): what block `layer` keeps from its
// forward to its backward (everything it saves; its input when
// checkpointed; megatron-uniform: its chunk's input, held by the chunk's
// first layer), and what its recomputation holds while it runs backward
// (its saved tensors; megatron-uniform: those of its chunk's layers up to
// it, replayed together).
int64_t checkpointKeptBytes(const TrainingConfig& training, int64_t layer, int64_t stage_first_layer,
                            const LayerActivations& block);
double recomputedBytes(const TrainingConfig& training, const ModelConfig& model, const BlockKindActivations& blocks,
                       int64_t layer, int64_t stage_first_layer);

// The names a save list (training.checkpoint_save_ops) may hold, in the order
// the docs list them: "mm" (every matmul), "mm-every-second" (torchtitan's
// rule: the 1st, 3rd, ... matmul of a block), "attention" (the attention
// kernel's outputs), "reduce_scatter" (sequence-parallel reduce-scatters),
// "max" (fp8 amax reductions).
const std::vector<std::string_view>& checkpointSaveOpNames();

// The model's ends, on the stage that holds them, per micro-batch.
struct EndActivations {
    int64_t embedding_saved = 0;  // first stage: embedding output kept for backward (dropout mask, positions)
    int64_t final_norm_saved = 0; // last stage: what the final norm keeps
    int64_t logits_saved = 0;     // last stage: held from the loss until the head's backward (logits, log-softmax, ...)
    int64_t loss_peak = 0;        // last stage: all that is alive at the worst moment of computing the loss (incl. logits_saved)
    int64_t loss_backward_peak = 0; // last stage: alive at the worst moment of the head's backward (incl. what is still saved)
    // Activation offloading: the ends' saved tensors moved to host memory
    // (embedding and final norm); embedding_saved and final_norm_saved are
    // then what stays on the device.
    int64_t offloaded_host = 0;
};

// Activation offloading (core/activations/activations_offload.cpp). The host bytes of a
// stage's offloaded activations at their peak (the end of its forward), per
// GPU rank.
int64_t offloadedActivationHostBytes(const BlockKindActivations& blocks, const EndActivations& ends,
                                     const PipelineStage& stage);
// The settings the offloading account covers (named in the error).
Status validateActivationOffloading(const TrainingConfig& training, const ParallelConfig& parallel);

// Saved tensors of one block, op by op (for docs, the GUI table and tests;
// allocates, so not for the hot path).
// rope_layer: false for Llama 4's NoPE blocks (ModelConfig::isRopeLayer).
// kind: the layer's mixer and FFN (ModelConfig::layerKind); the bool
// overloads take an attention layer, MoE or dense.
std::vector<SavedTensor> blockSavedTensors(const ModelConfig& model, const TrainingConfig& training,
                                           const ParallelConfig& parallel, LayerKind kind, bool rope_layer = true);
std::vector<SavedTensor> blockSavedTensors(const ModelConfig& model, const TrainingConfig& training,
                                           const ParallelConfig& parallel, bool moe_layer, bool rope_layer = true);

// Hot path: no allocation.
LayerActivations layerActivations(const ModelConfig& model, const TrainingConfig& training,
                                  const ParallelConfig& parallel, LayerKind kind, bool rope_layer = true);
LayerActivations layerActivations(const ModelConfig& model, const TrainingConfig& training,
                                  const ParallelConfig& parallel, bool moe_layer, bool rope_layer = true);
EndActivations endActivations(const ModelConfig& model, const TrainingConfig& training,
                              const ParallelConfig& parallel);

}  // namespace trainmem
