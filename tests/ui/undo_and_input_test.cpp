// Nothing changes behind the user's back: the wheel scrolls the input column
// instead of turning the number under the pointer; every edit, preset load
// and config.json open can be undone; a typed value is taken as typed, and
// one the core refuses is marked, never turned into another number.
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QMenuBar>
#include <QScrollArea>
#include <QScrollBar>
#include <QTest>
#include <QUndoStack>
#include <QUndoView>
#include <QWheelEvent>

#include "ui/breakdown_tab.h"
#include "ui/memory_chart.h"
#include "ui/model_panel.h"
#include "ui/preset_picker.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

// A wheel notch (120 eighths of a degree) towards the user over `w`'s centre,
// as the platform delivers it.
void wheelDown(QWidget* w, int notches = 1) {
    const QPointF centre(w->width() / 2.0, w->height() / 2.0);
    for (int i = 0; i < notches; ++i) {
        QWheelEvent e(centre, w->mapToGlobal(centre), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
        QApplication::sendEvent(w, &e);
    }
    QApplication::processEvents();
}

QScrollArea* inputColumn(MainWindow& window) {
    for (QScrollArea* area : window.findChildren<QScrollArea*>())
        if (area->widget() && area->widget()->findChild<PresetPicker*>()) return area;
    return nullptr;
}

QAction* editAction(MainWindow& window, const QKeySequence& keys) {
    for (QMenu* menu : window.menuBar()->findChildren<QMenu*>())
        for (QAction* a : menu->actions())
            if (a->shortcuts().contains(keys)) return a;
    return nullptr;
}

TEST(WheelOverInputs, AnUnfocusedFieldScrollsTheColumnAndKeepsItsValue) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    window->modelPanel()->setArchitectureShown(true);
    window->resize(1000, 700);  // the column scrolls
    QApplication::processEvents();
    QScrollArea* column = inputColumn(*window);
    ASSERT_NE(column, nullptr);
    ASSERT_GT(column->verticalScrollBar()->maximum(), 0);

    auto* kv_heads = fieldWidget<QSpinBox>(*window, "model.num_key_value_heads");
    ASSERT_NE(kv_heads, nullptr);
    ASSERT_EQ(kv_heads->value(), 8);
    const int scrolled = column->verticalScrollBar()->value();
    // The six notches over KV heads turned 8 into 2 (8.03B -> 7.83B).
    wheelDown(kv_heads, 6);
    EXPECT_EQ(kv_heads->value(), 8);
    EXPECT_EQ(window->document()->scenario().model.num_kv_heads, 8);
    EXPECT_FALSE(window->document()->dirty());
    EXPECT_GT(column->verticalScrollBar()->value(), scrolled);  // the column scrolled instead

    // Every spin box and combo box of the column takes focus by click or Tab,
    // never by the wheel, and none of them changes under an unfocused wheel.
    const Scenario before = window->document()->scenario();
    for (QAbstractSpinBox* spin : column->widget()->findChildren<QAbstractSpinBox*>()) {
        EXPECT_EQ(spin->focusPolicy(), Qt::StrongFocus) << spin->objectName().toStdString();
        if (spin->isVisible()) wheelDown(spin);
    }
    for (QComboBox* combo : column->widget()->findChildren<QComboBox*>()) {
        EXPECT_EQ(combo->focusPolicy(), Qt::StrongFocus);
        if (combo->isVisible()) wheelDown(combo);
    }
    EXPECT_TRUE(window->document()->scenario() == before);
}

TEST(WheelOverInputs, AFocusedFieldStillTakesTheWheel) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    window->modelPanel()->setArchitectureShown(true);
    QApplication::processEvents();
    QApplication::setActiveWindow(window.get());
    auto* layers = fieldWidget<QSpinBox>(*window, "model.num_hidden_layers");
    ASSERT_NE(layers, nullptr);
    layers->setFocus(Qt::MouseFocusReason);
    ASSERT_TRUE(layers->hasFocus());
    const int before = layers->value();
    wheelDown(layers, 3);
    EXPECT_EQ(layers->value(), before - 3);
    EXPECT_EQ(window->document()->scenario().model.num_layers, before - 3);
}

TEST(Undo, EditMenuUndoesAndRedoesAFieldEditWithTheStandardShortcuts) {
    Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    s.training.micro_batch_size = 1;
    auto window = openWindow(s);
    QAction* undo = editAction(*window, QKeySequence(QKeySequence::Undo));
    QAction* redo = editAction(*window, QKeySequence(QKeySequence::Redo));
    ASSERT_NE(undo, nullptr) << "no action on Ctrl+Z";
    ASSERT_NE(redo, nullptr);
    EXPECT_FALSE(undo->isEnabled());  // nothing to undo after opening

    MemoryChart* chart = window->breakdownTab()->chart();
    const double activations = layerValue(chart->spec(), "activations");
    auto* mbs = fieldWidget<QSpinBox>(*window, "training.micro_batch_size");
    mbs->setValue(2);
    QApplication::processEvents();
    ASSERT_TRUE(window->document()->dirty());
    ASSERT_TRUE(undo->isEnabled());
    EXPECT_TRUE(undo->text().contains("Micro-batch")) << undo->text().toStdString();

    undo->trigger();
    QApplication::processEvents();
    EXPECT_EQ(window->document()->scenario().training.micro_batch_size, 1);
    EXPECT_EQ(mbs->value(), 1);  // the field follows
    EXPECT_DOUBLE_EQ(layerValue(chart->spec(), "activations"), activations);
    EXPECT_FALSE(window->document()->dirty());  // back at the opened state

    redo->trigger();
    QApplication::processEvents();
    EXPECT_EQ(mbs->value(), 2);
    EXPECT_TRUE(window->document()->dirty());
}

TEST(Undo, TypingANumberIsOneStep) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    const int64_t sequence = window->document()->scenario().training.sequence_length;
    auto* seq = fieldWidget<QSpinBox>(*window, "training.sequence_length");
    for (int v : {4, 40, 409, 4096}) seq->setValue(v);  // keystroke by keystroke, as keyboard tracking edits
    EXPECT_EQ(window->document()->undoStack()->count(), 1);
    window->document()->undoStack()->undo();
    EXPECT_EQ(window->document()->scenario().training.sequence_length, sequence);
}

TEST(Undo, LoadingAPresetIsUndoneWithTheEditsBeforeIt) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    fieldWidget<QSpinBox>(*window, "model.num_hidden_layers")->setValue(20);
    QApplication::processEvents();
    const Scenario edited = window->document()->scenario();
    ASSERT_EQ(edited.model.num_layers, 20);

    ASSERT_TRUE(window->presetPicker()->choose(QStringLiteral("mixtral-8x7b-tp-ep")));
    QApplication::processEvents();
    ASSERT_TRUE(window->document()->scenario().model.moe.has_value());
    EXPECT_FALSE(window->document()->dirty());  // a freshly loaded preset has nothing unsaved

    window->document()->undoStack()->undo();
    QApplication::processEvents();
    EXPECT_TRUE(window->document()->scenario() == edited);  // no silent loss of the edits
    EXPECT_EQ(fieldWidget<QSpinBox>(*window, "model.num_hidden_layers")->value(), 20);
    EXPECT_TRUE(window->document()->dirty());
    window->document()->undoStack()->undo();
    EXPECT_EQ(window->document()->scenario().model.num_layers, 32);  // Llama-3.1-8B
}

TEST(Undo, OpeningAConfigJsonIsUndoable) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    const Scenario before = window->document()->scenario();
    ASSERT_TRUE(window->openFile(QStringLiteral(TRAINMEM_TEST_DATA_DIR "/hf/gpt2_defaults.json")));
    ASSERT_FALSE(window->document()->scenario().model == before.model);
    window->document()->undoStack()->undo();
    EXPECT_TRUE(window->document()->scenario() == before);
}

TEST(Undo, HistoryViewListsTheSteps) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    fieldWidget<QSpinBox>(*window, "training.micro_batch_size")->setValue(3);
    ASSERT_TRUE(window->presetPicker()->choose(QStringLiteral("mixtral-8x7b-tp-ep")));
    ASSERT_NE(window->undoHistory(), nullptr);
    auto* view = qobject_cast<QUndoView*>(window->undoHistory()->widget());
    ASSERT_NE(view, nullptr);
    EXPECT_EQ(view->stack(), window->document()->undoStack());
    ASSERT_EQ(view->stack()->count(), 2);
    EXPECT_TRUE(view->stack()->text(0).contains("Micro-batch"));
    EXPECT_TRUE(view->stack()->text(1).contains("mixtral-8x7b-tp-ep"));
    EXPECT_NE(editAction(*window, QKeySequence(QStringLiteral("Ctrl+Shift+H"))), nullptr);
}

// Types `text` into a spin box as a user does: select all, type, Enter.
void typeInto(QAbstractSpinBox* spin, const QString& text) {
    spin->setFocus();
    spin->selectAll();
    QTest::keyClicks(spin, text);
    QTest::keyClick(spin, Qt::Key_Return);
    QApplication::processEvents();
}

TEST(TypedValues, ALargeSequenceLengthIsTakenAsTyped) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    QApplication::setActiveWindow(window.get());
    auto* seq = fieldWidget<QSpinBox>(*window, "training.sequence_length");
    typeInto(seq, QStringLiteral("99999999"));
    EXPECT_EQ(seq->value(), 99999999);
    EXPECT_EQ(window->document()->scenario().training.sequence_length, 99999999);
}

TEST(TypedValues, ZeroAndNegativeAreMarkedNotReplaced) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    QApplication::setActiveWindow(window.get());
    MemoryChart* chart = window->breakdownTab()->chart();
    const double weights = layerValue(chart->spec(), "weights");
    auto* seq = fieldWidget<QSpinBox>(*window, "training.sequence_length");
    for (const QString& typed : {QStringLiteral("0"), QStringLiteral("-1")}) {
        typeInto(seq, typed);
        seq->clearFocus();  // leaving the field must not revert it either
        QApplication::processEvents();
        EXPECT_EQ(seq->value(), typed.toInt());
        EXPECT_EQ(window->document()->scenario().training.sequence_length, typed.toInt());
        ASSERT_TRUE(window->document()->stale()) << typed.toStdString();
        EXPECT_EQ(window->document()->error()->field, "training.sequence_length");
        EXPECT_EQ(window->fieldBindings().marked(), seq);
        EXPECT_FALSE(chart->spec().staleNotice.isEmpty());
        EXPECT_DOUBLE_EQ(layerValue(chart->spec(), "weights"), weights);  // the last valid result
    }
}

TEST(TypedValues, ArrowsStillStepWithinTheUsualRange) {
    Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    s.training.micro_batch_size = 1;
    auto window = openWindow(s);
    auto* mbs = fieldWidget<QSpinBox>(*window, "training.micro_batch_size");
    mbs->stepDown();
    EXPECT_EQ(mbs->value(), 1);  // the down arrow stops at the smallest valid micro-batch
    mbs->stepUp();
    EXPECT_EQ(mbs->value(), 2);
}

}  // namespace
}  // namespace trainmem::ui

namespace trainmem::ui {
namespace {

TEST(Help, ShortcutListNamesEveryMenuShortcut) {
    auto window = test::openWindow(test::presetScenario("llama3.1-8b-fsdp-8xh100"));
    const QString list = window->shortcutList();
    for (const QKeySequence& keys : {QKeySequence(QKeySequence::Undo), QKeySequence(QKeySequence::Save),
                                     QKeySequence(QStringLiteral("Ctrl+Shift+P")), QKeySequence(QStringLiteral("Ctrl+L"))})
        EXPECT_TRUE(list.contains(keys.toString(QKeySequence::NativeText).toHtmlEscaped())) << keys.toString().toStdString();
    EXPECT_TRUE(list.contains("Undo"));
    EXPECT_TRUE(list.contains("Pin to Compare"));
}

}  // namespace
}  // namespace trainmem::ui

namespace trainmem::ui::test {
namespace {

// Choosing a stack in the Training panel sets its parallelism key too (how
// its FSDP wraps the model's ends, core/scenario/frameworks.h): the FSDP preset's
// ends follow DeepSpeed's, the Parallelism panel shows it, and one undo
// takes the whole choice back.
TEST(FrameworkChoice, SetsHowFsdpWrapsTheModelsEndsAndUndoesAsOneStep) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    ASSERT_EQ(window->document()->scenario().parallelism.fsdp_ends, FsdpEnds::Root);
    const int64_t before = window->document()->scenario().parallelism.zero_stage;
    ASSERT_EQ(before, 3);  // ZeRO-3: the ends matter
    auto* framework = fieldWidget<QComboBox>(*window, "training.framework");
    auto* ends = fieldWidget<QComboBox>(*window, "parallelism.fsdp_ends");
    ASSERT_NE(framework, nullptr);
    ASSERT_NE(ends, nullptr);
    const QString ends_before = ends->currentText();
    framework->setCurrentIndex(framework->findText(QStringLiteral("DeepSpeed")));
    QApplication::processEvents();
    EXPECT_EQ(window->document()->scenario().training.framework, Framework::Deepspeed);
    EXPECT_EQ(window->document()->scenario().parallelism.fsdp_ends, FsdpEnds::OwnUnits);
    EXPECT_NE(ends->currentText(), ends_before);  // the Parallelism panel follows

    QAction* undo = nullptr;
    for (QAction* a : window->findChildren<QAction*>())
        if (a->shortcut() == QKeySequence(QKeySequence::Undo)) undo = a;
    ASSERT_NE(undo, nullptr);
    undo->trigger();
    QApplication::processEvents();
    EXPECT_EQ(window->document()->scenario().parallelism.fsdp_ends, FsdpEnds::Root);
    EXPECT_EQ(ends->currentText(), ends_before);
}

}  // namespace
}  // namespace trainmem::ui::test
