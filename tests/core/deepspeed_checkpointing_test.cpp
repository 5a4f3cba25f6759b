// DeepSpeed activation checkpointing: training.deepspeed_partition_activations
// and training.deepspeed_cpu_checkpointing, against the arithmetic of
// deepspeed/runtime/activation_checkpointing/checkpointing.py at DeepSpeed
// v0.19.5-27-gedaa72212 (no GPU here, and tensor parallelism does not run on
// the CPU; at t = 1 and with cpu_checkpointing the CPU truth holds it:
// step_truth_test.cpp, validation/step_truth_offload.py):
//
//   is_activation_to_checkpoint(item): torch.is_tensor(item) and
//       item.is_floating_point() and item.numel() >= mp_size
//   get_partition_size(item): size = item.numel(); partition_size = size / mp_size
//   partition_activations(): partition = item.detach().contiguous().view(-1)
//       .narrow(0, get_partition_start(item), partition_size).clone()
//       buffer_device = cpu if cpu_checkpoint; partition = partition.cpu() if CPU_CHECKPOINT
//   get_partitioned_activations_for_backward(): arg.data = torch.empty([]) (the
//       input's own storage dropped), arg.saved_data = inp.data
//   CheckpointFunction.forward without partitioning, CPU_CHECKPOINT:
//       inputs = copy_to_device(args, device=cpu, criterion_func=is_activation_to_checkpoint)
//   backward: gather_partitioned_activations(): flat_tensor =
//       torch.zeros([partition_size * mp_size], device=cuda_device if CPU_CHECKPOINT)
//       then all_gather_into_tensor: the full input exists again for the recomputation.
//
// So per checkpointed block (input n elements of a_s bytes, t = mp_size):
// device keeps n/t·a_s (partition), 0 (cpu_checkpointing), host gets what
// the device does not keep of the slice; the full n·a_s is back at recompute.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/account/estimate.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"

namespace trainmem {
namespace {

Expected<Estimate> llama7b(std::vector<std::string> settings) {
    Expected<Scenario> s =
        scenarioFromJson({{"format", "trainmem-scenario"}, {"version", 2}, {"model", {{"preset", "llama-2-7b"}}}});
    if (!s.ok()) return s.error();
    for (const char* base : {"training.activation_checkpointing=full", "training.micro_batch_size=1",
                             "training.sequence_length=4096", "parallelism.tensor=8", "parallelism.gpus=8"})
        settings.insert(settings.begin(), base);
    const Status st = applySettings(*s, settings);
    if (!st.ok()) return st.error();
    return estimate(*s);
}

int64_t forwardBytes(const Estimate& e) { return e.peak.exact_phase_bytes[static_cast<size_t>(Phase::Forward)]; }

// Llama-2-7B: 32 blocks, h = 4096; b = 1, s = 4096, bf16 residual stream,
// no sequence parallelism: each block input is 4096 x 4096 x 2 B = 32 MiB.
constexpr int64_t kBlocks = 32;
constexpr int64_t kInput = 4096LL * 4096 * 2;

TEST(DeepspeedCheckpointing, PartitionKeepsOneSliceOfEachInputPerTensorRank) {
    const auto plain = llama7b({});
    const auto part = llama7b({"training.deepspeed_partition_activations=true"});
    ASSERT_TRUE(plain.ok() && part.ok()) << (plain.ok() ? part.error().text() : plain.error().text());
    EXPECT_EQ(forwardBytes(*plain) - forwardBytes(*part), kBlocks * (kInput - kInput / 8));
    EXPECT_EQ(part->host_bytes, plain->host_bytes);
}

TEST(DeepspeedCheckpointing, CpuCheckpointingMovesTheInputsOrTheirSlicesToTheHost) {
    const auto plain = llama7b({});
    const auto cpu = llama7b({"training.deepspeed_cpu_checkpointing=true"});
    const auto both = llama7b({"training.deepspeed_cpu_checkpointing=true", "training.deepspeed_partition_activations=true"});
    ASSERT_TRUE(plain.ok() && cpu.ok() && both.ok());
    EXPECT_EQ(forwardBytes(*plain) - forwardBytes(*cpu), kBlocks * kInput);
    EXPECT_EQ(cpu->host_bytes - plain->host_bytes, kBlocks * kInput);
    EXPECT_EQ(forwardBytes(*both), forwardBytes(*cpu));
    EXPECT_EQ(both->host_bytes - plain->host_bytes, kBlocks * kInput / 8);
}

// The gathered buffer: the recomputed block's whole input is on the device,
// so the first block's backward holds as much as without either option.
TEST(DeepspeedCheckpointing, TheGatheredInputIsBackForTheRecomputation) {
    const auto plain = llama7b({"training.optimizer=sgd"});
    const auto both = llama7b({"training.optimizer=sgd", "training.deepspeed_cpu_checkpointing=true",
                               "training.deepspeed_partition_activations=true"});
    ASSERT_TRUE(plain.ok() && both.ok());
    const auto backward = [](const Estimate& e) { return e.peak.exact_phase_bytes[static_cast<size_t>(Phase::Backward)]; };
    // backward_start: every other block's input gone from the device, this
    // block's whole input back.
    EXPECT_LE(backward(*both), backward(*plain));
    EXPECT_GE(backward(*both), backward(*plain) - (kBlocks - 1) * kInput);
}

TEST(DeepspeedCheckpointing, RefusedWithoutFullCheckpointingOrWithOffloading) {
    const auto every = llama7b({"training.activation_checkpointing=every-k", "training.checkpoint_every=2",
                                "training.deepspeed_partition_activations=true"});
    ASSERT_FALSE(every.ok());
    EXPECT_EQ(every.error().field, "training.deepspeed_partition_activations");
    EXPECT_NE(every.error().message.find("training.activation_checkpointing"), std::string::npos);
    const auto cpu = llama7b({"training.activation_checkpointing=none", "training.deepspeed_cpu_checkpointing=true"});
    ASSERT_FALSE(cpu.ok());
    EXPECT_EQ(cpu.error().field, "training.deepspeed_cpu_checkpointing");
    const auto mixed = llama7b({"training.deepspeed_cpu_checkpointing=true",
                                "training.activation_offloading=torchtune-no-streams"});
    ASSERT_FALSE(mixed.ok());
    EXPECT_NE(mixed.error().message.find("training.activation_offloading"), std::string::npos);
}

}  // namespace
}  // namespace trainmem
