// The model panel is generated from the model-field table
// (core/model/model_fields.h): every field the importer reads has a widget
// that shows and edits it, and an error the CLI names for a field (in the
// open family's spelling) puts the red border on that field's widget.
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>

#include "core/model/hf_config.h"
#include "core/model/model_fields.h"
#include "ui/model_panel.h"
#include "ui/preset_picker.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

// The widget the table's row is shown in: bound to its canonical path.
QWidget* rowWidget(MainWindow& window, const ModelFieldRow& row) {
    return window.fieldBindings().widgetFor(QString::fromStdString("model." + std::string(row.name)));
}

// Moves the widget to another value as a user would and says whether the
// model's field followed.
bool editChangesTheField(MainWindow& window, const ModelFieldRow& row, QWidget* w) {
    const nlohmann::json before = row.get(window.document()->scenario().model);
    if (auto* spin = qobject_cast<QSpinBox*>(w)) {
        spin->setValue(spin->value() + 1);
    } else if (auto* real = qobject_cast<QDoubleSpinBox*>(w)) {
        real->setValue(real->value() > 0.5 ? 0.25 : 0.75);
    } else if (auto* flag = qobject_cast<QCheckBox*>(w)) {
        flag->setChecked(!flag->isChecked());
    } else if (auto* line = qobject_cast<QLineEdit*>(w)) {
        line->setText(line->text() + "x");
        emit line->textEdited(line->text());
    } else if (auto* box = qobject_cast<QComboBox*>(w)) {
        box->setCurrentIndex((box->currentIndex() + 1) % box->count());
    } else {
        return false;
    }
    QApplication::processEvents();
    return row.get(window.document()->scenario().model) != before;
}

// The widget an error naming `key` in `family` must mark: the last row in
// table order with that key (the experts' width where it shares the dense
// FFN's intermediate_size).
const ModelFieldRow* ownerOf(std::string_view family, const std::string& field) {
    const ModelFieldRow* owner = nullptr;
    for (const ModelFieldRow& row : modelFields())
        if (modelField(family, row.field) == field) owner = &row;
    return owner;
}

TEST(ModelPanel, EveryFieldOfTheTableIsShownAndEditable) {
    // DeepSeek-V3 opens the experts and latent attention, the hybrids their
    // mixers' rows (Gated DeltaNet, Mamba-2, short conv), so every row shows.
    for (const char* preset : {"deepseek-v3", "llama-4-scout", "mixtral-8x7b", "gpt2", "qwen3-next-80b-a3b",
                               "nemotron-3-nano-30b-a3b", "lfm2-1.2b"}) {
        auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
        ASSERT_TRUE(window->presetPicker()->choose(preset)) << preset;
        window->modelPanel()->setArchitectureShown(true);
        QApplication::processEvents();
        const std::string family = window->document()->scenario().model.family;
        for (const ModelFieldRow& row : modelFields()) {
            QWidget* w = rowWidget(*window, row);
            ASSERT_NE(w, nullptr) << preset << ": no widget for model." << row.name;
            // The family's own spelling (what errors name) reaches the same widget.
            const std::string key = modelField(family, row.field);
            EXPECT_EQ(window->fieldBindings().widgetFor(QString::fromStdString(key)),
                      rowWidget(*window, *ownerOf(family, key)))
                << preset << ": " << key;
            if (row.field == ModelField::Family) continue;  // edited last: it changes every key
            const ModelConfig& m = window->document()->scenario().model;
            const bool mixer_used = m.isHybrid() && (row.field == ModelField::AttentionOutputGate || !row.get(m).is_null());
            const bool shown = (row.section != ModelSection::Experts || m.moe) &&
                               (row.section != ModelSection::Latent || m.mla) &&
                               (row.section != ModelSection::Mixers || mixer_used);
            if (!shown) continue;
            EXPECT_TRUE(w->isVisibleTo(window.get())) << preset << ": model." << row.name;
            EXPECT_TRUE(editChangesTheField(*window, row, w)) << preset << ": model." << row.name;
        }
    }
}

TEST(ModelPanel, EveryFamilysKeysReachAWidget) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    for (const FamilySpec* f : familyCatalogue())
        for (const ModelFieldRow& row : modelFields())
            EXPECT_NE(window->fieldBindings().widgetFor(QString::fromStdString(modelField(f->model_type, row.field))),
                      nullptr)
                << f->model_type << " " << row.name;
}

// Edits Llama 4's field to `value` and returns the error's field, checking
// that the widget edited is the one marked.
std::string markAfterEdit(MainWindow& window, const char* path, int value) {
    auto* spin = fieldWidget<QSpinBox>(window, path);
    if (!spin) return "";
    const int before = spin->value();
    spin->setValue(value);
    QApplication::processEvents();
    const std::optional<Error> error = window.document()->error();
    EXPECT_TRUE(error.has_value()) << path;
    EXPECT_EQ(window.fieldBindings().marked(), spin) << path << ": " << (error ? error->text() : "");
    EXPECT_TRUE(spin->styleSheet().contains("border")) << path;
    const std::string field = error ? error->field : "";
    spin->setValue(before);
    QApplication::processEvents();
    EXPECT_EQ(window.fieldBindings().marked(), nullptr) << path;
    return field;
}

TEST(ModelPanel, Llama4LayerPatternErrorsMarkTheirFields) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    ASSERT_TRUE(window->presetPicker()->choose("llama-4-scout"));
    window->modelPanel()->setArchitectureShown(true);
    QApplication::processEvents();
    // Llama4TextConfig: dense MLPs intermediate_size_mlp, MoE layers every
    // interleave_moe_layer_step-th or as moe_layers lists them.
    EXPECT_EQ(markAfterEdit(*window, "model.ffn_hidden_size", 0), "model.intermediate_size_mlp");
    EXPECT_EQ(markAfterEdit(*window, "model.moe.layer_frequency", 0), "model.interleave_moe_layer_step");
    EXPECT_EQ(markAfterEdit(*window, "model.moe.first_dense_layers", 1000), "model.moe_layers");
    EXPECT_EQ(markAfterEdit(*window, "model.moe.expert_ffn", 0), "model.intermediate_size");
}

// A hybrid's mixer sizes are edited in the "Hybrid layers" box, and an
// error the CLI names for one (in the family's spelling) marks its widget.
TEST(ModelPanel, HybridMixerErrorsMarkTheirFields) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    ASSERT_TRUE(window->presetPicker()->choose("qwen3-next-80b-a3b"));
    window->modelPanel()->setArchitectureShown(true);
    QApplication::processEvents();
    EXPECT_EQ(markAfterEdit(*window, "model.linear_attention.key_heads", 0), "model.linear_num_key_heads");
    EXPECT_EQ(markAfterEdit(*window, "model.linear_attention.conv_kernel", 2000), "model.linear_conv_kernel_dim");
    ASSERT_TRUE(window->presetPicker()->choose("nemotron-3-nano-30b-a3b"));
    QApplication::processEvents();
    EXPECT_EQ(markAfterEdit(*window, "model.mamba.state_size", 0), "model.ssm_state_size");
}

TEST(ModelPanel, MixtralsExpertWidthErrorMarksTheExpertsWidgetNotTheFfn) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    ASSERT_TRUE(window->presetPicker()->choose("mixtral-8x7b"));
    window->modelPanel()->setArchitectureShown(true);
    QApplication::processEvents();
    QWidget* ffn = window->fieldBindings().widgetFor("model.ffn_hidden_size");
    QWidget* experts = window->fieldBindings().widgetFor("model.moe.expert_ffn");
    ASSERT_NE(experts, nullptr);
    EXPECT_NE(ffn, experts);
    // MixtralConfig's intermediate_size is the experts' width.
    EXPECT_EQ(markAfterEdit(*window, "model.moe.expert_ffn", 0), "model.intermediate_size");
}

// The errors the CLI prints for a Llama 4 checkpoint's config.json name
// the nested key (model.text_config.<key>); each marks its field.
TEST(ModelPanel, ErrorsTheCliNamesForLlama4MarkTheirFields) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    ASSERT_TRUE(window->presetPicker()->choose("llama-4-scout"));
    QApplication::processEvents();
    const std::pair<nlohmann::json, const char*> cases[] = {
        {{{"intermediate_size_mlp", 0}}, "model.ffn_hidden_size"},
        {{{"interleave_moe_layer_step", 0}}, "model.moe.layer_frequency"},
        {{{"moe_layers", "every other"}}, "model.moe.first_dense_layers"},
        {{{"intermediate_size", 0}}, "model.moe.expert_ffn"},
    };
    for (const auto& [text_config, path] : cases) {
        const Expected<ImportedModel> imported =
            importHuggingFaceConfig({{"model_type", "llama4"}, {"text_config", text_config}});
        ASSERT_FALSE(imported.ok()) << text_config.dump();
        QWidget* marked = window->fieldBindings().show(imported.error());
        EXPECT_EQ(marked, window->fieldBindings().widgetFor(path)) << imported.error().text();
        EXPECT_NE(marked, nullptr) << imported.error().text();
        window->fieldBindings().show(std::nullopt);
    }
}

}  // namespace
}  // namespace trainmem::ui
