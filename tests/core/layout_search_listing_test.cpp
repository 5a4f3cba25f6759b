// The layout solver's lists: every listed layout fits and reproduces through
// its settings, the ranking follows the documented criterion, the closest
// misses say why, bad options are errors naming the option, and the
// largest micro-batch of a layout.
#include <gtest/gtest.h>

#include "core/account/estimate.h"
#include "core/search/layout_search.h"
#include "core/scenario/presets.h"
#include "tests/core/layout_search_test_support.h"
#include "tests/core/test_models.h"

namespace trainmem {
namespace {

using testing::gpt2_xl;
using testing::llama2_7b;
using testing::llama31_405b;
using testing::mixtral_8x7b;
using testing::onGpu;
using testing::reproduce;
using testing::scenarioOf;
using testing::search;

// --- What is listed -----------------------------------------------------------

// Llama-2-7B (6,738,415,616 parameters) on 8 x A100-80GB (81,920 MiB).
// By hand, DP 8 with ZeRO-3, micro-batch 1 and full recomputation fits:
//   model states, at most 18 B/param (bf16 weights, fp32 grads, fp32 master
//   + Adam m, v) / 8 ranks = 15.2 GB;
//   gathered blocks: 2 x 202 M params x 2 B = 0.8 GB;
//   checkpoints: 32 blocks x 2048 x 4096 x 2 B = 0.5 GB, plus one block
//   recomputed (< 2 GB even with eager attention's 5as/h term);
//   logits 2048 x 32000 x (2 + 4 + 4) B = 0.7 GB; context + NCCL < 2 GB.
// That is under 25 GB, so it must be among the fitting layouts, and the
// best layout needs no recomputation at all (a third of 80 GB is plenty for
// micro-batch 1's activations: 32 x 2048 x 4096 x (34 + 5 x 32 x 2048/4096) B
// = 30.6 GB by Korthikanti's eager-attention formula).
TEST(LayoutListing, KnownFittingLayoutIsListedAndBestNeedsNoRecompute) {
    const Scenario base = onGpu(llama2_7b(), "A100-80GB");
    LayoutSearchOptions o;
    o.gpus = 8;
    o.top = 100000;
    const LayoutSearchResult r = search(base, o);
    ASSERT_FALSE(r.layouts.empty());
    EXPECT_EQ(static_cast<int64_t>(r.layouts.size()), r.fitting);
    EXPECT_EQ(r.layouts.front().layout.checkpointing, Checkpointing::None);
    const Layout known{8, 1, 1, 1, 1, 3, false, PipelineSchedule::OneFOneB, 1, 1, 1, Checkpointing::Full};
    bool listed = false;
    for (const RankedLayout& k : r.layouts) listed = listed || k.layout == known;
    EXPECT_TRUE(listed);
}

TEST(LayoutListing, EveryListedLayoutFitsAndReproducesThroughItsSettings) {
    for (ModelConfig model : {llama2_7b(), mixtral_8x7b()}) {
        Scenario base = onGpu(model, "H100-80GB");
        base.training.sequence_length = 4096;
        LayoutSearchOptions o;
        o.gpus = model.isMoe() ? 16 : 8;
        o.global_batch = 256;
        o.top = 40;
        const LayoutSearchResult r = search(base, o);
        ASSERT_EQ(r.layouts.size(), 40u) << model.name;
        bool saw_ep = false;
        for (const RankedLayout& k : r.layouts) {
            EXPECT_TRUE(k.estimate.fits);
            EXPECT_GE(k.estimate.headroom_bytes, 0);
            const auto again = estimate(reproduce(base, k.layout));
            ASSERT_TRUE(again.ok()) << again.error().text();
            EXPECT_EQ(again->peak.device_bytes, k.estimate.peak.device_bytes) << model.name;
            EXPECT_EQ(again->peak.at_peak, k.estimate.peak.at_peak) << model.name;
            EXPECT_EQ(again->peak.stage, k.estimate.peak.stage) << model.name;
            saw_ep = saw_ep || k.layout.expert > 1;
        }
        EXPECT_EQ(saw_ep, model.isMoe()) << model.name;
    }
}

TEST(LayoutListing, GlobalBatchIsTheEffectiveBatchOfEveryLayout) {
    Scenario base = onGpu(llama2_7b(), "H100-80GB");
    LayoutSearchOptions o;
    o.gpus = 16;
    o.global_batch = 512;
    o.top = 200;
    o.rejected = 50;
    const LayoutSearchResult r = search(base, o);
    ASSERT_FALSE(r.layouts.empty());
    for (const auto* list : {&r.layouts, &r.rejected}) {
        for (const RankedLayout& k : *list) {
            EXPECT_EQ(k.layout.micro_batch_size * k.layout.microbatches * k.layout.data, 512);
            EXPECT_EQ(k.estimate.effective_batch, 512);
        }
    }
}

// Without --global-batch the base's accumulation is kept.
TEST(LayoutListing, WithoutGlobalBatchTheBaseAccumulationIsKept) {
    Scenario base = onGpu(llama2_7b(), "H100-80GB");
    base.training.gradient_accumulation_steps = 4;
    LayoutSearchOptions o;
    o.gpus = 8;
    const LayoutSearchResult r = search(base, o);
    ASSERT_FALSE(r.layouts.empty());
    for (const RankedLayout& k : r.layouts) {
        EXPECT_EQ(k.layout.microbatches, 4);
        EXPECT_EQ(k.estimate.effective_batch, 4 * k.layout.micro_batch_size * k.layout.data);
    }
}

// The documented criterion, checked pair by pair: the most modelled
// tokens per second per GPU, then more headroom, then fewer pipeline
// stages, then less tensor parallelism.
TEST(LayoutRanking, OrderFollowsTheDocumentedCriterion) {
    Scenario base = onGpu(llama2_7b(), "A100-40GB");
    base.training.sequence_length = 4096;
    LayoutSearchOptions o;
    o.gpus = 8;
    o.top = 100000;
    const LayoutSearchResult r = search(base, o);
    ASSERT_GT(r.layouts.size(), 100u);
    for (size_t i = 0; i + 1 < r.layouts.size(); ++i) {
        const RankedLayout& a = r.layouts[i];
        const RankedLayout& b = r.layouts[i + 1];
        ASSERT_GT(a.time.tokens_per_second_per_gpu, 0) << i;
        ASSERT_GE(a.time.tokens_per_second_per_gpu, b.time.tokens_per_second_per_gpu) << i;
        if (a.time.tokens_per_second_per_gpu != b.time.tokens_per_second_per_gpu) continue;
        ASSERT_GE(a.estimate.headroom_bytes, b.estimate.headroom_bytes) << i;
        if (a.estimate.headroom_bytes != b.estimate.headroom_bytes) continue;
        ASSERT_LE(a.layout.pipeline, b.layout.pipeline) << i;
        if (a.layout.pipeline != b.layout.pipeline) continue;
        ASSERT_LE(a.layout.tensor, b.layout.tensor) << i;
    }
}

// A GPU without published rates keeps memory's order: least recomputation
// (none < selective < full), then the larger micro-batch in tokens per GPU,
// then more headroom.
TEST(LayoutRanking, WithoutRatesTheOrderIsMemorys) {
    Scenario base = onGpu(llama2_7b(), "A10G-24GB");
    base.training.sequence_length = 1024;
    LayoutSearchOptions o;
    o.gpus = 8;
    o.top = 100000;
    const LayoutSearchResult r = search(base, o);
    ASSERT_GT(r.layouts.size(), 10u);
    auto recompute = [](Checkpointing c) { return c == Checkpointing::None ? 0 : c == Checkpointing::Selective ? 1 : 2; };
    for (size_t i = 0; i + 1 < r.layouts.size(); ++i) {
        const RankedLayout& a = r.layouts[i];
        const RankedLayout& b = r.layouts[i + 1];
        ASSERT_EQ(a.time.step_seconds, 0) << i;
        ASSERT_LE(recompute(a.layout.checkpointing), recompute(b.layout.checkpointing)) << i;
        if (a.layout.checkpointing != b.layout.checkpointing) continue;
        const double tokens_a = static_cast<double>(a.layout.micro_batch_size) / static_cast<double>(a.layout.context);
        const double tokens_b = static_cast<double>(b.layout.micro_batch_size) / static_cast<double>(b.layout.context);
        ASSERT_GE(tokens_a, tokens_b) << i;
        if (tokens_a != tokens_b) continue;
        ASSERT_GE(a.estimate.headroom_bytes, b.estimate.headroom_bytes) << i;
    }
}

// Issue 26: Llama-3.1-70B on 1,024 GPUs at global batch 128 put a 64-stage
// pipeline with 2 micro-batches first (about 97% bubble). Ranked by the
// step time, the first layout is none of that, and a batch smaller than
// the GPU count is said.
TEST(LayoutRanking, SeventyBillionOnAThousandGpusDoesNotPutADeepPipelineFirst) {
    Expected<Scenario> base = loadPreset("llama3.1-70b-interleaved-3d");
    ASSERT_TRUE(base.ok());
    LayoutSearchOptions o;
    o.gpus = 1024;
    o.global_batch = 128;
    o.top = 8;
    const LayoutSearchResult r = search(*base, o);
    ASSERT_FALSE(r.layouts.empty());
    for (const RankedLayout& k : r.layouts) {
        EXPECT_LT(k.layout.pipeline, 64) << "PP " << k.layout.pipeline << " TP " << k.layout.tensor << " DP " << k.layout.data;
        EXPECT_LT(k.time[TimeComponent::Bubble], 0.5 * k.time.step_seconds) << "PP " << k.layout.pipeline << " TP " << k.layout.tensor << " DP " << k.layout.data;
    }
    EXPECT_NE(r.note.find("smaller than the 1024 GPUs"), std::string::npos) << r.note;
}

// The top K of a search are the first K of the full ranking.
TEST(LayoutRanking, TopKIsAPrefixOfTheFullRanking) {
    Scenario base = onGpu(llama2_7b(), "A100-40GB");
    LayoutSearchOptions o;
    o.gpus = 8;
    o.top = 100000;
    const LayoutSearchResult all = search(base, o);
    o.top = 7;
    const LayoutSearchResult top = search(base, o);
    ASSERT_EQ(top.layouts.size(), 7u);
    for (size_t i = 0; i < 7; ++i) EXPECT_EQ(top.layouts[i].layout, all.layouts[i].layout) << i;
}

// --- Layouts that do not fit ------------------------------------------------------

// Llama-3.1-405B (405,853,388,800 parameters) on 8 x A100-80GB cannot fit:
// even fully sharded, mixed-precision model states alone are 16 B/param
// (ZeRO paper, Rajbhandari et al. 2020) / 8 = 811.7 GB per GPU, ten times
// the 81,920 MiB of an A100-80GB. The closest layouts are over by at least
// that difference, and their largest component is a model state.
TEST(LayoutRejection, NothingFitsAndTheClosestAreOverByAtLeastTheModelStates) {
    const Scenario base = onGpu(llama31_405b(), "A100-80GB");
    LayoutSearchOptions o;
    o.gpus = 8;
    o.rejected = 5;
    const LayoutSearchResult r = search(base, o);
    EXPECT_EQ(r.fitting, 0);
    EXPECT_TRUE(r.layouts.empty());
    ASSERT_EQ(r.rejected.size(), 5u);
    const int64_t lower_bound = 16 * int64_t{405853388800} / 8 - 81920 * kMiB;
    for (size_t i = 0; i < r.rejected.size(); ++i) {
        const Rejection why = rejectionOf(r.rejected[i].estimate);
        EXPECT_GE(why.over_bytes, lower_bound);
        EXPECT_TRUE(why.dominant == Component::OptimizerStates || why.dominant == Component::MasterWeights ||
                    why.dominant == Component::Gradients || why.dominant == Component::Weights)
            << componentName(why.dominant);
        EXPECT_EQ(rejectionText(why).rfind("over by ", 0), 0u) << rejectionText(why);
        if (i > 0) {
            EXPECT_GE(r.rejected[i - 1].estimate.headroom_bytes, r.rejected[i].estimate.headroom_bytes);
        }
    }
}

TEST(LayoutRejection, TextNamesExcessPhaseStageAndLargestComponent) {
    Rejection r;
    r.over_bytes = 12 * kGiB + 322122547;  // 12.30 GiB
    r.phase = Phase::Backward;
    r.stage = 0;
    r.dominant = Component::Activations;
    r.dominant_bytes = 41 * kGiB;
    EXPECT_EQ(rejectionText(r), "over by 12.30 GiB at backward on stage 1; activations 41.00 GiB");
}

// --- Options ------------------------------------------------------------------------

TEST(LayoutSearchOptionsCheck, BadOptionsAreErrorsNamingTheOption) {
    const Scenario base = scenarioOf(llama2_7b());
    auto field = [&](LayoutSearchOptions o) {
        auto r = searchLayouts(base, o);
        return r.ok() ? std::string("ok") : r.error().field;
    };
    LayoutSearchOptions o;
    o.gpus = 0;
    EXPECT_EQ(field(o), "gpus");
    o.gpus = 8;
    o.global_batch = 0;
    EXPECT_EQ(field(o), "global_batch");
    o.global_batch.reset();
    o.top = 0;
    EXPECT_EQ(field(o), "top");
    o.top = 5;
    o.max_micro_batch = 0;
    EXPECT_EQ(field(o), "max_micro_batch");
    o.max_micro_batch = 8;
    EXPECT_EQ(field(o), "ok");
}

TEST(LayoutSearchOptionsCheck, InvalidBaseScenarioIsAnErrorNamingItsField) {
    Scenario base = scenarioOf(llama2_7b());
    base.training.sequence_length = 0;
    LayoutSearchOptions o;
    o.gpus = 8;
    auto r = searchLayouts(base, o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().field, "training.sequence_length");
}

// The base's own layout does not matter: it is replaced, even when it would
// be invalid on its own (TP 3 does not divide 32 heads).
TEST(LayoutSearchOptionsCheck, BaseLayoutIsReplaced) {
    Scenario base = scenarioOf(llama2_7b());
    base.parallelism.tensor = 3;
    base.parallelism.gpus = 3;
    LayoutSearchOptions o;
    o.gpus = 4;
    auto r = searchLayouts(base, o);
    ASSERT_TRUE(r.ok()) << r.error().text();
    EXPECT_GT(r->fitting, 0);
}

// --- Largest micro-batch --------------------------------------------------------------

TEST(LargestMicroBatch, FitsAndOneMoreDoesNot) {
    Scenario s = onGpu(llama2_7b(), "H100-80GB");
    s.training.sequence_length = 4096;
    s.parallelism.data = 8;
    s.parallelism.zero_stage = 3;
    s.training.checkpointing = Checkpointing::Selective;
    auto largest = largestMicroBatch(s);
    ASSERT_TRUE(largest.ok()) << largest.error().text();
    ASSERT_GT(*largest, 1);
    s.training.micro_batch_size = *largest;
    EXPECT_TRUE(estimate(s)->fits);
    s.training.micro_batch_size = *largest + 1;
    EXPECT_FALSE(estimate(s)->fits);
}

// 405B on one 80 GB GPU: not even micro-batch 1 fits.
TEST(LargestMicroBatch, ZeroWhenNothingFits) {
    const Scenario s = onGpu(llama31_405b(), "H100-80GB");
    auto largest = largestMicroBatch(s);
    ASSERT_TRUE(largest.ok());
    EXPECT_EQ(*largest, 0);
}

// A GPU with a petabyte: the bound is validate()'s 2^25 tokens per
// micro-batch, 2^25 / 2048 = 16384 sequences.
TEST(LargestMicroBatch, StopsAtTheLargestValidMicroBatch) {
    Scenario s = scenarioOf(llama2_7b());
    s.model.num_layers = 1;
    s.hardware.gpu = "custom";
    s.hardware.memory_bytes = int64_t{1} << 50;
    s.training.sequence_length = 2048;
    auto largest = largestMicroBatch(s);
    ASSERT_TRUE(largest.ok()) << largest.error().text();
    EXPECT_EQ(*largest, 16384);
}

TEST(LargestMicroBatch, InvalidScenarioIsAnError) {
    Scenario s = scenarioOf(llama2_7b());
    s.parallelism.tensor = 3;
    auto largest = largestMicroBatch(s);
    ASSERT_FALSE(largest.ok());
    EXPECT_EQ(largest.error().field, "parallelism.tensor");
}

}  // namespace
}  // namespace trainmem
