// The step timeline must peak exactly where and as high as estimate() says,
// and have the shapes of a measured PyTorch memory profile.
#include <gtest/gtest.h>

#include "core/account/timeline.h"
#include "core/account/estimate.h"
#include "tests/core/test_models.h"

namespace trainmem {
namespace {

using testing::llama2_7b;
using testing::scenarioOf;

std::vector<Scenario> sweep() {
    std::vector<Scenario> out;
    for (auto precision : {Precision::AmpBf16, Precision::MixedBf16, Precision::PureBf16, Precision::Fp8Mixed})
        for (auto ckpt : {Checkpointing::None, Checkpointing::Full, Checkpointing::Selective, Checkpointing::EveryK})
            for (int64_t accumulation : {1, 4}) {
                Scenario s = scenarioOf(llama2_7b());
                s.training.precision = precision;
                s.training.checkpointing = ckpt;
                s.training.checkpoint_every = 2;  // every-k: blocks 0, 2, ..., 30; the last (31) is kept
                s.training.gradient_accumulation_steps = accumulation;
                s.training.sequence_length = 4096;
                out.push_back(s);
            }
    for (auto schedule : {PipelineSchedule::OneFOneB, PipelineSchedule::GPipe, PipelineSchedule::Interleaved1F1B})
        for (int64_t m : {2, 4, 16}) {
            Scenario s = scenarioOf(llama2_7b());
            s.training.precision = Precision::AmpBf16;
            s.parallelism.pipeline = 4;
            s.parallelism.schedule = schedule;
            s.parallelism.virtual_stages = schedule == PipelineSchedule::Interleaved1F1B ? 2 : 1;
            s.parallelism.microbatches = m;
            s.training.gradient_accumulation_steps = m;
            out.push_back(s);
        }
    return out;
}

TEST(StepTimeline, MaximumEqualsTheEstimatedPeak) {
    for (const Scenario& s : sweep()) {
        const Expected<Estimate> e = estimate(s);
        ASSERT_TRUE(e.ok()) << e.error().text();
        const Expected<StepTimeline> tl = stepTimeline(s);
        ASSERT_TRUE(tl.ok()) << tl.error().text();
        EXPECT_EQ(tl->peak_bytes(), e->peak.allocated_bytes)
            << precisionName(s.training.precision) << " " << checkpointingName(s.training.checkpointing)
            << " m=" << s.training.gradient_accumulation_steps << " " << scheduleName(s.parallelism.schedule);
        EXPECT_EQ(tl->samples[tl->peak_index].phase, e->peak.peak_phase);
    }
}

// Seed walkthrough: "a constant band below is model params + optimizer
// states", "a half triangle which is forward pass", then backward frees
// activations while gradients grow, and the step sits on top.
TEST(StepTimeline, HasTheShapesOfAMeasuredProfile) {
    Scenario s = scenarioOf(llama2_7b());
    s.training.precision = Precision::AmpBf16;
    const Expected<StepTimeline> tl = stepTimeline(s);
    ASSERT_TRUE(tl.ok());
    const auto& x = tl->samples;
    ASSERT_GT(x.size(), 64u);
    int64_t last_forward_activations = -1;
    for (const TimelineSample& t : x) {
        // The band of weights and optimizer states never moves.
        EXPECT_EQ(t.bytes[Component::Weights], x.front().bytes[Component::Weights]);
        EXPECT_EQ(t.bytes[Component::OptimizerStates], x.front().bytes[Component::OptimizerStates]);
        if (t.phase == Phase::Forward) {
            EXPECT_GT(t.bytes[Component::Activations], last_forward_activations);  // a ramp
            last_forward_activations = t.bytes[Component::Activations];
            EXPECT_EQ(t.bytes[Component::Gradients], 0);  // zero_grad(set_to_none) before forward
        }
    }
    // Backward: gradients grow while activations shrink block by block; the
    // step comes last. The head's backward (layer -1) comes first and holds no
    // block's working memory yet, so the block ramp starts after it.
    int64_t prev_grads = -1, prev_act = INT64_MAX;
    int head_samples = 0;
    for (const TimelineSample& t : x)
        if (t.phase == Phase::Backward) {
            EXPECT_GE(t.bytes[Component::Gradients], prev_grads);
            prev_grads = t.bytes[Component::Gradients];
            if (t.layer < 0) {
                ++head_samples;
                continue;
            }
            EXPECT_LE(t.bytes[Component::Activations], prev_act);
            prev_act = t.bytes[Component::Activations];
        }
    EXPECT_EQ(head_samples, 1);
    EXPECT_EQ(x.back().phase, Phase::OptimizerStep);
    EXPECT_GT(x.back().bytes[Component::OptimizerTransient], 0);
    EXPECT_EQ(x.back().bytes[Component::Activations], 0);
}

TEST(StepTimeline, RejectsAStageOutsideThePipeline) {
    Scenario s = scenarioOf(llama2_7b());
    s.parallelism.pipeline = 2;
    const auto tl = stepTimeline(s, 5);
    ASSERT_FALSE(tl.ok());
    EXPECT_EQ(tl.error().field, "stage");
}

}  // namespace
}  // namespace trainmem
