// Hugging Face config.json import: unknown model types, every class of bad
// input (each error names the key), which blocks have experts, and names.
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

// --- Unknown model types.

TEST(UnknownModelType, ReadsAsLlamaStyleWithAWarningNamingTheType) {
    const ImportedModel m = importFixture("unknown_type.json");
    EXPECT_EQ(m.model.family, "custom_decoder");
    EXPECT_EQ(m.model.name, "example/custom-decoder");
    ASSERT_EQ(m.warnings.size(), 1u);
    EXPECT_NE(m.warnings[0].find("\"custom_decoder\""), std::string::npos);
    EXPECT_EQ(m.warnings[0].rfind("model.model_type", 0), 0u);
    // Llama-style by hand: q 512x512, k and v 512x128 (2 KV heads of 64), o,
    // gated MLP 3 x 512 x 1536, two RMSNorms; tied 1000 x 512 embedding.
    const int64_t block = 512 * 512 * 2 + 2 * 512 * 128 + 3 * 512 * 1536 + 2 * 512;
    EXPECT_EQ(countParameters(m.model).total, 4 * block + 1000 * 512 + 512);
}

TEST(UnknownModelType, MustStateItsSizes) {
    const Error e = importError(readJson(kRoot / "tests" / "data" / "hf" / "unknown_missing_hidden.json"));
    EXPECT_EQ(e.text(), "model.hidden_size: required");
}

// --- Bad input: every error names the key.


TEST(BadInput, NegativeSizeNamesTheKey) {
    EXPECT_EQ(importError(with(llamaConfig(), "num_attention_heads", -4)).text(),
              "model.num_attention_heads: must be a positive integer (got -4)");
    EXPECT_EQ(importError(with(llamaConfig(), "num_hidden_layers", 0)).field, "model.num_hidden_layers");
    EXPECT_EQ(importError(with(llamaConfig(), "intermediate_size", -1)).field, "model.intermediate_size");
}

TEST(BadInput, WrongTypeNamesTheKeyAndTheValue) {
    EXPECT_EQ(importError(with(llamaConfig(), "vocab_size", "abc")).text(),
              "model.vocab_size: must be an integer (got \"abc\")");
    EXPECT_EQ(importError(with(llamaConfig(), "hidden_size", 4096.5)).field, "model.hidden_size");
    EXPECT_EQ(importError(with(llamaConfig(), "tie_word_embeddings", "yes")).field, "model.tie_word_embeddings");
    EXPECT_EQ(importError(with(llamaConfig(), "attention_dropout", "none")).field, "model.attention_dropout");
    EXPECT_EQ(importError(with(llamaConfig(), "hidden_size", 18446744073709551615ULL)).field, "model.hidden_size");
}

TEST(BadInput, KvHeadsMustDivideHeads) {
    const Error e = importError(with(llamaConfig(), "num_key_value_heads", 5));
    EXPECT_EQ(e.field, "model.num_key_value_heads");
    EXPECT_NE(e.message.find("divide"), std::string::npos);
}

TEST(BadInput, HeadsMustDivideTheWidthWithoutHeadDim) {
    EXPECT_EQ(importError(with(llamaConfig(), "num_attention_heads", 30)).field, "model.num_attention_heads");
    // With an explicit head_dim they need not (Gemma-7B: 16 x 256 != 3072).
    json c = with(with(llamaConfig(), "num_attention_heads", 30), "num_key_value_heads", 30);
    EXPECT_TRUE(importHuggingFaceConfig(with(c, "head_dim", 128)).ok());
}

TEST(BadInput, Gpt2ErrorsUseGpt2Keys) {
    EXPECT_EQ(importError(json{{"model_type", "gpt2"}, {"n_head", -4}}).text(),
              "model.n_head: must be a positive integer (got -4)");
    EXPECT_EQ(importError(json{{"model_type", "gpt2"}, {"attn_pdrop", 1.0}}).field, "model.attn_pdrop");
}

TEST(BadInput, DropoutMustBeAProbability) {
    EXPECT_EQ(importError(with(llamaConfig(), "attention_dropout", 1.5)).field, "model.attention_dropout");
    EXPECT_EQ(importError(with(llamaConfig(), "resid_pdrop", -0.1)).field, "model.resid_pdrop");
}

TEST(BadInput, TopKMustNotExceedTheExperts) {
    const Error e = importError(json{{"model_type", "mixtral"}, {"num_experts_per_tok", 9}});
    EXPECT_EQ(e.field, "model.num_experts_per_tok");
}

TEST(BadInput, ModelTypeIsRequiredAndAString) {
    json c = llamaConfig();
    c.erase("model_type");
    EXPECT_EQ(importError(c).field, "model.model_type");
    EXPECT_EQ(importError(with(llamaConfig(), "model_type", 3)).field, "model.model_type");
    EXPECT_EQ(importError(json::array()).field, "model");
}

TEST(BadInput, UnrepresentableExpertLayerPatternIsRefused) {
    const Error e = importError(json{{"model_type", "qwen2_moe"}, {"mlp_only_layers", {5}}});
    EXPECT_EQ(e.field, "model.mlp_only_layers");
}

TEST(BadInput, AbsurdSizesAreRefusedBeforeTheyOverflow) {
    EXPECT_EQ(importError(with(llamaConfig(), "hidden_size", 1'000'000'000)).field, "model.hidden_size");
    json c = with(llamaConfig(), "num_hidden_layers", kMaxLayers);
    c = with(with(c, "intermediate_size", 1 << 24), "vocab_size", 1 << 24);
    EXPECT_EQ(importError(c).field, "model");
    // Past 65,536 layers: refused by name, so no walk over the layers (every-k
    // checkpointing, a hybrid's list) costs more than that.
    const Error deep = importError(with(llamaConfig(), "num_hidden_layers", kMaxLayers + 1));
    EXPECT_EQ(deep.field, "model.num_hidden_layers");
    EXPECT_NE(deep.message.find("at most 65536"), std::string::npos) << deep.message;
}

TEST(BadInput, ValidateNamesTheKeyForDirectlyBuiltModels) {
    ModelConfig m = importPreset("llama-2-7b");
    m.num_kv_heads = 3;
    EXPECT_EQ(validate(m).error().field, "model.num_key_value_heads");
    m = importPreset("mixtral-8x7b");
    m.moe->experts_per_token = 0;
    EXPECT_EQ(validate(m).error().field, "model.num_experts_per_tok");
    m = importPreset("deepseek-v3");
    m.moe->first_dense_layers = 62;
    EXPECT_EQ(validate(m).error().field, "model.first_k_dense_replace");
    m = importPreset("deepseek-v3");
    m.head_dim = 128;
    EXPECT_EQ(validate(m).error().field, "model.head_dim");
    m = importPreset("gpt2");
    m.max_position_embeddings = 0;
    EXPECT_EQ(validate(m).error().field, "model.n_positions");
}

// --- Which blocks are MoE blocks.

TEST(ExpertLayers, Qwen2MoeSparseStepFollowsItsModelingRule) {
    // Qwen2MoeDecoderLayer: experts where (layer_idx + 1) % decoder_sparse_step == 0.
    const ModelConfig m = importFixture("qwen2_moe_sparse_step_2.json").model;
    EXPECT_FALSE(m.isMoeLayer(0));
    EXPECT_TRUE(m.isMoeLayer(1));
    EXPECT_FALSE(m.isMoeLayer(2));
    EXPECT_TRUE(m.isMoeLayer(23));
    EXPECT_EQ(parameterLayout(m).num_moe_layers, 12);
}

TEST(ExpertLayers, DeepSeekFrequencyCountsFromLayerZero) {
    // modeling_deepseek.py: layer_idx >= first_k_dense_replace and layer_idx % moe_layer_freq == 0.
    json c = readJson(kRoot / "presets" / "models" / "deepseek-v2-lite.json");
    c["moe_layer_freq"] = 2;
    const Expected<ImportedModel> r = importHuggingFaceConfig(c);
    ASSERT_TRUE(r.ok()) << r.error().text();
    EXPECT_FALSE(r->model.isMoeLayer(1));
    EXPECT_TRUE(r->model.isMoeLayer(2));
    EXPECT_FALSE(r->model.isMoeLayer(3));
    EXPECT_EQ(parameterLayout(r->model).num_moe_layers, 13);  // layers 2, 4, ..., 26
}

TEST(ExpertLayers, LeadingMlpOnlyLayersAreDenseLayers) {
    const Expected<ImportedModel> r =
        importHuggingFaceConfig(json{{"model_type", "qwen2_moe"}, {"mlp_only_layers", {0, 1}}});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->model.moe->first_dense_layers, 2);
    EXPECT_EQ(r->model.moe->layer_frequency, 1);
}

TEST(ExpertLayers, NullRoutedExpertsIsADenseModel) {
    json c = readJson(kRoot / "presets" / "models" / "deepseek-v2-lite.json");
    c["n_routed_experts"] = nullptr;
    const Expected<ImportedModel> r = importHuggingFaceConfig(c);
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->model.moe.has_value());
    EXPECT_TRUE(r->model.mla.has_value());
}

// --- Names.

TEST(ModelName, FromNameOrPathThenNameThenModelType) {
    EXPECT_EQ(importPreset("llama-3.1-8b").name, "meta-llama/Llama-3.1-8B");
    EXPECT_EQ(importHuggingFaceConfig(with(llamaConfig(), "name", "my-model"))->model.name, "my-model");
    EXPECT_EQ(importHuggingFaceConfig(llamaConfig())->model.name, "llama");
}

}  // namespace
}  // namespace trainmem
