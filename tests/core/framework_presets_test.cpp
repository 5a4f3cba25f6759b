// The presets that describe a stack's own published configuration through
// training.framework (presets/scenarios/, each citing its source).
#include <gtest/gtest.h>

#include "core/account/estimate.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"

namespace trainmem {
namespace {

TEST(FrameworkPresets, EachStackWithACheckedRowHasOne) {
    const std::pair<const char*, Framework> presets[] = {
        {"llama3.1-8b-torchtitan-8xh100", Framework::Torchtitan},
        {"llama3.1-8b-torchtune-full-single", Framework::Torchtune},
        {"llama3-8b-megatron-8xh100", Framework::MegatronLm},
        {"gpt2-1.5b-deepspeed-zero1-8xv100", Framework::Deepspeed},
        {"llama3.1-8b-litgpt-full-4gpu", Framework::Litgpt},
    };
    for (const auto& [name, framework] : presets) {
        const Expected<Scenario> s = loadPreset(name);
        ASSERT_TRUE(s.ok()) << name << ": " << s.error().text();
        EXPECT_EQ(s->training.framework, framework) << name;
        const Expected<Estimate> e = estimate(*s);
        EXPECT_TRUE(e.ok()) << name << ": " << (e ? "" : e.error().text());
    }
}

TEST(FrameworkPresets, DeepSpeedsTutorialModelFitsEightV100sOnlyWithZeroOne) {
    // docs/_tutorials/zero.md: "Training this model without ZeRO fails with
    // an out-of-memory (OOM) error"; with stage 1 it "can now train smoothly".
    Expected<Scenario> s = loadPreset("gpt2-1.5b-deepspeed-zero1-8xv100");
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->model.num_heads, 16);
    EXPECT_TRUE(estimate(*s)->fits);
    ASSERT_TRUE(applySetting(*s, "parallelism.zero_stage=0").ok());
    EXPECT_FALSE(estimate(*s)->fits);
}

TEST(FrameworkPresets, TorchtunesSingleDeviceRecipePagesItsEightBitStates) {
    const Expected<Scenario> s = loadPreset("llama3.1-8b-torchtune-full-single");
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(s->training.optimizer_paged);
    EXPECT_TRUE(s->training.optimizer_in_backward);
    EXPECT_GT(estimate(*s)->peak.managed_bytes, 0);
}

}  // namespace
}  // namespace trainmem
