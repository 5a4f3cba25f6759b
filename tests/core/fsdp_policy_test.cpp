// FSDP2 policies (core/account/fsdp_policy.h) against what PyTorch and torchtitan
// state, on Llama 3.1 8B, whose published count is 8,030,261,248
// parameters: 32 blocks of 218,112,000 (attention 4096x4096 q and o,
// 1024x4096 k and v; MLP 3 x 14336x4096; two 4096 norms), a 128,256 x 4096
// embedding and an untied head of the same shape, a 4096 final norm.
//  - torchtitan (precompile-loss-v1-748-gb5bcd76c6) config/configs.py:
//    mixed_precision_param = "bfloat16", mixed_precision_reduce = "float32":
//    the gathered dtype is 2 bytes, the reduce dtype 4 (amp-bf16 here).
//  - torchtitan docs/fsdp.md: reshard_after_forward=False keeps the
//    unsharded parameters after forward (FSDP1 SHARD_GRAD_OP); an int
//    reshards to that smaller world size.
//  - PyTorch pipelining stage.py (0138610331c9): FSDP stages run every
//    backward without resharding and without gradient sync.
#include <gtest/gtest.h>

#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "core/account/step_account.h"
#include "core/account/timeline.h"
#include "tests/core/preset_scenario.h"
#include "core/scenario/scenario_file.h"
#include "core/account/scenario_validate.h"
#include "core/account/estimate.h"

namespace trainmem {
namespace {

constexpr int64_t kTotal = 8'030'261'248;
constexpr int64_t kBlock = 218'112'000;
constexpr int64_t kEmbedding = 128'256LL * 4'096;
// The ends in the root unit (parallelism.fsdp_ends = root, the default):
// embedding, head and final norm gathered in bf16 through forward and backward.
constexpr int64_t kRootEnds = (2 * kEmbedding + 4'096) * 2;

Scenario llama8b(const std::vector<std::string>& settings) {
    return presetWith("llama-3.1-8b", {"training.precision=amp-bf16", "parallelism.zero_stage=3"}, settings);
}

StepAccount account(const Scenario& s, int64_t stage = 0) { return accountStep(s, stepInputs(s), stage); }

TEST(FsdpPolicy, TheCountsTheseTestsStandOn) {
    const Scenario s = llama8b({"parallelism.data=8"});
    EXPECT_EQ(prepareScenario(s).parameters.total, kTotal);
    EXPECT_EQ(kTotal, 32 * kBlock + 2 * kEmbedding + 4'096);
}

TEST(FsdpPolicy, ReshardAfterForwardTrueGathersTheComputingAndThePrefetchedBlockInBf16) {
    // PyTorch's default: one block computing and one prefetched, beside the
    // ends in the root unit.
    const StepAccount a = account(llama8b({"parallelism.data=8"}));
    for (const MemoryBreakdown* m : {&a.forward, &a.backward_start, &a.backward_end})
        EXPECT_EQ((*m)[Component::GatheredWeights], 2 * kBlock * 2 + kRootEnds);
    // With the ends in units of their own (torchtune's custom_sharded_layers)
    // the blocks' units alone, but for the embedding prefetched for its backward.
    const StepAccount own = account(llama8b({"parallelism.data=8", "parallelism.fsdp_ends=own-units"}));
    EXPECT_EQ(own.forward[Component::GatheredWeights], 2 * kBlock * 2);
    EXPECT_EQ(own.backward_start[Component::GatheredWeights], 2 * kBlock * 2);
    EXPECT_EQ(own.backward_end[Component::GatheredWeights], 2 * kBlock * 2 + kEmbedding * 2);
}

TEST(FsdpPolicy, ReshardAfterForwardFalseKeepsTheWholeModelUnshardedUntilItsBackward) {
    const StepAccount a = account(llama8b({"parallelism.data=8", "parallelism.reshard_after_forward=false"}));
    for (const MemoryBreakdown* m : {&a.forward, &a.loss, &a.backward_head, &a.backward_start})
        EXPECT_EQ((*m)[Component::GatheredWeights], kTotal * 2);
    // Backward reshards each block after its own backward: at the first
    // block only it and its prefetch are left, and the root's ends.
    EXPECT_EQ(a.backward_end[Component::GatheredWeights], 2 * kBlock * 2 + kRootEnds);
}

TEST(FsdpPolicy, AnIntegerKeepsAOneNthCopyOfEveryBlock) {
    // 64 ranks shard, 8 keep the post-forward shards (ZeRO++ hpZ intra-node).
    const StepAccount a = account(llama8b({"parallelism.data=64", "parallelism.reshard_after_forward_ranks=8"}));
    // (The root's ends beside them, whole: the root is not resharded.)
    EXPECT_EQ(a.forward[Component::GatheredWeights], 2 * kBlock * 2 + kTotal * 2 / 8 + kRootEnds);
    EXPECT_EQ(a.backward_end[Component::GatheredWeights], 2 * kBlock * 2 + kRootEnds);
}

TEST(FsdpPolicy, InsidePipelineStagesEachStageHoldsItsUnshardedParametersAndFp32Gradients) {
    // 4 stages of 8 blocks, the first with the embedding; 8 micro-batches.
    const Scenario s = llama8b({"parallelism.data=2", "parallelism.pipeline=4", "parallelism.microbatches=8",
                                "parallelism.reshard_after_forward=false",
                                "parallelism.fsdp_gradient_sync=last-microbatch"});
    const StepAccount a = account(s, 0);
    const int64_t stage_params = 8 * kBlock + kEmbedding;
    EXPECT_EQ(a.backward_end[Component::GatheredWeights], stage_params * 2);
    EXPECT_EQ(a.forward[Component::GatheredWeights], stage_params * 2);
    // m = 8 > in flight: gradients exist from the second micro-batch on,
    // unsharded in the reduce dtype (fp32).
    EXPECT_EQ(a.backward_end[Component::Gradients], stage_params * 4);
    EXPECT_EQ(a.forward[Component::Gradients], stage_params * 4);
    // The step sees the reduce-scattered shards only.
    EXPECT_EQ(a.step[Component::Gradients], stage_params * 4 / 2);
    // Per micro-batch sync keeps today's sharded gradients.
    const StepAccount every = account(llama8b({"parallelism.data=2", "parallelism.pipeline=4",
                                               "parallelism.microbatches=8"}),
                                      0);
    EXPECT_EQ(every.backward_end[Component::Gradients], stage_params * 4 / 2);
    // The last stage's unsharded gradients include the head's: its own
    // unsharded gradient (the root's, in the communication buffers) is not
    // counted again at the head's backward, only the block's before its
    // reduce-scatter (in fp32).
    const StepAccount last = account(s, 3);
    EXPECT_EQ(last.backward_head[Component::Gradients], (8 * kBlock + kEmbedding + 4'096) * 4);
    EXPECT_EQ(last.backward_head[Component::CommBuffers], last.forward[Component::CommBuffers] + kBlock * 4);
}

TEST(FsdpPolicy, TheStepTimelinePeaksAtTheEstimateUnderEveryPolicy) {
    // The timeline ramps the gathered parameters from what forward left to
    // what the first block's backward holds, and the deferred gradients.
    const std::vector<std::vector<std::string>> cases = {
        {"parallelism.data=8", "training.gradient_accumulation_steps=2", "parallelism.reshard_after_forward=false"},
        {"parallelism.data=64", "parallelism.reshard_after_forward_ranks=8"},
        {"parallelism.data=8", "training.gradient_accumulation_steps=4",
         "parallelism.fsdp_gradient_sync=last-microbatch"},
        {"parallelism.data=2", "parallelism.pipeline=4", "parallelism.microbatches=8",
         "parallelism.reshard_after_forward=false", "parallelism.fsdp_gradient_sync=last-microbatch"},
    };
    for (const auto& c : cases) {
        const Scenario s = llama8b(c);
        const Expected<Estimate> e = estimate(s);
        ASSERT_TRUE(e.ok());
        const Expected<StepTimeline> tl = stepTimeline(s, e->peak.stage);
        ASSERT_TRUE(tl.ok());
        EXPECT_EQ(tl->peak_bytes(), e->peak.allocated_bytes) << c.back();
    }
}

Error refused(const std::vector<std::string>& settings) {
    Expected<Scenario> s = loadPreset("llama-3.1-8b");
    EXPECT_TRUE(s.ok());
    const Status applied = applySettings(*s, settings);
    if (!applied) return applied.error();
    const Status v = validate(*s);
    EXPECT_FALSE(v.ok());
    return v ? Error{} : v.error();
}

TEST(FsdpPolicy, CombinationsThatMeanNothingAreRefusedNamingBothKeys) {
    Error e = refused({"parallelism.data=8", "parallelism.zero_stage=2", "parallelism.reshard_after_forward=false"});
    EXPECT_EQ(e.field, "parallelism.reshard_after_forward");
    EXPECT_NE(e.message.find("parallelism.zero_stage"), std::string::npos) << e.message;
    e = refused({"parallelism.data=8", "parallelism.zero_stage=3", "parallelism.reshard_after_forward=false",
                 "parallelism.reshard_after_forward_ranks=4"});
    EXPECT_EQ(e.field, "parallelism.reshard_after_forward_ranks");
    EXPECT_NE(e.message.find("parallelism.reshard_after_forward"), std::string::npos) << e.message;
    e = refused({"parallelism.data=8", "parallelism.zero_stage=3", "parallelism.reshard_after_forward_ranks=3"});
    EXPECT_EQ(e.field, "parallelism.reshard_after_forward_ranks");
    EXPECT_NE(e.message.find("divide the 8 ranks"), std::string::npos) << e.message;
    e = refused({"parallelism.data=8", "parallelism.zero_stage=3", "parallelism.fsdp_gradient_sync=last-microbatch"});
    EXPECT_EQ(e.field, "parallelism.fsdp_gradient_sync");
    EXPECT_NE(e.message.find("gradient_accumulation_steps"), std::string::npos) << e.message;
    e = refused({"parallelism.fsdp_gradient_sync=last"});
    EXPECT_EQ(e.field, "parallelism.fsdp_gradient_sync");
    EXPECT_NE(e.message.find("every-microbatch, last-microbatch"), std::string::npos) << e.message;
}

}  // namespace
}  // namespace trainmem
