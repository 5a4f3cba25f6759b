// The 2026 hybrids (issue 23): their config.json files import as their own
// families, never as Llama-style decoders, and count the published totals
// of the checkpoints to the parameter. Each fixture is the checkpoint's
// config.json (tests/data/hf/hybrids/, the keys that matter); the published
// totals and their sources are in presets/models/README.md ("Hybrids").
#include <gtest/gtest.h>

#include "core/account/estimate.h"
#include "core/account/scenario_validate.h"
#include "core/model/model_validate.h"
#include "core/model/parameters.h"
#include "core/scenario/scenario.h"
#include "hf_config_test_support.h"

namespace trainmem {
namespace {

using hf_test::importFixture;

struct PublishedTotal {
    const char* fixture;
    int64_t text;        // the model class's parameters (with stored router biases, as for DeepSeek-V3)
    int64_t mtp;         // stored MTP layers
    int64_t vision;      // stored vision tower
    int64_t checkpoint;  // the Hub's safetensors total
};

// Published totals (the Hub's safetensors totals as quoted in public
// listings and code; presets/models/README.md names each source). The
// breakdowns are the checkpoints' own tensor groups (model.*, mtp.*,
// model.visual.*), which a census of the shard headers reports.
const PublishedTotal kTotals[] = {
    {"qwen3-next-80b-a3b.json", 79'674'391'296, 1'650'471'424, 0, 81'324'862'720},
    {"qwen3.5-9b.json", 8'953'803'264, 243'290'624, 456'010'480, 9'653'104'368},
    {"qwen3.5-35b-a3b.json", 34'660'610'688, 844'640'768, 446'571'248, 35'951'822'704},
    {"qwen3.5-397b-a17b.json", 396'346'350'336, 6'595'568'128, 456'010'480, 403'397'928'944},
    {"lfm2-1.2b.json", 1'170'340'608, 0, 0, 1'170'340'608},
    {"minimax-m2.json", 228'689'764'864, 0, 0, 228'689'764'864},
    {"nemotron-3-nano-30b-a3b.json", 31'577'940'288, 0, 0, 31'577'940'288},
    // DeepSeek Sparse Attention: the indexer on every layer; V3.2's MTP
    // layer stores its own embedding and head, GLM-5's does not.
    {"deepseek-v3.2-exp.json", 671'877'944'064, 13'477'385'728, 0, 685'355'329'792},
    {"glm-5.json", 743'911'218'432, 9'952'920'576, 0, 753'864'139'008},
};

TEST(HybridFamilies, CountThePublishedCheckpointTotals) {
    for (const PublishedTotal& t : kTotals) {
        SCOPED_TRACE(t.fixture);
        const ImportedModel imported = importFixture(std::string("hybrids/") + t.fixture);
        for (const std::string& w : imported.warnings)  // MiniMax-M2 ships fp8 weights: said, and true
            if (w.rfind("model.quantization_config", 0) != 0) ADD_FAILURE() << "warning: " << w;
        const ParameterCount c = countParameters(imported.model);
        EXPECT_EQ(c.total, t.text);
        EXPECT_EQ(c.mtp, t.mtp);
        EXPECT_EQ(c.vision, t.vision);
        EXPECT_EQ(c.checkpoint, t.checkpoint);
    }
}

// GLM-4.5-Air's checkpoint stores one MTP layer with its own embedding and
// head copies: with it, the count is the repo's Hub total (presets/models/README.md, note 8).
TEST(HybridFamilies, StoredMtpLayersOfAPresetMakeItsHubTotal) {
    const ParameterCount c = countParameters(hf_test::importPreset("glm-4.5-air"));
    EXPECT_EQ(c.total, 106'852'251'264);
    EXPECT_EQ(c.mtp, 3'616'573'568);
    EXPECT_EQ(c.checkpoint, 110'468'824'832);
}

// What the app saves as config.json reads back as the same model: the
// layer pattern, the mixers' sizes, the indexer, MTP and vision counts.
TEST(HybridFamilies, ExportedConfigsReadBackIdentically) {
    for (const PublishedTotal& t : kTotals) {
        SCOPED_TRACE(t.fixture);
        const ModelConfig m = importFixture(std::string("hybrids/") + t.fixture).model;
        const Expected<ImportedModel> back = importHuggingFaceConfig(exportHuggingFaceConfig(m));
        ASSERT_TRUE(back.ok()) << back.error().text();
        EXPECT_TRUE(back->model == m) << exportHuggingFaceConfig(m).dump(1);
        EXPECT_EQ(countParameters(back->model).checkpoint, t.checkpoint);
    }
}

TEST(HybridFamilies, LayerPatternsAreTheConfigs) {
    // Qwen3-Next: every 4th layer full attention, the rest Gated DeltaNet.
    const ModelConfig next = importFixture("hybrids/qwen3-next-80b-a3b.json").model;
    ASSERT_EQ(next.layer_kinds.size(), 48u);
    EXPECT_EQ(next.layerKind(3).mixer, MixerKind::Attention);
    EXPECT_EQ(next.layerKind(4).mixer, MixerKind::GatedDeltaNet);
    EXPECT_EQ(next.layerKind(4).ffn, FfnKind::Moe);
    // Nemotron 3 Nano: "MEMEM*E...": 23 Mamba-2, 23 MoE and 6 attention layers.
    const ModelConfig nano = importFixture("hybrids/nemotron-3-nano-30b-a3b.json").model;
    int64_t mamba = 0, moe = 0, attention = 0;
    for (const LayerKind& k : nano.layer_kinds) {
        mamba += k.mixer == MixerKind::Mamba2;
        attention += k.mixer == MixerKind::Attention;
        moe += k.ffn == FfnKind::Moe;
    }
    EXPECT_EQ(mamba, 23);
    EXPECT_EQ(moe, 23);
    EXPECT_EQ(attention, 6);
    // LFM2-1.2B: attention at full_attn_idxs 2, 5, 8, 10, 12, 14; its MLP is
    // block_ff_dim 12288 adjusted to 8192 (Lfm2MLP).
    const ModelConfig lfm = importFixture("hybrids/lfm2-1.2b.json").model;
    EXPECT_EQ(lfm.layerKind(2).mixer, MixerKind::Attention);
    EXPECT_EQ(lfm.layerKind(3).mixer, MixerKind::ShortConv);
    EXPECT_EQ(lfm.ffn_hidden_size, 8192);
}

// Granite 4.0-H-Small's sizes (ibm-granite/granite-4.0-h-small; 36 Mamba-2
// and 4 attention layers, every layer with its experts and shared MLP)
// count its published 32,207,337,984 whatever mamba_d_head says, given or
// "auto" (GraniteMoeHybridConfig: mamba_expand * h / mamba_n_heads = 64).
// Which four layers attend was not verified; the count does not depend on it.
TEST(HybridFamilies, GraniteHeadWidthAutoIsExpandTimesHiddenOverHeads) {
    nlohmann::json c = {{"model_type", "granitemoehybrid"}, {"hidden_size", 4096}, {"num_hidden_layers", 40},
                        {"num_attention_heads", 32}, {"num_key_value_heads", 8}, {"num_local_experts", 72},
                        {"num_experts_per_tok", 10}, {"intermediate_size", 768}, {"shared_intermediate_size", 1536},
                        {"mamba_n_heads", 128}, {"mamba_n_groups", 1}, {"mamba_d_state", 128}, {"mamba_d_conv", 4},
                        {"mamba_expand", 2}, {"mamba_conv_bias", true}, {"mamba_proj_bias", false},
                        {"vocab_size", 100352}, {"tie_word_embeddings", true}};
    nlohmann::json types = nlohmann::json::array();
    for (int i = 0; i < 40; ++i) types.push_back(i % 10 == 5 ? "attention" : "mamba");
    c["layer_types"] = types;
    for (const nlohmann::json& head : {nlohmann::json(64), nlohmann::json("auto")}) {
        c["mamba_d_head"] = head;
        const Expected<ImportedModel> r = importHuggingFaceConfig(c);
        ASSERT_TRUE(r.ok()) << r.error().text();
        EXPECT_EQ(r->model.mamba->head_dim, 64);
        EXPECT_EQ(countParameters(r->model).checkpoint, 32'207'337'984);
    }
    c["mamba_d_head"] = "wide";
    const Expected<ImportedModel> bad = importHuggingFaceConfig(c);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().field, "model.mamba_d_head");
}

TEST(HybridFamilies, BadPatternsAreNamedByTheirKey) {
    nlohmann::json c = hf_test::readJson(hf_test::kRoot / "tests/data/hf/hybrids/nemotron-3-nano-30b-a3b.json");
    c["hybrid_override_pattern"] = std::string(51, 'M') + "X";
    Expected<ImportedModel> r = importHuggingFaceConfig(c);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().field, "model.hybrid_override_pattern");
    EXPECT_NE(r.error().message.find("'X' at 51"), std::string::npos) << r.error().message;
    c["hybrid_override_pattern"] = "MEM";
    r = importHuggingFaceConfig(c);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("one character per layer: 52"), std::string::npos) << r.error().message;

    nlohmann::json q = hf_test::readJson(hf_test::kRoot / "tests/data/hf/hybrids/qwen3.5-9b.json");
    q["text_config"]["layer_types"][5] = "mamba";
    r = importHuggingFaceConfig(q);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().field, "model.text_config.layer_types");
}

// An edit that changes the layer count (the app's Layers field) or makes a
// mixer's sizes overflow is refused by validation, naming the key, before
// any count reads layer_kinds past its end.
TEST(HybridFamilies, EditedModelsAreValidatedBeforeTheyAreCounted) {
    ModelConfig m = importFixture("hybrids/qwen3-next-80b-a3b.json").model;
    m.num_layers = 60;
    Status st = validate(m);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().field, "model.layer_types");
    m.num_layers = 48;
    m.linear_attention->key_heads = 65536;
    m.linear_attention->key_head_dim = 65536;
    st = validate(m);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().field, "model.linear_num_key_heads");
}

// The hybrids are estimated (their mixers' rows: hybrid_mixer_truth_test);
// the settings nobody has read or measured on their layers are refused,
// naming the setting and the layer kind.
TEST(HybridFamilies, EstimatesAndTheirRefusalsNameTheLayerKind) {
    Scenario s;
    s.model = importFixture("hybrids/nemotron-3-nano-30b-a3b.json").model;
    s.training.sequence_length = 8192;
    s.training.micro_batch_size = 8;  // activations past the optimizer step's peak
    EXPECT_TRUE(validate(s).ok()) << validate(s).error().text();
    const auto fine = estimate(s);
    ASSERT_TRUE(fine.ok());
    EXPECT_GT(fine->peak.at_peak[Component::Activations], 0);

    Scenario cp = s;
    cp.parallelism.context = 2;
    cp.parallelism.data = 1;
    Status status = validate(cp);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().field, "parallelism.context");
    EXPECT_NE(status.error().message.find("Mamba-2"), std::string::npos) << status.error().message;

    Scenario op = s;
    op.training.checkpointing = Checkpointing::Op;
    status = validate(op);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().field, "training.activation_checkpointing");

    // TP splits whole Mamba-2 groups: 3 groups over 2 ranks do not split.
    Scenario tp = s;
    tp.model.mamba->groups = 3;
    tp.parallelism.tensor = 2;
    ASSERT_TRUE(validate(tp.model).ok());
    status = validate(tp);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().field, "parallelism.tensor");
    EXPECT_NE(status.error().message.find("n_groups (3)"), std::string::npos) << status.error().message;
}

}  // namespace
}  // namespace trainmem
