// The optimizer catalogue: one row per OptimizerKind, read by names, the
// report, validation and the ui; which implementations exist is enforced.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/training/names.h"
#include "core/training/optimizer_state.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"
#include "core/account/scenario_validate.h"

namespace trainmem {
namespace {

TEST(OptimizerCatalogue, EveryKindHasOneRowWithItsScenarioName) {
    std::set<std::string_view> keys;
    for (const OptimizerSpec& o : optimizerCatalogue()) {
        SCOPED_TRACE(std::string(o.key));
        EXPECT_EQ(&optimizerSpec(o.kind), &o);
        EXPECT_EQ(optimizerName(o.kind), o.key);
        EXPECT_EQ(parseOptimizer(o.key), o.kind);
        EXPECT_FALSE(o.label.empty());
        EXPECT_FALSE(o.source.empty());
        EXPECT_TRUE(o.has_foreach || o.has_fused || o.has_for_loop);
        keys.insert(o.key);
    }
    EXPECT_EQ(keys.size(), optimizerCatalogue().size());
    EXPECT_EQ(allOptimizers().size(), optimizerCatalogue().size());
}

// PyTorch has no fused Lion (it is not in torch.optim; lion-pytorch has
// foreach and per-tensor forms): the CLI refused nothing and estimated it
// while validation/harness_plan.py refuses it.
TEST(OptimizerCatalogue, LionHasNoFusedImplementation) {
    auto s = loadPreset("llama-3.2-1b");
    ASSERT_TRUE(s.ok()) << s.error().text();
    ASSERT_TRUE(applySetting(*s, "training.optimizer=lion").ok());
    ASSERT_TRUE(applySetting(*s, "training.optimizer_impl=fused").ok());
    const Status v = validate(*s);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.error().field, "training.optimizer_impl");
    EXPECT_NE(v.error().message.find("lion has no fused implementation"), std::string::npos) << v.error().message;
    ASSERT_TRUE(applySetting(*s, "training.optimizer_impl=foreach").ok());
    EXPECT_TRUE(validate(*s).ok());
    ASSERT_TRUE(applySetting(*s, "training.optimizer=adamw").ok());
    ASSERT_TRUE(applySetting(*s, "training.optimizer_impl=fused").ok());
    EXPECT_TRUE(validate(*s).ok());
}

}  // namespace
}  // namespace trainmem
