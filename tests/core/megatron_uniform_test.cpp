// training.activation_checkpointing = megatron-uniform: Megatron-LM's
// recompute_method = "uniform" (megatron/core/recompute.py at
// core_v0.15.0rc7-2333-gd98e8a64dd). Its bytes are held to the CPU run in
// step_truth_test.cpp (validation/step_truth.py, CheckpointedChunk); these
// tests hold what follows from the code without a run.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/account/estimate.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"

namespace trainmem {
namespace {

Expected<Estimate> estimateWith(const std::vector<std::string>& settings) {
    Expected<Scenario> s =
        scenarioFromJson({{"format", "trainmem-scenario"}, {"version", 2}, {"model", {{"preset", "llama-2-7b"}}}});
    if (!s.ok()) return s.error();
    const Status st = applySettings(*s, settings);
    if (!st.ok()) return st.error();
    return estimate(*s);
}

// Chunks of one layer are torch.utils.checkpoint over every layer: full.
TEST(MegatronUniform, ChunksOfOneLayerAreFullCheckpointing) {
    for (const char* pp : {"parallelism.pipeline=1", "parallelism.pipeline=4"}) {
        const auto full = estimateWith({pp, "training.activation_checkpointing=full"});
        const auto uniform = estimateWith({pp, "training.activation_checkpointing=megatron-uniform",
                                           "training.checkpoint_every=1"});
        ASSERT_TRUE(full.ok() && uniform.ok()) << pp;
        EXPECT_EQ(uniform->peak.exact_phase_bytes, full->peak.exact_phase_bytes) << pp;
        EXPECT_EQ(uniform->peak.allocated_bytes, full->peak.allocated_bytes) << pp;
    }
}

// Larger chunks keep fewer inputs in forward and replay more blocks at once
// in backward.
TEST(MegatronUniform, LargerChunksTradeForwardBytesForBackwardBytes) {
    const auto two = estimateWith({"training.activation_checkpointing=megatron-uniform", "training.checkpoint_every=2",
                                   "training.sequence_length=4096"});
    const auto four = estimateWith({"training.activation_checkpointing=megatron-uniform", "training.checkpoint_every=4",
                                    "training.sequence_length=4096"});
    ASSERT_TRUE(two.ok() && four.ok());
    auto at = [](const Estimate& e, Phase p) { return e.peak.exact_phase_bytes[static_cast<size_t>(p)]; };
    EXPECT_GT(at(*two, Phase::Forward), at(*four, Phase::Forward));
    EXPECT_LT(at(*two, Phase::Backward), at(*four, Phase::Backward));
}

TEST(MegatronUniform, RefusedWithInterleavedStagesAndChunksLargerThanTheModel) {
    const auto interleaved = estimateWith({"parallelism.pipeline=4", "parallelism.pipeline_schedule=interleaved-1f1b",
                                           "parallelism.virtual_stages=2",
                                           "training.activation_checkpointing=megatron-uniform",
                                           "training.checkpoint_every=2"});
    ASSERT_FALSE(interleaved.ok());
    EXPECT_EQ(interleaved.error().field, "training.activation_checkpointing") << interleaved.error().text();
    const auto too_large = estimateWith({"training.activation_checkpointing=megatron-uniform",
                                         "training.checkpoint_every=33"});
    ASSERT_FALSE(too_large.ok());
    EXPECT_EQ(too_large.error().field, "training.checkpoint_every") << too_large.error().text();
}

}  // namespace
}  // namespace trainmem
