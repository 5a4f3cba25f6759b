#pragma once
// Every training, parallelism and hardware field of a scenario moved away
// from its default, so that a round trip (JSON, a file saved by the app)
// that dropped or mixed up any key would show. One setter for the core's
// and the app's round-trip tests: a field added to the format is added here
// once, and the core test fails until it is.
#include "core/training/hardware.h"
#include "core/scenario/scenario.h"

namespace trainmem::testing {

inline void changeEveryField(Scenario& s) {
    TrainingConfig& t = s.training;
    t.micro_batch_size = 3;
    t.sequence_length = 4096;
    t.gradient_accumulation_steps = 5;
    t.precision = Precision::AmpFp16;
    t.grad_dtype = DType::Fp32;
    t.optimizer = OptimizerKind::Lion;
    t.optimizer_impl = OptimizerImpl::ForLoop;
    t.optimizer_in_backward = true;
    t.optimizer_state_dtype = DType::Bf16;
    t.checkpointing = Checkpointing::EveryK;
    t.framework = Framework::Deepspeed;
    t.checkpoint_every = 4;
    t.checkpoint_save_ops = {"mm", "attention"};
    t.attention = AttentionImpl::Eager;
    t.kernels = KernelProfile::Fused;
    t.loss = LossImpl::Chunked;
    t.loss_chunks = 16;
    t.finetuning = Finetuning::Lora;
    t.lora_rank = 64;
    t.lora_targets = {"q_proj", "v_proj", "down_proj"};
    t.lora_dropout = 0.05;
    t.base_batch_size = 256;
    t.base_learning_rate = 3e-4;
    t.warmup_steps = 2000;
    t.qlora_backend = QloraBackend::TorchaoNf4;
    t.optimizer_paged = true;
    t.activation_offloading = ActivationOffloading::TorchtuneNoStreams;
    t.deepspeed_partition_activations = true;
    t.deepspeed_cpu_checkpointing = true;
    ParallelConfig& p = s.parallelism;
    p.data = 4;
    p.tensor = 2;
    p.pipeline = 4;
    p.context = 2;
    p.expert = 2;
    p.zero_stage = 3;
    p.shard_group = 4;
    p.sequence_parallel = true;
    p.schedule = PipelineSchedule::Interleaved1F1B;
    p.virtual_stages = 2;
    p.microbatches = 5;
    p.offload_optimizer = true;
    p.offload_parameters = true;
    p.gpus = 64;
    p.reshard_after_forward = false;
    p.reshard_after_forward_ranks = 2;
    p.fsdp_gradient_sync = FsdpGradientSync::LastMicrobatch;
    p.fsdp_ends = FsdpEnds::OwnUnitsHeadKept;
    HardwareConfig& h = s.hardware;
    h.gpu = "custom";
    h.memory_bytes = 96 * kGiB;
    h.overheads.cuda_context_bytes = 700 * kMiB;
    h.overheads.cublas_workspace_bytes = 8'519'680;  // PyTorch's pre-Hopper default, 8.125 MiB
    h.overheads.nccl_bytes_per_group = 1024 * kMiB;
    h.overheads.ddp_bucket_bytes = 100 * kMiB;
    h.overheads.ddp_gradient_as_bucket_view = true;
    h.overheads.fsdp_prefetch_units = 2;
    h.overheads.fragmentation = 0.25;
    h.gpus_per_node = 4;
    h.scale_up_gb_s = 400;
    h.scale_out_gb_s = 12.5;
}

}  // namespace trainmem::testing
