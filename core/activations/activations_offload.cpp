// Activation offloading (training.activation_offloading): torchtune's
// OffloadActivations, read in torchtune/training/_activation_offloading.py at
// torchtune v0.6.0-rc1-220-gbd2a0fc7c. Terms and sources: docs/memory-model.md
// §Activation offloading.
//
// A saved_tensors_hooks context around the model's forward. pack_tensor
// moves every saved tensor of at least min_offload_size = 1024 bytes that is
// not an nn.Parameter (or Buffer) to host memory; unpack_tensor brings it
// back as a new device tensor. The output head runs under a NoOpManager and
// the loss outside the context, so neither is offloaded
// (get_act_offloading_ctx_manager). torchtune's recipes require activation
// checkpointing with it (recipes/full_finetune_single_device.py raises
// otherwise), so what the context sees is: the token ids the embedding
// saves, each checkpointed block's input (PyTorch's checkpoint saves it for
// backward; the block's own tensors are hidden by checkpoint's inner hooks),
// and the final norm's saved tensors, one host copy per pack.
//
// With use_streams (the default): forward keeps each offloaded tensor on the
// device until max_fwd_stash_size = 5 later packs have happened (fwd_stash),
// and backward keeps the tensors one node brought back until the next node
// that brings one back has run (bwd_tensor_stash, freed in that node's
// hook). Without streams nothing is kept.
#include "core/activations/activations.h"

#include <algorithm>

#include "core/activations/activation_shape.h"
#include "core/base/byte_count.h"

namespace trainmem {

namespace {

constexpr int64_t kMinOffloadBytes = 1024;  // OffloadActivations(min_offload_size=1024)

int64_t offloadable(int64_t bytes) { return bytes >= kMinOffloadBytes ? bytes : 0; }

// The final norm's saved tensors as OffloadActivations sees them (eager
// kernels only: validateActivationOffloading).
struct FinalNormPacks {
    int64_t host = 0;        // one host copy per pack
    int64_t storages = 0;    // distinct device storages offloaded (freed on the device without streams)
    int64_t last_group = 0;  // what its last node in backward (the first op of its forward) brings back
};

FinalNormPacks finalNormPacks(const ActivationShape& a) {
    FinalNormPacks p;
    const int64_t n = a.hiddenTokens();
    const int64_t rows = a.tokens / a.sp;
    const int64_t rstd = offloadable(tensorBytes(rows, 4.0));
    if (a.norm == NormKind::LayerNorm) {
        // native_layer_norm saves input, weight, bias, mean and rstd; weight
        // and bias are parameters. Its backward node unpacks all of them.
        const int64_t input = offloadable(tensorBytes(n, a.stream_bytes));
        p.host = p.storages = p.last_group = input + 2 * rstd;
        return p;
    }
    // LlamaRMSNorm: x.to(float32) (x itself when it is fp32); pow saves it,
    // rsqrt its result, x * rstd both again, weight * normalised the
    // normalised tensor (and the weight, a parameter) when the weight trains.
    const int64_t input = offloadable(tensorBytes(n, 4.0));
    const int64_t normalised =
        a.frozen_base ? 0 : offloadable(tensorBytes(n, a.norm_weight_fp32 ? 4.0 : a.stream_bytes));
    p.host = 2 * input + 2 * rstd + normalised;
    p.storages = input + rstd + normalised;
    p.last_group = input;  // pow's backward
    return p;
}

bool streams(const TrainingConfig& t) { return t.activation_offloading == ActivationOffloading::Torchtune; }

}  // namespace

// activations.cpp calls these for a block and for the ends when offloading
// is on (and validated: full checkpointing, eager kernels, one stage).
void accountBlockOffload(const ActivationShape& a, const TrainingConfig& t, LayerActivations& out) {
    const int64_t input = offloadable(out.checkpoint_input);
    out.offloaded_host = input;
    out.checkpoint_input -= input;
    // The recomputed block's input is back on the device; with streams so is
    // what the node before it brought back: the final norm's first saved
    // tensor for the stage's last block, the block above's input below it.
    // (Below the last block the account counts no block input beside the
    // replay, with or without offloading: its own input is the replay's.)
    out.offload_brought_back = input;
    if (streams(t)) {
        out.offload_brought_back += finalNormPacks(a).last_group;
        out.offload_brought_back_below = input;
    }
}

// DeepSpeed's CheckpointFunction (deepspeed/runtime/activation_checkpointing/
// checkpointing.py at v0.19.5-27-gedaa72212): forward keeps, of each
// floating-point argument of the checkpointed function (the block input),
// with partition_activations its 1/mp_size slice (partition_activations():
// `item.detach().contiguous().view(-1).narrow(0, get_partition_start(item),
// partition_size).clone()`, the argument's own storage dropped by
// get_partitioned_activations_for_backward's `arg.data = torch.empty([])`),
// with cpu_checkpointing that (or the whole input) on the CPU
// (`partition.cpu()`; copy_to_device(args, cpu) without partitioning).
// backward gathers the slices into a new full-size tensor
// (gather_partitioned_activations: `torch.zeros([tensor_size])` and
// all_gather_into_tensor) or moves the input back (move_to_device) before the
// recomputation: the full input is on the device again for the block's backward.
void accountBlockDeepspeed(const ActivationShape& a, const TrainingConfig& t, LayerActivations& out) {
    const int64_t input = out.checkpoint_input;
    const int64_t kept = t.deepspeed_partition_activations
                             ? tensorBytes((a.hiddenTokens() + a.tp - 1) / a.tp, a.stream_bytes)
                             : input;
    const int64_t on_device = t.deepspeed_cpu_checkpointing ? 0 : kept;
    out.offloaded_host = t.deepspeed_cpu_checkpointing ? kept : 0;
    out.checkpoint_input = on_device;
    out.offload_brought_back = input - on_device;  // the gathered (or moved back) input, less what stayed
}

void accountEndsOffload(const ActivationShape& a, const ModelConfig& model, const TrainingConfig& t,
                        EndActivations& e) {
    // EmbeddingBackward keeps the int64 token ids: copied to the host, while
    // the batch itself stays on the device. GPT-2's position ids likewise.
    if (!a.frozen_base) {
        e.offloaded_host += offloadable(8 * a.tokens);
        if (model.learned_positions) e.offloaded_host += offloadable(8 * a.s);
    }
    const FinalNormPacks norm = finalNormPacks(a);
    e.offloaded_host += norm.host;
    // With streams the final norm's packs are the last five of the forward:
    // still in fwd_stash through the loss and the head's backward, until the
    // final norm's own backward. Without, they leave the device at once.
    if (!streams(t)) e.final_norm_saved -= norm.storages;
}

int64_t offloadedActivationHostBytes(const BlockKindActivations& kinds, const EndActivations& ends,
                                     const PipelineStage& stage) {
    if (kinds.dense.offloaded_host == 0 && kinds.moe.offloaded_host == 0 && kinds.nope_dense.offloaded_host == 0 &&
        kinds.nope_moe.offloaded_host == 0 && ends.offloaded_host == 0)
        return 0;
    // Everything offloaded is on the host at the end of the forward; backward
    // frees each copy as it brings it back. The blocks' for every micro-batch
    // in flight (DeepSpeed's CPU checkpoints under pipeline parallelism;
    // torchtune's offloading is one stage, one micro-batch at a time).
    const double blocks = stage.in_flight * kinds.sum(stage, &LayerActivations::offloaded_host);
    return saturatedBytes(blocks + static_cast<double>(ends.offloaded_host));
}

Status validateActivationOffloading(const TrainingConfig& t, const ParallelConfig& parallel) {
    if (t.deepspeed_partition_activations || t.deepspeed_cpu_checkpointing) {
        const char* field = t.deepspeed_partition_activations ? "training.deepspeed_partition_activations"
                                                              : "training.deepspeed_cpu_checkpointing";
        if (t.checkpointing != Checkpointing::Full)
            return Error{field, "DeepSpeed's partition_activations and cpu_checkpointing act on the inputs its "
                                "checkpoint keeps, modelled with training.activation_checkpointing = full (got " +
                                    std::string(checkpointingName(t.checkpointing)) +
                                    "): set it to full or training.deepspeed_partition_activations and "
                                    "training.deepspeed_cpu_checkpointing to false"};
        if (t.activation_offloading != ActivationOffloading::None)
            return Error{field, "DeepSpeed's checkpointing and torchtune's activation offloading are two stacks' "
                                "ways of keeping the same inputs: set training.activation_offloading to none or "
                                "training.deepspeed_partition_activations and training.deepspeed_cpu_checkpointing "
                                "to false"};
    }
    if (t.activation_offloading == ActivationOffloading::None) return Ok{};
    constexpr const char* field = "training.activation_offloading";
    const std::string name(activationOffloadingName(t.activation_offloading));
    if (t.checkpointing != Checkpointing::Full)
        return Error{field, name + " offloads what checkpointed blocks keep, and torchtune's recipes require "
                                   "activation checkpointing with it: set training.activation_checkpointing to full "
                                   "(got " + std::string(checkpointingName(t.checkpointing)) +
                                   ") or training.activation_offloading to none"};
    if (t.kernels != KernelProfile::Eager)
        return Error{field, name + " is modelled for training.kernels = eager (the final norm's saved tensors of "
                                   "PyTorch's own ops): set training.kernels to eager (got " +
                                   std::string(kernelProfileName(t.kernels)) + ") or training.activation_offloading to none"};
    if (parallel.pipeline > 1)
        return Error{field, name + " wraps one model's forward (torchtune has no pipeline parallelism): set "
                                   "parallelism.pipeline to 1 (got " + std::to_string(parallel.pipeline) +
                                   ") or training.activation_offloading to none"};
    return Ok{};
}

}  // namespace trainmem
