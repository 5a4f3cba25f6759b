// Hugging Face config.json export: every preset and every family with
// changed values reads back as the same ModelConfig.
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/model/hf_config.h"
#include "core/model/hf_families.h"
#include "core/model/parameters.h"
#include "core/model/model_validate.h"
#include "core/account/scenario_validate.h"
#include "tests/core/hf_config_test_support.h"

namespace trainmem {
namespace {

using namespace hf_test;  // NOLINT: the shared helpers read as local ones

// --- Export and round trips.

TEST(RoundTrip, EveryPresetReadsBackIdentically) {
    const std::vector<std::string> names = presetNames();
    EXPECT_GE(names.size(), 22u);
    for (const std::string& name : names) {
        SCOPED_TRACE(name);
        const ModelConfig m = importPreset(name);
        const json exported = exportHuggingFaceConfig(m);
        const Expected<ImportedModel> back = importHuggingFaceConfig(exported);
        ASSERT_TRUE(back.ok()) << back.error().text();
        EXPECT_EQ(back->model, m) << exported.dump(2);
        EXPECT_TRUE(back->warnings.empty());
        // The one trainmem key a preset's export may carry: the vision
        // tower's count of a multimodal checkpoint (Qwen3.5), which a text
        // config has no key for (transformers keeps unknown keys as attributes).
        for (const auto& [key, value] : exported.items())
            if (key != "trainmem_vision_parameters") EXPECT_EQ(key.rfind("trainmem_", 0), std::string::npos) << key;
    }
}

TEST(RoundTrip, ExportUsesTheFamilysOwnKeys) {
    const json gpt2 = exportHuggingFaceConfig(importPreset("gpt2"));
    EXPECT_EQ(gpt2.at("n_embd"), 768);
    EXPECT_EQ(gpt2.at("n_inner"), 3072);
    EXPECT_FALSE(gpt2.contains("hidden_size"));
    const json llama = exportHuggingFaceConfig(importPreset("llama-3.1-8b"));
    EXPECT_EQ(llama.at("num_key_value_heads"), 8);
    for (const char* k : {"norm_type", "mlp_type", "qkv_bias", "norms_per_block", "qk_norm"})
        EXPECT_FALSE(llama.contains(k)) << k;
    const json v2 = exportHuggingFaceConfig(importPreset("deepseek-v2-lite"));
    EXPECT_TRUE(v2.at("q_lora_rank").is_null());
    EXPECT_EQ(v2.at("n_routed_experts"), 64);
}

// Changes a model in ways its family's own keys may not express.
std::vector<std::function<void(ModelConfig&)>> mutations() {
    return {
        [](ModelConfig& m) { m.qk_norm = !m.qk_norm; },
        [](ModelConfig& m) { m.norm = m.norm == NormKind::RMSNorm ? NormKind::LayerNorm : NormKind::RMSNorm; },
        [](ModelConfig& m) { m.mlp = m.mlp == MlpKind::Gated ? MlpKind::Plain : MlpKind::Gated; },
        [](ModelConfig& m) { m.norms_per_block = 3; },
        [](ModelConfig& m) { m.attention_qkv_bias = !m.attention_qkv_bias; },
        [](ModelConfig& m) { m.attention_output_bias = !m.attention_output_bias; },
        [](ModelConfig& m) { m.mlp_bias = !m.mlp_bias; },
        [](ModelConfig& m) { m.tied_embeddings = !m.tied_embeddings; },
        [](ModelConfig& m) { m.learned_positions = !m.learned_positions; },
        [](ModelConfig& m) { m.hidden_dropout = 0.05; m.embedding_dropout = 0.02; m.attention_dropout = 0.1; },
        [](ModelConfig& m) { if (!m.mla) m.head_dim = m.head_dim + 8; },
        [](ModelConfig& m) { m.num_kv_heads = 1; },
        [](ModelConfig& m) { m.hidden_act = "relu"; },
        [](ModelConfig& m) { m.family = "my_family"; },
        [](ModelConfig& m) {
            if (m.moe) m.moe.reset();
            else m.moe = MoeConfig{16, 2, 512, 1, 0, false, 1, 2, false, 0.0};
        },
        [](ModelConfig& m) {
            if (!m.moe) return;
            m.moe->first_dense_layers = 5;
            m.moe->layer_frequency = 2;
        },
        [](ModelConfig& m) {
            if (!m.moe) return;
            m.moe->first_dense_layers = 4;
            m.moe->layer_frequency = 3;
        },
        [](ModelConfig& m) {
            if (!m.moe) return;
            m.moe->capacity_factor = 1.25;
            m.moe->router_score_bias = !m.moe->router_score_bias;
            m.moe->shared_expert_gate = !m.moe->shared_expert_gate;
        },
        [](ModelConfig& m) {
            if (!m.moe) return;
            m.moe->shared_experts = 2;
            m.moe->shared_expert_ffn = m.moe->shared_expert_ffn > 0 ? 0 : 700;
        },
        [](ModelConfig& m) {
            if (!m.moe) return;
            m.moe->expert_ffn = m.moe->expert_ffn + 64;
        },
        [](ModelConfig& m) {
            if (m.mla) m.mla->q_lora_rank = m.mla->q_lora_rank > 0 ? 0 : 768;
        },
    };
}

TEST(RoundTrip, ChangedModelsOfEveryFamilyReadBackIdentically) {
    int checked = 0;
    for (const std::string& name : presetNames()) {
        const ModelConfig base = importPreset(name);
        int index = 0;
        for (const auto& mutate : mutations()) {
            SCOPED_TRACE(name + " mutation " + std::to_string(index++));
            ModelConfig m = base;
            mutate(m);
            if (!validate(m).ok()) continue;
            ++checked;
            const json exported = exportHuggingFaceConfig(m);
            const Expected<ImportedModel> back = importHuggingFaceConfig(exported);
            ASSERT_TRUE(back.ok()) << back.error().text() << "\n" << exported.dump(2);
            EXPECT_EQ(back->model, m) << exported.dump(2);
        }
    }
    EXPECT_GT(checked, 400);  // nearly every family x mutation is a valid model
}

// The hybrid fixtures whose families have no preset (Falcon-H1, Jamba, Kimi
// Linear, Nemotron-NAS: the activation account does not model their
// layers), changed the
// same ways, read back identically: the exporter writes each family's layer
// pattern and mixer sizes in its own keys.
TEST(RoundTrip, ChangedHybridFixturesReadBackIdentically) {
    int checked = 0;
    for (const char* fixture : {"falcon-h1-7b-base.json", "jamba-1.5-mini.json", "kimi-linear-48b-a3b.json",
                                "llama-3.3-nemotron-super-49b-v1.json"}) {
        const ModelConfig base = importFixture(std::string("hybrids/") + fixture).model;
        int index = 0;
        for (const auto& mutate : mutations()) {
            SCOPED_TRACE(std::string(fixture) + " mutation " + std::to_string(index++));
            ModelConfig m = base;
            mutate(m);
            // A renamed family cannot express the layer pattern; a model
            // without experts cannot have MoE layers.
            if (m.family != base.family || !validate(m).ok()) continue;
            ++checked;
            const json exported = exportHuggingFaceConfig(m);
            const Expected<ImportedModel> back = importHuggingFaceConfig(exported);
            ASSERT_TRUE(back.ok()) << back.error().text() << "\n" << exported.dump(2);
            EXPECT_EQ(back->model, m) << exported.dump(2);
        }
    }
    EXPECT_GT(checked, 30);
}

}  // namespace
}  // namespace trainmem
