// Issue 28: config.json list keys against huge layer counts (N01), and keys a
// family's class does not read. The MoE layers a config selects are checked
// against transformers' own per-layer rules, walked layer by layer here.
#include <gtest/gtest.h>

#include <ctime>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model/hf_config.h"
#include "core/model/hf_families.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "core/account/scenario_validate.h"

namespace trainmem {
namespace {

using nlohmann::json;
// CPU time: a loaded CI machine does not turn a fast refusal into a slow one.
double cpuSeconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

json llama4WithMoeLayers(int64_t layers, int64_t listed) {
    json moe = json::array();
    for (int64_t i = 0; i < listed; ++i) moe.push_back(i);
    return {{"model_type", "llama4"},
            {"text_config", {{"model_type", "llama4_text"}, {"num_hidden_layers", layers}, {"moe_layers", moe}}}};
}

// N01: 2^24 layers and a 20,000-entry moe_layers list walked the list once
// per layer (about 10 minutes). Refused now, by name, in well under a second.
TEST(HostileConfigLists, Llama4MoeLayersAtTheLayerLimitAreRefusedQuickly) {
    const json config = llama4WithMoeLayers(int64_t{1} << 24, 20000);
    const double started = cpuSeconds();
    const Expected<ImportedModel> r = importHuggingFaceConfig(config);
    const double took = cpuSeconds() - started;
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().field, "model.text_config.moe_layers");
    EXPECT_LT(took, 0.5);
}

TEST(HostileConfigLists, LongListsOfEveryFamilyAtTheLayerLimitStayFast) {
    json dense = json::array();
    for (int i = 0; i < 20000; ++i) dense.push_back(i * 2);
    const json configs[] = {
        {{"model_type", "qwen3_moe"}, {"num_hidden_layers", 1 << 24}, {"mlp_only_layers", dense}},
        {{"model_type", "qwen2_moe"}, {"num_hidden_layers", 1 << 24}, {"mlp_only_layers", dense}, {"decoder_sparse_step", 3}},
        // Every layer after the first 40,000 is MoE: accepted, still fast.
        {{"model_type", "qwen3_moe"}, {"num_hidden_layers", 1 << 24}, {"mlp_only_layers", [] {
              json all = json::array();
              for (int i = 0; i < 40000; ++i) all.push_back(i);
              return all;
          }()}},
        {{"model_type", "llama4_text"}, {"num_hidden_layers", 1 << 24}, {"moe_layers", dense}},
    };
    for (const json& c : configs) {
        const double started = cpuSeconds();
        (void)importHuggingFaceConfig(c);
        EXPECT_LT(cpuSeconds() - started, 0.5) << c.dump().substr(0, 120);
    }
}

// transformers' rules, one layer at a time: DeepseekV2DecoderLayer
// (layer >= first_k_dense_replace and layer % moe_layer_freq == 0),
// Qwen2MoeDecoderLayer (layer not in mlp_only_layers and (layer + 1) %
// decoder_sparse_step == 0), Llama4TextDecoderLayer (layer in moe_layers).
std::set<int64_t> moeLayersByRule(int64_t L, const MoeLayerSelection& k) {
    std::set<int64_t> out;
    for (int64_t i = 0; i < L; ++i) {
        bool moe;
        if (k.moe_layers) {
            moe = std::find(k.moe_layers->begin(), k.moe_layers->end(), i) != k.moe_layers->end();
        } else {
            moe = i >= k.first_k_dense_replace && i % k.moe_layer_freq == 0 &&
                  (i + 1) % k.decoder_sparse_step == 0 &&
                  std::find(k.mlp_only_layers.begin(), k.mlp_only_layers.end(), i) == k.mlp_only_layers.end();
        }
        if (moe) out.insert(i);
    }
    return out;
}

// Whether ModelConfig can hold the set: {first, first + freq, ...} up to L.
bool holdable(const std::set<int64_t>& s, int64_t L) {
    if (s.size() < 2) return true;
    const int64_t d = *std::next(s.begin()) - *s.begin();
    int64_t prev = *s.begin() - d;
    for (int64_t x : s) {
        if (x - prev != d) return false;
        prev = x;
    }
    return prev + d >= L;
}

TEST(HostileConfigLists, FittedPatternSelectsTheLayersTransformersBuilds) {
    std::mt19937_64 rng(28);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    int supported = 0, unsupported = 0;
    for (int trial = 0; trial < 20000; ++trial) {
        const int64_t L = pick(1, 40);
        MoeLayerSelection k;
        std::vector<int64_t> list;
        for (int64_t n = pick(0, 6); n > 0; --n) list.push_back(pick(-2, L + 2));
        if (trial % 3 == 0) {
            k.moe_layers = list;
            if (trial % 2 == 0)  // a progression, sometimes with repeats and strays
                for (int64_t i = pick(0, 5), f = pick(1, 6); i < L; i += f) k.moe_layers->push_back(i);
        } else {
            k.first_k_dense_replace = pick(0, 6);
            k.moe_layer_freq = pick(1, 4);
            k.decoder_sparse_step = pick(1, 4);
            k.mlp_only_layers = list;
        }
        const std::set<int64_t> want = moeLayersByRule(L, k);
        const MoeLayerFit fit = fitMoeLayers(L, k);
        SCOPED_TRACE("trial " + std::to_string(trial) + ", L " + std::to_string(L));
        ASSERT_EQ(fit.supported, holdable(want, L));
        if (!fit.supported) {
            ++unsupported;
            continue;
        }
        ++supported;
        std::set<int64_t> got;
        const MoeLayerPattern& p = fit.pattern;
        for (int64_t i = p.first_dense_layers; i < L; i += p.layer_frequency) got.insert(i);
        ASSERT_EQ(got, want) << "first " << p.first_dense_layers << ", every " << p.layer_frequency;
    }
    EXPECT_GT(supported, 1000);
    EXPECT_GT(unsupported, 1000);
}

// Minor: Mixtral with decoder_sparse_step 16777216 became dense, though
// MixtralSparseMoeBlock sits in every layer whatever the config says.
TEST(HostileConfigLists, QwenLayerKeysAreIgnoredOutsideQwenWithAWarning) {
    const json c = {{"model_type", "mixtral"}, {"decoder_sparse_step", 16777216}, {"mlp_only_layers", {0, 1}}};
    const Expected<ImportedModel> r = importHuggingFaceConfig(c);
    ASSERT_TRUE(r.ok()) << r.error().text();
    ASSERT_TRUE(r->model.moe);
    EXPECT_EQ(r->model.moe->first_dense_layers, 0);
    EXPECT_EQ(r->model.moe->layer_frequency, 1);
    int ignored = 0;
    for (const std::string& w : r->warnings)
        if (w.find("ignored") != std::string::npos &&
            (w.rfind("model.decoder_sparse_step", 0) == 0 || w.rfind("model.mlp_only_layers", 0) == 0))
            ++ignored;
    EXPECT_EQ(ignored, 2);
    // Qwen still reads them.
    const Expected<ImportedModel> q =
        importHuggingFaceConfig(json{{"model_type", "qwen2_moe"}, {"decoder_sparse_step", 2}});
    ASSERT_TRUE(q.ok());
    EXPECT_EQ(q->model.moe->layer_frequency, 2);
}

TEST(HostileConfigLists, UnknownTopkMethodIsRefused) {
    const json base = {{"model_type", "deepseek_v3"}};
    for (const char* method : {"greedy", "group_limited_greedy", "noaux_tc"}) {
        json c = base;
        c["topk_method"] = method;
        if (std::string(method) == "group_limited_greedy") {
            c["n_group"] = 8;
            c["topk_group"] = 4;
        }
        EXPECT_TRUE(importHuggingFaceConfig(c).ok()) << method;
    }
    json c = base;
    c["topk_method"] = "noaux-tc";
    const Expected<ImportedModel> r = importHuggingFaceConfig(c);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().field, "model.topk_method");
    EXPECT_NE(r.error().message.find("noaux-tc"), std::string::npos) << r.error().message;
}

TEST(HostileConfigLists, QuantizationConfigIsNotIgnoredSilently) {
    const json c = {{"model_type", "llama"},
                    {"quantization_config", {{"quant_method", "bitsandbytes"}, {"load_in_4bit", true}}}};
    const Expected<ImportedModel> r = importHuggingFaceConfig(c);
    ASSERT_TRUE(r.ok()) << r.error().text();
    bool warned = false;
    for (const std::string& w : r->warnings)
        warned |= w.rfind("model.quantization_config", 0) == 0 && w.find("bitsandbytes") != std::string::npos;
    EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace trainmem

namespace trainmem {
namespace {

// Minor: 1e308 was accepted and printed as "learning rate inf" (JSON null).
TEST(HostileScenarioValues, AHugeLearningRateIsRefusedByName) {
    Expected<Scenario> s = loadPreset("llama-3.1-8b");
    ASSERT_TRUE(s.ok());
    s->training.base_batch_size = 8;
    for (double lr : {1e308, 1001.0}) {
        s->training.base_learning_rate = lr;
        const Status v = validate(*s);
        ASSERT_FALSE(v.ok()) << lr;
        EXPECT_EQ(v.error().field, "training.base_learning_rate");
        EXPECT_NE(v.error().message.find("at most 1000"), std::string::npos) << v.error().message;
    }
    s->training.base_learning_rate = 3e-4;
    EXPECT_TRUE(validate(*s).ok());
}

}  // namespace
}  // namespace trainmem
