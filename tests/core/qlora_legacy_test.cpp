// training.qlora_backend = bnb-legacy against the CPU truth of
// validation/qlora_legacy_truth.py: the same LoRA step measured twice, with
// the blocks' frozen Linears keeping nothing of their input (bitsandbytes'
// newer MatMul4Bit, `ctx.tensors = (None, B)`) and keeping it (the older,
// `ctx.tensors = (A, B)`). The difference of the two measured peaks is what
// the older backend adds at the step's peak; trainmem's is the estimate
// with bnb-legacy less the same scenario with bnb. Held for every
// checkpointing policy bnb-legacy is accepted with.
// TRAINMEM_QLORA_LEGACY_TRUTH names another file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "core/account/estimate.h"
#include "core/scenario/scenario.h"
#include "tests/core/truth_file.h"
#include "core/scenario/scenario_file.h"

namespace trainmem {
namespace {

using nlohmann::json;

const json& truth() {
    static const json doc = readTruthFile(truthFilePath(
        "TRAINMEM_QLORA_LEGACY_TRUTH", std::string(TRAINMEM_VALIDATION_DIR) + "/step_truth/qlora_legacy.json"));
    return doc;
}

// The estimate's exact peak: of the whole step, or of forward and loss only.
int64_t exactPeak(const Scenario& s, bool forward_only) {
    const Expected<Estimate> e = estimate(s);
    EXPECT_TRUE(e.ok()) << s.name << ": " << e.error().text();
    if (!e.ok()) return 0;
    if (!forward_only) return e->peak.exact_allocated_bytes;
    auto at = [&](Phase p) { return e->peak.exact_phase_bytes[static_cast<size_t>(p)]; };
    return std::max(at(Phase::Forward), at(Phase::Loss));
}

// The CPU's flash-attention stand-in recomputes the s^2 scores in its
// backward, which no flash kernel does (step_truth_test.cpp): a run whose
// peak is there is compared over its forward (which includes the loss).
bool peaksInFlashStandIn(const json& measured) {
    for (const json& op : measured.at("peak_ops"))
        if (op.get<std::string>().find("FlashAttentionBackward") != std::string::npos) return true;
    return false;
}

int64_t measuredPeak(const json& measured, bool forward_only) {
    return forward_only ? measured.at("phase_peak_bytes").at("forward").get<int64_t>()
                        : measured.at("peak_bytes").get<int64_t>();
}

TEST(QloraLegacyTruth, CoversEveryAcceptedCheckpointingPolicy) {
    std::set<std::string> policies;
    for (const json& c : truth().at("cases"))
        policies.insert(c.at("scenario").at("training").at("activation_checkpointing").get<std::string>());
    EXPECT_EQ(policies, (std::set<std::string>{"none", "selective", "full", "every-k", "torchtitan-layer",
                                               "megatron-block", "megatron-uniform"}));
}

TEST(QloraLegacyTruth, WhatTheOlderBackendAddsAtThePeakIsMeasured) {
    const json& doc = truth();
    ASSERT_TRUE(doc.is_object() && doc.contains("cases"));
    for (const json& c : doc.at("cases")) {
        const std::string name = c.at("scenario").at("name").get<std::string>();
        Expected<Scenario> legacy = scenarioFromJson(c.at("scenario"));
        ASSERT_TRUE(legacy.ok()) << name << ": " << legacy.error().text();
        ASSERT_EQ(legacy->training.qlora_backend, QloraBackend::BnbLegacy) << name;
        Scenario bnb = *legacy;
        bnb.training.qlora_backend = QloraBackend::Bnb;
        const json& m = c.at("measured");
        const bool forward_only = peaksInFlashStandIn(m.at("legacy")) || peaksInFlashStandIn(m.at("bnb"));
        const int64_t estimated = exactPeak(*legacy, forward_only) - exactPeak(bnb, forward_only);
        const int64_t measured = measuredPeak(m.at("legacy"), forward_only) - measuredPeak(m.at("bnb"), forward_only);
        // Within 2% of the step's measured peak, as the whole-step truth.
        const double tolerance = 0.02 * m.at("legacy").at("peak_bytes").get<double>();
        EXPECT_LE(std::abs(static_cast<double>(estimated - measured)), tolerance)
            << name << ": bnb-legacy adds " << estimated << " B estimated, " << measured << " B measured";
        std::printf("%-44s estimated +%lld B, measured +%lld B%s\n", name.c_str(), static_cast<long long>(estimated),
                    static_cast<long long>(measured), forward_only ? " (forward)" : "");
    }
}

}  // namespace
}  // namespace trainmem
