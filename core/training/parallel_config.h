#pragma once
// scheduleName and parseSchedule are in names.cpp, with every enum's spelling.
#include <cstdint>
#include <optional>
#include <string_view>

namespace trainmem {

enum class PipelineSchedule { OneFOneB, Interleaved1F1B, GPipe };
// When FSDP2 reduce-scatters gradients and reshards after backward
// (core/account/fsdp_policy.h): after every micro-batch (its default), or only after
// the last one of the step (set_requires_gradient_sync(False) and
// set_reshard_after_backward(False) before the others, as PyTorch's
// pipelining does for every FSDP stage).
enum class FsdpGradientSync { EveryMicrobatch, LastMicrobatch };
// How FSDP holds the model's ends (token embedding; final norm + LM head)
// under ZeRO-3 (core/account/fsdp_policy.h, docs/memory-model.md §FSDP2 policies).
// Root: in the root unit, which PyTorch never reshards after forward and
// reduces after the whole backward (fully_shard on the blocks, then on the
// model: Hugging Face accelerate, LitGPT, torchtune without
// custom_sharded_layers). OwnUnits: units of their own, resharded like the
// blocks (torchtune's custom_sharded_layers; DeepSpeed ZeRO-3 gathers each
// module while it computes). OwnUnitsHeadKept: torchtitan, whose [norm,
// lm_head] unit stays gathered from its forward to its backward.
enum class FsdpEnds { Root, OwnUnits, OwnUnitsHeadKept };

// GPUs = data x tensor x pipeline x context. Expert parallelism is carved out
// of the data x context ranks (as in Megatron-LM): expert must divide data*context.
struct ParallelConfig {
    int64_t data = 1;
    int64_t tensor = 1;
    int64_t pipeline = 1;
    int64_t context = 1;
    int64_t expert = 1;
    int64_t zero_stage = 0;           // 0 DDP, 1 optimizer states, 2 + gradients, 3 + weights (FSDP full shard)
    int64_t shard_group = 0;          // hybrid sharding: ranks per shard group (0 = all data*context ranks)
    bool sequence_parallel = false;   // Megatron SP: norms/dropout activations split over tensor ranks
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    int64_t virtual_stages = 1;       // model chunks per pipeline rank (interleaved 1F1B)
    int64_t microbatches = 0;         // micro-batches per step through the pipeline; 0 = gradient_accumulation_steps
    bool offload_optimizer = false;   // ZeRO-Offload: optimizer states + master weights (+ fp32 grads) on the host
    bool offload_parameters = false;  // ZeRO-Infinity / FSDP CPU offload of parameters
    std::optional<int64_t> gpus;      // when given, must equal data*tensor*pipeline*context
    // FSDP2 fully_shard (ZeRO-3 here; docs/memory-model.md §FSDP2 policies).
    bool reshard_after_forward = true;           // false: a block's unsharded parameters stay until its backward
    int64_t reshard_after_forward_ranks = 0;     // n > 1: reshard to n ranks after forward (the int form); 0: all
    FsdpGradientSync fsdp_gradient_sync = FsdpGradientSync::EveryMicrobatch;
    FsdpEnds fsdp_ends = FsdpEnds::Root;

    int64_t totalGpus() const { return data * tensor * pipeline * context; }
    bool operator==(const ParallelConfig&) const = default;
};

std::string_view scheduleName(PipelineSchedule);
std::optional<PipelineSchedule> parseSchedule(std::string_view);

}  // namespace trainmem
