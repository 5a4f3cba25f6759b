// The floor the search skips accounts with (deviceBytesFloor, layout_search.cpp)
// must never exceed the device bytes the estimate gives: if it did, a layout
// that fits, or one of the closest misses, could be skipped. Checked against
// the public estimate() on every valid layout of a grid of models, recipes,
// schedules, micro-batches and checkpointing policies, including those the
// search does not try (op-level, every-k and its kin), and with the plan the
// search would use (planned once per degrees and ZeRO stage).
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

struct BoundCount {
    int64_t checked = 0;
    int64_t past_capacity = 0;  // floor past the capacity (layouts the search may skip)
};

// Every valid layout of `base` on `gpus` GPUs (micro-batches 1, 2, 4; m from
// the global batch), each policy in `policies`.
BoundCount checkFloor(const char* preset, int64_t gpus, int64_t global_batch, std::vector<Checkpointing> policies,
                      const std::function<void(Scenario&)>& recipe = {}) {
    BoundCount count;
    Expected<Scenario> loaded = loadPreset(preset);
    EXPECT_TRUE(loaded.ok()) << preset;
    if (!loaded) return count;
    Scenario base = *loaded;
    if (recipe) recipe(base);
    const PreparedScenario prepared = prepareScenario(base);
    const std::vector<int64_t> experts = base.model.isMoe() ? divisors(base.model.moe->num_experts) : std::vector<int64_t>{1};
    for (int64_t t : divisors(gpus))
        for (int64_t p : divisors(gpus / t))
            for (int64_t c : divisors(gpus / t / p))
                for (int64_t e : experts)
                    for (int64_t zero = 0; zero <= 3; ++zero) {
                        const int64_t d = gpus / t / p / c;
                        std::vector<std::pair<PipelineSchedule, int64_t>> schedules = {{PipelineSchedule::OneFOneB, 1}};
                        if (p > 1) {
                            schedules.push_back({PipelineSchedule::GPipe, 1});
                            if (base.model.num_layers % (2 * p) == 0)
                                schedules.push_back({PipelineSchedule::Interleaved1F1B, 2});
                        }
                        StagePlan plan;
                        bool planned_every_k = false, planned = false;
                        for (bool sp : {false, true})
                            for (const auto& [schedule, v] : schedules)
                                for (int64_t micro = 1; micro <= 4; micro *= 2)
                                    for (Checkpointing ck : policies) {
                                        if (global_batch % (micro * d) != 0) continue;
                                        const Layout l{d, t, p, c, e, zero, sp, schedule, v, micro,
                                                       global_batch / (micro * d), ck};
                                        Scenario s = base;
                                        applyLayout(s, l);
                                        s.training.checkpoint_every = 2;
                                        if (!validate(s)) continue;
                                        // Planned at the first layout of these degrees, as the search does;
                                        // again for the other candidate rule.
                                        if (!planned || planned_every_k != checkpointsSomeLayers(ck)) {
                                            planStages(s, prepared, plan);
                                            planned = true;
                                            planned_every_k = checkpointsSomeLayers(ck);
                                        }
                                        const LayoutActivations activations = layoutActivations(s);
                                        const int64_t floor = deviceBytesFloor(s, prepared, activations, plan);
                                        // The search's early-stopping form says the same.
                                        EXPECT_TRUE(deviceBytesAtLeast(s, prepared, activations, plan, floor));
                                        EXPECT_FALSE(deviceBytesAtLeast(s, prepared, activations, plan, floor + 1));
                                        const Estimate est = estimateValidated(s);
                                        ++count.checked;
                                        if (floor > est.capacity_bytes) ++count.past_capacity;
                                        EXPECT_LE(floor, est.peak.device_bytes)
                                            << preset << " on " << gpus << ": d" << d << " t" << t << " p" << p << " c"
                                            << c << " e" << e << " zero " << zero << " sp " << sp << " "
                                            << static_cast<int>(schedule) << "/" << v << " micro " << micro << " policy "
                                            << static_cast<int>(ck);
                                        if (est.peak.device_bytes < floor) return count;  // one report is enough
                                    }
                    }
    return count;
}

const std::vector<Checkpointing> kAllPolicies = {Checkpointing::None,          Checkpointing::Selective,
                                                 Checkpointing::Full,          Checkpointing::Op,
                                                 Checkpointing::EveryK,        Checkpointing::MegatronBlock,
                                                 Checkpointing::TorchtitanLayer};

// The floor is a real bound (never above the estimate), and not an empty one:
// on each grid it proves some layouts cannot fit.
void expectSoundAndUseful(const char* preset, int64_t gpus, int64_t global_batch) {
    const BoundCount c = checkFloor(preset, gpus, global_batch, kAllPolicies);
    EXPECT_GT(c.checked, 100) << preset << ": too small a grid";
    EXPECT_GT(c.past_capacity, 0) << preset << ": the bound proves nothing here";
}

TEST(SearchBound, DenseModelsNeverAboveTheEstimate) {
    expectSoundAndUseful("llama3.1-70b-interleaved-3d", 16, 32);
    expectSoundAndUseful("llama2-7b-fp32-adam", 8, 16);  // fp32, no master weights
    expectSoundAndUseful("gpt2-1.5b-zero-paper", 8, 16);
}

TEST(SearchBound, MoeModelsNeverAboveTheEstimate) {
    expectSoundAndUseful("mixtral-8x7b-tp-ep", 8, 16);
    expectSoundAndUseful("deepseek-v3", 8, 8);  // leading dense blocks: stages differ along the depth
}

TEST(SearchBound, FineTuningNeverAboveTheEstimate) {
    const BoundCount lora = checkFloor("mistral-7b-lora-a100", 4, 8, kAllPolicies);
    EXPECT_GT(lora.checked, 100);
    const BoundCount qlora = checkFloor("llama3.1-8b-qlora-rtx4090", 2, 8, kAllPolicies);
    EXPECT_GT(qlora.checked, 50);
}

// Offloaded optimizer states and parameters (host-resident shards), and the
// optimizer step in backward (no gradient outlives its step).
TEST(SearchBound, OffloadAndStepInBackwardNeverAboveTheEstimate) {
    const BoundCount optimizer = checkFloor("llama3.1-8b-fsdp-8xh100", 8, 16, kAllPolicies,
                                            [](Scenario& s) { s.parallelism.offload_optimizer = true; });
    EXPECT_GT(optimizer.checked, 100);
    const BoundCount parameters = checkFloor("llama3.1-8b-fsdp-8xh100", 8, 16, kAllPolicies, [](Scenario& s) {
        s.parallelism.offload_optimizer = true;
        s.parallelism.offload_parameters = true;
    });
    EXPECT_GT(parameters.checked, 20);
    const BoundCount in_backward = checkFloor("llama3.1-8b-fsdp-8xh100", 8, 16, kAllPolicies,
                                              [](Scenario& s) { s.training.optimizer_in_backward = true; });
    EXPECT_GT(in_backward.checked, 100);
}

}  // namespace
}  // namespace trainmem
