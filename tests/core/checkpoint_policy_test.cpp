// Op-level selective checkpointing (training.activation_checkpointing = op,
// training.checkpoint_save_ops): what the scenario accepts and refuses. How
// many bytes it keeps is held to PyTorch's profiler by the whole-step truth
// (step_truth_test.cpp, the "-op-" cases of validation/step_cases.json).
#include <gtest/gtest.h>

#include "core/account/estimate.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"
#include "core/account/scenario_validate.h"

namespace trainmem {
namespace {

Scenario llama2() {
    auto s = loadPreset("llama-2-7b");
    EXPECT_TRUE(s.ok()) << s.error().text();
    return *s;
}

// A setting is read by applySetting, the whole scenario checked by validate.
Error refused(Scenario s, std::string_view setting) {
    Status st = applySetting(s, setting);
    if (st.ok()) st = validate(s);
    EXPECT_FALSE(st.ok()) << setting << " was accepted";
    return st.ok() ? Error{} : st.error();
}

TEST(OpCheckpointing, UnknownOpIsRefusedWithTheAllowedNames) {
    const Error e = refused(llama2(), "training.checkpoint_save_ops=mm,softmax");
    EXPECT_EQ(e.field, "training.checkpoint_save_ops");
    EXPECT_NE(e.message.find("\"softmax\""), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("allowed: mm, mm-every-second, attention, reduce_scatter, max"), std::string::npos)
        << e.message;
}

TEST(OpCheckpointing, BothMatmulRulesAreRefused) {
    const Error e = refused(llama2(), "training.checkpoint_save_ops=mm,mm-every-second");
    EXPECT_EQ(e.field, "training.checkpoint_save_ops");
}

TEST(OpCheckpointing, ConfigurationsOutsideTheAccountAreRefused) {
    Scenario s = llama2();
    ASSERT_TRUE(applySetting(s, "training.activation_checkpointing=op").ok());
    for (const char* setting : {"training.kernels=fused", "training.finetuning=lora", "training.precision=fp8-mixed"}) {
        const Error e = refused(s, setting);
        EXPECT_EQ(e.field, "training.activation_checkpointing") << setting;
        EXPECT_NE(e.message.find("op-level"), std::string::npos) << e.message;
    }
}

// The default list is torchtitan's (every second matmul, the attention
// kernel): it keeps more than an empty list and less than every matmul; an
// empty list keeps only the block input, as full recomputation does, which
// the CPU truth measured within 0.3% of each other (3602448 B and 3612560 B,
// llama s = 128, validation/step_truth_policies.py).
TEST(OpCheckpointing, SaveListsOrderTheActivationsKept) {
    // Sixteen sequences per micro-batch: the peak is in backward.
    auto peak = [](const char* list) {
        Scenario s = llama2();
        EXPECT_TRUE(applySetting(s, "training.micro_batch_size=16").ok());
        EXPECT_TRUE(applySetting(s, "training.activation_checkpointing=op").ok());
        EXPECT_TRUE(applySetting(s, std::string("training.checkpoint_save_ops=") + list).ok()) << list;
        const Expected<Estimate> e = estimate(s);
        EXPECT_TRUE(e.ok());
        return e.ok() ? e->peak.exact_allocated_bytes : 0;
    };
    Scenario full = llama2();
    ASSERT_TRUE(applySetting(full, "training.micro_batch_size=16").ok());
    ASSERT_TRUE(applySetting(full, "training.activation_checkpointing=full").ok());
    const int64_t full_peak = estimate(full)->peak.exact_allocated_bytes;
    const int64_t none = peak("");
    const int64_t titan = peak("mm-every-second,attention,reduce_scatter,max");
    const int64_t every_mm = peak("mm,attention");
    EXPECT_LT(none, titan);
    EXPECT_LT(titan, every_mm);
    EXPECT_NEAR(static_cast<double>(none), static_cast<double>(full_peak), 0.01 * static_cast<double>(full_peak));
}

}  // namespace
}  // namespace trainmem
