// QLoRA backends (core/account/qlora_backend.h) and paged optimizer states
// (core/account/paged_states.h) against the libraries' own code and tensor shapes
// (no GPU and no bitsandbytes here; each number below is derived from the
// cited code by hand, not from trainmem's functions):
//  - bitsandbytes NF4, blocksize 64 with double quantisation (QLoRA paper
//    §3): a 4096 x 4096 weight is 8,388,608 packed bytes, 262,144 uint8
//    absmax codes and 1,024 fp32 second-level scales.
//  - torchao torchao/dtypes/nf4tensor.py (pytorch/ao 0598012907d6):
//    quantized_data uint8 (two codes a byte), quantized_scalers int8 per
//    block of 64, quantization_factor per 256 blocks in the weight's bf16.
//  - bitsandbytes MatMul4Bit.forward, older code `ctx.tensors = (A, B)`:
//    every 4-bit Linear keeps its input.
//  - bitsandbytes Optimizer8bit.get_state_buffer: paged when numel >= 1e5.
#include <gtest/gtest.h>

#include "core/scenario/frameworks.h"
#include "core/training/optimizer_state.h"
#include "core/scenario/presets.h"
#include "core/account/qlora_backend.h"
#include "core/scenario/scenario.h"
#include "core/account/step_account.h"
#include "tests/core/preset_scenario.h"
#include "core/scenario/scenario_file.h"
#include "core/account/scenario_validate.h"
#include "core/account/estimate.h"

namespace trainmem {
namespace {

Scenario llama8b(const std::vector<std::string>& settings) { return presetWith("llama-3.1-8b", settings); }

// Packed bytes of one n-element weight as the library stores it.
int64_t bnbBytes(int64_t n) { return n / 2 + n / 64 + n / 64 / 256 * 4; }
int64_t torchaoBytes(int64_t n) { return n / 2 + n / 64 + n / 64 / 256 * 2; }

TEST(QloraBackend, StorageOfOneWeightIsTheLibrarysTensors) {
    const int64_t n = 4096LL * 4096;
    EXPECT_EQ(bnbBytes(n), 8'388'608 + 262'144 + 4'096);
    EXPECT_EQ(torchaoBytes(n), 8'388'608 + 262'144 + 2'048);
    EXPECT_DOUBLE_EQ(qloraBaseBytesPerParam(QloraBackend::Bnb) * static_cast<double>(n), 8'654'848.0);
    EXPECT_DOUBLE_EQ(qloraBaseBytesPerParam(QloraBackend::BnbLegacy) * static_cast<double>(n), 8'654'848.0);
    EXPECT_DOUBLE_EQ(qloraBaseBytesPerParam(QloraBackend::TorchaoNf4) * static_cast<double>(n), 8'652'800.0);
}

TEST(QloraBackend, ZeroThreeGathersThePackedBaseNotTwoBytesAWeight) {
    // One Llama 3.1 8B block: q, o 4096x4096; k, v 1024x4096; gate, up,
    // down 14336x4096 (packed), and its two 4096 norms in bf16.
    const int64_t block = 2 * bnbBytes(4096LL * 4096) + 2 * bnbBytes(1024LL * 4096) + 3 * bnbBytes(14336LL * 4096) +
                          2 * 4096 * 2;
    // (The ends in units of their own, not gathered at the forward's end.)
    const Scenario s = llama8b({"training.finetuning=qlora", "training.precision=amp-bf16", "parallelism.data=2",
                                "parallelism.zero_stage=3", "parallelism.fsdp_ends=own-units"});
    const StepAccount a = accountStep(s, stepInputs(s), 0);
    EXPECT_EQ(a.forward[Component::GatheredWeights], 2 * block);  // computing + prefetched
    EXPECT_LT(a.forward[Component::GatheredWeights], 2 * 218'112'000LL * 2 * 27 / 100);
}

TEST(QloraBackend, OlderBitsandbytesKeepsTheInputsNoAdapterSaves) {
    // LoRA on q, k, v, o (dropout 0) already saves the attention inputs;
    // the 4-bit gate/up share the MLP's normed input (4096 wide) and down
    // keeps its 14336-wide input: per token and block, bf16.
    const std::vector<std::string> base = {"training.finetuning=qlora", "training.precision=amp-bf16",
                                           "training.sequence_length=2048", "training.lora_dropout=0"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> all = base;
        all.insert(all.end(), extra.begin(), extra.end());
        const Scenario s = llama8b(all);
        return accountStep(s, stepInputs(s), 0);
    };
    const StepAccount now = with({});
    const StepAccount legacy = with({"training.qlora_backend=bnb-legacy"});
    const int64_t per_block = (4096 + 14336) * 2048LL * 2;
    EXPECT_EQ(legacy.forward[Component::Activations] - now.forward[Component::Activations], 32 * per_block);
    // All linear layers adapted: every input is saved by an adapter already.
    const StepAccount all_now = with({"training.lora_targets=all-linear"});
    const StepAccount all_legacy = with({"training.lora_targets=all-linear", "training.qlora_backend=bnb-legacy"});
    EXPECT_EQ(all_legacy.forward[Component::Activations], all_now.forward[Component::Activations]);
    // Full checkpointing: only the block being recomputed keeps them, and at
    // its backward's worst down_proj's 14336-wide input is already freed
    // (its backward runs first; measured: validation/qlora_legacy_truth.py).
    const StepAccount full = with({"training.activation_checkpointing=full"});
    const StepAccount full_legacy = with({"training.activation_checkpointing=full", "training.qlora_backend=bnb-legacy"});
    EXPECT_EQ(full_legacy.forward[Component::Activations], full.forward[Component::Activations]);
    EXPECT_EQ(full_legacy.backward_end[Component::Activations] - full.backward_end[Component::Activations],
              4096 * 2048LL * 2);
}

TEST(QloraBackend, RefusedWhereItMeansNothing) {
    Expected<Scenario> s = loadPreset("llama-3.1-8b");
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(applySettings(*s, {"training.qlora_backend=torchao-nf4"}).ok());
    Status v = validate(*s);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.error().field, "training.qlora_backend");
    EXPECT_NE(v.error().message.find("training.finetuning"), std::string::npos) << v.error().message;
    // bnb-legacy's kept inputs are modelled for dense blocks: a mixture of
    // experts is refused, naming the backend and what is allowed.
    Expected<Scenario> moe = loadPreset("mixtral-8x7b");
    ASSERT_TRUE(moe.ok());
    ASSERT_TRUE(applySettings(*moe, {"training.finetuning=qlora", "training.precision=amp-bf16",
                                     "training.qlora_backend=bnb-legacy"})
                    .ok());
    v = validate(*moe);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.error().field, "training.qlora_backend");
    EXPECT_NE(v.error().message.find("mixture-of-experts"), std::string::npos) << v.error().message;
}

TEST(PagedOptimizer, TheStatesOfLargeTensorsLeaveTheAllocatorForTheDeviceTotal) {
    // Full training, fp32 AdamW states (mixed-bf16): every matrix of Llama
    // 3.1 8B has at least 1e5 elements and is paged; the 65 norm vectors of
    // 4096 stay ordinary allocations.
    const int64_t norms = 65 * 4096;
    const Scenario plain = llama8b({"training.precision=mixed-bf16", "training.optimizer=adamw"});
    const Scenario paged = llama8b({"training.precision=mixed-bf16", "training.optimizer=adamw",
                                    "training.optimizer_paged=true"});
    const Expected<Estimate> a = estimate(plain), b = estimate(paged);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(b->peak.managed_bytes, 8 * (8'030'261'248LL - norms));
    EXPECT_EQ(b->peak.model_states.optimizer_states, 8 * norms);
    EXPECT_EQ(a->peak.managed_bytes, 0);
    // Counted on the device, not in allocated: the device total keeps them
    // as far as they fit beside the rest (a 192 GiB device holds them all).
    EXPECT_LT(b->peak.allocated_bytes, a->peak.allocated_bytes - 60'000'000'000LL);
    Scenario roomy = paged;
    ASSERT_TRUE(applySetting(roomy, "hardware.memory_gib=192").ok());
    const Expected<Estimate> c = estimate(roomy);
    EXPECT_GT(c->peak.device_bytes, c->peak.reserved_bytes + c->peak.managed_bytes);
    EXPECT_EQ(c->managed_host_bytes, 0);
    // On 80 GB the rest alone (bf16 weights, fp32 master weights and
    // gradients: 16 GB + 32 GB + 32 GB) leaves no room: every paged state
    // waits on the host, and the run does not fit for the rest's sake.
    EXPECT_EQ(b->managed_host_bytes, b->peak.managed_bytes);
    EXPECT_FALSE(b->fits);
}

TEST(PagedOptimizer, LoraAdaptersUnderTheThresholdStayInTheAllocator) {
    // r = 16: q/k/v/o adapters are 16x4096, 4096x16 or 1024x16 (< 1e5);
    // with all-linear, gate and up's B (14336x16) and down's A (16x14336)
    // are 229,376 elements and paged: 3 x 229,376 x 8 bytes a block.
    const std::vector<std::string> base = {"training.finetuning=qlora", "training.precision=amp-bf16",
                                           "training.optimizer=adamw", "training.optimizer_paged=true"};
    Scenario attention = llama8b(base);
    std::vector<std::string> all = base;
    all.push_back("training.lora_targets=all-linear");
    Scenario linear = llama8b(all);
    EXPECT_EQ(estimate(attention)->peak.managed_bytes, 0);
    EXPECT_EQ(estimate(linear)->peak.managed_bytes, 32 * 3 * 229'376LL * 8);
}

TEST(PagedOptimizer, OnlyBitsandbytesPagedOptimizersAndTorchtuneUsesOne) {
    for (const OptimizerSpec& o : optimizerCatalogue()) {
        const bool expected = o.kind == OptimizerKind::Adam || o.kind == OptimizerKind::AdamW ||
                              o.kind == OptimizerKind::AdamW8bit || o.kind == OptimizerKind::Lion;
        EXPECT_EQ(o.has_paged, expected) << o.key;
    }
    Expected<Scenario> s = loadPreset("llama-3.1-8b");
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(applySettings(*s, {"training.optimizer=sgd-momentum", "training.optimizer_paged=true"}).ok());
    const Status v = validate(*s);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.error().field, "training.optimizer_paged");
    EXPECT_NE(v.error().message.find("adam, adamw, adamw-8bit, lion"), std::string::npos) << v.error().message;
    // torchtune's llama3_1/8B_full_single_device.yaml: PagedAdamW8bit.
    TrainingConfig t;
    applyFrameworkDefaults(t, Framework::Torchtune);
    EXPECT_EQ(t.optimizer, OptimizerKind::AdamW8bit);
    EXPECT_TRUE(t.optimizer_paged);
}

}  // namespace
}  // namespace trainmem
