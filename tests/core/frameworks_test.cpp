// training.framework: a framework's row sets its keys' defaults, explicit
// keys override them whatever order they come in (scenario files and --set),
// and the catalogue has one row per framework name. What each row sets is
// read from the stacks' code (docs/frameworks.md); these tests hold the
// order of application and the marking of overridden keys.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/scenario/frameworks.h"
#include "core/account/fsdp_policy.h"
#include "core/training/names.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"

namespace trainmem {
namespace {

Expected<Scenario> fromTraining(const nlohmann::json& training) {
    return scenarioFromJson({{"format", "trainmem-scenario"}, {"version", 2}, {"model", {{"preset", "llama-2-7b"}}},
                             {"training", training}});
}

TEST(Frameworks, EveryNameHasOneRow) {
    const auto& rows = frameworkCatalogue();
    ASSERT_EQ(rows.size(), enumNames<Framework>().size());
    size_t i = 0;
    for (const auto& entry : enumNames<Framework>()) EXPECT_EQ(rows[i++].id, entry.value) << entry.name;
    EXPECT_EQ(allowedNames<Framework>(), "custom, hf-trainer, torchtitan, torchtune, megatron-lm, deepspeed, litgpt");
}

TEST(Frameworks, CustomSetsNothing) {
    for (Framework f : {Framework::Custom}) {
        TrainingConfig t;
        t.optimizer_impl = OptimizerImpl::ForLoop;
        const TrainingConfig before = t;
        applyFrameworkDefaults(t, f);
        EXPECT_EQ(t, before) << enumName(f);
    }
}

TEST(Frameworks, TheFileKeysOverrideTheFrameworkInAnyOrder) {
    // nlohmann::json keeps object keys sorted: "checkpoint..." and
    // "optimizer_impl" around "framework"; both orders are read the same.
    for (const char* text : {R"({"optimizer_impl": "foreach", "framework": "torchtitan"})",
                             R"({"framework": "torchtitan", "optimizer_impl": "foreach"})"}) {
        const auto s = fromTraining(nlohmann::json::parse(text));
        ASSERT_TRUE(s.ok()) << s.error().text();
        EXPECT_EQ(s->training.framework, Framework::Torchtitan);
        EXPECT_EQ(s->training.optimizer_impl, OptimizerImpl::ForEach) << text;     // explicit
        EXPECT_EQ(s->training.checkpointing, Checkpointing::Op) << text;           // torchtitan's
        EXPECT_EQ(s->training.precision, Precision::AmpBf16) << text;              // torchtitan's
    }
}

TEST(Frameworks, SetAppliesTheFrameworkFirst) {
    auto s = fromTraining(nlohmann::json::object());
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(applySettings(*s, {"training.loss_chunks=4", "training.framework=torchtune"}).ok());
    EXPECT_EQ(s->training.loss, LossImpl::ChunkedOutput);  // torchtune's
    EXPECT_EQ(s->training.loss_chunks, 4);                 // explicit, though given first
    EXPECT_TRUE(s->training.optimizer_in_backward);
}

// A parallelism key a framework sets: how its FSDP / ZeRO-3 wraps the
// model's ends (docs/frameworks.md). The parallelism section is read after
// the training section, and --set applies the framework first, so an
// explicit value wins either way.
TEST(Frameworks, StacksSetHowFsdpWrapsTheModelsEnds) {
    for (auto [framework, ends] : {std::pair{"torchtitan", FsdpEnds::OwnUnitsHeadKept},
                                   std::pair{"deepspeed", FsdpEnds::OwnUnits}, std::pair{"litgpt", FsdpEnds::Root}}) {
        Expected<Scenario> s = fromTraining(nlohmann::json::object());
        ASSERT_TRUE(s.ok());
        s->parallelism.fsdp_ends = ends == FsdpEnds::Root ? FsdpEnds::OwnUnits : FsdpEnds::Root;  // not the stack's
        ASSERT_TRUE(applySetting(*s, std::string("training.framework=") + framework).ok());
        EXPECT_EQ(s->parallelism.fsdp_ends, ends) << framework;
    }
    const Expected<Scenario> file = scenarioFromJson({{"format", "trainmem-scenario"},
                                                      {"version", 2},
                                                      {"model", {{"preset", "llama-2-7b"}}},
                                                      {"parallelism", {{"fsdp_ends", "root"}}},
                                                      {"training", {{"framework", "torchtitan"}}}});
    ASSERT_TRUE(file.ok()) << file.error().text();
    EXPECT_EQ(file->parallelism.fsdp_ends, FsdpEnds::Root);  // explicit, though listed first
    Expected<Scenario> set = fromTraining(nlohmann::json::object());
    ASSERT_TRUE(set.ok());
    ASSERT_TRUE(applySettings(*set, {"parallelism.fsdp_ends=own-units", "training.framework=torchtitan"}).ok());
    EXPECT_EQ(set->parallelism.fsdp_ends, FsdpEnds::OwnUnits);  // explicit, though given first
    // The readout marks it overridden.
    bool marked = false;
    for (const FrameworkValue& v : frameworkValues(*set))
        if (v.key == "parallelism.fsdp_ends") marked = v.overridden && v.value == "own-units-head-kept";
    EXPECT_TRUE(marked);
    // A stack whose FSDP wrapping nobody read leaves it as it was.
    Expected<Scenario> custom = fromTraining(nlohmann::json::object());
    ASSERT_TRUE(custom.ok());
    custom->parallelism.fsdp_ends = FsdpEnds::OwnUnits;
    ASSERT_TRUE(applySetting(*custom, "training.framework=hf-trainer").ok());
    EXPECT_EQ(custom->parallelism.fsdp_ends, FsdpEnds::OwnUnits);
}

TEST(Frameworks, UnknownNameIsRefusedWithTheAllowedNames) {
    auto s = fromTraining(nlohmann::json::object());
    ASSERT_TRUE(s.ok());
    const Status st = applySetting(*s, "training.framework=nemo");
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().field, "training.framework");
    EXPECT_NE(st.error().message.find("torchtitan"), std::string::npos) << st.error().message;
}

TEST(Frameworks, OverriddenKeysAreMarked) {
    const auto s = fromTraining(nlohmann::json::parse(R"({"framework": "torchtitan", "optimizer_impl": "foreach"})"));
    ASSERT_TRUE(s.ok());
    int marked = 0;
    for (const FrameworkValue& v : frameworkValues(*s)) {
        EXPECT_EQ(v.overridden, v.key == "training.optimizer_impl") << v.key;
        if (v.key == "training.optimizer_impl") {
            EXPECT_EQ(v.value, "fused");
        }
        marked += v.overridden;
    }
    EXPECT_EQ(marked, 1);
}

TEST(Frameworks, ScenarioRoundTripsWithAFramework) {
    auto s = fromTraining(nlohmann::json::parse(R"({"framework": "litgpt", "loss": "standard"})"));
    ASSERT_TRUE(s.ok());
    const auto back = scenarioFromJson(scenarioToJson(*s));
    ASSERT_TRUE(back.ok()) << back.error().text();
    EXPECT_EQ(*back, *s);
    EXPECT_EQ(back->training.loss, LossImpl::Standard);
}

}  // namespace
}  // namespace trainmem
