// Hostile config.json values the importer must refuse quickly and by name
// (issue 15: D03, D05, D09, D11): every limit is checked before any loop or
// arithmetic that uses the value, and --set model.* reports what a
// config.json on disk would.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "core/model/hf_config.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"

namespace trainmem {
namespace {

using nlohmann::json;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

Error importError(const json& config) {
    const Expected<ImportedModel> r = importHuggingFaceConfig(config);
    EXPECT_FALSE(r.ok()) << config.dump();
    return r.ok() ? Error{} : r.error();
}

json deepseekV2Lite() {
    return {{"model_type", "deepseek_v2"}, {"hidden_size", 2048}, {"num_hidden_layers", 27},
            {"num_attention_heads", 16},   {"intermediate_size", 10944}, {"vocab_size", 102400},
            {"kv_lora_rank", 512},         {"q_lora_rank", nullptr},   {"qk_nope_head_dim", 128},
            {"qk_rope_head_dim", 64},      {"v_head_dim", 128},        {"n_routed_experts", 64},
            {"num_experts_per_tok", 6},    {"moe_intermediate_size", 1408}, {"n_shared_experts", 2},
            {"first_k_dense_replace", 1},  {"moe_layer_freq", 1}};
}

// D03: a 700-byte Mixtral config with 10^15 layers and mlp_only_layers [0]
// walked every layer before the layer count was checked.
TEST(HostileConfig, HugeLayerCountIsRefusedBeforeAnyLoopOverLayers) {
    const auto started = std::chrono::steady_clock::now();
    const Error e = importError(json{{"model_type", "mixtral"},
                                     {"num_hidden_layers", int64_t{1'000'000'000'000'000}},
                                     {"mlp_only_layers", {0}}});
    EXPECT_EQ(e.field, "model.num_hidden_layers");
    EXPECT_NE(e.message.find("at most 16777216"), std::string::npos) << e.message;
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
}

TEST(HostileConfig, LongLayerListsAtTheLayerLimitStayFast) {
    // The largest layer count allowed, with a long mlp_only_layers list that
    // breaks the every-k-th pattern: refused, in well under a second.
    json c = {{"model_type", "qwen3_moe"}, {"num_hidden_layers", 1 << 24}};
    json layers = json::array();
    for (int i = 0; i < 20000; i += 3) layers.push_back(i);
    c["mlp_only_layers"] = layers;
    const auto started = std::chrono::steady_clock::now();
    const Error e = importError(c);
    EXPECT_EQ(e.field, "model.mlp_only_layers");
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

// D05: qk_rope_head_dim = INT64_MAX overflowed nope + rope (and the release
// build blamed head_dim, a key the user never set).
TEST(HostileConfig, OverflowingValuesAreRefusedUnderTheirOwnKey) {
    for (const char* key : {"qk_rope_head_dim", "qk_nope_head_dim", "first_k_dense_replace", "moe_layer_freq"}) {
        SCOPED_TRACE(key);
        json c = deepseekV2Lite();
        c[key] = kInt64Max;
        const Error e = importError(c);
        EXPECT_EQ(e.field, std::string("model.") + key);
        EXPECT_NE(e.message.find("9223372036854775807"), std::string::npos) << e.message;
        c[key] = std::numeric_limits<int64_t>::min();
        EXPECT_EQ(importError(c).field, std::string("model.") + key);
    }
}

// D11: a Mixtral config whose num_local_experts is 0 or null was estimated
// as a dense 7.24B model without a word.
TEST(HostileConfig, AFamilyWithoutItsDefiningExpertsIsAnError) {
    for (const json& experts : {json(0), json(nullptr)}) {
        SCOPED_TRACE(experts.dump());
        const Error e = importError(json{{"model_type", "mixtral"}, {"num_local_experts", experts}});
        EXPECT_EQ(e.field, "model.num_local_experts");
        EXPECT_NE(e.message.find("positive"), std::string::npos) << e.message;
    }
    // Where transformers builds dense blocks, so does the importer: Qwen-MoE
    // with num_experts 0 (Qwen3MoeDecoderLayer checks num_experts > 0) and
    // DeepSeek with n_routed_experts null.
    EXPECT_TRUE(importHuggingFaceConfig(json{{"model_type", "qwen3_moe"}, {"num_experts", 0}}).ok());
    json dense_deepseek = deepseekV2Lite();
    dense_deepseek["n_routed_experts"] = nullptr;
    EXPECT_TRUE(importHuggingFaceConfig(dense_deepseek).ok());
    // Qwen-MoE with num_experts null: its decoder layer would compare None > 0.
    EXPECT_EQ(importError(json{{"model_type", "qwen3_moe"}, {"num_experts", nullptr}}).field, "model.num_experts");
}

// D09: --set model.* dropped the importer's warnings.
TEST(HostileConfig, ModelSettingsReportTheImportersWarnings) {
    auto s = loadPreset("gpt2");
    ASSERT_TRUE(s.ok()) << s.error().text();
    ASSERT_TRUE(s->warnings.empty());
    Scenario nulled = *s;
    ASSERT_TRUE(applySetting(nulled, "model.vocab_size=null").ok());
    ASSERT_EQ(nulled.warnings.size(), 1u);
    EXPECT_EQ(nulled.warnings[0], "model.vocab_size: not in the config; using the gpt2 default 50257");

    // The same edit in a config.json on disk gives the same warning.
    json config = exportHuggingFaceConfig(s->model);
    config["vocab_size"] = nullptr;
    const Expected<ImportedModel> disk = importHuggingFaceConfig(config);
    ASSERT_TRUE(disk.ok());
    EXPECT_EQ(disk->warnings, nulled.warnings);

    Scenario retyped = *s;
    ASSERT_TRUE(applySetting(retyped, "model.model_type=llama").ok());
    EXPECT_FALSE(retyped.warnings.empty()) << "GPT-2 read as Llama takes Llama's sizes: say so";
}

}  // namespace
}  // namespace trainmem
