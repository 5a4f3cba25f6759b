// The model panel's layer pattern (issue 23, item 6): shown for a hybrid,
// hidden for a model whose layers are all alike, and each cell's tooltip
// names its layer's kind and what its pipeline stage holds.
#include <QApplication>

#include "ui/layer_pattern_strip.h"
#include "ui/model_panel.h"
#include "ui/preset_picker.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

TEST(LayerPatternStrip, AHybridsLayersAndStagesAreShownByKind) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    auto* strip = window->modelPanel()->findChild<LayerPatternStrip*>();
    ASSERT_NE(strip, nullptr);
    EXPECT_FALSE(strip->isVisibleTo(window->modelPanel()));  // Llama: every layer alike

    ASSERT_TRUE(window->presetPicker()->choose("nemotron-3-nano-30b-a3b"));
    window->document()->edit([](Scenario& s) {
        s.parallelism.pipeline = 4;
        s.parallelism.data = 1;
    }, "pipeline");
    QApplication::processEvents();
    EXPECT_TRUE(strip->isVisibleTo(window->modelPanel()));
    // hybrid_override_pattern "MEMEM*EMEMEM*..." (52 layers): layer 1 is
    // Mamba-2 only, layer 2 MoE only; 13 layers per stage.
    const QString first = strip->layerText(0);
    EXPECT_TRUE(first.startsWith("Layer 1: Mamba-2")) << first.toStdString();
    EXPECT_TRUE(first.contains("Stage 1 of 4 (layers 1–13)")) << first.toStdString();
    EXPECT_TRUE(first.contains("× no mixer + MoE")) << first.toStdString();
    EXPECT_TRUE(strip->layerText(1).startsWith("Layer 2: no mixer + MoE")) << strip->layerText(1).toStdString();
    EXPECT_TRUE(strip->layerText(51).contains("Stage 4 of 4 (layers 40–52)")) << strip->layerText(51).toStdString();

    // An edit that leaves the layer count and the pattern apart (invalid
    // until the pattern follows) draws and describes nothing: the strip
    // read past the pattern's end under ASan (ModelPanel's field edits).
    window->document()->edit([](Scenario& s) { s.model.num_layers = 60; }, "layers");
    QApplication::processEvents();
    strip->repaint();
    EXPECT_TRUE(strip->layerText(55).isEmpty());
}

}  // namespace
}  // namespace trainmem::ui
