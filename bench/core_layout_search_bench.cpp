// The layout solver on the largest case we ship: Llama-3.1-405B, 8,192-token
// sequences, on 1,024 H100-80GB. The goal (docs/performance.md) is a whole
// search of >= 100,000 layouts in under a second on one core.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "core/scenario/batch.h"
#include "core/search/layout_search.h"
#include "core/scenario/presets.h"
#include "tests/core/test_models.h"

namespace {

trainmem::Scenario llama405b() {
    trainmem::Scenario s = trainmem::testing::scenarioOf(trainmem::testing::llama31_405b());
    s.training.sequence_length = 8192;
    s.hardware.gpu = "H100-80GB";
    return s;
}

void report(benchmark::State& state, const trainmem::LayoutSearchResult& r) {
    state.counters["enumerated"] = static_cast<double>(r.enumerated);
    state.counters["valid"] = static_cast<double>(r.valid);
    state.counters["estimated"] = static_cast<double>(r.valid - r.redundant);
    state.counters["accounted"] = static_cast<double>(r.valid - r.redundant - r.skipped);
    state.counters["fitting"] = static_cast<double>(r.fitting);
    // Of the estimated ones, those whose account the bound made unnecessary.
    state.counters["skipped"] = static_cast<double>(r.skipped);
    // Time per estimated layout (one estimateValidated call each), the
    // enumeration and ranking included.
    state.counters["per_estimate"] = benchmark::Counter(static_cast<double>(r.valid - r.redundant),
                                                        benchmark::Counter::kIsIterationInvariantRate |
                                                            benchmark::Counter::kInvert);
}

// The timed loop every search benchmark shares: one whole search per
// iteration, the last one's counts reported.
void runSearch(benchmark::State& state, const trainmem::Scenario& base, const trainmem::LayoutSearchOptions& options) {
    trainmem::LayoutSearchResult last;
    for (auto _ : state) {
        auto r = trainmem::searchLayouts(base, options);
        benchmark::DoNotOptimize(r);
        if (!r) {
            state.SkipWithError(r.error().message.c_str());
            return;
        }
        last = std::move(*r);
    }
    report(state, last);
}

// No global batch: every micro-batch 1..64 with the base's accumulation.
void BM_SearchLayouts405B_1024Gpus(benchmark::State& state) {
    const trainmem::Scenario base = llama405b();
    trainmem::LayoutSearchOptions options;
    options.gpus = 1024;
    runSearch(state, base, options);
}
BENCHMARK(BM_SearchLayouts405B_1024Gpus)->Unit(benchmark::kMillisecond);

// Llama 3's own batch: 16M tokens = 2,048 sequences of 8,192 tokens
// (Dubey et al. 2024, Table 4 and §3.4.1).
void BM_SearchLayouts405B_1024Gpus_GlobalBatch2048(benchmark::State& state) {
    const trainmem::Scenario base = llama405b();
    trainmem::LayoutSearchOptions options;
    options.gpus = 1024;
    options.global_batch = 2048;
    runSearch(state, base, options);
}
BENCHMARK(BM_SearchLayouts405B_1024Gpus_GlobalBatch2048)->Unit(benchmark::kMillisecond);

// Cost against cluster size: every layout, ZeRO stage, schedule, micro-batch
// (1..64) and recomputation policy, no global batch (the base's one
// micro-batch per step). 100,000 = 2^5 x 5^5 GPUs has 36 divisors.
void BM_SearchLayouts405B_Gpus(benchmark::State& state) {
    const trainmem::Scenario base = llama405b();
    trainmem::LayoutSearchOptions options;
    options.gpus = state.range(0);
    runSearch(state, base, options);
}
BENCHMARK(BM_SearchLayouts405B_Gpus)
    ->Unit(benchmark::kMillisecond)
    ->Arg(64)->Arg(256)->Arg(1024)->Arg(4096)->Arg(16384)->Arg(65536)->Arg(100000);

// A model whose blocks differ along the depth (DeepSeek-V3: 3 dense blocks,
// then 58 MoE blocks, 256 routed experts: 9 expert-parallel degrees) on
// 100,000 GPUs, 4,096-token sequences.
void BM_SearchLayoutsDeepSeekV3_100000Gpus(benchmark::State& state) {
    trainmem::Expected<trainmem::Scenario> base = trainmem::loadPreset("deepseek-v3");
    if (!base) std::abort();
    base->training.sequence_length = 4096;
    base->hardware.gpu = "H100-80GB";
    trainmem::LayoutSearchOptions options;
    options.gpus = 100000;
    runSearch(state, *base, options);
}
BENCHMARK(BM_SearchLayoutsDeepSeekV3_100000Gpus)->Unit(benchmark::kMillisecond);

// What Find a Layout runs after every edit of a scenario preset: its own
// GPU count and GPU, its own global batch (the panel's default).
void BM_SearchScenarioPreset(benchmark::State& state, const char* name) {
    trainmem::Expected<trainmem::Scenario> base = trainmem::loadPreset(name);
    if (!base) std::abort();
    trainmem::LayoutSearchOptions options;
    options.gpus = base->parallelism.totalGpus();
    options.global_batch = trainmem::planBatch(*base).effective_batch;
    runSearch(state, *base, options);
}
BENCHMARK_CAPTURE(BM_SearchScenarioPreset, gpt2_zero, "gpt2-1.5b-zero-paper")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SearchScenarioPreset, llama2_7b_fp32, "llama2-7b-fp32-adam")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SearchScenarioPreset, llama405b_3d, "llama3.1-405b-3d")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SearchScenarioPreset, llama70b_interleaved, "llama3.1-70b-interleaved-3d")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SearchScenarioPreset, llama70b_cp, "llama3.1-70b-long-context-cp")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SearchScenarioPreset, llama8b_fsdp, "llama3.1-8b-fsdp-8xh100")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SearchScenarioPreset, llama8b_qlora, "llama3.1-8b-qlora-rtx4090")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SearchScenarioPreset, mistral7b_lora, "mistral-7b-lora-a100")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SearchScenarioPreset, mixtral_tp_ep, "mixtral-8x7b-tp-ep")->Unit(benchmark::kMillisecond);

void BM_LargestMicroBatch405B(benchmark::State& state) {
    trainmem::Scenario s = llama405b();
    s.parallelism.tensor = 8;
    s.parallelism.sequence_parallel = true;
    s.parallelism.pipeline = 16;
    s.parallelism.data = 8;
    s.parallelism.zero_stage = 1;
    s.training.checkpointing = trainmem::Checkpointing::Full;
    s.training.gradient_accumulation_steps = 16;
    s.parallelism.microbatches = 16;
    int64_t largest = 0;
    for (auto _ : state) {
        auto m = trainmem::largestMicroBatch(s);
        benchmark::DoNotOptimize(m);
        largest = m.ok() ? *m : -1;
    }
    state.counters["largest"] = static_cast<double>(largest);
}
BENCHMARK(BM_LargestMicroBatch405B)->Unit(benchmark::kMicrosecond);

}  // namespace
