// Parameter counts against independent truth: the totals the Hugging Face
// models instantiate (safetensors metadata / model cards), PEFT's printed
// adapter counts, and hand arithmetic written out from the module shapes.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/model/hf_config.h"
#include "core/model/parameters.h"

namespace trainmem {
namespace {

ModelConfig preset(const std::string& name) {
    const std::filesystem::path path =
        std::filesystem::path(TRAINMEM_TEST_DATA_DIR).parent_path().parent_path() / "presets" / "models" /
        (name + ".json");
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << path;
    const Expected<ImportedModel> imported = importHuggingFaceConfig(nlohmann::json::parse(in));
    EXPECT_TRUE(imported.ok()) << name << ": " << (imported.ok() ? "" : imported.error().text());
    if (!imported.ok()) return ModelConfig{};
    // gpt-oss ships its experts in MXFP4 (quantization_config): the one
    // warning a published config.json may give.
    for (const std::string& w : imported->warnings)
        EXPECT_EQ(w.rfind("model.quantization_config: the checkpoint is stored quantized (mxfp4)", 0), 0u) << name << ": " << w;
    return imported->model;
}

struct PublishedCount {
    const char* preset;
    int64_t total;
};

// sum(p.numel() for p in model.parameters()) of the Hugging Face model, tied
// weights once; the same figure is the safetensors total on the Hub (or its
// model card), except where noted in presets/models/README.md: Llama-2's
// checkpoints also store 64 rotary inv_freq buffers per layer, DeepSeek-V3's
// add the multi-token-prediction layer, which HF does not instantiate.
const PublishedCount kPublished[] = {
    {"gpt2", 124'439'808},
    {"gpt2-xl", 1'557'611'200},
    {"llama-2-7b", 6'738'415'616},
    {"llama-2-13b", 13'015'864'320},
    {"llama-2-70b", 68'976'648'192},
    {"llama-3.1-8b", 8'030'261'248},
    {"llama-3.1-70b", 70'553'706'496},
    {"llama-3.1-405b", 405'853'388'800},
    {"llama-3.2-1b", 1'235'814'400},
    {"llama-3.2-3b", 3'212'749'824},
    {"mistral-7b-v0.1", 7'241'732'096},
    {"mixtral-8x7b", 46'702'792'704},
    {"mixtral-8x22b", 140'620'634'112},
    {"qwen2.5-0.5b", 494'032'768},
    {"qwen2.5-7b", 7'615'616'512},
    {"qwen2.5-72b", 72'706'203'648},
    {"qwen1.5-moe-a2.7b", 14'315'784'192},
    {"gemma-7b", 8'537'680'896},
    {"gemma-2-9b", 9'241'705'984},
    {"phi-3-mini-4k", 3'821'079'552},
    {"deepseek-v2-lite", 15'706'484'224},
    {"deepseek-v3", 671'026'419'200},
    // The 2025 families. Qwen3-0.6B: transformers' model.num_parameters()
    // (the Hub's safetensors total, 751,632,384, stores the tied head twice);
    // Qwen3-30B-A3B, SmolLM3-3B (tied, no lm_head in the index) and
    // OLMo-2-1124-7B: the Hub's safetensors totals.
    {"qwen3-0.6b", 596'049'920},
    {"qwen3-30b-a3b", 30'532'122'624},
    {"smollm3-3b", 3'075'098'624},
    {"olmo-2-7b", 7'298'617'344},
    // Phi-4 (a Phi-3 architecture), Mistral Small 3 and Gemma 3 1B (tied):
    // the Hub's safetensors / GGUF parameter totals.
    {"phi-4", 14'659'507'200},
    {"mistral-small-24b", 23'572'403'200},
    {"gemma-3-1b", 999'885'952},
    // Granite 3.3 8B (tied): the Hub's safetensors total.
    {"granite-3.3-8b", 8'170'864'640},
    // Kimi-K2 (DeepSeek-V3's architecture as model_type kimi_k2; 384 experts,
    // one dense layer, no MTP layer): the logical parameter count quoted for
    // the checkpoint (presets/models/README.md), e_score_correction_bias
    // counted as for DeepSeek-V3.
    {"kimi-k2", 1'026'408'232'448},
    // gpt-oss-20b: the GGUF's general.parameter_count (MXFP4 experts counted
    // as the parameters they dequantize to), with q/k/v/o biases, attention
    // sinks, expert biases and the router's bias.
    {"gpt-oss-20b", 20'914'757'184},
    // GLM-4.5-Air without its stored MTP layer (transformers does not build
    // it): the Hub total of a checkpoint of this architecture that ships no
    // MTP layer, and GLM-4.5-Air's own Hub total less that layer
    // (presets/models/README.md note 8).
    {"glm-4.5-air", 106'852'251'264},
    {"deepseek-v3.2", 671'877'944'064},  // with the indexer; the checkpoint's total is in HybridFamilies
    {"glm-5", 743'911'218'432},
    // Llama-4-Scout's text model: the multimodal checkpoint's Hub total less
    // its vision encoder and projector (presets/models/README.md note 9).
    {"llama-4-scout", 107'769'861'120},
    // The hybrids (issue 23): the model classes' counts; their checkpoints'
    // totals, with MTP layers and vision towers, are held in HybridFamilies
    // (presets/models/README.md, Hybrids).
    {"qwen3-next-80b-a3b", 79'674'391'296},
    {"qwen3.5-9b", 8'953'803'264},
    {"qwen3.5-35b-a3b", 34'660'610'688},
    {"qwen3.5-397b-a17b", 396'346'350'336},
    {"lfm2-1.2b", 1'170'340'608},
    {"minimax-m2", 228'689'764'864},
    {"nemotron-3-nano-30b-a3b", 31'577'940'288},
};

TEST(PublishedParameterCounts, EveryPresetMatchesTheCountOfTheModelItDescribes) {
    for (const PublishedCount& p : kPublished) {
        SCOPED_TRACE(p.preset);
        const ParameterCount c = countParameters(preset(p.preset));
        EXPECT_EQ(c.total, p.total);
        EXPECT_EQ(c.trainable, p.total);
        EXPECT_EQ(c.lora, 0);
    }
}

TEST(PublishedParameterCounts, ComponentsAddUpToTheTotal) {
    for (const PublishedCount& p : kPublished) {
        SCOPED_TRACE(p.preset);
        const ParameterCount c = countParameters(preset(p.preset));
        EXPECT_EQ(c.embedding + c.attention + c.linear_mixers + c.mlp + c.routed_experts + c.shared_experts +
                      c.router + c.norms + c.lm_head,
                  c.total);
    }
}

TEST(ComponentSplit, Gpt2ByHand) {
    const ParameterCount c = countParameters(preset("gpt2"));
    const int64_t h = 768, V = 50257, P = 1024, L = 12;
    // wte V x h + wpe P x h.
    EXPECT_EQ(c.embedding, V * h + P * h);
    // c_attn Conv1D h -> 3h with bias, c_proj h -> h with bias.
    EXPECT_EQ(c.attention, L * ((h * 3 * h + 3 * h) + (h * h + h)));
    // c_fc h -> 4h with bias, c_proj 4h -> h with bias.
    EXPECT_EQ(c.mlp, L * ((h * 4 * h + 4 * h) + (4 * h * h + h)));
    // ln_1 and ln_2 per block, ln_f: LayerNorm weight + bias.
    EXPECT_EQ(c.norms, L * 2 * (2 * h) + 2 * h);
    EXPECT_EQ(c.lm_head, 0);  // tied to wte
    EXPECT_EQ(c.routed_experts + c.shared_experts + c.router, 0);
}

TEST(ComponentSplit, TiedEmbeddingsHaveNoSeparateHead) {
    EXPECT_EQ(countParameters(preset("llama-3.2-1b")).lm_head, 0);
    EXPECT_EQ(countParameters(preset("qwen2.5-0.5b")).lm_head, 0);
    EXPECT_EQ(countParameters(preset("gemma-7b")).lm_head, 0);
    EXPECT_EQ(countParameters(preset("llama-3.1-8b")).lm_head, 128256LL * 4096);
}

TEST(ComponentSplit, Gemma2HasFourNormsPerBlock) {
    const ParameterCount c = countParameters(preset("gemma-2-9b"));
    EXPECT_EQ(c.norms, 42LL * 4 * 3584 + 3584);
}

TEST(ComponentSplit, Qwen2HasBiasesOnQueryKeyValueOnly) {
    const ParameterCount c = countParameters(preset("qwen2.5-7b"));
    const int64_t h = 3584, q = 28 * 128, kv = 4 * 128;
    EXPECT_EQ(c.attention, 28 * (h * q + q + 2 * (h * kv + kv) + q * h));
}

TEST(ComponentSplit, DeepSeekV3LatentAttentionAndExpertsByHand) {
    const ParameterCount c = countParameters(preset("deepseek-v3"));
    const int64_t h = 7168, H = 128, q_lora = 1536, kv_lora = 512, nope = 128, rope = 64, v = 128;
    // q_a, q_a_layernorm, q_b, kv_a_proj_with_mqa, kv_a_layernorm, kv_b, o.
    const int64_t attention = h * q_lora + q_lora + q_lora * H * (nope + rope) + h * (kv_lora + rope) + kv_lora +
                              kv_lora * H * (nope + v) + H * v * h;
    EXPECT_EQ(attention, 187'107'328);
    EXPECT_EQ(c.attention, 61 * attention);
    EXPECT_EQ(c.mlp, 3 * 3 * h * 18432);                    // first_k_dense_replace = 3 dense layers
    EXPECT_EQ(c.routed_experts, 58LL * 256 * 3 * h * 2048);  // 58 MoE layers x 256 experts
    EXPECT_EQ(c.shared_experts, 58LL * 3 * h * 2048);       // one shared expert
    EXPECT_EQ(c.router, 58LL * (256 * h + 256));            // gate + e_score_correction_bias
}

TEST(ComponentSplit, Qwen3NormsQueryAndKeyPerHead) {
    // Qwen3RMSNorm(head_dim = 128) on q and on k in each of 28 blocks,
    // counted with attention: q 1024x2048, k and v 1024x1024, o 2048x1024.
    const ParameterCount c = countParameters(preset("qwen3-0.6b"));
    EXPECT_EQ(c.attention, 28 * (2 * 1024 * 2048 + 2 * 1024 * 1024 + 2 * 128));
    EXPECT_EQ(c.norms, 28 * 2 * 1024 + 1024);
}

TEST(ComponentSplit, Olmo2NormsQueryAndKeyOverTheWholeProjection) {
    // Olmo2RMSNorm(32 heads x 128) on q and (32 KV heads x 128) on k: 8192
    // weights in each of 32 blocks, counted with attention.
    const ParameterCount c = countParameters(preset("olmo-2-7b"));
    EXPECT_EQ(c.attention, int64_t{32} * (4 * 4096 * 4096 + 2 * 4096));
    EXPECT_EQ(c.norms, 32 * 2 * 4096 + 4096);
}

TEST(ComponentSplit, SmolLM3WithoutTheTieKeyIsTied) {
    // SmolLM3Config's tie_word_embeddings defaults to True; the 3B config.json leaves it out.
    const ParameterCount c = countParameters(preset("smollm3-3b"));
    EXPECT_EQ(c.lm_head, 0);
    EXPECT_EQ(c.embedding, 128'256 * 2048);
}

TEST(ActiveParameters, Qwen3Moe30bA3bByHand) {
    // 8 of 128 experts of 3 x 2048 x 768 in each of 48 layers are active:
    // 3.3B activated, as the model card says.
    const ParameterCount c = countParameters(preset("qwen3-30b-a3b"));
    EXPECT_EQ(c.active, 30'532'122'624 - int64_t{48} * 120 * 3 * 2048 * 768);
    EXPECT_EQ(c.active, 3'353'032'704);
}

TEST(ActiveParameters, Mixtral8x7bByHand) {
    const ParameterCount c = countParameters(preset("mixtral-8x7b"));
    const int64_t h = 4096, f = 14336, V = 32000, L = 32;
    const int64_t attention = h * h + 2 * (h * 1024) + h * h;  // q, k, v (8 KV heads x 128), o
    const int64_t two_experts = 2 * 3 * h * f;                 // top-2 of 8
    const int64_t router = h * 8;
    const int64_t norms = 2 * h;
    const int64_t active = L * (attention + two_experts + router + norms) + 2 * V * h + h;
    EXPECT_EQ(active, 12'879'925'248);  // "12.9B active" (Mixtral of Experts, Jiang et al. 2024)
    EXPECT_EQ(c.active, active);
}

TEST(ActiveParameters, DeepSeekV3ByHand) {
    const ParameterCount c = countParameters(preset("deepseek-v3"));
    const int64_t h = 7168, attention = 187'107'328, expert = 3 * h * 2048;
    const int64_t dense_layer = attention + 2 * h + 3 * h * 18432;
    const int64_t moe_layer = attention + 2 * h + 8 * expert + expert + (256 * h + 256);
    const int64_t active = 3 * dense_layer + 58 * moe_layer + 2 * 129280LL * h + h;
    EXPECT_EQ(active, 37'552'297'472);  // "37B activated for each token" (DeepSeek-V3 report)
    EXPECT_EQ(c.active, active);
}

TEST(ActiveParameters, Qwen15MoeByHand) {
    const ParameterCount c = countParameters(preset("qwen1.5-moe-a2.7b"));
    const int64_t h = 2048;
    const int64_t attention = 4 * h * h + 3 * h;  // q, k, v with biases, o
    const int64_t per_layer = attention + 4 * 3 * h * 1408 + 3 * h * 5632 + h + h * 60 + 2 * h;
    const int64_t active = 24 * per_layer + 2 * 151936LL * h + h;
    EXPECT_EQ(active, 2'689'173'504);  // the "A2.7B" of the name
    EXPECT_EQ(c.active, active);
}

TEST(ActiveParameters, DenseModelsUseEveryParameter) {
    const ParameterCount c = countParameters(preset("llama-3.1-8b"));
    EXPECT_EQ(c.active, c.total);
}

TEST(LoraParameters, Llama2_7bRank8OnQueryAndValueIsPeftsFigure) {
    // PEFT: "trainable params: 4,194,304 || all params: 6,742,609,920".
    const ParameterCount c = countParameters(preset("llama-2-7b"), 8, {"q_proj", "v_proj"});
    EXPECT_EQ(c.lora, 4'194'304);
    EXPECT_EQ(c.trainable, 4'194'304);
    EXPECT_EQ(c.total, 6'742'609'920);
}

TEST(LoraParameters, Llama31_8bRank16OnAllLinearIsPeftsFigure) {
    // PEFT: "trainable params: 41,943,040 || all params: 8,072,204,288".
    const std::vector<std::string> every = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                            "down_proj"};
    EXPECT_EQ(countParameters(preset("llama-3.1-8b"), 16, every).lora, 41'943'040);
    const ParameterCount c = countParameters(preset("llama-3.1-8b"), 16, {"all-linear"});
    EXPECT_EQ(c.lora, 41'943'040);
    EXPECT_EQ(c.total, 8'072'204'288);
}

TEST(LoraParameters, Gpt2FusedAttentionIsOneAdapter) {
    // PEFT on gpt2, r=8, target c_attn: "trainable params: 294,912".
    EXPECT_EQ(countParameters(preset("gpt2"), 8, {"c_attn"}).lora, 294'912);
    // q and v name parts of the fused c_attn: still one adapter per block.
    EXPECT_EQ(countParameters(preset("gpt2"), 8, {"q_proj", "v_proj"}).lora, 294'912);
    // c_proj is the name of both the attention output and the MLP output.
    EXPECT_EQ(countParameters(preset("gpt2"), 8, {"c_proj"}).lora, 12 * (8 * (768 + 768) + 8 * (3072 + 768)));
}

TEST(LoraParameters, FusedExpertParametersAreNeverTargets) {
    // gpt-oss's experts are GptOssExperts parameters (gate_up_proj, down_proj)
    // and its router GptOssTopKRouter's: neither is an nn.Linear, so PEFT's
    // "all-linear" adapts only q, k, v, o (24 layers, h 2880, 64 x 64 query
    // and 8 x 64 key/value widths); naming the expert projections adapts nothing.
    const int64_t r = 8, h = 2880, q = 64 * 64, kv = 8 * 64;
    const int64_t attention = r * (h + q) + 2 * r * (h + kv) + r * (q + h);
    EXPECT_EQ(countParameters(preset("gpt-oss-20b"), r, {"all-linear"}).lora, 24 * attention);
    EXPECT_EQ(countParameters(preset("gpt-oss-20b"), r, {"gate_proj", "up_proj", "down_proj"}).lora, 0);
    // Llama 4's routed experts likewise (Llama4TextExperts); its shared expert
    // is a Llama4TextMLP of nn.Linear layers and is adapted.
    const int64_t h4 = 5120, f4 = 8192;
    EXPECT_EQ(countParameters(preset("llama-4-scout"), r, {"gate_proj", "up_proj", "down_proj"}).lora,
              48 * (2 * r * (h4 + f4) + r * (f4 + h4)));
}

TEST(LoraParameters, Phi3FusedProjectionsAreOneAdapterEach) {
    const int64_t r = 4, h = 3072, f = 8192;
    EXPECT_EQ(countParameters(preset("phi-3-mini-4k"), r, {"q_proj", "k_proj"}).lora, 32 * r * (h + 3 * h));
    EXPECT_EQ(countParameters(preset("phi-3-mini-4k"), r, {"gate_up_proj", "down_proj"}).lora,
              32 * (r * (h + 2 * f) + r * (f + h)));
}

TEST(LoraParameters, MixtralExpertTargetsApplyToEveryExpert) {
    const int64_t r = 8, h = 4096, f = 14336;
    const ParameterCount c = countParameters(preset("mixtral-8x7b"), r, {"w1", "w2", "w3"});
    const int64_t per_expert = 3 * r * (h + f);
    EXPECT_EQ(c.lora, 32 * 8 * per_expert);
    // Active: two experts' adapters per token.
    EXPECT_EQ(c.active, 12'879'925'248 + 32 * 2 * per_expert);
    // gate_proj/up_proj/down_proj name the same expert matrices.
    EXPECT_EQ(countParameters(preset("mixtral-8x7b"), r, {"gate_proj", "up_proj", "down_proj"}).lora, c.lora);
}

TEST(LoraParameters, DeepSeekSharedExpertIsOneMlpOfCombinedWidth) {
    const int64_t r = 2, h = 2048, fe = 1408, f = 10944;
    const ParameterCount c = countParameters(preset("deepseek-v2-lite"), r, {"down_proj"});
    // Layer 0 dense; 26 MoE layers with 64 routed experts and one shared MLP of 2 x 1408.
    EXPECT_EQ(c.lora, r * (f + h) + 26 * (64 * r * (fe + h) + r * (2 * fe + h)));
}

TEST(LoraParameters, LatentAttentionNamesMapToItsProjections) {
    const int64_t r = 4, h = 2048, H = 16;
    // DeepSeek-V2-Lite has no q_lora: q_proj is h -> H x 192.
    EXPECT_EQ(countParameters(preset("deepseek-v2-lite"), r, {"q_proj"}).lora, 27 * r * (h + H * 192));
    // k and v live in kv_a_proj_with_mqa (h -> 512 + 64) and kv_b_proj (512 -> H x 256).
    EXPECT_EQ(countParameters(preset("deepseek-v2-lite"), r, {"k_proj", "v_proj"}).lora,
              27 * r * ((h + 576) + (512 + H * 256)));
}

TEST(LoraParameters, NoRankOrUnknownTargetsGiveNoAdapters) {
    EXPECT_EQ(countParameters(preset("llama-2-7b"), 0, {"q_proj"}).lora, 0);
    EXPECT_EQ(loraParameters(preset("llama-2-7b"), 8, {"lm_head"}).total, 0);
    EXPECT_EQ(loraParameters(preset("llama-2-7b"), 8, {}).total, 0);
}

TEST(LoraParameters, InputWidthsPerDenseBlock) {
    const LoraParameters l = loraParameters(preset("llama-3.1-8b"), 16, {"q_proj", "down_proj"});
    EXPECT_EQ(l.matrix_input_width, 4096 + 14336);
    EXPECT_EQ(l.dense_layer, 16 * (4096 + 4096) + 16 * (14336 + 4096));
    EXPECT_EQ(l.moe_layer, 0);
}

TEST(LoraParameters, TargetNamesIncludeTheFamilyModuleNames) {
    const std::vector<std::string>& names = loraTargetNames();
    for (const char* n : {"q_proj", "all-linear", "c_attn", "qkv_proj", "w1", "kv_b_proj"})
        EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

// A model small enough to write out every tensor.
ModelConfig tinyLlama() {
    ModelConfig m;
    m.family = "llama";
    m.hidden_size = 8;
    m.num_layers = 2;
    m.num_heads = 2;
    m.num_kv_heads = 1;
    m.head_dim = 4;
    m.ffn_hidden_size = 16;
    m.vocab_size = 32;
    return m;
}

TEST(TensorShapes, TinyModelMatricesAndFactorsByHand) {
    const ParameterLayout lay = parameterLayout(tinyLlama());
    // Per block: q 8x8, k 4x8, v 4x8, o 8x8; gate 16x8, up 16x8, down 8x16.
    EXPECT_EQ(lay.dense_layer.attention.matrix_params, 64 + 32 + 32 + 64);
    EXPECT_EQ(lay.dense_layer.dense_mlp.matrix_params, 3 * 128);
    // Adafactor keeps rows + cols per matrix.
    EXPECT_EQ(lay.dense_layer.attention.factored_elems, 16 + 12 + 12 + 16);
    EXPECT_EQ(lay.dense_layer.dense_mlp.factored_elems, 3 * 24);
    EXPECT_EQ(lay.embedding.factored_elems, 32 + 8);
    EXPECT_EQ(lay.lm_head.factored_elems, 32 + 8);
    EXPECT_EQ(lay.dense_layer.norms.params, 2 * 8);
    EXPECT_EQ(lay.dense_layer.norms.matrix_params, 0);
    EXPECT_EQ(lay.final_norm.params, 8);
    EXPECT_EQ(lay.dense_layer.total().largest_tensor, 128);
    EXPECT_EQ(lay.embedding.largest_tensor, 256);
    TensorGroup all = lay.embedding;
    all += lay.lm_head;
    all += lay.final_norm;
    for (int i = 0; i < 2; ++i) all += lay.dense_layer.total();
    EXPECT_EQ(all.factored_elems, 2 * (56 + 72) + 80);
    EXPECT_EQ(all.matrix_params, 2 * (192 + 384) + 2 * 256);
    EXPECT_EQ(all.params, all.matrix_params + 2 * 16 + 8);
    EXPECT_EQ(all.largest_tensor, 256);
    EXPECT_EQ(all.params, countParameters(tinyLlama()).total);
}

TEST(TensorShapes, FusedProjectionsAreSingleTensors) {
    // GPT-2's c_attn is one h x 3h Conv1D weight.
    const ParameterLayout gpt2 = parameterLayout(preset("gpt2"));
    EXPECT_EQ(gpt2.dense_layer.attention.largest_tensor, 768 * 2304);
    EXPECT_EQ(gpt2.dense_layer.attention.factored_elems, (768 + 2304) + (768 + 768));
    // Phi-3's gate_up_proj is one h x 2f weight.
    const ParameterLayout phi3 = parameterLayout(preset("phi-3-mini-4k"));
    EXPECT_EQ(phi3.dense_layer.dense_mlp.largest_tensor, 3072 * 2 * 8192);
}

TEST(TensorShapes, ExpertsAreSeparateMatrices) {
    const ParameterLayout lay = parameterLayout(preset("mixtral-8x7b"));
    EXPECT_EQ(lay.expert_params, 3 * 4096 * 14336);
    EXPECT_EQ(lay.moe_layer.routed_experts.largest_tensor, 4096 * 14336);
    EXPECT_EQ(lay.moe_layer.routed_experts.factored_elems, 8 * 3 * (4096 + 14336));
    EXPECT_EQ(lay.moe_layer.router.matrix_params, 8 * 4096);
}

TEST(LayerKinds, MixtureOfExpertsLayersAndDenseLayers) {
    const ParameterLayout v3 = parameterLayout(preset("deepseek-v3"));
    EXPECT_EQ(v3.num_layers, 61);
    EXPECT_EQ(v3.num_moe_layers, 58);
    EXPECT_EQ(v3.expert_params, 3 * 7168 * 2048);
    EXPECT_EQ(v3.moe_layer.dense_mlp.params, 0);
    const ParameterLayout mixtral = parameterLayout(preset("mixtral-8x7b"));
    EXPECT_EQ(mixtral.num_moe_layers, 32);
    EXPECT_EQ(mixtral.dense_layer.total().params, 0);  // no dense block exists
    const ParameterLayout llama = parameterLayout(preset("llama-2-7b"));
    EXPECT_EQ(llama.num_moe_layers, 0);
    EXPECT_EQ(llama.moe_layer.total().params, 0);
    EXPECT_EQ(llama.expert_params, 0);
}

TEST(LayerKinds, MatmulParametersExcludeNormsAndBiases) {
    const ParameterLayout lay = parameterLayout(preset("qwen2.5-0.5b"));
    const int64_t h = 896, q = 14 * 64, kv = 2 * 64, f = 4864;
    EXPECT_EQ(lay.dense_layer.matmulParams(), h * q + 2 * h * kv + q * h + 3 * h * f);
}

TEST(TensorGroupSums, AddsCountsAndKeepsTheLargestTensor) {
    TensorGroup a{10, 8, 6, 8};
    a += TensorGroup{5, 4, 4, 4};
    EXPECT_EQ(a, (TensorGroup{15, 12, 10, 8}));
}

}  // namespace
}  // namespace trainmem
