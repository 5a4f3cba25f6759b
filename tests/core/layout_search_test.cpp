// The layout solver's space: what it enumerates (counted by hand) and that
// its validity rules are validate()'s. What it lists and how it ranks:
// layout_search_listing_test.cpp; the hot path's allocations:
// layout_search_alloc_test.cpp.
#include <gtest/gtest.h>

#include "core/scenario/layout_rules.h"
#include "core/search/layout_search.h"
#include "tests/core/layout_search_test_support.h"
#include "tests/core/test_models.h"
#include "core/account/scenario_validate.h"

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

// --- What is enumerated -----------------------------------------------------

// Llama-2-7B on 2 GPUs, micro-batches 1, 2, 4, three checkpointing modes.
// The 2 GPUs go to exactly one of TP, PP, CP, DP:
//   TP 2: 4 ZeRO x 2 SP x 1 schedule x 3 micro x 3 ckpt = 72
//   PP 2: 4 ZeRO x 1 x (1f1b, gpipe, interleaved v = 2, 4, 8, 16 dividing 32/2) 6 x 3 x 3 = 216
//   CP 2: 4 x 1 x 1 x 3 x 3 = 36
//   DP 2: 36
// = 360, all valid: 2 divides 32 heads, 32 KV heads and 11008; 2048 tokens
// split over 2 x 2 ring-attention chunks; 32 layers over 2 x v chunks.
// Redundant (one data x context rank, or one micro-batch per step):
//   TP 2: ZeRO 1-3, 3 x 2 x 3 x 3 = 54
//   PP 2: all but ZeRO-0 with 1f1b, 216 - 3 x 3 = 207
// leaving 360 - 261 = 99 layouts to estimate.
TEST(LayoutEnumeration, CountsEveryPointOfTheSpaceByHand) {
    Scenario base = onGpu(llama2_7b(), "A100-80GB");
    LayoutSearchOptions o;
    o.gpus = 2;
    o.max_micro_batch = 4;
    o.top = 1000;
    o.rejected = 1000;
    const LayoutSearchResult r = search(base, o);
    EXPECT_EQ(r.enumerated, 360);
    EXPECT_EQ(r.valid, 360);
    EXPECT_EQ(r.redundant, 261);
    EXPECT_EQ(static_cast<int64_t>(r.layouts.size() + r.rejected.size()), 99);
}

// With a global batch of 4 sequences, micro x data must divide 4: on DP 2
// micro-batch 4 leaves no whole number of micro-batches (4 ZeRO x 3 ckpt
// = 12 layouts), everything else divides.
TEST(LayoutEnumeration, GlobalBatchDropsMicroBatchesThatDoNotDivideIt) {
    Scenario base = onGpu(llama2_7b(), "A100-80GB");
    LayoutSearchOptions o;
    o.gpus = 2;
    o.max_micro_batch = 4;
    o.global_batch = 4;
    const LayoutSearchResult r = search(base, o);
    EXPECT_EQ(r.enumerated, 360);
    EXPECT_EQ(r.valid, 348);
}

// With a global batch the number of micro-batches varies, and pipeline
// schedules differ once there are several: GPipe keeps all m in flight,
// 1F1B at most p (Narayanan et al. 2021).
TEST(LayoutEnumeration, SchedulesAreComparedOnlyWithSeveralMicroBatches) {
    Scenario base = onGpu(llama2_7b(), "A100-80GB");
    LayoutSearchOptions o;
    o.gpus = 4;
    o.global_batch = 16;
    o.top = 100000;
    o.rejected = 100000;
    const LayoutSearchResult r = search(base, o);
    bool gpipe_with_several = false;
    for (const auto* list : {&r.layouts, &r.rejected}) {
        for (const RankedLayout& k : *list) {
            EXPECT_FALSE(layoutRedundant(k.layout));
            if (k.layout.schedule != PipelineSchedule::OneFOneB) {
                EXPECT_GT(k.layout.microbatches, 1);
            }
            if (k.layout.zero_stage > 0) {
                EXPECT_GT(k.layout.data * k.layout.context, 1);
            }
            gpipe_with_several = gpipe_with_several || k.layout.schedule == PipelineSchedule::GPipe;
        }
    }
    EXPECT_TRUE(gpipe_with_several);
}

// GPT-2 XL has 25 heads and 1024-token sequences: on 10 GPUs tensor
// parallelism can only be 1 or 5 (5 divides 25 heads and 6400), and never
// with sequence parallelism (1024 is not a multiple of 5).
TEST(LayoutEnumeration, TensorParallelismOnlyWhereHeadsSplitEvenly) {
    Scenario base = onGpu(gpt2_xl(), "A100-80GB");
    base.training.sequence_length = 1024;
    LayoutSearchOptions o;
    o.gpus = 10;
    o.top = 10000;
    o.rejected = 10000;
    const LayoutSearchResult r = search(base, o);
    ASSERT_FALSE(r.layouts.empty());
    bool saw_tp5 = false;
    for (const auto* list : {&r.layouts, &r.rejected}) {
        for (const RankedLayout& k : *list) {
            EXPECT_TRUE(k.layout.tensor == 1 || k.layout.tensor == 5) << k.layout.tensor;
            EXPECT_FALSE(k.layout.sequence_parallel);
            saw_tp5 = saw_tp5 || k.layout.tensor == 5;
        }
    }
    EXPECT_TRUE(saw_tp5);
}

// Llama-3.1-405B has 8 KV heads: Megatron-LM splits whole KV groups, so no
// layout on 64 GPUs may use TP 16, 32 or 64 even though 128 query heads would allow it.
TEST(LayoutEnumeration, NoTensorParallelismBeyondKvHeads) {
    Scenario base = onGpu(llama31_405b(), "H100-80GB");
    base.training.sequence_length = 4096;
    LayoutSearchOptions o;
    o.gpus = 64;
    o.top = 100000;
    o.rejected = 100000;
    o.max_micro_batch = 2;
    const LayoutSearchResult r = search(base, o);
    EXPECT_EQ(static_cast<int64_t>(r.layouts.size() + r.rejected.size()), r.valid - r.redundant);
    for (const auto* list : {&r.layouts, &r.rejected})
        for (const RankedLayout& k : *list) EXPECT_EQ(8 % k.layout.tensor, 0) << "TP " << k.layout.tensor;
}

// Mixtral's 8 experts over DP x CP ranks: EP must divide both.
TEST(LayoutEnumeration, ExpertParallelismDividesExpertsAndDataTimesContext) {
    Scenario base = onGpu(mixtral_8x7b(), "H100-80GB");
    LayoutSearchOptions o;
    o.gpus = 8;
    o.top = 100000;
    o.rejected = 100000;
    o.max_micro_batch = 1;
    const LayoutSearchResult r = search(base, o);
    bool saw_ep = false;
    for (const auto* list : {&r.layouts, &r.rejected}) {
        for (const RankedLayout& k : *list) {
            EXPECT_EQ(8 % k.layout.expert, 0);
            EXPECT_EQ((k.layout.data * k.layout.context) % k.layout.expert, 0);
            saw_ep = saw_ep || k.layout.expert > 1;
        }
    }
    EXPECT_TRUE(saw_ep);
}

// --- Validity mirrors validate() ---------------------------------------------

// layoutAdmissible() and validate() must agree both ways on valid and
// invalid layouts alike, for dense, GQA, MoE and odd-headed models.
TEST(LayoutValidity, AdmissibleExactlyWhenValidateAccepts) {
    int64_t checked = 0, accepted = 0;
    for (ModelConfig model : {llama2_7b(), gpt2_xl(), llama31_405b(), mixtral_8x7b()}) {
        Scenario s = scenarioOf(model);
        s.training.sequence_length = 1000;  // not a multiple of 16: context parallelism 8 is invalid
        for (int64_t t : {1, 2, 3, 5, 8, 16})
            for (int64_t p : {1, 2, 4, 64, 200})
                for (int64_t c : {1, 2, 4, 8})
                    for (int64_t e : {1, 2, 3, 4})
                        for (int64_t zero : {0, 3})
                            for (bool sp : {false, true})
                                for (auto [schedule, v] : {std::pair{PipelineSchedule::OneFOneB, int64_t{1}},
                                                           std::pair{PipelineSchedule::GPipe, int64_t{2}},
                                                           std::pair{PipelineSchedule::Interleaved1F1B, int64_t{2}},
                                                           std::pair{PipelineSchedule::Interleaved1F1B, int64_t{3}}})
                                    for (int64_t m : {1, 4}) {
                                        Layout l{2, t, p, c, e, zero, sp, schedule, v, 1, m, Checkpointing::Full};
                                        applyLayout(s, l);
                                        for (bool offload : {false, true}) {
                                            s.parallelism.offload_parameters = offload;
                                            const Status status = validate(s);
                                            const bool valid = status.ok();
                                            ASSERT_EQ(layoutAdmissible(s), valid)
                                                << model.name << " TP" << t << " PP" << p << " CP" << c << " EP" << e
                                                << " ZeRO" << zero << " SP" << sp << " v" << v << " m" << m
                                                << " offload " << offload << ": "
                                                << (valid ? std::string("valid") : status.error().text());
                                            // The search skips what degreesAdmissible refuses, and
                                            // below degrees it accepts asks belowDegreesAdmissible.
                                            if (valid) {
                                                ASSERT_TRUE(degreesAdmissible(s))
                                                    << model.name << " TP" << t << " PP" << p << " CP" << c << " EP" << e;
                                            }
                                            if (degreesAdmissible(s)) {
                                                ASSERT_EQ(belowDegreesAdmissible(s), valid)
                                                    << model.name << " TP" << t << " PP" << p << " CP" << c << " EP" << e
                                                    << " ZeRO" << zero << " SP" << sp << " v" << v << " m" << m
                                                    << " offload " << offload;
                                            }
                                            ++checked;
                                            accepted += valid ? 1 : 0;
                                        }
                                        s.parallelism.offload_parameters = false;
                                    }
    }
    EXPECT_GT(accepted, 100);
    EXPECT_GT(checked - accepted, 100);
}

TEST(LayoutValidity, EveryListedLayoutPassesValidate) {
    Scenario base = onGpu(mixtral_8x7b(), "H100-80GB");
    base.training.sequence_length = 4096;
    LayoutSearchOptions o;
    o.gpus = 16;
    o.global_batch = 64;
    o.top = 100000;
    o.rejected = 100000;
    const LayoutSearchResult r = search(base, o);
    EXPECT_EQ(static_cast<int64_t>(r.layouts.size()), r.fitting);
    EXPECT_EQ(static_cast<int64_t>(r.layouts.size() + r.rejected.size()), r.valid - r.redundant);
    for (const auto* list : {&r.layouts, &r.rejected}) {
        for (const RankedLayout& k : *list) {
            Scenario s = base;
            applyLayout(s, k.layout);
            const Status st = validate(s);
            ASSERT_TRUE(st.ok()) << st.error().text();
        }
    }
}

}  // namespace
}  // namespace trainmem
