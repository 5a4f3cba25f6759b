// The layout search against the plain loop it stands for: every point of
// the space (docs/layout-search.md §The search space) written into the
// scenario, checked by validate(), estimated by the public estimate(), and
// ranked by sorting the whole list. Whatever the search shares between
// layouts (issue 14: facts prepared once per scenario, activations and model
// states once per loop level), it must list exactly the layouts this loop
// lists, in the same order, with every figure equal.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/account/estimate.h"
#include "core/search/layout_search.h"
#include "core/scenario/presets.h"
#include "tests/core/layout_search_test_support.h"
#include "core/account/scenario_validate.h"
#include "core/scenario/scenario_file.h"

namespace trainmem {
namespace {

using testing::divisors;

struct Reference {
    int64_t enumerated = 0, valid = 0, redundant = 0, fitting = 0;
    bool stopped = false;
    std::vector<RankedLayout> fit, miss;
};

// The plain loop, in the documented enumeration order.
Reference plainLoop(const Scenario& base, const LayoutSearchOptions& o) {
    Reference r;
    const int64_t n = o.gpus;
    const int64_t base_m =
        base.parallelism.microbatches > 0 ? base.parallelism.microbatches : base.training.gradient_accumulation_steps;
    const std::vector<int64_t> experts = base.model.isMoe() ? divisors(base.model.moe->num_experts) : std::vector<int64_t>{1};
    for (int64_t t : divisors(n))
        for (int64_t p : divisors(n / t)) {
            std::vector<std::pair<PipelineSchedule, int64_t>> schedules = {{PipelineSchedule::OneFOneB, 1}};
            if (p > 1) {
                schedules.push_back({PipelineSchedule::GPipe, 1});
                if (base.model.num_layers % p == 0)
                    for (int64_t v : divisors(base.model.num_layers / p))
                        if (v > 1) schedules.push_back({PipelineSchedule::Interleaved1F1B, v});
            }
            for (int64_t c : divisors(n / t / p)) {
                const int64_t d = n / t / p / c;
                for (int64_t e : experts)
                    for (int64_t zero = 0; zero <= 3; ++zero)
                        for (bool sp : {false, true}) {
                            if (sp && t == 1) continue;
                            for (const auto& [schedule, v] : schedules)
                                for (int64_t micro = 1; micro <= o.max_micro_batch; micro *= 2) {
                                    // The documented stop: checked before each micro-batch size's policies.
                                    if (r.enumerated >= o.max_layouts) {
                                        r.stopped = true;
                                        goto done;
                                    }
                                    for (Checkpointing ck :
                                         {Checkpointing::None, Checkpointing::Selective, Checkpointing::Full}) {
                                        int64_t m = base_m;
                                        if (o.global_batch)
                                            m = *o.global_batch % (micro * d) == 0 ? *o.global_batch / (micro * d) : 0;
                                        const Layout l{d, t, p, c, e, zero, sp, schedule, v, micro, m, ck};
                                        ++r.enumerated;
                                        if (m < 1) continue;
                                        Scenario s = base;
                                        applyLayout(s, l);
                                        if (!validate(s)) continue;
                                        ++r.valid;
                                        if (layoutRedundant(l)) {
                                            ++r.redundant;
                                            continue;
                                        }
                                        const Expected<Estimate> e_ = estimate(s);
                                        // Too large to represent: estimate() refuses it; the search
                                        // lists it as not fitting with its saturated figures.
                                        const Estimate est = e_ ? *e_ : estimateValidated(s);
                                        RankedLayout ranked{l, est, r.valid - 1, StepTime{}};
                                        // The search ranks what fits by the step time.
                                        if (est.fits) {
                                            const Expected<StepTime> time = stepTime(s);
                                            if (time) ranked.time = *time;
                                        }
                                        if (est.fits) {
                                            ++r.fitting;
                                            r.fit.push_back(ranked);
                                        } else {
                                            r.miss.push_back(ranked);
                                        }
                                    }
                                }
                        }
            }
        }
done:
    std::sort(r.fit.begin(), r.fit.end(), rankedBefore);
    std::sort(r.miss.begin(), r.miss.end(), [](const RankedLayout& a, const RankedLayout& b) {
        if (a.estimate.headroom_bytes != b.estimate.headroom_bytes)
            return a.estimate.headroom_bytes > b.estimate.headroom_bytes;
        return a.order < b.order;
    });
    if (r.fit.size() > static_cast<size_t>(o.top)) r.fit.resize(static_cast<size_t>(o.top));
    if (r.miss.size() > static_cast<size_t>(o.rejected)) r.miss.resize(static_cast<size_t>(o.rejected));
    return r;
}

void expectSameList(const std::vector<RankedLayout>& got, const std::vector<RankedLayout>& want, const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].order, want[i].order) << what << " #" << i;
        EXPECT_TRUE(got[i].layout == want[i].layout) << what << " #" << i;
        EXPECT_TRUE(got[i].estimate == want[i].estimate) << what << " #" << i << ": device "
                                                         << got[i].estimate.peak.device_bytes << " vs "
                                                         << want[i].estimate.peak.device_bytes;
    }
}

struct Case {
    const char* preset;
    int64_t gpus;
    std::optional<int64_t> global_batch;
    int64_t sequence = 0;  // 0: the preset's
};

// The search against the plain loop on `base` with options `o`; returns how
// many accounts the search skipped with its bound (0 on failure).
int64_t checkSearch(const Scenario& base, const LayoutSearchOptions& o, const std::string& what);

// Returns how many accounts the search skipped with its bound (0 on failure).
int64_t checkCase(const Case& c, int64_t max_layouts = LayoutSearchOptions::kDefaultMaxLayouts, int64_t top = 200,
                  int64_t rejected = 50) {
    Expected<Scenario> base = loadPreset(c.preset);
    EXPECT_TRUE(base.ok()) << c.preset;
    if (!base) return 0;
    if (c.sequence > 0) base->training.sequence_length = c.sequence;
    LayoutSearchOptions o;
    o.gpus = c.gpus;
    o.global_batch = c.global_batch;
    o.max_micro_batch = 8;
    // Long lists by default, so that the comparison reaches far down both
    // rankings; short ones let the search skip accounts with its bound.
    o.top = top;
    o.rejected = rejected;
    o.max_layouts = max_layouts;
    const std::string what = std::string(c.preset) + " on " + std::to_string(c.gpus) + " GPUs" +
                             (c.global_batch ? ", global batch " + std::to_string(*c.global_batch) : "");
    return checkSearch(*base, o, what);
}

int64_t checkSearch(const Scenario& base, const LayoutSearchOptions& o, const std::string& what) {
    const Expected<LayoutSearchResult> got = searchLayouts(base, o);
    EXPECT_TRUE(got.ok()) << what << ": " << got.error().message;
    if (!got) return 0;
    const Reference want = plainLoop(base, o);
    EXPECT_EQ(got->enumerated, want.enumerated) << what;
    EXPECT_EQ(got->valid, want.valid) << what;
    EXPECT_EQ(got->redundant, want.redundant) << what;
    EXPECT_EQ(got->fitting, want.fitting) << what;
    EXPECT_EQ(!got->stopped.empty(), want.stopped) << what;
    if (!want.stopped) {
        EXPECT_GT(want.valid - want.redundant, 50) << what << ": too small a case to compare";
    }
    expectSameList(got->layouts, want.fit, what + ", fitting");
    expectSameList(got->rejected, want.miss, what + ", rejected");
    EXPECT_LE(got->skipped, got->valid - got->redundant - got->fitting) << what << ": only misses can be skipped";
    return got->skipped;
}

TEST(SearchEquivalence, DenseGqa) {
    checkCase({"llama-3.1-8b", 8, std::nullopt});
    checkCase({"llama-3.1-8b", 24, 48});
}

TEST(SearchEquivalence, GptTwoTiedLearnedPositions) {
    checkCase({"gpt2", 12, std::nullopt});
    checkCase({"gpt2-xl", 16, 64});
}

// Leading dense blocks, then MoE blocks: stages differ along the depth.
TEST(SearchEquivalence, MoeWithDepthVaryingPattern) {
    checkCase({"deepseek-v2-lite", 8, std::nullopt, 2048});
    checkCase({"deepseek-v3", 16, 64, 4096});
}

TEST(SearchEquivalence, MoeEveryLayerWithExpertParallelism) {
    checkCase({"mixtral-8x7b-tp-ep", 16, 32});
}

// A search stopped by the layout limit stops where the plain loop does,
// also when the limit falls where whole subtrees of degrees are skipped.
TEST(SearchEquivalence, StopsAtTheLayoutLimitWhereThePlainLoopDoes) {
    for (int64_t limit : {1, 2, 3, 100, 5'000, 12'345, 20'000})
        checkCase({"deepseek-v2-lite", 8, std::nullopt, 2048}, limit);
    for (int64_t limit : {7, 1'000, 30'001})
        checkCase({"llama-3.1-8b", 24, 48}, limit);
}

// The search skips the account of a layout whose lower bound proves it
// neither fits nor enters the rejected list (deviceBytesFloor): with the
// default lists (20 and 5), one rejected layout and none, the lists and
// counts stay those of the plain loop, and the bound does skip.
TEST(SearchEquivalence, SkipsWithTheBoundOnlyWhatChangesNothing) {
    const Case cases[] = {{"llama3.1-70b-interleaved-3d", 32, 64},
                          {"llama3.1-405b-3d", 64, 128},
                          {"mixtral-8x7b-tp-ep", 16, 32},
                          {"deepseek-v3", 16, 64, 4096},
                          {"gpt2-1.5b-zero-paper", 8, 16},
                          {"llama3.1-8b-qlora-rtx4090", 2, 8}};
    for (const Case& c : cases) {
        int64_t skipped = 0;
        for (auto [top, rejected] : {std::pair<int64_t, int64_t>{20, 5}, {1, 1}, {3, 0}, {200, 50}})
            skipped += checkCase(c, LayoutSearchOptions::kDefaultMaxLayouts, top, rejected);
        if (std::string(c.preset) != "llama3.1-8b-qlora-rtx4090") {  // one GPU of 24 GB: most layouts fit or are close
            EXPECT_GT(skipped, 0) << c.preset << ": the bound is not exercised";
        }
    }
    // Stopped by the layout limit part-way, with the bound on.
    for (int64_t limit : {1'000, 12'345}) checkCase({"llama3.1-70b-interleaved-3d", 32, 64}, limit, 20, 5);
}

// More context degrees than the search keeps activations for at once (it
// takes over the oldest block of its cache past 64): one head and two
// blocks, so that tensor parallelism is 1 and the pipeline 1 or 2, on
// 10,080 GPUs (72 divisors) with sequences of 2 x 10,080 tokens, so that
// every divisor is a valid context degree; the second pipeline degree comes
// back to the context degrees whose blocks were taken over.
TEST(SearchEquivalence, MoreContextDegreesThanTheActivationCacheHolds) {
    Expected<Scenario> base = loadPreset("llama-3.1-8b");
    ASSERT_TRUE(base.ok());
    base->model.num_layers = 2;
    base->model.num_heads = 1;
    base->model.num_kv_heads = 1;
    base->model.head_dim = base->model.hidden_size;
    base->training.sequence_length = 2 * 10'080;
    ASSERT_TRUE(validate(*base)) << validate(*base).error().message;
    LayoutSearchOptions o;
    o.gpus = 10'080;
    o.max_micro_batch = 1;
    o.top = 200;
    o.rejected = 50;
    checkSearch(*base, o, "one head and one block on 10,080 GPUs");
}

// Paged optimizer states count on the device only as far as they fit beside
// the rest (finishEstimate): the search's fast account must settle them the
// same way, or a run estimate() says fits would be missing from its list.
TEST(SearchEquivalence, PagedOptimizerStates) {
    Expected<Scenario> base = loadPreset("llama-3.1-8b");
    ASSERT_TRUE(base.ok());
    ASSERT_TRUE(applySettings(*base, {"training.optimizer=adamw", "training.optimizer_paged=true",
                                      "training.precision=pure-bf16", "training.optimizer_state_dtype=fp32",
                                      "hardware.gpu=A100-40GB"})
                    .ok());
    LayoutSearchOptions o;
    o.gpus = 8;
    o.max_micro_batch = 8;
    o.top = 200;
    o.rejected = 50;
    checkSearch(*base, o, "llama-3.1-8b, paged fp32 AdamW, 8 x A100-40GB");
}

TEST(SearchEquivalence, Lora) {
    checkCase({"mistral-7b-lora-a100", 8, std::nullopt});
    checkCase({"llama3.1-8b-qlora-rtx4090", 2, 8});
}

}  // namespace
}  // namespace trainmem
