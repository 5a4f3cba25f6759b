// The layout solver: what it enumerates (counted by hand), that what it
// lists is valid, fits and reproduces through its settings, that the
// ranking follows the documented criterion, and that the hot path does not
// allocate.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "core/estimate.h"
#include "core/layout_rules.h"
#include "core/layout_search.h"
#include "core/step_account.h"
#include "tests/core/test_models.h"

// Counting replacement of the global operator new. It is global for the
// whole test binary, so it counts only while `g_counting` is set and
// otherwise behaves exactly like the default (malloc, bad_alloc on failure).
// GCC inlines the pair and then flags free() on memory from operator new,
// which is exactly what the replacement intends.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
namespace {
std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
    if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
// The nothrow form too (std::stable_partition's temporary buffer takes it):
// left to the sanitizer's own, it would be freed here by free().
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
    if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace trainmem {
namespace {

using testing::gpt2_xl;
using testing::llama2_7b;
using testing::llama31_405b;
using testing::mixtral_8x7b;
using testing::scenarioOf;

class AllocationCounter {
public:
    AllocationCounter() {
        g_allocations = 0;
        g_counting = true;
    }
    ~AllocationCounter() { g_counting = false; }
    int64_t count() const { return g_allocations.load(); }
};

Scenario onGpu(ModelConfig model, const char* gpu) {
    Scenario s = scenarioOf(std::move(model));
    s.hardware.gpu = gpu;
    return s;
}

LayoutSearchResult search(const Scenario& base, LayoutSearchOptions options) {
    auto result = searchLayouts(base, options);
    EXPECT_TRUE(result.ok()) << result.error().text();
    return result.ok() ? *result : LayoutSearchResult{};
}

// Applies a kept layout's settings to the base, the way `trainmem-cli
// estimate --set ...` would.
Scenario reproduce(const Scenario& base, const Layout& layout) {
    Scenario shown = base;
    applyLayout(shown, layout);
    Scenario s = base;
    for (const auto& [key, value] : layoutSettings(shown)) {
        const Status applied = applySetting(s, key, value);
        EXPECT_TRUE(applied.ok()) << key << "=" << value << ": " << applied.error().text();
    }
    return s;
}

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
                                            // The search skips what degreesAdmissible refuses.
                                            if (valid) {
                                                ASSERT_TRUE(degreesAdmissible(s))
                                                    << model.name << " TP" << t << " PP" << p << " CP" << c << " EP" << e;
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

// The documented criterion, checked pair by pair: least recomputation
// (none < selective < full), then larger micro-batch, then more headroom,
// then fewer pipeline stages, then less tensor parallelism.
TEST(LayoutRanking, OrderFollowsTheDocumentedCriterion) {
    Scenario base = onGpu(llama2_7b(), "A100-40GB");
    base.training.sequence_length = 4096;
    LayoutSearchOptions o;
    o.gpus = 8;
    o.top = 100000;
    const LayoutSearchResult r = search(base, o);
    ASSERT_GT(r.layouts.size(), 100u);
    auto recompute = [](Checkpointing c) { return c == Checkpointing::None ? 0 : c == Checkpointing::Selective ? 1 : 2; };
    bool saw_each_mode[3] = {false, false, false};
    for (size_t i = 0; i + 1 < r.layouts.size(); ++i) {
        const RankedLayout& a = r.layouts[i];
        const RankedLayout& b = r.layouts[i + 1];
        saw_each_mode[recompute(a.layout.checkpointing)] = true;
        ASSERT_LE(recompute(a.layout.checkpointing), recompute(b.layout.checkpointing)) << i;
        if (a.layout.checkpointing != b.layout.checkpointing) continue;
        // Tokens per GPU per pass: micro x sequence / context.
        const double tokens_a = static_cast<double>(a.layout.micro_batch_size) / static_cast<double>(a.layout.context);
        const double tokens_b = static_cast<double>(b.layout.micro_batch_size) / static_cast<double>(b.layout.context);
        ASSERT_GE(tokens_a, tokens_b) << i;
        if (tokens_a != tokens_b) continue;
        ASSERT_GE(a.estimate.headroom_bytes, b.estimate.headroom_bytes) << i;
        if (a.estimate.headroom_bytes != b.estimate.headroom_bytes) continue;
        ASSERT_LE(a.layout.pipeline, b.layout.pipeline) << i;
        if (a.layout.pipeline != b.layout.pipeline) continue;
        ASSERT_LE(a.layout.tensor, b.layout.tensor) << i;
    }
    EXPECT_TRUE(saw_each_mode[0] && saw_each_mode[1] && saw_each_mode[2]);
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

// --- The hot path does not allocate -------------------------------------------------

TEST(EstimateHotPath, EstimateValidatedDoesNotAllocate) {
    for (ModelConfig model : {llama2_7b(), llama31_405b(), mixtral_8x7b(), gpt2_xl()}) {
        Scenario s = scenarioOf(model);
        s.training.sequence_length = 1024;
        s.parallelism.data = 2;
        s.parallelism.pipeline = 2;
        s.parallelism.zero_stage = 3;
        s.parallelism.schedule = PipelineSchedule::Interleaved1F1B;
        s.parallelism.virtual_stages = model.num_layers % 4 == 0 ? 2 : 3;  // 405B: 126 layers = 2 x 3 x 21
        s.training.gradient_accumulation_steps = 8;
        s.training.checkpointing = Checkpointing::Selective;
        if (model.isMoe()) s.parallelism.expert = 2;
        ASSERT_TRUE(validate(s).ok()) << model.name << ": " << validate(s).error().text();
        Estimate e;
        int64_t allocations = 0;
        {
            AllocationCounter counter;
            e = estimateValidated(s);
            allocations = counter.count();
        }
        EXPECT_EQ(allocations, 0) << model.name;
        EXPECT_GT(e.peak.device_bytes, 0);
    }
}

// Prepare once (may allocate), then account per layout: no allocation, on
// uniform models and on one whose blocks differ along the depth.
TEST(EstimateHotPath, AccountPathDoesNotAllocate) {
    ModelConfig deep = mixtral_8x7b();
    deep.moe->first_dense_layers = 3;  // DeepSeek-style leading dense blocks
    deep.moe->layer_frequency = 2;
    for (ModelConfig model : {llama2_7b(), llama31_405b(), mixtral_8x7b(), gpt2_xl(), deep}) {
        Scenario s = scenarioOf(model);
        s.training.sequence_length = 1024;
        s.parallelism.data = 2;
        s.parallelism.pipeline = 8;
        s.parallelism.zero_stage = 1;
        s.parallelism.microbatches = 16;
        s.training.gradient_accumulation_steps = 16;
        s.training.checkpointing = Checkpointing::Full;
        if (model.isMoe()) s.parallelism.expert = 2;
        ASSERT_TRUE(validate(s).ok()) << model.name << ": " << validate(s).error().text();
        const PreparedScenario prepared = prepareScenario(s);
        const LayoutActivations activations = layoutActivations(s);
        StagePlan stages;
        planStages(s, prepared, stages);
        Estimate a, b;
        int64_t allocations = 0;
        {
            AllocationCounter counter;
            a = accountLayout(s, prepared, activations, stages);
            b = estimatePrepared(s, prepared);
            allocations = counter.count();
        }
        EXPECT_EQ(allocations, 0) << model.name;
        EXPECT_TRUE(a == b) << model.name;
        EXPECT_TRUE(a == estimateValidated(s)) << model.name;
        EXPECT_GT(a.peak.device_bytes, 0);
    }
}

// The solver allocates per search (divisor lists, the kept layouts), not
// per candidate: thousands of layouts, a bounded number of allocations.
TEST(EstimateHotPath, SearchAllocatesPerSearchNotPerLayout) {
    Scenario base = onGpu(llama2_7b(), "H100-80GB");
    LayoutSearchOptions o;
    o.gpus = 64;
    int64_t allocations = 0;
    Expected<LayoutSearchResult> r = Error{};
    {
        AllocationCounter counter;
        r = searchLayouts(base, o);
        allocations = counter.count();
    }
    ASSERT_TRUE(r.ok());
    EXPECT_GT(r->valid, 10000);
    EXPECT_LT(allocations, 200) << "for " << r->valid << " layouts";
}

}  // namespace
}  // namespace trainmem
