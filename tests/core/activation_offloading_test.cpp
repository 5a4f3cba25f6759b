// training.activation_offloading: the key, its refusals, and what torchtune's
// OffloadActivations (torchtune/training/_activation_offloading.py at
// v0.6.0-rc1-220-gbd2a0fc7c) does that the CPU truth cannot show. The device
// and host bytes of the no-streams variant are held to the CPU run in
// step_truth_test.cpp (validation/step_truth_offload.py).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/account/estimate.h"
#include "core/training/names.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"

namespace trainmem {
namespace {

Expected<Scenario> llama7b(const std::vector<std::string>& settings) {
    Expected<Scenario> s = scenarioFromJson(
        {{"format", "trainmem-scenario"}, {"version", 2}, {"model", {{"preset", "llama-2-7b"}}}});
    if (!s.ok()) return s;
    const Status st = applySettings(*s, settings);
    if (!st.ok()) return st.error();
    return s;
}

const std::vector<std::string> kTorchtuneLike = {"training.activation_checkpointing=full", "training.kernels=eager",
                                                 "training.attention=flash", "training.precision=pure-bf16",
                                                 "training.micro_batch_size=4", "training.sequence_length=4096"};

std::vector<std::string> with(std::vector<std::string> base, const std::string& extra) {
    base.push_back(extra);
    return base;
}

TEST(ActivationOffloading, DefaultsToNoneAndKnowsItsNames) {
    const Expected<Scenario> s = llama7b({});
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->training.activation_offloading, ActivationOffloading::None);
    EXPECT_EQ(allowedNames<ActivationOffloading>(), "none, torchtune, torchtune-no-streams");
}

TEST(ActivationOffloading, AnUnknownValueIsRefusedWithTheAllowedNames) {
    const Expected<Scenario> s = llama7b({"training.activation_offloading=cpu"});
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().field, "training.activation_offloading");
    EXPECT_NE(s.error().message.find("torchtune-no-streams"), std::string::npos) << s.error().message;
}

// torchtune's recipes raise unless activation checkpointing is on
// (recipes/full_finetune_single_device.py); the account covers the eager
// kernels' final norm and one stage.
TEST(ActivationOffloading, SettingsOutsideTheModelAreRefusedNamingTheKeys) {
    struct Case {
        std::vector<std::string> settings;
        const char* names;
    };
    const Case cases[] = {
        {{"training.activation_offloading=torchtune"}, "training.activation_checkpointing"},
        {{"training.activation_checkpointing=every-k", "training.checkpoint_every=2",
          "training.activation_offloading=torchtune-no-streams"},
         "training.activation_checkpointing"},
        {with(with(kTorchtuneLike, "training.kernels=fused"), "training.activation_offloading=torchtune"),
         "training.kernels"},
        {with(with(kTorchtuneLike, "parallelism.pipeline=2"), "training.activation_offloading=torchtune"),
         "parallelism.pipeline"},
    };
    for (const Case& c : cases) {
        const Expected<Scenario> s = llama7b(c.settings);
        Status result = s.ok() ? Status(Ok{}) : Status(s.error());
        if (s.ok()) {
            const Expected<Estimate> e = estimate(*s);
            if (!e.ok()) result = e.error();
        }
        ASSERT_FALSE(result.ok()) << c.names;
        EXPECT_EQ(result.error().field, "training.activation_offloading") << result.error().text();
        EXPECT_NE(result.error().message.find(c.names), std::string::npos) << result.error().text();
    }
}

// What offloading moves: the device keeps less, the host gets it, and the
// two variants move the same bytes to the host.
TEST(ActivationOffloading, MovesActivationsFromTheDeviceToTheHost) {
    const Expected<Scenario> kept = llama7b(kTorchtuneLike);
    const Expected<Scenario> sync = llama7b(with(kTorchtuneLike, "training.activation_offloading=torchtune-no-streams"));
    const Expected<Scenario> streams = llama7b(with(kTorchtuneLike, "training.activation_offloading=torchtune"));
    ASSERT_TRUE(kept.ok() && sync.ok() && streams.ok());
    const Expected<Estimate> e0 = estimate(*kept), e1 = estimate(*sync), e2 = estimate(*streams);
    ASSERT_TRUE(e0.ok() && e1.ok() && e2.ok());
    // 32 block inputs of b*s*h bf16 (4 x 4096 x 4096 x 2 B = 128 MiB each),
    // the final norm's packs (two fp32 input copies, two rstd, the bf16
    // normalised tensor) and the token ids.
    const int64_t block_input = 4LL * 4096 * 4096 * 2;
    const int64_t final_norm = 2 * (4LL * 4096 * 4096 * 4) + 2 * (4LL * 4096 * 4) + block_input;
    EXPECT_EQ(e1->host_bytes, e0->host_bytes + 32 * block_input + final_norm + 8 * 4 * 4096);
    EXPECT_EQ(e2->host_bytes, e1->host_bytes);
    // The whole step's peak here is the optimizer step's; compare the phases.
    auto phase = [](const Estimate& e, Phase p) { return e.peak.exact_phase_bytes[static_cast<size_t>(p)]; };
    // Forward: the blocks' inputs are on the host. With streams the device
    // also keeps the forward stash, the last five packs (the final norm's
    // tensors) until the final norm's backward.
    EXPECT_LT(phase(*e1, Phase::Forward), phase(*e0, Phase::Forward));
    EXPECT_GT(phase(*e2, Phase::Forward), phase(*e1, Phase::Forward));
    EXPECT_LT(phase(*e2, Phase::Forward), phase(*e0, Phase::Forward));
    // Backward peaks at the first block's, when every other input has been
    // used either way; with streams the input the block above brought back
    // is still on the device (bwd_tensor_stash until this node's hook).
    EXPECT_LE(phase(*e1, Phase::Backward), phase(*e0, Phase::Backward));
    EXPECT_EQ(phase(*e2, Phase::Backward) - phase(*e1, Phase::Backward), block_input);
}

}  // namespace
}  // namespace trainmem
