// The model's ends under ZeRO-3 (parallelism.fsdp_ends, core/account/fsdp_policy.h),
// on Llama 3.1 8B's published shapes (8,030,261,248 parameters: a 128,256 x
// 4096 embedding, an untied head of the same shape, a 4096 final norm) and
// Llama 3.2 1B's tied one (128,256 x 2048, 1,235,814,400 parameters), against
// what PyTorch and torchtitan do:
//  - PyTorch torch/distributed/fsdp/_fully_shard/_fsdp_state.py (1fd469d0c96e)
//    _lazy_init: the root unit is not resharded after forward; its
//    post-backward runs after the whole backward (its inputs, token ids,
//    need no gradient). accelerate, torchtune and LitGPT shard the blocks and
//    then the model: the ends are in the root.
//  - torchtune torchtune/training/_distributed.py shard_model (v0.6.0-rc1-220):
//    custom_sharded_layers (tok_embeddings, output in llama3_1/8B_full.yaml)
//    are units of their own, resharded like the blocks.
//  - torchtitan torchtitan/distributed/fsdp.py (precompile-loss-v1-748-gb5bcd76c6)
//    apply_fsdp_to_decoder: [norm, lm_head] a unit not resharded after
//    forward (but under "always"); tok_embeddings a unit under the blocks'
//    policy; tied: one unit of the three.
#include <gtest/gtest.h>

#include "core/account/fsdp_policy.h"
#include "core/model/parameters.h"
#include "core/training/pipeline.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "core/account/step_account.h"
#include "tests/core/preset_scenario.h"
#include "core/scenario/scenario_file.h"

namespace trainmem {
namespace {

constexpr double kEmbedding8b = 128'256.0 * 4'096;  // elements, one matrix
constexpr double kEmbedding1b = 128'256.0 * 2'048;

Scenario model(const std::string& preset, const std::vector<std::string>& settings) {
    return presetWith(preset, {"training.precision=amp-bf16", "parallelism.zero_stage=3"}, settings);
}

FsdpEndsBytes endsOf(const Scenario& s, int64_t stage) {
    const PipelineStage st = pipelineStage(s.model, s.parallelism, 1, stage);
    return fsdpEndsBytes(s, parameterLayout(s.model), st, planPrecision(s.training));
}

TEST(FsdpEnds, TheCountsTheseTestsStandOn) {
    EXPECT_EQ(prepareScenario(model("llama-3.1-8b", {"parallelism.data=8"})).parameters.total, 8'030'261'248);
    EXPECT_EQ(prepareScenario(model("llama-3.2-1b", {"parallelism.data=8"})).parameters.total, 1'235'814'400);
}

TEST(FsdpEnds, BytesAreTheEndsShapesInTheComputeDtypeSplitOverTensorRanks) {
    const FsdpEndsBytes b = endsOf(model("llama-3.1-8b", {"parallelism.data=8"}), 0);
    EXPECT_DOUBLE_EQ(b.embedding, kEmbedding8b * 2);        // bf16, MixedPrecisionPolicy.param_dtype
    EXPECT_DOUBLE_EQ(b.head, (kEmbedding8b + 4'096) * 2);    // lm_head + final norm
    EXPECT_FALSE(b.one_unit);
    EXPECT_DOUBLE_EQ(b.head_gradient, (kEmbedding8b + 4'096) * 2);
    // Vocab-parallel under tensor parallelism; the norm is replicated.
    const FsdpEndsBytes tp = endsOf(model("llama-3.1-8b", {"parallelism.data=4", "parallelism.tensor=2"}), 0);
    EXPECT_DOUBLE_EQ(tp.embedding, kEmbedding8b / 2 * 2);
    EXPECT_DOUBLE_EQ(tp.head, (kEmbedding8b / 2 + 4'096) * 2);
    // Frozen ends (LoRA): gathered, but no gradient.
    EXPECT_DOUBLE_EQ(endsOf(model("llama-3.1-8b", {"parallelism.data=8", "training.finetuning=lora"}), 0).head_gradient, 0);
}

TEST(FsdpEnds, PipelineStagesHoldOnlyTheirOwnEnd) {
    const Scenario s = model("llama-3.1-8b", {"parallelism.data=4", "parallelism.pipeline=2"});
    const FsdpEndsBytes first = endsOf(s, 0), last = endsOf(s, 1);
    EXPECT_DOUBLE_EQ(first.embedding, kEmbedding8b * 2);
    EXPECT_DOUBLE_EQ(first.head, 0);
    EXPECT_DOUBLE_EQ(last.embedding, 0);
    EXPECT_DOUBLE_EQ(last.head, (kEmbedding8b + 4'096) * 2);
}

TEST(FsdpEnds, TiedEmbeddingsAreOneTensorInOneUnit) {
    const FsdpEndsBytes b = endsOf(model("llama-3.2-1b", {"parallelism.data=8"}), 0);
    EXPECT_TRUE(b.one_unit);
    EXPECT_DOUBLE_EQ(b.embedding + b.head, (kEmbedding1b + 2'048) * 2);  // gathered once, not twice
    EXPECT_DOUBLE_EQ(b.head_gradient, (kEmbedding1b + 2'048) * 2);
}

TEST(FsdpEnds, TheRootUnitIsGatheredThroughForwardAndBackwardWithTheHeadGradientFromItsBackward) {
    Scenario s = model("llama-3.1-8b", {"parallelism.data=8"});
    const FsdpEndsBytes b = endsOf(s, 0);
    const FsdpEndsTerms t = fsdpEndsTerms(s.parallelism, b);
    const double both = (2 * kEmbedding8b + 4'096) * 2;
    for (double m : {t.forward, t.loss, t.head_backward, t.backward_start, t.backward_end}) EXPECT_DOUBLE_EQ(m, both);
    EXPECT_DOUBLE_EQ(t.gradient_head_backward, (kEmbedding8b + 4'096) * 2);
    EXPECT_DOUBLE_EQ(t.gradient_backward_end, (kEmbedding8b + 4'096) * 2);
}

TEST(FsdpEnds, TorchtitansHeadUnitIsKeptFromItsForwardAndTheEmbeddingPrefetchedForItsBackward) {
    const Scenario s = model("llama-3.1-8b", {"parallelism.data=8", "parallelism.fsdp_ends=own-units-head-kept"});
    const FsdpEndsTerms t = fsdpEndsTerms(s.parallelism, endsOf(s, 0));
    const double head = (kEmbedding8b + 4'096) * 2;
    EXPECT_DOUBLE_EQ(t.forward, head);
    EXPECT_DOUBLE_EQ(t.loss, head);
    EXPECT_DOUBLE_EQ(t.head_backward, head);
    EXPECT_DOUBLE_EQ(t.backward_start, 0);  // resharded after the norm's backward
    EXPECT_DOUBLE_EQ(t.backward_end, kEmbedding8b * 2);
    EXPECT_DOUBLE_EQ(t.gradient_head_backward, head);
    EXPECT_DOUBLE_EQ(t.gradient_backward_start, 0);  // reduce-scattered in the unit's post-backward
    // Tied: torchtitan groups the three modules in one unit, kept like a root.
    const Scenario tied = model("llama-3.2-1b", {"parallelism.data=8", "parallelism.fsdp_ends=own-units-head-kept"});
    const FsdpEndsTerms tt = fsdpEndsTerms(tied.parallelism, endsOf(tied, 0));
    EXPECT_DOUBLE_EQ(tt.backward_start, (kEmbedding1b + 2'048) * 2);
}

TEST(FsdpEnds, OwnUnitsReshardedLikeTheBlocksAreGatheredForTheirBackwardOnly) {
    // torchtune's custom_sharded_layers (reshard_after_forward True, its default).
    const Scenario s = model("llama-3.1-8b", {"parallelism.data=8", "parallelism.fsdp_ends=own-units"});
    const FsdpEndsTerms t = fsdpEndsTerms(s.parallelism, endsOf(s, 0));
    EXPECT_DOUBLE_EQ(t.head_backward, (kEmbedding8b + 4'096) * 2);
    EXPECT_DOUBLE_EQ(t.backward_end, kEmbedding8b * 2);
    for (double m : {t.forward, t.loss, t.backward_start, t.gradient_backward_start}) EXPECT_DOUBLE_EQ(m, 0);
    // With reshard_after_forward false they stay, like the blocks.
    const Scenario kept = model("llama-3.1-8b", {"parallelism.data=8", "parallelism.fsdp_ends=own-units",
                                                 "parallelism.reshard_after_forward=false"});
    EXPECT_DOUBLE_EQ(fsdpEndsTerms(kept.parallelism, endsOf(kept, 0)).loss, (2 * kEmbedding8b + 4'096) * 2);
}

TEST(FsdpEnds, AnUnknownPolicyNamesTheKeyAndTheChoices) {
    Expected<Scenario> s = loadPreset("llama-3.1-8b");
    ASSERT_TRUE(s.ok());
    const Status st = applySettings(*s, {"parallelism.fsdp_ends=head"});
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().field, "parallelism.fsdp_ends");
    EXPECT_NE(st.error().message.find("own-units"), std::string::npos) << st.error().message;
}

}  // namespace
}  // namespace trainmem
