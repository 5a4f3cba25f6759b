// estimate() on the heaviest configuration we ship: Llama-3.1-405B on 1,024
// GPUs (TP 8 x PP 16 x DP 8, 1F1B; its 126 layers do not split into 16 x v
// interleaved chunks, see presets/scenarios/llama3.1-405b-3d.json). The layout solver calls this
// ~10^5 times per search, so it must stay in the microseconds.
#include <benchmark/benchmark.h>

#include "core/estimate.h"
#include "tests/core/test_models.h"

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

}  // namespace
