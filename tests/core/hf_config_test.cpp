// Hugging Face config.json import, family by family: each family's class
// defaults (checked against the models those defaults describe), its layer
// patterns (sliding, MoE, NoPE), multimodal wrappers and aliases.
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/model/hf_config.h"
#include "core/model/hf_families.h"
#include "core/model/parameters.h"
#include "tests/core/hf_config_test_support.h"

namespace trainmem {
namespace {

using namespace hf_test;  // NOLINT: the shared helpers read as local ones

// --- Family defaults: a config with only model_type is the model the
// transformers configuration class describes by default.

TEST(FamilyDefaults, LlamaClassDefaultsAreLlama2_7b) {
    const ImportedModel m = importFixture("llama_defaults.json");
    EXPECT_EQ(countParameters(m.model).total, 6'738'415'616);
    EXPECT_EQ(m.model.num_kv_heads, 32);  // num_key_value_heads None -> num_attention_heads
    EXPECT_EQ(m.model.max_position_embeddings, 2048);
    EXPECT_FALSE(m.model.tied_embeddings);
    EXPECT_TRUE(mentions(m.warnings, "model.hidden_size: not in the config; using the llama default 4096"));
}

TEST(FamilyDefaults, MistralClassDefaultsAreMistral7b) {
    const ImportedModel m = importFixture("mistral_defaults.json");
    EXPECT_EQ(countParameters(m.model).total, 7'241'732'096);
    EXPECT_EQ(m.model.num_kv_heads, 8);
}

TEST(FamilyDefaults, MixtralClassDefaultsAreMixtral8x7b) {
    const ImportedModel m = importFixture("mixtral_defaults.json");
    EXPECT_EQ(countParameters(m.model).total, 46'702'792'704);
    ASSERT_TRUE(m.model.moe);
    EXPECT_EQ(m.model.moe->num_experts, 8);
    EXPECT_EQ(m.model.moe->experts_per_token, 2);
    EXPECT_EQ(m.model.moe->expert_ffn, 14336);
}

TEST(FamilyDefaults, Qwen2MoeClassDefaultsAreQwen15MoeA27b) {
    const ImportedModel m = importFixture("qwen2_moe_defaults.json");
    EXPECT_EQ(countParameters(m.model).total, 14'315'784'192);
    ASSERT_TRUE(m.model.moe);
    EXPECT_TRUE(m.model.moe->shared_expert_gate);
    EXPECT_EQ(m.model.moe->shared_expert_ffn, 5632);
    EXPECT_TRUE(m.model.attention_qkv_bias);
    EXPECT_FALSE(m.model.moe->norm_topk_prob);  // Qwen2MoeConfig norm_topk_prob=False
}

TEST(FamilyDefaults, GemmaClassDefaultsAreGemma7b) {
    const ImportedModel m = importFixture("gemma_defaults.json");
    EXPECT_EQ(countParameters(m.model).total, 8'537'680'896);
    EXPECT_TRUE(m.model.tied_embeddings);
    EXPECT_EQ(m.model.head_dim, 256);
}

TEST(FamilyDefaults, Gemma2ClassDefaultsAreGemma2_2b) {
    const ImportedModel m = importFixture("gemma2_defaults.json");
    EXPECT_EQ(countParameters(m.model).total, 2'614'341'888);  // google/gemma-2-2b
    EXPECT_EQ(m.model.norms_per_block, 4);
    EXPECT_EQ(m.model.num_kv_heads, 4);
}

TEST(FamilyDefaults, Phi3ClassDefaultsArePhi3Mini) {
    EXPECT_EQ(countParameters(importFixture("phi3_defaults.json").model).total, 3'821'079'552);
}

TEST(FamilyDefaults, Gpt2ClassDefaultsAreGpt2Small) {
    const ImportedModel m = importFixture("gpt2_defaults.json");
    EXPECT_EQ(countParameters(m.model).total, 124'439'808);
    EXPECT_TRUE(m.model.tied_embeddings);
    EXPECT_TRUE(m.model.learned_positions);
    EXPECT_EQ(m.model.norm, NormKind::LayerNorm);
    EXPECT_EQ(m.model.mlp, MlpKind::Plain);
    EXPECT_EQ(m.model.ffn_hidden_size, 4 * 768);
    // GPT2Config's dropouts are 0.1, unlike the Llama-era families.
    EXPECT_DOUBLE_EQ(m.model.attention_dropout, 0.1);
    EXPECT_DOUBLE_EQ(m.model.hidden_dropout, 0.1);
    EXPECT_DOUBLE_EQ(m.model.embedding_dropout, 0.1);
    EXPECT_EQ(m.model.hidden_act, "gelu_new");
}

TEST(FamilyDefaults, DeepSeekV3ClassDefaultsAreDeepSeekV3) {
    const ImportedModel m = importFixture("deepseek_v3_defaults.json");
    EXPECT_EQ(countParameters(m.model).total, 671'026'419'200);
    ASSERT_TRUE(m.model.moe);
    EXPECT_TRUE(m.model.moe->router_score_bias);
    EXPECT_EQ(m.model.moe->first_dense_layers, 3);
}

TEST(FamilyDefaults, DeepSeekV2ClassDefaults) {
    const ImportedModel m = importFixture("deepseek_v2_defaults.json");
    ASSERT_TRUE(m.model.mla);
    EXPECT_EQ(m.model.mla->q_lora_rank, 1536);
    EXPECT_EQ(m.model.mla->kv_lora_rank, 512);
    EXPECT_EQ(m.model.head_dim, 128 + 64);
    ASSERT_TRUE(m.model.moe);
    EXPECT_EQ(m.model.moe->num_experts, 64);
    EXPECT_EQ(m.model.moe->expert_ffn, 1407);
    EXPECT_EQ(m.model.moe->shared_experts, 2);
    EXPECT_EQ(m.model.moe->first_dense_layers, 0);
    EXPECT_FALSE(m.model.moe->router_score_bias);  // topk_method "greedy"
}

TEST(FamilyDefaults, DeepSeekV2HasNoDefaultTopK) {
    const Error e = importError(readJson(kRoot / "tests" / "data" / "hf" / "deepseek_v2_no_top_k.json"));
    EXPECT_EQ(e.field, "model.num_experts_per_tok");
}

TEST(FamilyDefaults, Qwen2HasQueryKeyValueBiasesByConvention) {
    const ImportedModel m = importFixture("qwen2_defaults.json");
    EXPECT_TRUE(m.model.attention_qkv_bias);
    EXPECT_FALSE(m.model.attention_output_bias);
    EXPECT_FALSE(m.model.mlp_bias);
}

TEST(FamilyDefaults, OmittedStructuralKeysTakeTheClassDefaultsSilently) {
    const ImportedModel m = importFixture("llama_sizes_only.json");
    EXPECT_TRUE(m.warnings.empty());
    EXPECT_EQ(m.model.num_kv_heads, 32);
    EXPECT_EQ(m.model.head_dim, 2048 / 32);
    EXPECT_FALSE(m.model.tied_embeddings);
    EXPECT_EQ(importFixture("mistral_no_kv_heads.json").model.num_kv_heads, 8);
}

TEST(FamilyDefaults, ExplicitNullKvHeadsMeansMultiHeadAttention) {
    const Expected<ImportedModel> r =
        importHuggingFaceConfig(json{{"model_type", "mistral"}, {"num_key_value_heads", nullptr}});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->model.num_kv_heads, 32);
}

TEST(FamilyDefaults, Gpt2NullInnerIsFourTimesTheWidth) {
    const ImportedModel m = importFixture("gpt2_n_inner_null.json");
    EXPECT_EQ(m.model.ffn_hidden_size, 4096);
    EXPECT_EQ(countParameters(m.model).total, 354'823'168);  // openai-community/gpt2-medium
}

TEST(FamilyDefaults, Gpt2AcceptsTheAttributeMapNames) {
    // GPT2Config.attribute_map: hidden_size -> n_embd, num_attention_heads -> n_head, ...
    const Expected<ImportedModel> r = importHuggingFaceConfig(
        json{{"model_type", "gpt2"}, {"n_embd", 768}, {"hidden_size", 1024}, {"num_attention_heads", 16},
             {"num_hidden_layers", 24}});
    ASSERT_TRUE(r.ok()) << r.error().text();
    EXPECT_EQ(r->model.hidden_size, 1024);
    EXPECT_EQ(r->model.num_heads, 16);
    EXPECT_EQ(r->model.ffn_hidden_size, 4096);
    EXPECT_EQ(countParameters(r->model).total, 354'823'168);  // gpt2-medium
}

TEST(FamilyDefaults, EverySupportedTypeImportsFromItsModelTypeAlone) {
    // 33 rows, kimi_k2 (an alias), and the multimodal wrappers llama4, gemma3,
    // qwen3_5 and qwen3_5_moe (their text_config's rows)
    EXPECT_EQ(supportedModelTypes().size(), 38u);
    for (const std::string& type : supportedModelTypes()) {
        json c = {{"model_type", type}};
        if (type == "deepseek_v2") c["num_experts_per_tok"] = 6;
        if (type == "nemotron-nas")  // its layers are block_configs, which have no default
            c["block_configs"] = json::array();
        for (int i = 0; type == "nemotron-nas" && i < 32; ++i)
            c["block_configs"].push_back({{"attention", {{"n_heads_in_group", 4}}}, {"ffn", {{"ffn_mult", 1.0}}}});
        const Expected<ImportedModel> r = importHuggingFaceConfig(c);
        EXPECT_TRUE(r.ok()) << type << ": " << (r.ok() ? "" : r.error().text());
        if (r.ok()) {
            const FamilySpec* text = findTextConfigFamily(type);
            EXPECT_EQ(r->model.family, text ? std::string(text->model_type) : type);
        }
    }
}

TEST(FamilyDefaults, GptOssConfigDefaultsAreGptOss120b) {
    // GptOssConfig's defaults (transformers 4.55) are gpt-oss-120b's shape: 36
    // layers, 128 experts top-4. Its published parameter count (the GGUF's
    // general.parameter_count, MXFP4 experts counted as parameters) checks the
    // row's sinks, attention biases, expert biases and router bias at a second
    // size; gpt-oss-20b's preset checks them at 24 layers of 32 experts.
    const Expected<ImportedModel> r = importHuggingFaceConfig(json{{"model_type", "gpt_oss"}});
    ASSERT_TRUE(r.ok()) << r.error().text();
    EXPECT_EQ(r->model.num_layers, 36);
    ASSERT_TRUE(r->model.isMoe());
    EXPECT_EQ(r->model.moe->num_experts, 128);
    EXPECT_EQ(parameterLayout(r->model).num_moe_layers, 36);
    EXPECT_EQ(countParameters(r->model).total, 116'829'156'672);
}

TEST(FamilyDefaults, Glm45AttentionBiasReachesQkvButNotTheOutput) {
    // Glm4MoeAttention (modeling_glm4_moe.py, transformers 4.54): q_proj,
    // k_proj, v_proj take bias=config.attention_bias; o_proj has bias=False.
    // use_qk_norm is GLM's name for the per-head q/k norms.
    json c = {{"model_type", "glm4_moe"}, {"attention_bias", true}, {"use_qk_norm", true}};
    const Expected<ImportedModel> r = importHuggingFaceConfig(c);
    ASSERT_TRUE(r.ok()) << r.error().text();
    EXPECT_TRUE(r->model.attention_qkv_bias);
    EXPECT_FALSE(r->model.attention_output_bias);
    EXPECT_TRUE(r->model.qk_norm);
    const json exported = exportHuggingFaceConfig(r->model);
    EXPECT_EQ(exported.at("attention_bias"), true);
    EXPECT_EQ(exported.at("use_qk_norm"), true);
    EXPECT_FALSE(exported.contains("attention_output_bias"));
    EXPECT_FALSE(exported.contains("qk_norm"));
    const Expected<ImportedModel> back = importHuggingFaceConfig(exported);
    ASSERT_TRUE(back.ok()) << back.error().text();
    EXPECT_EQ(back->model, r->model);
}

TEST(FamilyDefaults, Glm45RotatesHalfOfEachHead) {
    // Glm4MoeConfig's partial_rotary_factor defaults to 0.5: the rotary tables
    // are int(head_dim * 0.5) wide (what autograd keeps of them: the
    // glm4_moe cases of validation/activations/saved_tensors.json). Llama's
    // class has no default: whole heads.
    const Expected<ImportedModel> glm = importHuggingFaceConfig(json{{"model_type", "glm4_moe"}});
    ASSERT_TRUE(glm.ok()) << glm.error().text();
    EXPECT_EQ(rotaryTableWidth(glm->model), 64);
    const Expected<ImportedModel> quarter =
        importHuggingFaceConfig(json{{"model_type", "glm4_moe"}, {"partial_rotary_factor", 0.25}});
    ASSERT_TRUE(quarter.ok()) << quarter.error().text();
    EXPECT_EQ(rotaryTableWidth(quarter->model), 32);
    const Expected<ImportedModel> back = importHuggingFaceConfig(exportHuggingFaceConfig(quarter->model));
    ASSERT_TRUE(back.ok()) << back.error().text();
    EXPECT_EQ(back->model, quarter->model);
    const Expected<ImportedModel> llama = importHuggingFaceConfig(json{{"model_type", "llama"}});
    ASSERT_TRUE(llama.ok()) << llama.error().text();
    EXPECT_EQ(rotaryTableWidth(llama->model), 128);
    for (double bad : {0.0, 1.5}) {
        const Expected<ImportedModel> r =
            importHuggingFaceConfig(json{{"model_type", "glm4_moe"}, {"partial_rotary_factor", bad}});
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_EQ(r.error().field, "model.partial_rotary_factor");
        EXPECT_NE(r.error().message.find("(0, 1]"), std::string::npos) << r.error().message;
    }
}

TEST(FamilyDefaults, SlidingAndGlobalLayersFromLayerTypesOrTheClassPattern) {
    // Gemma3TextConfig: every sliding_window_pattern-th (6th) layer is global,
    // the rest slide; Gemma3TextModel then builds two causal masks and two
    // rotary tables (the gemma3_text cases of saved_tensors.json measure both).
    // gemma-3-1b: 26 layers, layers 5, 11, 17, 23 global.
    const Expected<ImportedModel> g3 = importHuggingFaceConfig(json{{"model_type", "gemma3_text"}, {"num_hidden_layers", 26}});
    ASSERT_TRUE(g3.ok()) << g3.error().text();
    EXPECT_EQ(g3->model.sliding_window_layers, 22);
    EXPECT_TRUE(mixesAttentionLayers(g3->model));
    EXPECT_EQ(rotaryTables(g3->model), 2);
    // Five layers are all sliding: one mask, one table.
    const Expected<ImportedModel> five = importHuggingFaceConfig(json{{"model_type", "gemma3_text"}, {"num_hidden_layers", 5}});
    ASSERT_TRUE(five.ok()) << five.error().text();
    EXPECT_FALSE(mixesAttentionLayers(five->model));
    EXPECT_EQ(rotaryTables(five->model), 1);
    // gpt-oss-20b's config lists them: 12 of 24 slide; its rotary table is shared.
    json oss = readJson(kRoot / "presets" / "models" / "gpt-oss-20b.json");
    const Expected<ImportedModel> o = importHuggingFaceConfig(oss);
    ASSERT_TRUE(o.ok()) << o.error().text();
    EXPECT_EQ(o->model.sliding_window_layers, 12);
    EXPECT_EQ(rotaryTables(o->model), 1);
    const Expected<ImportedModel> back = importHuggingFaceConfig(exportHuggingFaceConfig(o->model));
    ASSERT_TRUE(back.ok()) << back.error().text();
    EXPECT_EQ(back->model, o->model);
    // Llama has no layer_types: never mixed.
    const Expected<ImportedModel> llama = importHuggingFaceConfig(json{{"model_type", "llama"}});
    ASSERT_TRUE(llama.ok());
    EXPECT_EQ(llama->model.sliding_window_layers, 0);

    oss["layer_types"][0] = "chunked_attention";
    Expected<ImportedModel> bad = importHuggingFaceConfig(oss);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().field, "model.layer_types");
    EXPECT_NE(bad.error().message.find("\"sliding_attention\" or \"full_attention\""), std::string::npos);
    oss["layer_types"].erase(0);
    bad = importHuggingFaceConfig(oss);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().field, "model.layer_types");
    EXPECT_NE(bad.error().message.find("one type per layer: 24"), std::string::npos) << bad.error().message;
    bad = importHuggingFaceConfig(json{{"model_type", "gemma3_text"}, {"sliding_window_pattern", 0}});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().field, "model.sliding_window_pattern");
}

TEST(HfImport, UnknownActivationIsRefusedUnderTheFamilysKey) {
    // An activation the account does not model (quick_gelu keeps its input and
    // a sigmoid; gelu_fast another chain) was read as SiLU's without a word.
    struct Case {
        json config;
        std::string field;
    };
    const Case cases[] = {
        {{{"model_type", "llama"}, {"hidden_act", "quick_gelu"}}, "model.hidden_act"},
        {{{"model_type", "gemma3_text"}, {"hidden_activation", "gelu_fast"}}, "model.hidden_activation"},
        {{{"model_type", "gpt2"}, {"activation_function", "Relu"}}, "model.activation_function"},
        {{{"model_type", "my_decoder"}, {"hidden_size", 64}, {"num_hidden_layers", 2}, {"num_attention_heads", 4},
          {"intermediate_size", 128}, {"vocab_size", 100}, {"max_position_embeddings", 64},
          {"hidden_act", "xielu"}},
         "model.hidden_act"},
    };
    for (const Case& c : cases) {
        const Expected<ImportedModel> r = importHuggingFaceConfig(c.config);
        ASSERT_FALSE(r.ok()) << c.config.dump();
        EXPECT_EQ(r.error().field, c.field);
        EXPECT_NE(r.error().message.find("must be one of silu, swish (= silu), gelu, gelu_pytorch_tanh, gelu_new, relu"),
                  std::string::npos)
            << r.error().message;
    }
    // The aliases transformers' ACT2FN maps to the same module are accepted.
    for (const char* act : {"silu", "swish", "gelu", "gelu_pytorch_tanh", "gelu_new", "relu"}) {
        const Expected<ImportedModel> r = importHuggingFaceConfig(json{{"model_type", "llama"}, {"hidden_act", act}});
        EXPECT_TRUE(r.ok()) << act << ": " << (r.ok() ? "" : r.error().text());
    }
}

TEST(HfImport, MultimodalLlama4ReadsItsTextConfig) {
    // A Llama-4 checkpoint's config.json is model_type llama4 with the
    // language model under text_config (its vision_config, abbreviated in the
    // fixture, is not read). The text model is Scout's: 107,769,861,120
    // parameters (presets/models/README.md note 9).
    const json config = readJson(kRoot / "tests" / "data" / "hf" / "llama4_multimodal.json");
    const Expected<ImportedModel> r = importHuggingFaceConfig(config);
    ASSERT_TRUE(r.ok()) << r.error().text();
    EXPECT_EQ(r->model.family, "llama4_text");
    EXPECT_EQ(r->model.name, "meta-llama/Llama-4-Scout-17B-16E");
    EXPECT_EQ(countParameters(r->model).total, 107'769'861'120);
    EXPECT_EQ(r->model, importPreset("llama-4-scout"));
    ASSERT_EQ(r->warnings.size(), 1u);
    EXPECT_NE(r->warnings[0].find("vision encoder and projector (vision_config) are not counted"), std::string::npos);

    // Errors name the nested key.
    json bad = config;
    bad["text_config"]["num_attention_heads"] = 0;
    Expected<ImportedModel> e = importHuggingFaceConfig(bad);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().field, "model.text_config.num_attention_heads");
    bad = config;
    bad["text_config"]["model_type"] = "llama";
    e = importHuggingFaceConfig(bad);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().field, "model.text_config.model_type");
    bad = config;
    bad["text_config"] = "llama4_text";
    e = importHuggingFaceConfig(bad);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().field, "model.text_config");
    // Without its model_type the text config is read as the wrapper's family's.
    bad = config;
    bad["text_config"].erase("model_type");
    e = importHuggingFaceConfig(bad);
    ASSERT_TRUE(e.ok()) << e.error().text();
    EXPECT_EQ(e->model, r->model);
}

TEST(HfImport, MultimodalGemma3ReadsItsTextConfig) {
    // Gemma3Config nests Gemma3TextConfig under text_config: the same model
    // as the bare text config.
    const json text = readJson(kRoot / "presets" / "models" / "gemma-3-1b.json");
    const json wrapped = {{"model_type", "gemma3"}, {"text_config", text}};
    const Expected<ImportedModel> r = importHuggingFaceConfig(wrapped);
    ASSERT_TRUE(r.ok()) << r.error().text();
    EXPECT_EQ(r->model, importPreset("gemma-3-1b"));
}

TEST(FamilyDefaults, Llama4InterleavedMoeLayersCountMaverick) {
    // Llama-4-Maverick's text model is Llama4TextConfig's defaults with 128
    // experts on every second layer (interleave_moe_layer_step 2: layers 1, 3,
    // ..., 47), the others dense MLPs of intermediate_size_mlp. Its Hub total,
    // 401,583,781,376, less the vision encoder and projector (871,932,416, the
    // same difference as Scout's) is 400,711,848,960
    // (presets/models/README.md note 9). The explicit moe_layers list says
    // the same.
    json step = {{"model_type", "llama4_text"}, {"num_local_experts", 128}, {"interleave_moe_layer_step", 2}};
    json list = {{"model_type", "llama4_text"}, {"num_local_experts", 128}, {"moe_layers", json::array()}};
    for (int64_t i = 1; i < 48; i += 2) list["moe_layers"].push_back(i);
    for (const json& c : {step, list}) {
        const Expected<ImportedModel> r = importHuggingFaceConfig(c);
        ASSERT_TRUE(r.ok()) << r.error().text();
        EXPECT_EQ(parameterLayout(r->model).num_moe_layers, 24);
        EXPECT_FALSE(r->model.isMoeLayer(0));
        EXPECT_TRUE(r->model.isMoeLayer(47));
        EXPECT_EQ(r->model.ffn_hidden_size, 16384);
        EXPECT_EQ(r->model.moe->expert_ffn, 8192);
        EXPECT_EQ(countParameters(r->model).total, 400'711'848'960);
        const Expected<ImportedModel> back = importHuggingFaceConfig(exportHuggingFaceConfig(r->model));
        ASSERT_TRUE(back.ok()) << back.error().text();
        EXPECT_EQ(back->model, r->model);
    }
}

// Kimi-K2's config.json names model_type "kimi_k2" and DeepseekV3ForCausalLM:
// the catalogue reads it as DeepSeek-V3's architecture, without a warning.
TEST(FamilyAliases, KimiK2IsDeepSeekV3sArchitecture) {
    nlohmann::json c = {{"model_type", "kimi_k2"}, {"num_attention_heads", 64}, {"num_key_value_heads", 64},
                        {"n_routed_experts", 384}, {"first_k_dense_replace", 1}, {"vocab_size", 163840}};
    const Expected<ImportedModel> k = importHuggingFaceConfig(c);
    ASSERT_TRUE(k.ok()) << k.error().text();
    for (const std::string& w : k->warnings)  // only the defaults taken for the sizes left out
        EXPECT_EQ(w.find("not a known family"), std::string::npos) << w;
    EXPECT_EQ(k->model.family, "kimi_k2");
    ASSERT_TRUE(k->model.mla.has_value());
    ASSERT_TRUE(k->model.isMoe());
    EXPECT_EQ(k->model.moe->num_experts, 384);
    EXPECT_TRUE(k->model.moe->router_score_bias);
    EXPECT_EQ(k->model.moe->experts_per_token, 8);  // DeepseekV3Config's default
    c["model_type"] = "deepseek_v3";
    const Expected<ImportedModel> d = importHuggingFaceConfig(c);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(k->warnings.size(), d->warnings.size());
    ModelConfig same = d->model;
    same.family = same.name = "kimi_k2";
    EXPECT_EQ(k->model, same);
}

// Llama4TextConfig (transformers commit 000c33fd): a non-empty no_rope_layers
// wins over no_rope_layer_interval (class default 4); layer i is NoPE where
// the flag is 0. Patterns that are not every k-th layer are refused by name.
TEST(FamilyDefaults, Llama4NoPeLayersFromTheListOrTheInterval) {
    const ModelConfig scout = importPreset("llama-4-scout");
    EXPECT_EQ(scout.no_rope_layer_interval, 4);
    EXPECT_TRUE(scout.isRopeLayer(0));
    EXPECT_FALSE(scout.isRopeLayer(3));
    EXPECT_FALSE(scout.isRopeLayer(47));
    EXPECT_EQ(causalMasks(scout), 2);  // chunked rotary layers and global NoPE layers

    json c = {{"model_type", "llama4_text"}, {"num_hidden_layers", 4}, {"no_rope_layers", {1, 0, 1, 0}}};
    const Expected<ImportedModel> listed = importHuggingFaceConfig(c);
    ASSERT_TRUE(listed.ok()) << listed.error().text();
    EXPECT_EQ(listed->model.no_rope_layer_interval, 2);
    c["no_rope_layers"] = {1, 1, 1, 1};  // no NoPE layer: one mask
    const Expected<ImportedModel> all_rope = importHuggingFaceConfig(c);
    ASSERT_TRUE(all_rope.ok()) << all_rope.error().text();
    for (int64_t i = 0; i < 4; ++i) EXPECT_TRUE(all_rope->model.isRopeLayer(i));
    EXPECT_EQ(causalMasks(all_rope->model), 1);

    EXPECT_NE(importError(with(c, "no_rope_layers", {1, 0, 0, 1})).text().find("model.no_rope_layers"),
              std::string::npos);
    EXPECT_NE(importError(with(c, "no_rope_layers", {1, 0})).text().find("model.no_rope_layers"), std::string::npos);
    c.erase("no_rope_layers");
    EXPECT_NE(importError(with(c, "no_rope_layer_interval", 0)).text().find("model.no_rope_layer_interval"),
              std::string::npos);
    c["no_rope_layer_interval"] = 2;
    EXPECT_TRUE(importHuggingFaceConfig(with(c, "layer_types", {"chunked_attention", "full_attention",
                                                                 "chunked_attention", "full_attention"}))
                    .ok());
    EXPECT_NE(importError(with(c, "layer_types", {"full_attention", "full_attention", "full_attention",
                                                  "full_attention"}))
                  .text()
                  .find("model.layer_types"),
              std::string::npos);
}

// Llama4TextL2Norm has no weight: use_qk_norm adds no parameter.
TEST(FamilyDefaults, Llama4L2QueryKeyNormHasNoParameters) {
    json c = {{"model_type", "llama4_text"}, {"num_hidden_layers", 4}};
    const Expected<ImportedModel> with_norm = importHuggingFaceConfig(with(c, "use_qk_norm", true));
    const Expected<ImportedModel> without = importHuggingFaceConfig(with(c, "use_qk_norm", false));
    ASSERT_TRUE(with_norm.ok() && without.ok());
    EXPECT_TRUE(with_norm->model.qk_norm);
    EXPECT_FALSE(without->model.qk_norm);
    EXPECT_EQ(countParameters(with_norm->model).total, countParameters(without->model).total);
}

// Gemma 2 (modeling_gemma2.py at transformers commit 9a80143c) passes one
// causal mask to every layer; Gemma 3 and gpt-oss build one per layer kind.
// norm_topk_prob is read where the modeling file reads it, with the config
// class's default; elsewhere the router does what its code always does.
TEST(FamilyDefaults, NormTopkProbFollowsTheModelingFile) {
    // The checkpoints' own settings (their config.json files).
    EXPECT_FALSE(importPreset("qwen1.5-moe-a2.7b").moe->norm_topk_prob);
    EXPECT_TRUE(importPreset("qwen3-30b-a3b").moe->norm_topk_prob);
    EXPECT_TRUE(importPreset("deepseek-v3").moe->norm_topk_prob);
    EXPECT_TRUE(importPreset("glm-4.5-air").moe->norm_topk_prob);
    EXPECT_FALSE(importPreset("deepseek-v2-lite").moe->norm_topk_prob);
    // Class defaults: Qwen2MoeConfig / Qwen3MoeConfig False, DeepseekV3Config True.
    const json qwen2 = readJson(kRoot / "tests" / "data" / "hf" / "qwen2_moe_defaults.json");
    EXPECT_TRUE(importHuggingFaceConfig(with(qwen2, "norm_topk_prob", true))->model.moe->norm_topk_prob);
    EXPECT_FALSE(importHuggingFaceConfig(qwen2)->model.moe->norm_topk_prob);
    EXPECT_FALSE(importHuggingFaceConfig(json{{"model_type", "qwen3_moe"}})->model.moe->norm_topk_prob);
    EXPECT_TRUE(importFixture("deepseek_v3_defaults.json").model.moe->norm_topk_prob);
    // DeepseekV2MoEGate stores the key and never reads it; Mixtral always renormalises.
    json v2 = readJson(kRoot / "tests" / "data" / "hf" / "deepseek_v2_defaults.json");
    EXPECT_FALSE(importHuggingFaceConfig(with(v2, "norm_topk_prob", true))->model.moe->norm_topk_prob);
    const json mixtral = readJson(kRoot / "tests" / "data" / "hf" / "mixtral_defaults.json");
    EXPECT_TRUE(importHuggingFaceConfig(with(mixtral, "norm_topk_prob", false))->model.moe->norm_topk_prob);
}

// DeepSeek-V2's topk_method: greedy (Lite, the class default) or
// group_limited_greedy over n_group groups keeping topk_group (V2, V2-Chat).
TEST(FamilyDefaults, DeepSeekV2GroupLimitedRouting) {
    const ModelConfig lite = importPreset("deepseek-v2-lite");
    EXPECT_EQ(lite.moe->routing_groups, 0);
    const json v2 = readJson(kRoot / "tests" / "data" / "hf" / "deepseek_v2_defaults.json");
    json full = with(with(with(v2, "topk_method", "group_limited_greedy"), "n_group", 8), "topk_group", 3);
    const ModelConfig m = importHuggingFaceConfig(full)->model;
    EXPECT_EQ(m.moe->routing_groups, 8);
    EXPECT_EQ(m.moe->routing_groups_kept, 3);
    const Error groups = importError(with(full, "n_group", 5));  // 64 experts
    EXPECT_EQ(groups.field, "model.n_group");
    EXPECT_NE(groups.message.find("divisor of n_routed_experts (64)"), std::string::npos) << groups.message;
    const Error kept = importError(with(full, "topk_group", 9));
    EXPECT_EQ(kept.field, "model.topk_group");
    EXPECT_NE(kept.message.find("between 1 and n_group (8)"), std::string::npos) << kept.message;
    // DeepSeek-V3's router groups are a config constant the importer does not model.
    EXPECT_EQ(importFixture("deepseek_v3_defaults.json").model.moe->routing_groups, 0);
}

TEST(FamilyDefaults, CausalMasksPerFamily) {
    EXPECT_EQ(causalMasks(importPreset("gemma-2-9b")), 1);
    EXPECT_EQ(causalMasks(importPreset("gemma-3-1b")), 2);
    EXPECT_EQ(causalMasks(importPreset("gpt-oss-20b")), 2);
    EXPECT_EQ(causalMasks(importPreset("llama-3.1-8b")), 1);
}

}  // namespace
}  // namespace trainmem
