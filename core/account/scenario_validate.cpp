// Whole-scenario checks. Each rule states the framework behaviour it follows
// (docs/scenario-format.md §Validation lists them with sources). Upper
// bounds keep every product the estimator forms inside int64.
#include <algorithm>
#include <string>
#include <utility>

#include "core/activations/activations.h"
#include "core/account/fsdp_policy.h"
#include "core/account/paged_states.h"
#include "core/account/qlora_backend.h"
#include "core/training/hardware.h"
#include "core/training/optimizer_state.h"
#include "core/model/model_fields.h"
#include "core/model/parameters.h"
#include "core/account/scenario_validate.h"

#include "core/scenario/scenario_fields.h"
#include "core/model/model_validate.h"
#include "core/base/units.h"

namespace trainmem {

namespace {

constexpr int64_t kMaxBatch = int64_t{1} << 20;        // sequences, steps, micro-batches
constexpr int64_t kMaxSequence = int64_t{1} << 24;     // 16.7M tokens
constexpr int64_t kMaxTokensPerMicrobatch = int64_t{1} << 25;
constexpr int64_t kMaxDegree = int64_t{1} << 16;
constexpr int64_t kMaxGpus = int64_t{1} << 24;

std::string str(int64_t v) { return std::to_string(v); }
std::string got(int64_t v) { return " (got " + str(v) + ")"; }
std::string got(double v) { return " (got " + nlohmann::json(v).dump() + ")"; }

Status inRange(const char* field, int64_t value, int64_t min, int64_t max) {
    if (value < min) {
        if (min == 1) return Error{field, "must be a positive integer" + got(value)};
        if (min == 0) return Error{field, "must not be negative" + got(value)};
        return Error{field, "must be at least " + str(min) + got(value)};
    }
    if (value > max) return Error{field, "must be at most " + str(max) + got(value)};
    return ok();
}

#define TRAINMEM_CHECK(expr)              \
    do {                                  \
        if (auto status_ = (expr); !status_) return status_; \
    } while (0)

bool isSixteenBitCompute(Precision p) {
    return p == Precision::AmpBf16 || p == Precision::AmpFp16 || p == Precision::MixedBf16 ||
           p == Precision::MixedFp16 || p == Precision::PureBf16;
}

// Op-level selective checkpointing: the save list names known ops, and the
// op account (activations_op_policy.cpp) covers the configuration.
Status validateCheckpointPolicy(const Scenario& s) {
    const TrainingConfig& t = s.training;
    constexpr const char* field = "training.checkpoint_save_ops";
    const auto& known = checkpointSaveOpNames();
    for (const std::string& op : t.checkpoint_save_ops) {
        if (std::find(known.begin(), known.end(), op) == known.end()) {
            std::string hint;
            if (auto near = closestName(op, known); !near.empty()) hint = "; did you mean " + std::string(near) + "?";
            return Error{field, "unknown op \"" + op + "\"" + hint + "; allowed: " + joinNames(known)};
        }
    }
    const auto has = [&](std::string_view op) {
        return std::find(t.checkpoint_save_ops.begin(), t.checkpoint_save_ops.end(), op) != t.checkpoint_save_ops.end();
    };
    if (has("mm") && has("mm-every-second"))
        return Error{field, "\"mm\" keeps every matmul's output and \"mm-every-second\" every second one: list one of them"};
    if (t.checkpointing != Checkpointing::Op) return ok();
    constexpr const char* policy = "training.activation_checkpointing";
    const std::string why = "op-level checkpointing (\"op\") is modelled for ";
    if (t.kernels == KernelProfile::Compile)
        return Error{policy, why + "training.kernels = eager only (under compile the save list's tags are read by "
                                   "AOTAutograd's partitioner, which is not modelled: docs/frameworks.md); got kernels "
                                   "= compile"};
    if (t.kernels != KernelProfile::Eager)
        return Error{policy, why + "training.kernels = eager only (fused kernels are autograd functions the save "
                                   "list does not see into); got kernels = " + std::string(kernelProfileName(t.kernels))};
    if (t.finetuning != Finetuning::Full)
        return Error{policy, why + "full training only (LoRA adapters' matmuls are not counted yet); got finetuning = " +
                                 std::string(finetuningName(t.finetuning))};
    if (t.precision == Precision::Fp8Mixed)
        return Error{policy, why + "16- and 32-bit training (Transformer Engine's fp8 linears are not aten matmuls); "
                                   "got precision = fp8-mixed"};
    if (s.model.isMoe() || s.model.mla)
        return Error{policy, why + "dense blocks with standard attention (not mixture-of-experts or latent attention yet)"};
    return ok();
}

Status validateTraining(const Scenario& s) {
    const TrainingConfig& t = s.training;
    TRAINMEM_CHECK(inRange("training.micro_batch_size", t.micro_batch_size, 1, kMaxBatch));
    TRAINMEM_CHECK(inRange("training.sequence_length", t.sequence_length, 1, kMaxSequence));
    if (t.micro_batch_size * t.sequence_length > kMaxTokensPerMicrobatch)
        return Error{"training.micro_batch_size", "micro_batch_size x sequence_length must be at most " +
                                                      str(kMaxTokensPerMicrobatch) + " tokens" +
                                                      got(t.micro_batch_size * t.sequence_length)};
    TRAINMEM_CHECK(inRange("training.gradient_accumulation_steps", t.gradient_accumulation_steps, 1, kMaxBatch));
    TRAINMEM_CHECK(inRange("training.checkpoint_every", t.checkpoint_every, 1, kMaxBatch));
    if (checkpointsSomeLayers(t.checkpointing) && t.checkpoint_every > s.model.num_layers)
        return Error{"training.checkpoint_every", std::string(checkpointingName(t.checkpointing)) +
                                                      " checkpoints k layers or one in every k, so k must be at most "
                                                      "model.num_hidden_layers (" + str(s.model.num_layers) + ")" +
                                                      got(t.checkpoint_every)};
    // Megatron's block method and torchtitan's layer counter count the layers
    // of a stage; an interleaved stage's chunks are not modelled apart.
    if ((t.checkpointing == Checkpointing::MegatronBlock || t.checkpointing == Checkpointing::TorchtitanLayer ||
         t.checkpointing == Checkpointing::MegatronUniform) &&
        s.parallelism.schedule == PipelineSchedule::Interleaved1F1B)
        return Error{"training.activation_checkpointing",
                     std::string(checkpointingName(t.checkpointing)) +
                         " counts the layers of a pipeline stage; with parallelism.pipeline_schedule = "
                         "interleaved-1f1b use full, every-k or selective"};
    TRAINMEM_CHECK(validateCheckpointPolicy(s));
    TRAINMEM_CHECK(validateActivationOffloading(t, s.parallelism));
    if (t.optimizer_in_backward && t.gradient_accumulation_steps > 1)
        return Error{"training.optimizer_in_backward",
                     "steps each parameter as soon as its gradient is complete, so it cannot accumulate gradients "
                     "over micro-batches: set training.gradient_accumulation_steps to 1 (got " +
                         str(t.gradient_accumulation_steps) + ") or training.optimizer_in_backward to false"};
    if (t.optimizer_in_backward && s.parallelism.pipeline > 1)
        return Error{"training.optimizer_in_backward",
                     "a pipeline stage accumulates gradients over its micro-batches, so the step cannot run in "
                     "backward: set parallelism.pipeline to 1 (got " + str(s.parallelism.pipeline) +
                         ") or training.optimizer_in_backward to false"};
    TRAINMEM_CHECK(inRange("training.loss_chunks", t.loss_chunks, 1, kMaxSequence));
    if ((t.loss == LossImpl::Chunked || t.loss == LossImpl::ChunkedOutput) && t.loss_chunks > t.sequence_length)
        return Error{"training.loss_chunks", "must be at most training.sequence_length (" + str(t.sequence_length) +
                                                 ")" + got(t.loss_chunks)};
    TRAINMEM_CHECK(inRange("training.lora_rank", t.lora_rank, 1, kMaxDegree));
    const auto& known = loraTargetNames();
    for (const auto& target : t.lora_targets) {
        if (std::find(known.begin(), known.end(), target) == known.end()) {
            std::vector<std::string_view> names(known.begin(), known.end());
            std::string hint;
            if (auto near = closestName(target, names); !near.empty()) hint = "; did you mean " + std::string(near) + "?";
            return Error{"training.lora_targets", "unknown target \"" + target + "\"" + hint +
                                                      "; allowed: " + joinNames(names)};
        }
    }
    if (t.finetuning != Finetuning::Full && t.lora_targets.empty())
        return Error{"training.lora_targets", "LoRA needs at least one target module, e.g. q_proj,v_proj or all-linear"};
    if (!(t.lora_dropout >= 0.0 && t.lora_dropout < 1.0))
        return Error{"training.lora_dropout", "must be a probability in [0, 1)" + got(t.lora_dropout)};
    // QLoRA (Dettmers et al. 2023) dequantises the NF4 base to a 16-bit
    // compute dtype (bnb_4bit_compute_dtype) for every matmul.
    if (t.finetuning == Finetuning::Qlora && !isSixteenBitCompute(t.precision))
        return Error{"training.precision", "QLoRA computes in 16 bits over its 4-bit base: use amp-bf16, amp-fp16, "
                                           "mixed-bf16, mixed-fp16 or pure-bf16 (got " +
                                               std::string(precisionName(t.precision)) + ")"};
    // bitsandbytes' 8-bit AdamW keeps its states in 8 bits by construction.
    if (!optimizerHasImpl(t.optimizer, t.optimizer_impl))
        return Error{"training.optimizer_impl",
                     std::string(optimizerName(t.optimizer)) + " has no " +
                         std::string(optimizerImplName(t.optimizer_impl)) +
                         " implementation (" + std::string(optimizerSpec(t.optimizer).source) +
                         "); use foreach or for-loop"};
    if (t.optimizer == OptimizerKind::AdamW8bit && t.optimizer_state_dtype)
        return Error{"training.optimizer_state_dtype", "adamw-8bit keeps 8-bit states; leave this at auto"};
    if (t.base_batch_size) TRAINMEM_CHECK(inRange("training.base_batch_size", *t.base_batch_size, 1, int64_t{1} << 40));
    // Transformer learning rates are 1e-6 to 1e-2; 1e308 was accepted and
    // its scaled rates printed as "inf" (JSON null). At most 1000 keeps every
    // scaled rate finite and leaves room for any real schedule.
    if (t.base_learning_rate && !(*t.base_learning_rate > 0.0 && *t.base_learning_rate <= 1000.0))
        return Error{"training.base_learning_rate", "must be a positive number at most 1000" + got(*t.base_learning_rate)};
    TRAINMEM_CHECK(inRange("training.warmup_steps", t.warmup_steps, 0, int64_t{1} << 40));
    return ok();
}

Status validateDegrees(const Scenario& s) {
    const ParallelConfig& p = s.parallelism;
    TRAINMEM_CHECK(inRange("parallelism.data", p.data, 1, kMaxDegree));
    TRAINMEM_CHECK(inRange("parallelism.tensor", p.tensor, 1, kMaxDegree));
    TRAINMEM_CHECK(inRange("parallelism.pipeline", p.pipeline, 1, kMaxDegree));
    TRAINMEM_CHECK(inRange("parallelism.context", p.context, 1, kMaxDegree));
    TRAINMEM_CHECK(inRange("parallelism.expert", p.expert, 1, kMaxDegree));
    int64_t gpus = 1;
    for (int64_t degree : {p.data, p.tensor, p.pipeline, p.context}) {
        gpus *= degree;  // each factor <= 2^16 and the running product <= 2^24: no overflow
        if (gpus > kMaxGpus)
            return Error{"parallelism.data", "data x tensor x pipeline x context must be at most " + str(kMaxGpus) +
                                                 " GPUs"};
    }
    if (p.zero_stage < 0 || p.zero_stage > 3)
        return Error{"parallelism.zero_stage", "must be 0, 1, 2 or 3" + got(p.zero_stage)};
    TRAINMEM_CHECK(inRange("parallelism.virtual_stages", p.virtual_stages, 1, kMaxDegree));
    TRAINMEM_CHECK(inRange("parallelism.microbatches", p.microbatches, 0, kMaxBatch));
    TRAINMEM_CHECK(inRange("parallelism.shard_group", p.shard_group, 0, kMaxGpus));
    if (p.gpus) {
        TRAINMEM_CHECK(inRange("parallelism.gpus", *p.gpus, 1, kMaxGpus));
        if (*p.gpus != p.totalGpus())
            return Error{"parallelism.gpus", str(*p.gpus) + " GPUs given, but data x tensor x pipeline x context = " +
                                                 str(p.data) + " x " + str(p.tensor) + " x " + str(p.pipeline) +
                                                 " x " + str(p.context) + " = " + str(p.totalGpus())};
    }
    return ok();
}

// Megatron-LM's tensor parallelism splits whole attention heads and whole
// KV groups over the tensor ranks (megatron/core/transformer/attention.py:
// divide(num_attention_heads, tp) and divide(num_query_groups, tp) assert
// divisibility), and column-splits the MLP and expert widths.
Status validateTensor(const Scenario& s) {
    const ModelConfig& m = s.model;
    const int64_t t = s.parallelism.tensor;
    if (t == 1) return ok();
    if (m.num_heads % t != 0)
        return Error{"parallelism.tensor", str(t) + " does not divide model.num_attention_heads (" + str(m.num_heads) +
                                               "): tensor parallelism splits whole heads over the tensor ranks"};
    if (!m.mla && m.num_kv_heads % t != 0)
        return Error{"parallelism.tensor", str(t) + " does not divide model.num_key_value_heads (" +
                                               str(m.num_kv_heads) +
                                               "): Megatron-LM splits whole KV groups over the tensor ranks"};
    if (m.hasDenseLayer() && m.ffn_hidden_size % t != 0)
        return Error{"parallelism.tensor", str(t) + " does not divide model.intermediate_size (" +
                                               str(m.ffn_hidden_size) + ")"};
    if (m.isMoe()) {
        if (m.moe->expert_ffn % t != 0)
            return Error{"parallelism.tensor", str(t) + " does not divide the expert width (" +
                                                   str(m.moe->expert_ffn) + ", model.moe_intermediate_size)"};
        if (m.moe->shared_expert_ffn % t != 0)
            return Error{"parallelism.tensor", str(t) + " does not divide the shared expert width (" +
                                                   str(m.moe->shared_expert_ffn) + ")"};
    }
    if (s.parallelism.sequence_parallel && (s.training.sequence_length / s.parallelism.context) % t != 0)
        return Error{"parallelism.sequence_parallel",
                     "sequence parallelism splits each sequence over the tensor ranks: sequence_length / context (" +
                         str(s.training.sequence_length / s.parallelism.context) + ") must be divisible by tensor (" +
                         str(t) + ")"};
    return ok();
}

Status validatePipeline(const Scenario& s) {
    const ParallelConfig& p = s.parallelism;
    const int64_t layers = s.model.num_layers;
    if (p.pipeline > layers)
        return Error{"parallelism.pipeline", "every stage needs at least one layer: at most model.num_hidden_layers (" +
                                                 str(layers) + ")" + got(p.pipeline)};
    const bool interleaved = p.schedule == PipelineSchedule::Interleaved1F1B;
    if (p.virtual_stages > 1 && !interleaved)
        return Error{"parallelism.virtual_stages",
                     "virtual stages (model chunks per pipeline rank) need pipeline_schedule interleaved-1f1b" +
                         got(p.virtual_stages)};
    if (interleaved) {
        if (p.pipeline < 2)
            return Error{"parallelism.pipeline_schedule", "interleaved-1f1b needs parallelism.pipeline > 1"};
        if (p.virtual_stages < 2)
            return Error{"parallelism.virtual_stages",
                         "interleaved-1f1b needs at least 2 model chunks per pipeline rank" + got(p.virtual_stages)};
        // Megatron-LM's interleaved schedule gives every model chunk the same
        // number of layers and asserts num_layers % (pipeline x virtual) == 0.
        // (Llama 3 trained 126 layers on 16 interleaved stages by taking one
        // layer from the first and the last stage, Dubey et al. 2024, §3.3.2;
        // such hand-made layouts are outside this rule and this estimator.)
        if (layers % (p.pipeline * p.virtual_stages) != 0)
            return Error{"parallelism.virtual_stages",
                         "the interleaved schedule gives every model chunk the same number of layers: pipeline x "
                         "virtual_stages (" + str(p.pipeline * p.virtual_stages) +
                             ") must divide model.num_hidden_layers (" + str(layers) + ")"};
    }
    const int64_t accumulation = s.training.gradient_accumulation_steps;
    if (p.microbatches > 0 && accumulation > 1 && p.microbatches != accumulation)
        return Error{"parallelism.microbatches",
                     str(p.microbatches) + " micro-batches per step conflict with training.gradient_accumulation_steps (" +
                         str(accumulation) + "); set one of them, or both to the same number"};
    if (p.pipeline == 1 && p.microbatches > 1)
        return Error{"parallelism.microbatches",
                     "pipeline micro-batches only apply with parallelism.pipeline > 1; use "
                     "training.gradient_accumulation_steps" + got(p.microbatches)};
    return ok();
}

Status validateExpertAndContext(const Scenario& s) {
    const ParallelConfig& p = s.parallelism;
    const ModelConfig& m = s.model;
    if (p.expert > 1) {
        if (!m.isMoe())
            return Error{"parallelism.expert", "expert parallelism needs a mixture-of-experts model; " + m.name +
                                                   " is dense" + got(p.expert)};
        if (m.moe->num_experts % p.expert != 0)
            return Error{"parallelism.expert", str(p.expert) + " does not divide the number of experts (" +
                                                   str(m.moe->num_experts) + ")"};
        // Megatron-LM carves expert-parallel groups out of the data x context ranks.
        if ((p.data * p.context) % p.expert != 0)
            return Error{"parallelism.expert", str(p.expert) + " does not divide data x context (" +
                                                   str(p.data * p.context) +
                                                   "): expert-parallel groups are formed from data-parallel ranks"};
    }
    // Load-balanced ring attention (Transformer Engine, used by Megatron-LM)
    // cuts each sequence into 2 x context chunks, rank i taking chunks i and
    // 2c-1-i, so causal attention costs the same on every rank.
    if (p.context > 1 && s.training.sequence_length % (2 * p.context) != 0)
        return Error{"parallelism.context", "training.sequence_length (" + str(s.training.sequence_length) +
                                                ") must be divisible by 2 x context = " + str(2 * p.context) +
                                                ": load-balanced ring attention splits each sequence into 2 x "
                                                "context chunks"};
    return ok();
}

Status validateSharding(const Scenario& s) {
    const ParallelConfig& p = s.parallelism;
    if (p.sequence_parallel && p.tensor == 1)
        return Error{"parallelism.sequence_parallel", "sequence parallelism splits activations over the tensor "
                                                      "ranks; it needs parallelism.tensor > 1"};
    if (p.shard_group > 0) {
        if (p.zero_stage == 0)
            return Error{"parallelism.shard_group", "hybrid sharding groups need parallelism.zero_stage >= 1"};
        if ((p.data * p.context) % p.shard_group != 0)
            return Error{"parallelism.shard_group", str(p.shard_group) + " does not divide data x context (" +
                                                        str(p.data * p.context) + ")"};
    }
    // DeepSpeed's configuration docs: offload_optimizer is "valid for ZeRO
    // stage 1, 2, 3"; offload_param is "valid only with stage 3" (FSDP's
    // CPUOffload likewise offloads the sharded parameters of full sharding).
    if (p.offload_optimizer && p.zero_stage < 1)
        return Error{"parallelism.offload_optimizer", "optimizer offload (ZeRO-Offload) needs parallelism.zero_stage "
                                                      "1, 2 or 3"};
    if (p.offload_parameters && p.zero_stage != 3)
        return Error{"parallelism.offload_parameters", "parameter offload (ZeRO-Infinity, FSDP CPUOffload) needs "
                                                       "parallelism.zero_stage 3" + got(p.zero_stage)};
    return ok();
}

Status validateHardware(const Scenario& s) {
    const HardwareConfig& h = s.hardware;
    if (h.gpu != "custom" && !findGpu(h.gpu)) {
        std::vector<std::string_view> names;
        for (const auto& gpu : gpuCatalogue()) names.push_back(gpu.name);
        std::string hint;
        if (auto near = closestName(h.gpu, names); !near.empty()) hint = "; did you mean " + std::string(near) + "?";
        return Error{"hardware.gpu", "unknown GPU \"" + h.gpu + "\"" + hint + "; known: " + joinNames(names) +
                                         ", or custom with hardware.memory_gib"};
    }
    if (h.gpu == "custom" && !h.memory_bytes)
        return Error{"hardware.memory_gib", "a custom GPU needs its memory size in GiB"};
    if (h.memory_bytes && *h.memory_bytes <= 0)
        return Error{"hardware.memory_gib", "must be a positive number of GiB"};
    const Overheads& o = h.overheads;
    if (o.cuda_context_bytes < 0) return Error{"hardware.cuda_context_mib", "must not be negative"};
    if (o.cublas_workspace_bytes && *o.cublas_workspace_bytes < 0)
        return Error{"hardware.cublas_workspace_mib", "must not be negative"};
    if (o.nccl_bytes_per_group < 0) return Error{"hardware.nccl_mib_per_group", "must not be negative"};
    if (o.ddp_bucket_bytes <= 0) return Error{"hardware.ddp_bucket_mib", "must be a positive number of MiB"};
    TRAINMEM_CHECK(inRange("hardware.fsdp_prefetch_units", o.fsdp_prefetch_units, 0, s.model.num_layers));
    if (!(o.fragmentation >= 0.0 && o.fragmentation < 1.0))
        return Error{"hardware.fragmentation", "must be a fraction in [0, 1): (reserved - allocated) / allocated" +
                                                   got(o.fragmentation)};
    // The interconnect overrides (docs/step-time.md): a node of 1 to 2^16
    // GPUs, bandwidths positive and at most 10^6 GB/s (1 PB/s, far past any link).
    if (h.gpus_per_node) TRAINMEM_CHECK(inRange("hardware.gpus_per_node", *h.gpus_per_node, 1, int64_t{1} << 16));
    for (const auto& [field, value] : {std::pair{"hardware.scale_up_gb_s", h.scale_up_gb_s},
                                       std::pair{"hardware.scale_out_gb_s", h.scale_out_gb_s}})
        if (value && !(*value > 0.0 && *value <= 1.0e6))
            return Error{field, "must be a bandwidth in GB/s, above 0 and at most 1000000" + got(*value)};
    return ok();
}


// What a refused model still gets: its checkpoint's parameter count.
std::string countedOnly(const ModelConfig& m) {
    return "; its " + std::to_string(countParameters(m).checkpoint) +
           " parameters are counted (parameters.checkpoint), its training memory is not estimated";
}

// The hybrids' mixers (Gated DeltaNet, Mamba-2, short convolutions;
// docs/hybrid-activations.md) are accounted for what their fused kernels
// and transformers' torch fallbacks save. Refused, naming the layer kind:
// the settings whose behaviour on these layers nobody has read or measured.
Status validateHybridTraining(const Scenario& s) {
    const ModelConfig& m = s.model;
    // Layer kinds the importer reads and counts but whose activations
    // core/activations does not account yet: refused, never estimated as
    // some other kind.
    for (const LayerKind& k : m.layer_kinds) {
        const char* unmodelled = k.mixer == MixerKind::ParallelAttentionMamba2 ? "parallel attention + Mamba-2 (Falcon-H1)"
                                 : k.mixer == MixerKind::Mamba1             ? "Mamba-1 (Jamba)"
                                 : k.mixer == MixerKind::KimiDeltaAttention ? "Kimi Delta Attention (Kimi Linear)"
                                                                             : nullptr;
        if (unmodelled)
            return Error{"model.layer_types", std::string("the activation account does not model ") + unmodelled +
                                                  " layers yet" + countedOnly(m)};
    }
    if (!m.layer_ffn_widths.empty())
        return Error{"model.block_configs", "the activation account does not model layers of different MLP widths "
                                            "(Nemotron-NAS) yet" + countedOnly(m)};
    const char* kind = nullptr;
    for (const LayerKind& k : m.layer_kinds) {
        if (k.mixer == MixerKind::GatedDeltaNet) kind = "Gated DeltaNet (linear attention)";
        if (k.mixer == MixerKind::Mamba2) kind = "Mamba-2";
        if (k.mixer == MixerKind::ShortConv) kind = "short-convolution";
        if (kind) break;
    }
    if (!kind) return ok();
    const std::string layers = std::string(kind) + " layers";
    const ParallelConfig& par = s.parallelism;
    const TrainingConfig& tr = s.training;
    if (par.context > 1)
        return Error{"parallelism.context", "context parallelism of " + layers +
                                                " is not modelled (their chunked scans carry a state along the "
                                                "sequence, which ring attention does not split); use 1"};
    if (tr.kernels == KernelProfile::Compile && tr.attention == AttentionImpl::Eager)
        return Error{"training.kernels", "torch.compile over the torch fallback of " + layers +
                                             " (attention: eager) is not modelled; use attention: flash (the fused "
                                             "kernels, which compile leaves alone) or kernels: eager"};
    if (tr.checkpointing == Checkpointing::Op)
        return Error{"training.activation_checkpointing",
                     "op-level selective checkpointing of " + layers + " is not modelled; use full, every-k or none"};
    const int64_t t = par.tensor;
    if (t > 1) {
        // The sizes as the family spells them (Granite: mamba_n_heads).
        auto divides = [&](int64_t n, ModelField f) -> Status {
            if (n % t == 0) return ok();
            return Error{"parallelism.tensor", str(t) + " does not divide " + modelField(m.family, f) + " (" + str(n) +
                                                   "): tensor parallelism splits whole heads of the " + layers};
        };
        if (const auto& g = m.linear_attention) {
            TRAINMEM_CHECK(divides(g->key_heads, ModelField::LinearKeyHeads));
            TRAINMEM_CHECK(divides(g->value_heads, ModelField::LinearValueHeads));
        }
        if (const auto& x = m.mamba) {
            TRAINMEM_CHECK(divides(x->heads, ModelField::MambaHeads));
            TRAINMEM_CHECK(divides(x->groups, ModelField::MambaGroups));
        }
        if (m.short_conv) TRAINMEM_CHECK(divides(m.hidden_size, ModelField::HiddenSize));
    }
    return ok();
}

#undef TRAINMEM_CHECK

}  // namespace

Status validate(const Scenario& s) {
    // The model first: the combination rules divide by its sizes.
    if (auto model = validate(s.model); !model) return model;
    for (auto check : {validateTraining, validateDegrees, validateTensor, validatePipeline, validateExpertAndContext,
                       validateSharding, validateHardware, validateFsdpPolicy, validateQloraBackend,
                       validateOptimizerPaging, validateHybridTraining})
        if (auto status = check(s); !status) return status;
    return ok();
}

}  // namespace trainmem
