// Paged optimizer states live in CUDA managed memory: on the device, outside
// PyTorch's allocator. The breakdown must show them as their own layer, not
// fold them into "CUDA context + NCCL" (device - reserved).
#include <algorithm>

#include <gtest/gtest.h>

#include "ui/chart_views.h"
#include "ui/component_palette.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

const ChartLayer* layerKeyed(const ChartSpec& spec, const QString& key) {
    const auto it = std::find_if(spec.layers.begin(), spec.layers.end(), [&](const ChartLayer& l) { return l.key == key; });
    return it == spec.layers.end() ? nullptr : &*it;
}

TEST(PagedStatesChart, ManagedMemoryIsItsOwnLayerBesideTheContext) {
    // torchtune's single-device recipe steps bitsandbytes' PagedAdamW8bit.
    const Scenario s = presetScenario("llama3.1-8b-torchtune-full-single");
    ASSERT_TRUE(s.training.optimizer_paged);
    Expected<Estimate> e = estimate(s);
    ASSERT_TRUE(e.ok());
    ASSERT_GT(e->peak.managed_bytes, 0);
    const ChartSpec spec = breakdownChart(s, *e, Units::GiB);
    const double gib = 1024.0 * 1024.0 * 1024.0;
    const ChartLayer* paged = layerKeyed(spec, deviceLayerKey(DeviceLayer::PagedStates));
    const ChartLayer* outside = layerKeyed(spec, deviceLayerKey(DeviceLayer::OutsideAllocator));
    ASSERT_NE(paged, nullptr);
    ASSERT_NE(outside, nullptr);
    EXPECT_DOUBLE_EQ(paged->values.value(0), e->peak.managed_bytes / gib);
    // What is left outside the allocator is the context and NCCL alone: the
    // scenario's own overheads (one process, no data parallelism: no group).
    EXPECT_DOUBLE_EQ(outside->values.value(0), s.hardware.overheads.cuda_context_bytes / gib);
    // The stack still reaches the device total.
    double sum = 0;
    for (const ChartLayer& l : spec.layers) sum += l.values.value(0);
    EXPECT_NEAR(sum, e->peak.device_bytes / gib, 1e-9);
}

TEST(PagedStatesChart, NoPagedLayerWithoutPagedStates) {
    const Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    Expected<Estimate> e = estimate(s);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(layerKeyed(breakdownChart(s, *e, Units::GiB), deviceLayerKey(DeviceLayer::PagedStates)), nullptr);
}

}  // namespace
}  // namespace trainmem::ui
