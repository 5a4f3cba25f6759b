// ScenarioDocument: edits re-estimate at once, no-op edits do nothing, and an
// invalid edit keeps the last valid result while naming the field.
#include <QSignalSpy>

#include "ui/scenario_document.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using test::presetScenario;

TEST(ScenarioDocument, EditThatChangesNothingEmitsNothingAndStaysClean) {
    ScenarioDocument doc;
    doc.replace(presetScenario("llama3.1-8b-fsdp-8xh100"));
    QSignalSpy changed(&doc, &ScenarioDocument::changed);
    const int64_t mbs = doc.scenario().training.micro_batch_size;
    EXPECT_FALSE(doc.edit([&](Scenario& s) { s.training.micro_batch_size = mbs; }));
    EXPECT_EQ(changed.count(), 0);
    EXPECT_FALSE(doc.dirty());
}

TEST(ScenarioDocument, DoublingMicroBatchDoublesActivationsAtOnce) {
    // Activations saved for backward are linear in the micro-batch b
    // (Korthikanti et al. 2022: s*b*h*(34 + 5as/h) per layer).
    ScenarioDocument doc;
    Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    s.training.micro_batch_size = 1;
    doc.replace(s);
    ASSERT_TRUE(doc.hasResult());
    const double before = static_cast<double>(doc.result().peak.at_peak[Component::Activations]);
    ASSERT_GT(before, 0);
    EXPECT_TRUE(doc.edit([](Scenario& x) { x.training.micro_batch_size = 2; }));
    EXPECT_TRUE(doc.dirty());
    EXPECT_FALSE(doc.stale());
    const double after = static_cast<double>(doc.result().peak.at_peak[Component::Activations]);
    EXPECT_NEAR(after / before, 2.0, 0.01);
}

TEST(ScenarioDocument, InvalidEditKeepsLastResultAndNamesTheField) {
    // Llama-3.1-8B has 32 heads; a tensor degree of 3 cannot split them.
    ScenarioDocument doc;
    doc.replace(presetScenario("llama3.1-8b-fsdp-8xh100"));
    ASSERT_TRUE(doc.hasResult());
    const int64_t device = doc.result().peak.device_bytes;
    EXPECT_TRUE(doc.edit([](Scenario& s) {
        s.parallelism.tensor = 3;
        s.parallelism.gpus.reset();  // the preset states its GPU count; that would be the first error
    }));
    EXPECT_TRUE(doc.stale());
    ASSERT_TRUE(doc.error().has_value());
    EXPECT_EQ(doc.error()->field, "parallelism.tensor");
    ASSERT_TRUE(doc.hasResult());
    EXPECT_EQ(doc.result().peak.device_bytes, device);
    EXPECT_EQ(doc.resultScenario().parallelism.tensor, 1);
    EXPECT_EQ(doc.scenario().parallelism.tensor, 3);  // the input is kept, not reverted

    EXPECT_TRUE(doc.edit([](Scenario& s) { s.parallelism.tensor = 2; }));
    EXPECT_FALSE(doc.stale());
    EXPECT_EQ(doc.resultScenario().parallelism.tensor, 2);
}

TEST(ScenarioDocument, EditingThePresetModelForgetsThePresetName) {
    ScenarioDocument doc;
    doc.replace(presetScenario("llama3.1-8b-fsdp-8xh100"));
    ASSERT_FALSE(doc.scenario().model_preset.empty());
    doc.edit([](Scenario& s) { s.model.num_layers = 16; });
    EXPECT_TRUE(doc.scenario().model_preset.empty());
}

TEST(ScenarioDocument, ReplaceClearsPathAndDirtyFlag) {
    ScenarioDocument doc;
    doc.replace(presetScenario("llama3.1-8b-fsdp-8xh100"), QStringLiteral("/tmp/a.json"));
    doc.edit([](Scenario& s) { s.training.sequence_length = 4096; });
    EXPECT_TRUE(doc.dirty());
    doc.replace(presetScenario("mixtral-8x7b-tp-ep"));
    EXPECT_FALSE(doc.dirty());
    EXPECT_TRUE(doc.path().isEmpty());
}

}  // namespace
}  // namespace trainmem::ui
