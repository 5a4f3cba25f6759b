// The model-field table (core/model/model_fields.h) drives validation and
// the exporter: every ranged field, out of its range, is refused under the
// key its family spells it with, and every key the exporter writes for a
// preset is a row's key or alias (or a family rule's).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "core/model/hf_config.h"
#include "core/model/model_fields.h"
#include "core/model/model_validate.h"
#include "core/scenario/model_presets.h"
#include "core/account/scenario_validate.h"

namespace trainmem {
namespace {

TEST(ModelFields, RowsAreInEnumOrder) {
    const std::vector<ModelFieldRow>& rows = modelFields();
    ASSERT_EQ(rows.size(), kModelFieldCount);
    for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(static_cast<size_t>(rows[i].field), i) << rows[i].name;
}

// Llama4TextConfig's spellings (configuration_llama4.py, transformers 4.51):
// the dense MLP is intermediate_size_mlp, the experts' width intermediate_size,
// the MoE layers interleave_moe_layer_step or moe_layers.
TEST(ModelFields, Llama4SpellsItsLayerPatternAndWidthsItsOwnWay) {
    EXPECT_EQ(configKey("llama4_text", ModelField::Intermediate), "intermediate_size_mlp");
    EXPECT_EQ(configKey("llama4_text", ModelField::ExpertFfn), "intermediate_size");
    EXPECT_EQ(configKey("llama4_text", ModelField::LayerFrequency), "interleave_moe_layer_step");
    EXPECT_EQ(configKey("llama4_text", ModelField::FirstDenseLayers), "moe_layers");
    EXPECT_EQ(configKey("mixtral", ModelField::ExpertFfn), "intermediate_size");
    EXPECT_EQ(configKey("gpt2", ModelField::NumHeads), "n_head");
    EXPECT_EQ(configKey("qwen2_moe", ModelField::LayerFrequency), "decoder_sparse_step");
}

// Each preset, with one ranged field set out of its range, is refused under
// that field's key in the preset's family's spelling.
TEST(ModelFields, EveryRangedFieldOutOfRangeIsNamedInTheFamilysSpelling) {
    int checked = 0;
    for (const char* preset : {"llama-3.1-8b", "gpt2", "mixtral-8x7b", "qwen1.5-moe-a2.7b", "deepseek-v3",
                               "llama-4-scout", "gemma-2-9b", "glm-4.5-air"}) {
        const Expected<ModelConfig> base = loadModelPreset(preset);
        ASSERT_TRUE(base.ok()) << preset;
        ASSERT_TRUE(validate(*base).ok()) << preset;
        for (const ModelFieldRow& row : modelFields()) {
            if (row.range == FieldRange::Any || row.get(*base).is_null()) continue;
            ModelConfig m = *base;
            switch (row.range) {
                case FieldRange::Positive: row.set(m, 0); break;
                case FieldRange::LayerCount: row.set(m, kMaxLayers + 1); break;
                case FieldRange::NonNegative: row.set(m, -1); break;
                case FieldRange::Probability: row.set(m, 1.0); break;
                case FieldRange::Fraction: row.set(m, 0.0); break;
                case FieldRange::NonNegativeNumber: row.set(m, -0.5); break;
                case FieldRange::UpToLayers: row.set(m, m.num_layers + 1); break;
                case FieldRange::NoPeInterval: row.set(m, -1); break;
                case FieldRange::Activation: row.set(m, "tanh"); break;
                case FieldRange::Any: break;
            }
            const Status s = validate(m);
            ASSERT_FALSE(s.ok()) << preset << " " << row.name;
            EXPECT_EQ(s.error().field, modelField(m.family, row.field)) << preset << " " << row.name << ": "
                                                                         << s.error().text();
            ++checked;
        }
    }
    EXPECT_GT(checked, 100);
}

TEST(ModelFields, EveryKeyTheExporterWritesIsInTheTable) {
    // Keys of family rules that are code, not one field's: the layer
    // selections and the routing method (hf_config.cpp readMoeLayers, readMoe).
    ASSERT_FALSE(presetFiles(presetsDirectory() / "models").empty());
    // The hybrids' layer patterns are read and written by hf_hybrid.cpp /
    // writeHybrid, LFM2's width rule by its own key, and a multimodal
    // checkpoint's vision count by its own key.
    const std::set<std::string> rules = {"qkv_bias", "topk_method", "decoder_sparse_step", "mlp_only_layers",
                                         "trainmem_first_dense_layers", "trainmem_moe_layer_frequency",
                                         "layer_types", "hybrid_override_pattern", "block_auto_adjust_ff_dim",
                                         "trainmem_vision_parameters"};
    for (const std::filesystem::path& file : presetFiles(presetsDirectory() / "models")) {
        const std::string preset = file.stem().string();
        const Expected<ModelConfig> m = loadModelPreset(preset);
        ASSERT_TRUE(m.ok()) << preset;
        const nlohmann::json exported = exportHuggingFaceConfig(*m);
        for (const auto& [key, value] : exported.items()) {
            bool known = rules.count(key) > 0;
            for (const ModelFieldRow& row : modelFields()) {
                if (row.key(familyOf(m->family)) == key) known = true;
                for (std::string_view alias : row.aliases) known = known || alias == key;
            }
            EXPECT_TRUE(known) << preset << ": " << key;
        }
    }
}

}  // namespace
}  // namespace trainmem
