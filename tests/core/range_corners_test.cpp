// 64-bit overflow (issue 15, D04): values inside the documented ranges must
// give a true estimate or "too large to represent", never a negative byte
// count or a "fits" on a wrapped total. The corner sweep walks every numeric
// key of the scenario format to the largest value validate() accepts, alone
// and all at once, on presets of every shape; CI runs it under UBSan, which
// also catches an overflow that happens to wrap to a plausible number.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "core/base/byte_count.h"
#include "core/account/estimate.h"
#include "core/account/scenario_validate.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_fields.h"
#include "core/scenario/scenario_file.h"
#include "core/account/scenario_validate.h"

namespace trainmem {
namespace {

bool isTooLarge(const Error& e) { return e.message.find("too large to represent") != std::string::npos; }

// The invariants every estimate keeps (also the fuzzer's, tests/fuzz).
void expectSound(const Scenario& s, const std::string& what) {
    SCOPED_TRACE(what);
    const Estimate raw = estimateValidated(s);
    if (raw.too_large) {
        EXPECT_FALSE(raw.fits);
    }
    auto est = estimate(s);
    auto stages = estimateStages(s);
    if (!est) {
        EXPECT_TRUE(isTooLarge(est.error())) << est.error().text();
        EXPECT_TRUE(raw.too_large);
        return;
    }
    EXPECT_FALSE(raw.too_large);
    const StageEstimate& p = est->peak;
    int64_t sum = 0;
    for (int64_t b : p.at_peak.bytes) {
        EXPECT_GE(b, 0);
        sum += b;
    }
    EXPECT_EQ(sum, p.allocated_bytes);
    EXPECT_LE(p.allocated_bytes, p.reserved_bytes);
    EXPECT_LE(p.reserved_bytes, p.device_bytes);
    EXPECT_LT(p.device_bytes, kTooLargeBytes);
    EXPECT_GE(est->host_bytes, 0);
    EXPECT_EQ(est->fits, est->headroom_bytes >= 0);
    EXPECT_EQ(est->headroom_bytes, est->capacity_bytes - p.device_bytes);
    ASSERT_TRUE(stages.ok()) << stages.error().text();
    for (const StageEstimate& st : *stages) {
        EXPECT_GE(st.allocated_bytes, 0);
        EXPECT_LE(st.allocated_bytes, p.allocated_bytes);
        EXPECT_LE(st.reserved_bytes, st.device_bytes);
    }
}

Scenario preset(const std::string& name) {
    auto s = loadPreset(name);
    EXPECT_TRUE(s.ok()) << name;
    return s.ok() ? *s : Scenario{};
}

TEST(Overflow, HugeOverheadsAreTooLargeNotNegative) {
    Scenario s = preset("mixtral-8x7b");
    ASSERT_TRUE(applySettings(s, {"hardware.cuda_context_mib=4398046511104",
                                  "hardware.cublas_workspace_mib=4398046511104"})
                    .ok());
    auto est = estimate(s);
    ASSERT_FALSE(est.ok()) << "device " << est->peak.device_bytes << " fits " << est->fits;
    EXPECT_TRUE(isTooLarge(est.error())) << est.error().text();
    EXPECT_FALSE(estimateValidated(s).fits);
}

TEST(Overflow, EagerAttentionOnA16MTokenSequenceIsTooLarge) {
    for (const char* model : {"mixtral-8x22b", "llama-3.1-405b", "llama-3.1-8b"}) {
        Scenario s = preset(model);
        ASSERT_TRUE(applySettings(s, {"training.attention=eager", "training.sequence_length=16777216",
                                      "training.micro_batch_size=2"})
                        .ok())
            << model;
        auto est = estimate(s);
        if (est) {
            // Below the limit the figure is real: positive and ordered.
            EXPECT_GT(est->peak.at_peak[Component::Activations], 0) << model;
            EXPECT_LE(est->peak.reserved_bytes, est->peak.device_bytes) << model;
        } else {
            EXPECT_TRUE(isTooLarge(est.error())) << model << ": " << est.error().text();
        }
        expectSound(s, model);
    }
}

TEST(Overflow, SaturatedRoundingNeverWraps) {
    EXPECT_EQ(saturatedBytes(1e19), kTooLargeBytes);
    EXPECT_EQ(saturatedBytes(9.3e18), kTooLargeBytes);  // llround gives INT64_MIN here
    EXPECT_EQ(saturatedBytes(std::nan("")), kTooLargeBytes);
    EXPECT_EQ(saturatedBytes(std::numeric_limits<double>::infinity()), kTooLargeBytes);
    EXPECT_EQ(saturatedBytes(1234.4), 1234);
    EXPECT_EQ(addBytes(kTooLargeBytes - 1, kTooLargeBytes - 1), kTooLargeBytes);
    EXPECT_EQ(addBytes(3, 4), 7);
}

// The largest value of `field` that validate() accepts with the rest of `s`
// as it is (bisection; the accepted set need not be an interval, so this is
// one boundary, which is what a corner is).
std::optional<std::string> largestAccepted(const Scenario& s, const ScenarioField& field) {
    auto accepted = [&](const std::string& text) {
        Scenario t = s;
        return applySetting(t, field.path(), text).ok() && validate(t).ok();
    };
    if (field.kind == ValueKind::Integer) {
        int64_t lo = 0, hi = std::numeric_limits<int64_t>::max();
        if (accepted(std::to_string(hi))) return std::to_string(hi);
        if (!accepted(std::to_string(lo))) {
            lo = 1;
            if (!accepted("1")) return std::nullopt;
        }
        while (hi - lo > 1) {
            const int64_t mid = lo + (hi - lo) / 2;
            (accepted(std::to_string(mid)) ? lo : hi) = mid;
        }
        return std::to_string(lo);
    }
    // Number: bisect on the exponent, then the mantissa.
    auto text = [](double v) {
        char buffer[64];
        std::snprintf(buffer, sizeof buffer, "%.17g", v);
        return std::string(buffer);
    };
    double lo = 0, hi = 1e300;
    if (accepted(text(hi))) return text(hi);
    if (!accepted(text(lo))) {
        lo = 1e-9;
        if (!accepted(text(lo))) return std::nullopt;
    }
    for (int i = 0; i < 200 && hi - lo > lo * 1e-12; ++i) {
        const double mid = hi / lo > 4 ? std::sqrt(lo * hi) : (lo + hi) / 2;
        (accepted(text(mid)) ? lo : hi) = mid;
    }
    return text(lo);
}

TEST(RangeCorners, EveryNumericKeyAtItsLargestAcceptedValue) {
    for (const char* name : {"gpt2", "llama-3.1-405b", "mixtral-8x7b-tp-ep", "llama3.1-70b-interleaved-3d",
                             "llama3.1-8b-qlora-rtx4090", "gpt2-1.5b-zero-paper"}) {
        const Scenario base = preset(name);
        Scenario all_at_max = base;
        int corners = 0;
        for (const ScenarioField& field : scenarioFields()) {
            if (field.kind != ValueKind::Integer && field.kind != ValueKind::Number) continue;
            const auto corner = largestAccepted(base, field);
            if (!corner) continue;
            Scenario s = base;
            ASSERT_TRUE(applySetting(s, field.path(), *corner).ok());
            expectSound(s, std::string(name) + " " + field.path() + "=" + *corner);
            ++corners;
            // Cumulatively too: each key at its largest with the others already there.
            if (auto grown = largestAccepted(all_at_max, field)) {
                Scenario t = all_at_max;
                if (applySetting(t, field.path(), *grown).ok() && validate(t).ok()) all_at_max = t;
            }
            expectSound(all_at_max, std::string(name) + " all keys up to " + field.path());
        }
        EXPECT_GE(corners, 15) << name;  // the sweep must not silently test nothing
    }
}

}  // namespace
}  // namespace trainmem
