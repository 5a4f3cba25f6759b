// estimate() on the heaviest configuration we ship: Llama-3.1-405B on 1,024
// GPUs (TP 8 x PP 16 x DP 8, 1F1B; its 126 layers do not split into 16 x v
// interleaved chunks, see presets/scenarios/llama3.1-405b-3d.json). The layout solver calls this
// ~10^5 times per search, so it must stay in the microseconds.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "core/account/estimate.h"
#include "core/scenario/presets.h"
#include "core/account/step_account.h"
#include "tests/core/test_models.h"
#include "core/account/layout_account.h"

namespace {

trainmem::Scenario llama405b3d() {
    trainmem::Scenario s = trainmem::testing::scenarioOf(trainmem::testing::llama31_405b());
    s.training.sequence_length = 8192;
    s.training.checkpointing = trainmem::Checkpointing::Full;
    s.training.gradient_accumulation_steps = 32;
    s.parallelism.tensor = 8;
    s.parallelism.sequence_parallel = true;
    s.parallelism.pipeline = 16;
    s.parallelism.data = 8;
    s.parallelism.zero_stage = 1;
    s.parallelism.schedule = trainmem::PipelineSchedule::OneFOneB;
    s.parallelism.microbatches = 32;
    return s;
}

void BM_Estimate405B_TP8_PP16_DP8(benchmark::State& state) {
    const trainmem::Scenario s = llama405b3d();
    if (!trainmem::estimate(s)) {
        state.SkipWithError("the benchmark scenario does not validate");
        return;
    }
    for (auto _ : state) {
        auto e = trainmem::estimate(s);
        benchmark::DoNotOptimize(e);
    }
}
BENCHMARK(BM_Estimate405B_TP8_PP16_DP8);

void BM_EstimateValidated405B(benchmark::State& state) {
    const trainmem::Scenario s = llama405b3d();
    for (auto _ : state) {
        auto e = trainmem::estimateValidated(s);
        benchmark::DoNotOptimize(e);
    }
}
BENCHMARK(BM_EstimateValidated405B);

// Prepare once, account per layout (issue 14): what a search pays per
// layout once its loops have the facts, activations and stages at hand.
void BM_AccountLayout405B(benchmark::State& state) {
    const trainmem::Scenario s = llama405b3d();
    const trainmem::PreparedScenario prepared = trainmem::prepareScenario(s);
    const trainmem::LayoutActivations activations = trainmem::layoutActivations(s);
    trainmem::StagePlan stages;
    trainmem::planStages(s, prepared, stages);
    for (auto _ : state) {
        auto e = trainmem::accountLayout(s, prepared, activations, stages);
        benchmark::DoNotOptimize(e);
    }
}
BENCHMARK(BM_AccountLayout405B);

// The same when every layout comes with another schedule or micro-batch
// count, so the plan is scheduled again before each account (the search
// schedules once per (plan, schedule, micro-batches); this is its worst
// case): 32 and 64 micro-batches in turn.
void BM_AccountLayout405B_Rescheduled(benchmark::State& state) {
    trainmem::Scenario s[2] = {llama405b3d(), llama405b3d()};
    s[1].training.gradient_accumulation_steps = s[1].parallelism.microbatches = 64;
    const trainmem::PreparedScenario prepared = trainmem::prepareScenario(s[0]);
    const trainmem::LayoutActivations activations = trainmem::layoutActivations(s[0]);
    trainmem::StagePlan stages;
    trainmem::planStages(s[0], prepared, stages);
    int next = 1;
    for (auto _ : state) {
        trainmem::scheduleStagePlan(s[next], prepared, stages);
        auto e = trainmem::accountLayout(s[next], prepared, activations, stages);
        benchmark::DoNotOptimize(e);
        next = 1 - next;
    }
}
BENCHMARK(BM_AccountLayout405B_Rescheduled);

// Prepared once, everything else per call (the app's path after an edit
// that leaves the model and recipe alone).
void BM_EstimatePrepared405B(benchmark::State& state) {
    const trainmem::Scenario s = llama405b3d();
    const trainmem::PreparedScenario prepared = trainmem::prepareScenario(s);
    for (auto _ : state) {
        auto e = trainmem::estimatePrepared(s, prepared);
        benchmark::DoNotOptimize(e);
    }
}
BENCHMARK(BM_EstimatePrepared405B);

// DeepSeek-V3 (61 layers, the first 3 with a dense MLP, 256 routed experts):
// a model whose blocks differ along the depth, on one stage and on 61.
trainmem::Scenario deepSeekV3(int64_t pipeline) {
    trainmem::Expected<trainmem::Scenario> s = trainmem::loadPreset("deepseek-v3");
    if (!s) std::abort();
    s->training.sequence_length = 4096;
    s->training.checkpointing = trainmem::Checkpointing::Full;
    s->training.gradient_accumulation_steps = 64;
    s->parallelism.tensor = 1;
    s->parallelism.pipeline = pipeline;
    s->parallelism.expert = 64;
    s->parallelism.data = 64;
    s->parallelism.gpus = 64 * pipeline;
    s->parallelism.zero_stage = 1;
    s->parallelism.schedule = trainmem::PipelineSchedule::OneFOneB;
    s->parallelism.microbatches = pipeline > 1 ? 64 : 0;
    return *s;
}

void BM_EstimateValidatedDeepSeekV3(benchmark::State& state) {
    const trainmem::Scenario s = deepSeekV3(state.range(0));
    if (!trainmem::estimate(s)) {
        state.SkipWithError("the benchmark scenario does not validate");
        return;
    }
    for (auto _ : state) {
        auto e = trainmem::estimateValidated(s);
        benchmark::DoNotOptimize(e);
    }
}
BENCHMARK(BM_EstimateValidatedDeepSeekV3)->Arg(1)->Arg(61);

}  // namespace
