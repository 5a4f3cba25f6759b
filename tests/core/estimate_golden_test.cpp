// The estimate, byte for byte, against figures captured from the code as it
// was before the prepare / account split (issue 14): every preset of
// presets/, each on a grid of layouts and recipes that reaches every branch
// of the account (pipeline schedules, ZeRO stages, recomputation policies,
// context and expert parallelism, offload, the optimizer step in backward,
// stages that differ along the depth). tests/data/estimate_golden.txt is
// that capture; it is never recomputed by the code under test.
//
// A change that is meant to move figures regenerates it, in the same commit:
//   TRAINMEM_WRITE_GOLDEN=tests/data/estimate_golden.txt build/tests/trainmem_core_tests --gtest_filter='EstimateGolden.*'
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/account/estimate.h"
#include "core/search/layout_search.h"
#include "core/scenario/presets.h"

namespace trainmem {
namespace {

std::string num(double x) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
}

std::string stageLine(const StageEstimate& s) {
    std::ostringstream o;
    o << " stage " << s.stage << ' ' << s.first_layer << ' ' << s.num_layers << ' ' << num(s.in_flight_microbatches)
      << " ms " << s.model_states.weights << ' ' << s.model_states.gradients << ' ' << s.model_states.optimizer_states
      << ' ' << s.model_states.master_weights << " phase " << static_cast<int>(s.peak_phase) << " at";
    for (int64_t b : s.at_peak.bytes) o << ' ' << b;
    o << " alloc " << s.allocated_bytes << " exact " << s.exact_allocated_bytes << " phases";
    for (int64_t b : s.exact_phase_bytes) o << ' ' << b;
    o << " reserved " << s.reserved_bytes << " device " << s.device_bytes << " too_large " << s.too_large;
    return o.str();
}

std::string estimateLine(const Estimate& e) {
    const ParameterCount& p = e.parameters;
    std::ostringstream o;
    o << "params " << p.embedding << ' ' << p.attention << ' ' << p.mlp << ' ' << p.routed_experts << ' '
      << p.shared_experts << ' ' << p.router << ' ' << p.norms << ' ' << p.lm_head << ' ' << p.lora << ' ' << p.total
      << ' ' << p.trainable << ' ' << p.active << " stages " << e.num_stages << " gpus " << e.total_gpus << " batch "
      << e.effective_batch << " host " << e.host_bytes << " capacity " << e.capacity_bytes << " fits " << e.fits
      << " too_large " << e.too_large << " headroom " << e.headroom_bytes << " no_recompute "
      << e.activations_without_recompute << " recompute " << num(e.recompute_fraction) << " warnings " << e.warnings
      << " peak" << stageLine(e.peak);
    return o.str();
}

// One variant of a preset: a name and an edit of the scenario.
struct Variant {
    const char* name;
    std::function<void(Scenario&)> edit;
};

Layout layoutOf(int64_t d, int64_t t, int64_t p, int64_t c, int64_t zero, int64_t micro, int64_t m, Checkpointing ck) {
    Layout l;
    l.data = d;
    l.tensor = t;
    l.pipeline = p;
    l.context = c;
    l.zero_stage = zero;
    l.micro_batch_size = micro;
    l.microbatches = m;
    l.checkpointing = ck;
    return l;
}

std::vector<Variant> variants() {
    using C = Checkpointing;
    std::vector<Variant> v;
    v.push_back({"as-is", [](Scenario&) {}});
    for (int64_t zero = 0; zero <= 3; ++zero)
        v.push_back({zero == 0 ? "dp8-zero0" : zero == 1 ? "dp8-zero1" : zero == 2 ? "dp8-zero2" : "dp8-zero3",
                     [zero](Scenario& s) { applyLayout(s, layoutOf(8, 1, 1, 1, zero, 2, 4, C::None)); }});
    v.push_back({"dp8-m1-zero1", [](Scenario& s) { applyLayout(s, layoutOf(8, 1, 1, 1, 1, 1, 1, C::None)); }});
    v.push_back({"tp2-sp-selective", [](Scenario& s) {
                     Layout l = layoutOf(4, 2, 1, 1, 1, 1, 2, C::Selective);
                     l.sequence_parallel = true;
                     applyLayout(s, l);
                 }});
    v.push_back({"pp4-1f1b-m8-full", [](Scenario& s) { applyLayout(s, layoutOf(2, 1, 4, 1, 1, 1, 8, C::Full)); }});
    v.push_back({"pp4-1f1b-m2", [](Scenario& s) { applyLayout(s, layoutOf(2, 1, 4, 1, 0, 1, 2, C::None)); }});
    v.push_back({"pp4-gpipe-m4-selective", [](Scenario& s) {
                     Layout l = layoutOf(2, 1, 4, 1, 0, 1, 4, C::Selective);
                     l.schedule = PipelineSchedule::GPipe;
                     applyLayout(s, l);
                 }});
    v.push_back({"pp2-interleaved2-m4", [](Scenario& s) {
                     Layout l = layoutOf(2, 1, 2, 1, 1, 1, 4, C::None);
                     l.schedule = PipelineSchedule::Interleaved1F1B;
                     l.virtual_stages = 2;
                     applyLayout(s, l);
                 }});
    v.push_back({"pp5-uneven-m10", [](Scenario& s) { applyLayout(s, layoutOf(1, 1, 5, 1, 0, 1, 10, C::Full)); }});
    v.push_back({"pp-per-layer-m2p", [](Scenario& s) {
                     const int64_t p = std::min<int64_t>(s.model.num_layers, 64);
                     applyLayout(s, layoutOf(1, 1, p, 1, 1, 1, 2 * p, C::Full));
                 }});
    v.push_back({"pp3-every2", [](Scenario& s) {
                     applyLayout(s, layoutOf(2, 1, 3, 1, 0, 1, 6, C::EveryK));
                     s.training.checkpoint_every = 2;
                 }});
    v.push_back({"dp1-every3-m1", [](Scenario& s) {
                     applyLayout(s, layoutOf(1, 1, 1, 1, 0, 1, 1, C::EveryK));
                     s.training.checkpoint_every = 3;
                 }});
    v.push_back({"cp2-dp2-zero2", [](Scenario& s) { applyLayout(s, layoutOf(2, 1, 1, 2, 2, 1, 1, C::None)); }});
    v.push_back({"ep2-dp4", [](Scenario& s) {
                     Layout l = layoutOf(4, 1, 2, 1, 1, 1, 4, C::Full);
                     l.expert = s.model.isMoe() ? 2 : 1;
                     applyLayout(s, l);
                 }});
    v.push_back({"offload-optimizer", [](Scenario& s) {
                     applyLayout(s, layoutOf(4, 1, 1, 1, 1, 1, 1, C::Full));
                     s.parallelism.offload_optimizer = true;
                 }});
    v.push_back({"offload-parameters", [](Scenario& s) {
                     applyLayout(s, layoutOf(4, 1, 1, 1, 3, 1, 2, C::Full));
                     s.parallelism.offload_optimizer = true;
                     s.parallelism.offload_parameters = true;
                 }});
    v.push_back({"step-in-backward", [](Scenario& s) {
                     applyLayout(s, layoutOf(2, 1, 1, 1, 0, 1, 1, C::Selective));
                     s.training.optimizer_in_backward = true;
                 }});
    v.push_back({"step-in-backward-every2", [](Scenario& s) {
                     applyLayout(s, layoutOf(1, 1, 1, 1, 0, 2, 1, C::EveryK));
                     s.training.checkpoint_every = 2;
                     s.training.optimizer_in_backward = true;
                 }});
    v.push_back({"lora-pp2", [](Scenario& s) {
                     applyLayout(s, layoutOf(2, 1, 2, 1, 0, 1, 2, C::Selective));
                     s.training.finetuning = Finetuning::Lora;
                     s.training.optimizer_in_backward = false;
                 }});
    v.push_back({"qlora-zero3", [](Scenario& s) {
                     applyLayout(s, layoutOf(2, 1, 1, 1, 3, 1, 1, C::Full));
                     s.training.finetuning = Finetuning::Qlora;
                     s.training.optimizer_in_backward = false;
                 }});
    return v;
}

// "preset / variant" -> its lines (an estimate, then its stages), or "invalid".
std::map<std::string, std::string> capture() {
    std::map<std::string, std::string> out;
    for (const PresetInfo& info : listPresets()) {
        const Expected<Scenario> base = loadPreset(info.name);
        if (!base) continue;
        for (const Variant& v : variants()) {
            Scenario s = *base;
            v.edit(s);
            const std::string key = info.name + " / " + v.name;
            const Expected<Estimate> e = estimate(s);
            if (!e) {
                out[key] = "invalid " + e.error().field + "\n";
                continue;
            }
            std::string text = estimateLine(*e) + "\n";
            const Expected<std::vector<StageEstimate>> stages = estimateStages(s);
            if (stages && stages->size() > 1)
                for (const StageEstimate& st : *stages) text += stageLine(st) + "\n";
            out[key] = text;
        }
    }
    return out;
}

const char* kGolden = TRAINMEM_TEST_DATA_DIR "/estimate_golden.txt";

std::map<std::string, std::string> readGolden() {
    std::map<std::string, std::string> out;
    std::ifstream in(kGolden);
    std::string line, key;
    while (std::getline(in, line)) {
        if (line.rfind("== ", 0) == 0) {
            key = line.substr(3);
            out[key];
        } else if (!key.empty()) {
            out[key] += line + "\n";
        }
    }
    return out;
}

TEST(EstimateGolden, EveryPresetOnEveryVariantIsByteForByteTheCapturedEstimate) {
    const std::map<std::string, std::string> now = capture();
    if (const char* path = std::getenv("TRAINMEM_WRITE_GOLDEN")) {
        std::ofstream o(path);
        for (const auto& [key, text] : now) o << "== " << key << "\n" << text;
        GTEST_SKIP() << "wrote " << path;
    }
    const std::map<std::string, std::string> golden = readGolden();
    ASSERT_GT(golden.size(), 300u) << "cannot read " << kGolden;
    int64_t compared = 0, estimated = 0;
    for (const auto& [key, text] : golden) {
        const auto it = now.find(key);
        // A preset removed since the capture: nothing to compare.
        if (it == now.end()) continue;
        EXPECT_EQ(it->second, text) << key;
        ++compared;
        if (text.rfind("invalid", 0) != 0) ++estimated;
    }
    EXPECT_GT(compared, 300);
    EXPECT_GT(estimated, 250);
}

}  // namespace
}  // namespace trainmem
