// The estimate's usual path adds up each candidate stage's moments from
// their terms (core/account/step_moments.h) and leaves out a later stage that holds
// the first stage's blocks when it can prove that stage is never the
// heaviest (scheduledWithinFirst in core/account/estimate_stages.h). Held here against the
// full accounts (accountStep, every moment's breakdown) of both stages, on
// every valid layout of a grid of models and recipes: the proof's
// conclusion, checked by the code it lets the estimate skip. The plan's
// schedule terms (scheduleStagePlan) are held the same way: the estimate
// from a plan scheduled for the layout, and from one scheduled for another
// (each stage's made on the way), is estimateValidated's, and so are the
// device bytes accountLayoutPeak gives the search.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/scenario/batch.h"
#include "core/account/estimate.h"
#include "core/search/layout_search.h"
#include "core/scenario/presets.h"
#include "core/account/step_account.h"
#include "tests/core/layout_search_test_support.h"
#include "core/account/scenario_validate.h"
#include "core/account/layout_account.h"

namespace trainmem {
namespace {

using testing::divisors;

struct Count {
    int64_t layouts = 0;
    int64_t within_first = 0;      // a later stage marked within the first (its account may be left out)
    int64_t gradients_differ = 0;  // ... with gradients at the forward peak on it and not on stage 0
    int64_t unscheduled = 0;       // layouts whose plan was scheduled for another schedule or m
};

int64_t peakOf(const StepAccount& a) { return stagePeak(a).breakdown->total(); }

Count checkGrid(const char* preset, int64_t gpus, int64_t global_batch, const std::function<void(Scenario&)>& recipe = {}) {
    Count count;
    Expected<Scenario> loaded = loadPreset(preset);
    EXPECT_TRUE(loaded.ok()) << preset;
    if (!loaded) return count;
    Scenario base = *loaded;
    if (recipe) recipe(base);
    const PreparedScenario prepared = prepareScenario(base);
    const std::vector<int64_t> experts = base.model.isMoe() ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1};
    for (int64_t t : divisors(gpus))
        for (int64_t p : divisors(gpus / t))
            for (int64_t e : experts)
                for (int64_t zero = 0; zero <= 2; ++zero) {
                    const int64_t d = gpus / t / p;
                    std::vector<std::pair<PipelineSchedule, int64_t>> schedules = {{PipelineSchedule::OneFOneB, 1}};
                    if (p > 1) {
                        schedules.push_back({PipelineSchedule::GPipe, 1});
                        if (base.model.num_layers % (2 * p) == 0)
                            schedules.push_back({PipelineSchedule::Interleaved1F1B, 2});
                    }
                    StagePlan plan;
                    bool planned = false;
                    for (const auto& [schedule, v] : schedules)
                        for (int64_t micro = 1; micro <= 2; micro *= 2)
                            for (int64_t m : {int64_t{1}, p - 1, p, p + 1, 2 * p}) {
                                for (Checkpointing ck : {Checkpointing::None, Checkpointing::Selective,
                                                         Checkpointing::Full, Checkpointing::Op}) {
                                    if (m < 1 || global_batch % (micro * d) != 0) continue;
                                    const Layout l{d, t, p, 1, e, zero, false, schedule, v, micro, m, ck};
                                    Scenario s = base;
                                    applyLayout(s, l);
                                    if (!validate(s)) continue;
                                    if (!planned) {
                                        planStages(s, prepared, plan);
                                        planned = true;
                                    }
                                    ++count.layouts;
                                    const LayoutActivations act = layoutActivations(s);
                                    const int64_t mb = microbatchesPerStep(s);
                                    // The estimate with stages left out is the one without, from
                                    // a plan scheduled for another layout (each stage's schedule
                                    // terms made on the way) and from one scheduled for this one.
                                    const Estimate all = estimateValidated(s);
                                    if (!plan.scheduledFor(s.parallelism, mb)) {
                                        ++count.unscheduled;
                                        EXPECT_EQ(accountLayout(s, prepared, act, plan), all)
                                            << preset << " unscheduled t" << t << " p" << p << " zero" << zero
                                            << " m" << m;
                                        scheduleStagePlan(s, prepared, plan);
                                    }
                                    EXPECT_EQ(accountLayout(s, prepared, act, plan), all)
                                        << preset << " t" << t << " p" << p << " zero" << zero << " m" << m;
                                    // What the search reads of it, made without the rest.
                                    const LayoutPeak peak = accountLayoutPeak(s, prepared, act, plan);
                                    EXPECT_EQ(peak.device_bytes, all.peak.device_bytes) << preset << " m" << m;
                                    EXPECT_EQ(peak.too_large, all.too_large) << preset << " m" << m;
                                    for (const StageFacts& f : plan.stages) {
                                        if (!f.within_first) continue;
                                        ++count.within_first;
                                        const StepAccount first = accountStep(s, prepared, act, mb, plan.stages[0]);
                                        const StepAccount later = accountStep(s, prepared, act, mb, f);
                                        if (later.grads_in_forward && !first.grads_in_forward) ++count.gradients_differ;
                                        EXPECT_LE(peakOf(later), peakOf(first))
                                            << preset << " stage " << f.stage.index << " t" << t << " p" << p
                                            << " zero" << zero << " m" << m << " " << checkpointingName(ck);
                                        EXPECT_LE(later.states.host_bytes, first.states.host_bytes);
                                    }
                                }
                            }
                }
    return count;
}

TEST(StepAccountMoments, LaterStagesWithTheFirstStagesBlocksNeverExceedIt) {
    Count total;
    auto add = [&](const Count& c) {
        total.layouts += c.layouts;
        total.within_first += c.within_first;
        total.gradients_differ += c.gradients_differ;
        total.unscheduled += c.unscheduled;
    };
    add(checkGrid("llama3-8b-megatron-8xh100", 16, 64));  // master weights: gradients from the start
    add(checkGrid("llama2-7b-fp32-adam", 16, 64));        // no master weights: gradients at the forward when m > in flight
    add(checkGrid("mistral-7b-lora-a100", 8, 32));        // LoRA: frozen embedding
    add(checkGrid("mixtral-8x7b-tp-ep", 8, 32));          // MoE blocks, expert parallelism
    add(checkGrid("llama2-7b-fp32-adam", 8, 32, [](Scenario& s) { s.model.num_layers = 30; }));  // uneven stages
    // The rule is exercised, in both of its cases.
    EXPECT_GT(total.layouts, 1000);
    EXPECT_GT(total.within_first, 100);
    EXPECT_GT(total.gradients_differ, 10);
    EXPECT_GT(total.unscheduled, 100);
}

// The 405B 3D layout (the benchmark's): stage 1 holds stage 0's blocks
// and is left out; stage 2, the first with an extra block, and the last
// stage are accounted.
TEST(StepAccountMoments, The405BLayoutsSecondStageIsWithinTheFirst) {
    Expected<Scenario> s = loadPreset("llama3.1-405b-3d");
    ASSERT_TRUE(s.ok());
    const PreparedScenario prepared = prepareScenario(*s);
    StagePlan plan;
    planStages(*s, prepared, plan);
    ASSERT_EQ(plan.stages.size(), 4u);
    EXPECT_EQ(plan.stages[1].stage.index, 1);
    EXPECT_TRUE(plan.stages[1].within_first);
    EXPECT_TRUE(plan.scheduled[1].within_first);  // for the preset's 1F1B with 32 micro-batches
    EXPECT_FALSE(plan.stages[2].within_first);
    EXPECT_FALSE(plan.stages[3].within_first);
    EXPECT_EQ(accountLayout(*s, prepared, layoutActivations(*s), plan), estimateValidated(*s));
}

}  // namespace
}  // namespace trainmem
