// The hot path does not allocate: an estimate, the account per layout and a
// whole search (which allocates per search, not per layout).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "core/account/estimate.h"
#include "core/search/layout_search.h"
#include "core/account/step_account.h"
#include "tests/core/layout_search_test_support.h"
#include "tests/core/test_models.h"
#include "core/account/scenario_validate.h"
#include "core/account/layout_account.h"

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
using testing::onGpu;
using testing::reproduce;
using testing::scenarioOf;
using testing::search;

class AllocationCounter {
public:
    AllocationCounter() {
        g_allocations = 0;
        g_counting = true;
    }
    ~AllocationCounter() { g_counting = false; }
    int64_t count() const { return g_allocations.load(); }
};

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

// The solver allocates per search (divisor lists, the kept layouts, the
// step-time model's tables, validating the base once), not per candidate:
// a search of 16x the GPUs visits about three times the layouts and allocates
// about as often.
TEST(EstimateHotPath, SearchAllocatesPerSearchNotPerLayout) {
    Scenario base = onGpu(llama2_7b(), "H100-80GB");
    auto counted = [&](int64_t gpus, int64_t& valid) {
        LayoutSearchOptions o;
        o.gpus = gpus;
        int64_t allocations = 0;
        Expected<LayoutSearchResult> r = Error{};
        {
            AllocationCounter counter;
            r = searchLayouts(base, o);
            allocations = counter.count();
        }
        EXPECT_TRUE(r.ok());
        valid = r.ok() ? r->valid : 0;
        return allocations;
    };
    int64_t small_valid = 0, large_valid = 0;
    const int64_t small = counted(64, small_valid);
    const int64_t large = counted(1024, large_valid);
    EXPECT_GT(small_valid, 10000);
    EXPECT_GT(large_valid, 2 * small_valid);
    EXPECT_LT(small, 400) << "for " << small_valid << " layouts";
    EXPECT_LT(large, 2 * small + 100) << small << " allocations for " << small_valid << " layouts, " << large
                                      << " for " << large_valid;
}

}  // namespace
}  // namespace trainmem
