#pragma once
// How the model is trained: batch, precision recipe, optimizer, recomputation,
// kernel implementation and fine-tuning method.
// planPrecision is in precision.cpp; the names and parsers of the enums in names.cpp.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/dtype.h"

namespace trainmem {

enum class Precision {
    Fp32,       // everything fp32
    AmpBf16,    // torch.autocast bf16: fp32 weights and grads, bf16 compute
    AmpFp16,    // torch.autocast fp16 (+ GradScaler)
    MixedBf16,  // bf16 weights, fp32 master weights (Megatron / DeepSpeed)
    MixedFp16,  // fp16 weights, fp32 master weights (ZeRO paper's 16 psi)
    PureBf16,   // bf16 weights, grads and (by default) optimizer states, no master copy
    Fp8Mixed,   // as MixedBf16 plus fp8 compute with cached fp8 weight copies (Transformer Engine)
};

enum class OptimizerKind { Sgd, SgdMomentum, Adagrad, Rmsprop, Adam, AdamW, AdamW8bit, Lion, Muon, Adafactor };
enum class OptimizerImpl { ForEach, Fused, ForLoop };  // PyTorch's multi-tensor (default on CUDA), fused kernel, per-tensor loop
// Op: op-level selective checkpointing (torchtitan selective_ac_option = "op",
// PyTorch's create_selective_checkpoint_contexts): every block is checkpointed,
// the outputs of the ops in TrainingConfig::checkpoint_save_ops are kept.
// MegatronBlock: Megatron-LM recompute_method = block, the first
// checkpoint_every blocks of each stage; TorchtitanLayer: torchtitan's
// layer-level selective_ac_option = "k", every k-th block counted from 1.
// MegatronUniform: Megatron-LM recompute_method = uniform with
// recompute_num_layers = checkpoint_every: each group of k blocks of a stage
// keeps its input and is recomputed together in backward.
enum class Checkpointing { None, Selective, Full, EveryK, Op, MegatronBlock, TorchtitanLayer, MegatronUniform };
enum class AttentionImpl { Flash, Eager };  // Flash also stands for PyTorch SDPA flash/mem-efficient kernels
enum class KernelProfile {
    Eager,     // plain PyTorch as in Hugging Face modeling files (fp32 RMSNorm upcast, separate ops)
    Fused,     // fused norm, activation and cross-entropy kernels (Liger / Apex / TE style)
    Megatron,  // Megatron-LM as accounted by Korthikanti et al. 2022, Table 2
    Compile,   // torch.compile per block: what AOTAutograd's min-cut partitioner keeps (functorch 1.13, measured)
};
// The loss over the LM head, apart from the kernel profile (docs/memory-model.md §Loss).
enum class LossImpl {
    Standard,       // logits.float() + cross_entropy (transformers ForCausalLMLoss; Megatron's own under kernels=megatron)
    Chunked,        // cross-entropy over the full logits, upcast one chunk of the sequence at a time
    ChunkedOutput,  // torchtune CEWithChunkedOutputLoss: the output projection and the loss chunk by chunk
    FusedLinear,    // Liger / Cut Cross-Entropy fused linear cross-entropy: the logits never exist in full
    VocabParallel,  // Megatron-LM's vocab-parallel cross-entropy, fused (--cross-entropy-loss-fusion) or not: same bytes
};
enum class Finetuning { Full, Lora, Qlora };
// QLoRA's 4-bit base (core/account/qlora_backend.h): bitsandbytes from 0.43.2,
// older bitsandbytes (keeps each 4-bit layer's input for backward), torchao NF4.
enum class QloraBackend { Bnb, BnbLegacy, TorchaoNf4 };
// Activation offloading (docs/memory-model.md §Activation offloading):
// torchtune's OffloadActivations moves saved tensors of at least 1 KiB to host
// memory in forward and brings them back in backward. Torchtune: with its
// CUDA streams (activation_offloading_use_streams: True, its default), which
// keep some device tensors while copies are in flight; TorchtuneNoStreams:
// activation_offloading_use_streams: False, which keeps none.
enum class ActivationOffloading { None, Torchtune, TorchtuneNoStreams };
// The training stack whose out-of-the-box defaults the other keys start from
// (core/scenario/frameworks.h; Custom sets nothing).
enum class Framework { Custom, HfTrainer, Torchtitan, Torchtune, MegatronLm, Deepspeed, Litgpt };

struct TrainingConfig {
    Framework framework = Framework::Custom;  // set first: its defaults, then the explicit keys
    // The framework's release whose defaults were applied (core/scenario/frameworks.h,
    // `training.framework = NAME@RELEASE`); empty: the newest one read.
    std::string framework_release;
    int64_t micro_batch_size = 1;             // sequences per GPU per forward pass
    int64_t sequence_length = 2048;           // tokens per sequence
    int64_t gradient_accumulation_steps = 1;  // micro-batches per optimizer step (per DP rank)
    Precision precision = Precision::MixedBf16;
    std::optional<DType> grad_dtype;            // nullopt = the recipe's default
    std::optional<DType> optimizer_state_dtype; // nullopt = the recipe's default
    OptimizerKind optimizer = OptimizerKind::AdamW;
    OptimizerImpl optimizer_impl = OptimizerImpl::ForEach;
    // torchtune optimizer_in_bwd / torchtitan early_step_in_backward: each
    // parameter is stepped and its gradient freed as soon as the gradient is complete.
    bool optimizer_in_backward = false;
    Checkpointing checkpointing = Checkpointing::None;
    int64_t checkpoint_every = 1;             // EveryK: checkpoint one layer in every k
    // Op: the ops whose outputs are kept (checkpointSaveOpNames() in
    // activations.h); the default is torchtitan's save list with its rule of
    // keeping every second matmul.
    std::vector<std::string> checkpoint_save_ops = {"mm-every-second", "attention", "reduce_scatter", "max"};
    AttentionImpl attention = AttentionImpl::Flash;
    KernelProfile kernels = KernelProfile::Eager;
    LossImpl loss = LossImpl::Standard;
    int64_t loss_chunks = 8;                  // Chunked, ChunkedOutput: number of sequence chunks
    Finetuning finetuning = Finetuning::Full;
    int64_t lora_rank = 16;
    std::vector<std::string> lora_targets = {"q_proj", "k_proj", "v_proj", "o_proj"};
    double lora_dropout = 0.0;
    // Batch helper (seed lecture notes): learning rate scaled from a base batch.
    std::optional<int64_t> base_batch_size;
    std::optional<double> base_learning_rate;
    int64_t warmup_steps = 0;
    // QLoRA backend and paged optimizer states (docs/memory-model.md §QLoRA
    // backends, §Paged optimizers).
    QloraBackend qlora_backend = QloraBackend::Bnb;
    bool optimizer_paged = false;  // bitsandbytes Paged*: states in CUDA managed memory
    ActivationOffloading activation_offloading = ActivationOffloading::None;
    // DeepSpeed activation checkpointing (deepspeed/runtime/activation_checkpointing/
    // checkpointing.py): each checkpointed block's input split over the
    // tensor-parallel ranks (partition_activations) and/or kept in host
    // memory (cpu_checkpointing); with full checkpointing.
    bool deepspeed_partition_activations = false;
    bool deepspeed_cpu_checkpointing = false;

    bool operator==(const TrainingConfig&) const = default;
};

// Resolved dtypes of a recipe after overrides.
struct PrecisionPlan {
    DType weights;            // what the model's parameters are stored in on the GPU
    DType gradients;          // .grad / main_grad
    std::optional<DType> master;  // fp32 master copy, when the recipe keeps one
    DType optimizer_states;
    DType activations;        // dtype of saved activations (compute dtype)
    bool autocast_weight_cache;   // AMP keeps 16-bit casts of weights alive from forward to backward
    bool fp8_weight_cache;        // TE keeps fp8 copies (and transposes) of matmul weights
};
PrecisionPlan planPrecision(const TrainingConfig& training);

std::string_view precisionName(Precision);
std::string_view optimizerName(OptimizerKind);
std::string_view optimizerImplName(OptimizerImpl);
std::string_view checkpointingName(Checkpointing);
std::string_view attentionName(AttentionImpl);
std::string_view kernelProfileName(KernelProfile);
std::string_view lossName(LossImpl);
std::string_view finetuningName(Finetuning);
std::string_view activationOffloadingName(ActivationOffloading);
std::optional<Precision> parsePrecision(std::string_view);
std::optional<OptimizerKind> parseOptimizer(std::string_view);
std::optional<OptimizerImpl> parseOptimizerImpl(std::string_view);
std::optional<Checkpointing> parseCheckpointing(std::string_view);
std::optional<AttentionImpl> parseAttention(std::string_view);
std::optional<KernelProfile> parseKernelProfile(std::string_view);
std::optional<LossImpl> parseLoss(std::string_view);
std::optional<Finetuning> parseFinetuning(std::string_view);
// All names, in declaration order (for CLIs, combo boxes and error messages).
const std::vector<OptimizerKind>& allOptimizers();
const std::vector<Precision>& allPrecisions();

}  // namespace trainmem
