// Issue 27: the app trusted in a design doc and shared with a team. Undo
// keys where one types, a comparison that says what each bar is in every
// form it leaves the app in, totals rounded (never cut), drops on the chart.
#include <cmath>

#include <QAbstractSpinBox>
#include <QClipboard>
#include <QDropEvent>
#include <QDebug>
#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QStatusBar>
#include <QLineEdit>
#include <QMimeData>
#include <QProcess>
#include <QHeaderView>
#include <QTabBar>
#include <QTableWidget>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>
#include <QWheelEvent>

#include "core/report/report.h"
#include "ui/breakdown_tab.h"
#include "ui/chart_views.h"
#include "ui/compare_tab.h"
#include "ui/memory_chart.h"
#include "ui/launch_options.h"
#include "ui/preset_picker.h"
#include "ui/scenario_files.h"
#include "ui/scenario_pins.h"

#include "core/scenario/scenario_fields.h"
#include "core/scenario/scenario_link.h"
#include "core/account/estimate.h"
#include "core/scenario/scenario_file.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using namespace test;

std::unique_ptr<MainWindow> activeWindow(const Scenario& s) {
    auto window = openWindow(s);
    QApplication::setActiveWindow(window.get());
    window->activateWindow();
    EXPECT_TRUE(QTest::qWaitForWindowActive(window.get()));
    return window;
}

// Types `text` into a spin box as a user does: select its text, type, and
// leave the focus in it.
void typeInto(QSpinBox* spin, const QString& text) {
    spin->setFocus(Qt::TabFocusReason);
    QApplication::processEvents();
    spin->selectAll();
    QTest::keyClicks(QApplication::focusWidget(), text);
    QApplication::processEvents();
}

void pressKeys(Qt::Key key, Qt::KeyboardModifiers mods) {
    QWidget* focus = QApplication::focusWidget();
    ASSERT_NE(focus, nullptr);
    QTest::keyClick(focus, key, mods);
    QApplication::processEvents();
}

TEST(UndoKeys, CtrlZAndCtrlShiftZWorkWhileANumberFieldHasFocus) {
    auto window = activeWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    auto* micro = fieldWidget<QSpinBox>(*window, "training.micro_batch_size");
    ASSERT_NE(micro, nullptr);
    const int64_t before = window->document()->scenario().training.micro_batch_size;
    ASSERT_NE(before, 3);
    typeInto(micro, QStringLiteral("3"));
    ASSERT_EQ(window->document()->scenario().training.micro_batch_size, 3);
    // The case: Tab to the next number field, whose line edit (with
    // nothing of its own to undo) took the keys.
    auto* sequence = fieldWidget<QSpinBox>(*window, "training.sequence_length");
    ASSERT_NE(sequence, nullptr);
    sequence->setFocus(Qt::TabFocusReason);
    QApplication::processEvents();
    ASSERT_TRUE(sequence->isAncestorOf(QApplication::focusWidget()) || QApplication::focusWidget() == sequence);
    pressKeys(Qt::Key_Z, Qt::ControlModifier);
    EXPECT_EQ(window->document()->scenario().training.micro_batch_size, before);
    EXPECT_EQ(micro->value(), before);
    pressKeys(Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
    EXPECT_EQ(window->document()->scenario().training.micro_batch_size, 3);
}

TEST(UndoKeys, CtrlZWorksAfterClickingAChartTab) {
    auto window = activeWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    auto* micro = fieldWidget<QSpinBox>(*window, "training.micro_batch_size");
    ASSERT_NE(micro, nullptr);
    const int64_t before = window->document()->scenario().training.micro_batch_size;
    typeInto(micro, QStringLiteral("3"));
    ASSERT_EQ(window->document()->scenario().training.micro_batch_size, 3);
    auto* sequence = fieldWidget<QSpinBox>(*window, "training.sequence_length");
    ASSERT_NE(sequence, nullptr);
    sequence->setFocus(Qt::TabFocusReason);  // Tab, then a click on a chart tab, which takes no focus
    QApplication::processEvents();
    QTabBar* bar = window->tabs()->tabBar();
    QTest::mouseClick(bar, Qt::LeftButton, Qt::NoModifier, bar->tabRect(1).center());
    QApplication::processEvents();
    ASSERT_EQ(window->tabs()->currentIndex(), 1);
    pressKeys(Qt::Key_Z, Qt::ControlModifier);
    EXPECT_EQ(window->document()->scenario().training.micro_batch_size, before);
}

// Where Qt's own drag handling sends a drag over `at` (QWidgetWindow's
// findDnDTarget): the widget there, or the nearest parent that takes drops.
QWidget* dropTarget(QWidget* window, QWidget* over) {
    QWidget* w = over;
    while (w && !w->acceptDrops() && !w->isWindow()) w = w->parentWidget();
    return w ? w : window;
}

TEST(DragAndDrop, AConfigJsonDroppedOnTheChartBecomesTheModel) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    MemoryChart* chart = window->breakdownTab()->chart();
    QWidget* under = chart->childAt(chart->rect().center());
    QWidget* target = dropTarget(window.get(), under ? under : chart);
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(QStringLiteral(TRAINMEM_TEST_DATA_DIR "/hf/qwen2_defaults.json"))});
    const QPointF at = QPointF(target->rect().center());
    QDragEnterEvent enter(at.toPoint(), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &enter);
    ASSERT_TRUE(enter.isAccepted()) << target->metaObject()->className();
    QDropEvent drop(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &drop);
    EXPECT_TRUE(drop.isAccepted());
    EXPECT_EQ(window->document()->scenario().model.family, "qwen2");
}

// --- rounding -------------------------------------------------------------

TEST(Rounding, ATieRoundsAwayFromZeroEverywhere) {
    // 136.125 is exact in binary: printf's "%.2f" made it 136.12 on a bar
    // while Qt printed 136.13 in the table.
    EXPECT_EQ(formatNumber(136.125, 2), "136.13");
    EXPECT_EQ(formatNumber(0.125, 2), "0.13");
    EXPECT_EQ(formatNumber(-2.5, 0), "-3");
    EXPECT_EQ(formatNumber(57.94, 0), "58");
    EXPECT_EQ(formatNumber(-0.001, 2), "0.00");
    EXPECT_EQ(formatBytes(static_cast<int64_t>(136.125 * kGiBd)), "136.13 GiB");
    EXPECT_EQ(numberText(136.125, 2), QStringLiteral("136.13"));
}

// The total above a bar in a figure too narrow for "57.94 GiB".
QString topLabelDrawn(const ChartSpec& spec, QSize size, int bar) {
    MemoryChart chart;
    chart.setSpec(spec);
    chart.show();
    QApplication::processEvents();
    chart.resize(size);  // laid out at the figure's size, as an export lays it out
    QApplication::processEvents();
    // barRect() includes the label above the bar: its top is the label's.
    const QRectF bar_rect = chart.barRect(bar);
    for (const auto& [text, rect] : chart.visibleTextRects())
        if (rect.top() >= bar_rect.top() - 2 && rect.bottom() <= bar_rect.top() + 20 &&
            std::abs(rect.center().x() - bar_rect.center().x()) <= 4)
            return text;
    if (qEnvironmentVariableIsSet("DEBUG_LABELS")) {
        qWarning() << "bar" << bar << bar_rect;
        for (const auto& [text, rect] : chart.visibleTextRects()) qWarning() << text << rect;
    }
    return {};
}

TEST(Rounding, ANarrowOptimizersFigureRoundsTotalsAndKeepsNoFit) {
    // The issue: --view optimizers --width 454 --height 340 printed AdamW's
    // 57.94 GiB as "57".
    const Scenario s = presetScenario("llama3.1-8b-fsdp-8xh100");
    const std::vector<OptimizerOutcome> outcomes = estimateEveryOptimizer(s);
    const ChartSpec spec = optimizerChart(s, outcomes, OptimizerScale::Bytes, Units::GiB);
    int checked = 0;
    for (size_t i = 0; i < outcomes.size(); ++i) {
        if (!outcomes[i].estimate) continue;
        const double gib = static_cast<double>(outcomes[i].estimate->peak.device_bytes) / kGiBd;
        const QString drawn = topLabelDrawn(spec, QSize(454, 340), static_cast<int>(i));
        SCOPED_TRACE(drawn.toStdString());
        ASSERT_FALSE(drawn.isEmpty());
        const double shown = drawn.section(' ', 0, 0).toDouble();
        const int decimals = drawn.section(' ', 0, 0).contains('.') ? 2 : 0;
        // Rounded to what it shows: never more than half its last digit off.
        EXPECT_LE(std::abs(shown - gib), 0.5 * std::pow(10.0, -decimals) + 1e-9) << gib;
        EXPECT_EQ(drawn.contains("no fit"), !outcomes[i].estimate->fits);
        ++checked;
    }
    EXPECT_GT(checked, 5);
}

std::vector<PinnedScenario> pinsOf(const std::vector<std::pair<QString, Scenario>>& scenarios) {
    std::vector<PinnedScenario> pins;
    for (const auto& [label, s] : scenarios) {
        Expected<Estimate> e = estimate(s);
        EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().text());
        if (e) pins.push_back({label, s, *e});
    }
    return pins;
}

TEST(Rounding, ACompareFigureAt1000x700KeepsNoFitOverCapacity) {
    Scenario a = presetScenario("llama3.1-8b-fsdp-8xh100");
    std::vector<std::pair<QString, Scenario>> variants;
    for (int k = 0; k < 6; ++k) {
        Scenario s = a;
        s.training.micro_batch_size = 1 << k;  // the larger ones do not fit
        variants.push_back({QString(QChar('A' + k)), s});
    }
    const std::vector<PinnedScenario> pins = pinsOf(variants);
    ASSERT_EQ(pins.size(), 6u);
    ASSERT_FALSE(pins.back().estimate.fits);
    const ChartSpec spec = compareChart(pins, Units::GiB);
    for (int i = 0; i < 6; ++i) {
        const QString drawn = topLabelDrawn(spec, QSize(560, 420), i);
        EXPECT_EQ(drawn.contains("no fit"), !pins[static_cast<size_t>(i)].estimate.fits) << drawn.toStdString();
    }
}

// --- the comparison -------------------------------------------------------

TEST(Compare, CaptionsSayWhatMakesEachPinDifferent) {
    // Six pins: A the base, each other one changes one setting. Key order
    // alone named "gpus 8 / tensor 1" under five of them.
    const Scenario base = presetScenario("llama3.1-8b-fsdp-8xh100");
    auto with = [&](auto change) {
        Scenario s = base;
        change(s);
        return s;
    };
    const std::vector<Scenario> scenarios = {
        base,
        with([](Scenario& s) { s.training.optimizer = OptimizerKind::AdamW8bit; }),
        with([](Scenario& s) { s.training.micro_batch_size = 4; }),
        with([](Scenario& s) { s.parallelism.data = 4, s.parallelism.tensor = 2; }),
        with([](Scenario& s) { s.training.sequence_length = 4096; }),
        with([](Scenario& s) { s.training.checkpointing = Checkpointing::Selective; }),  // the preset's is full
    };
    const std::vector<QStringList> captions = pinCaptions(scenarios);
    ASSERT_EQ(captions.size(), 6u);
    EXPECT_TRUE(captions[1].join(' ').contains("optimizer adamw-8bit")) << captions[1].join('|').toStdString();
    EXPECT_TRUE(captions[2].join(' ').contains("micro batch size 4")) << captions[2].join('|').toStdString();
    EXPECT_TRUE(captions[3].join(' ').contains("tensor 2")) << captions[3].join('|').toStdString();
    EXPECT_TRUE(captions[4].join(' ').contains("sequence length 4096")) << captions[4].join('|').toStdString();
    EXPECT_TRUE(captions[5].join(' ').contains("checkpointing selective")) << captions[5].join('|').toStdString();
    // Every caption differs from every other.
    for (size_t i = 0; i < captions.size(); ++i)
        for (size_t j = i + 1; j < captions.size(); ++j) EXPECT_NE(captions[i], captions[j]) << i << " " << j;
}

std::unique_ptr<MainWindow> twoPinWindow() {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    CompareTab* compare = window->compareTab();
    EXPECT_TRUE(compare->pin());
    window->document()->edit([](Scenario& s) { s.training.optimizer = OptimizerKind::AdamW8bit; });
    EXPECT_TRUE(compare->pin());
    window->tabs()->setCurrentWidget(compare);
    QApplication::processEvents();
    return window;
}

TEST(Compare, TheExportedFigureCarriesTheTable) {
    auto window = twoPinWindow();
    const ChartSpec figure = window->compareTab()->figureSpec();
    ASSERT_FALSE(figure.table.empty());
    // Drawn at a document column's size: the setting that differs, both
    // totals as the table rounds them, and whether each fits.
    MemoryChart chart;
    chart.setSpec(figure);
    chart.show();
    QApplication::processEvents();
    chart.resize(454, 340);
    QApplication::processEvents();
    const QStringList texts = chart.visibleTexts();
    EXPECT_TRUE(texts.contains("training.optimizer")) << texts.join(" | ").toStdString();
    for (const PinnedScenario& p : window->compareTab()->pins()) {
        const QString total = QString::fromStdString(formatNumber(static_cast<double>(p.estimate.peak.device_bytes) / kGiBd, 2));
        EXPECT_TRUE(std::any_of(texts.begin(), texts.end(), [&](const QString& t) { return t.startsWith(total); }))
            << total.toStdString() << " in " << texts.join(" | ").toStdString();
    }
    EXPECT_TRUE(texts.contains("Fits"));
}

TEST(Compare, CopyTableCopiesTheComparison) {
    auto window = twoPinWindow();
    QAction* markdown = nullptr;
    QAction* csv = nullptr;
    for (QAction* a : window->findChildren<QAction*>()) {
        if (a->text() == QStringLiteral("Copy Table as &Markdown")) markdown = a;
        if (a->text() == QStringLiteral("Copy Table as &CSV")) csv = a;
    }
    ASSERT_NE(markdown, nullptr);
    ASSERT_NE(csv, nullptr);
    markdown->trigger();
    const QString md = QApplication::clipboard()->text();
    EXPECT_TRUE(md.contains("| training.optimizer | adamw | adamw-8bit |")) << md.toStdString();
    EXPECT_TRUE(md.contains("A (base)")) << md.toStdString();
    csv->trigger();
    const QString text = QApplication::clipboard()->text();
    const PinnedScenario& b = window->compareTab()->pins()[1];
    EXPECT_TRUE(text.contains(QStringLiteral("Device total (bytes),%1,%2")
                                  .arg(window->compareTab()->pins()[0].estimate.peak.device_bytes)
                                  .arg(b.estimate.peak.device_bytes)))
        << text.toStdString();
}

TEST(HeadlessExport, CompareUsesThePinsSavedInTheFile) {
    QTemporaryDir dir;
    const Scenario a = presetScenario("llama3.1-8b-fsdp-8xh100");
    Scenario b = a;
    b.training.optimizer = OptimizerKind::Lion;
    b.training.optimizer_impl = OptimizerImpl::ForEach;  // Lion has no fused kernel
    const std::vector<PinnedScenario> pins = pinsOf({{"first", a}, {"second", b}});
    const QString file = dir.filePath("two.json");
    ASSERT_TRUE(saveScenarioFile(a, file.toStdString(), pinsToJson(pins)).ok());
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("QT_QPA_PLATFORM");
    env.insert("TRAINMEM_PRESETS", TRAINMEM_PRESETS_DIR);
    p.setProcessEnvironment(env);
    const QString out = dir.filePath("c.svg");
    p.start(QStringLiteral(TRAINMEM_APP_EXE), {"--scenario", file, "--view", "compare", "--export", out});
    ASSERT_TRUE(p.waitForFinished(60000));
    ASSERT_EQ(p.exitCode(), 0) << p.readAllStandardError().toStdString();
    QFile svg(out);
    ASSERT_TRUE(svg.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(svg.readAll());
    EXPECT_TRUE(text.contains(">first<") || text.contains("first")) << "pin names";
    EXPECT_TRUE(text.contains("second"));
    EXPECT_TRUE(text.contains("lion"));  // the table's differing setting
}

// --- share -----------------------------------------------------------------

TEST(Share, CopyAsLinkAndPasteBringBackTheScenarioAndItsPins) {
    auto window = twoPinWindow();
    window->document()->edit([](Scenario& s) { s.training.sequence_length = 4096; });
    const Scenario edited = window->document()->scenario();
    const std::vector<PinnedScenario> pins = window->compareTab()->pins();
    QAction* copy = nullptr;
    for (QAction* a : window->findChildren<QAction*>())
        if (a->text() == QStringLiteral("Copy as &Link")) copy = a;
    ASSERT_NE(copy, nullptr);
    copy->trigger();
    const QString link = QApplication::clipboard()->text();
    ASSERT_TRUE(link.startsWith("trainmem:1:")) << link.left(40).toStdString();

    auto other = openWindow(presetScenario("mixtral-8x7b-tp-ep"));
    ASSERT_TRUE(other->pasteText(link));
    EXPECT_EQ(other->document()->scenario(), edited);
    ASSERT_EQ(other->compareTab()->pins().size(), pins.size());
    for (size_t i = 0; i < pins.size(); ++i) {
        EXPECT_EQ(other->compareTab()->pins()[i].label, pins[i].label);
        EXPECT_EQ(other->compareTab()->pins()[i].scenario, pins[i].scenario);
    }
    EXPECT_TRUE(other->document()->path().isEmpty());  // a link is no file to save over
}

TEST(Share, PasteTakesAScenariosJsonAndRefusesWhatIsNeither) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    const Scenario mixtral = presetScenario("mixtral-8x7b-tp-ep");
    ASSERT_TRUE(window->pasteText(QString::fromStdString(scenarioToOrderedJson(mixtral).dump(2))));
    EXPECT_EQ(window->document()->scenario(), mixtral);
    const Scenario before = window->document()->scenario();
    EXPECT_FALSE(window->pasteText(QStringLiteral("trainmem:1:not*a*link")));
    EXPECT_FALSE(window->pasteText(QStringLiteral("hello")));
    EXPECT_EQ(window->document()->scenario(), before);
}

TEST(Share, TheAppOpensALinkGivenOnItsCommandLine) {
    // The desktop entry's Exec=trainmem %u hands the link over as is.
    const Scenario a = presetScenario("llama3.1-8b-fsdp-8xh100");
    nlohmann::json doc = nlohmann::json::parse(scenarioToOrderedJson(a).dump());
    Scenario b = a;
    b.training.optimizer = OptimizerKind::Sgd;
    doc["pins"] = pinsToJson(pinsOf({{"adam", a}, {"sgd", b}}));
    const QString link = QString::fromStdString(scenarioLink(doc));
    Expected<LaunchOptions> options = parseLaunchOptions({link});
    ASSERT_TRUE(options.ok()) << options.error().text();
    Expected<Scenario> opened = launchScenario(*options);
    ASSERT_TRUE(opened.ok()) << opened.error().text();
    EXPECT_EQ(*opened, a);
    // And exports the comparison its pins make.
    QTemporaryDir dir;
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("QT_QPA_PLATFORM");
    env.insert("TRAINMEM_PRESETS", TRAINMEM_PRESETS_DIR);
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(TRAINMEM_APP_EXE), {link, "--view", "compare", "--size", "column", "--export", dir.filePath("c.svg")});
    ASSERT_TRUE(p.waitForFinished(60000));
    ASSERT_EQ(p.exitCode(), 0) << p.readAllStandardError().toStdString();
    QFile svg(dir.filePath("c.svg"));
    ASSERT_TRUE(svg.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(svg.readAll());
    EXPECT_TRUE(text.contains("sgd"));
    EXPECT_TRUE(text.contains("width=\"160.")) << text.left(300).toStdString();  // 454 pt = 160.2 mm
    // A damaged link: one line naming it, nothing written.
    p.start(QStringLiteral(TRAINMEM_APP_EXE), {"trainmem:1:%%%", "--export", dir.filePath("bad.png")});
    ASSERT_TRUE(p.waitForFinished(60000));
    EXPECT_EQ(p.exitCode(), 2);
    EXPECT_TRUE(QString::fromLocal8Bit(p.readAllStandardError()).contains("link"));
    EXPECT_FALSE(QFile::exists(dir.filePath("bad.png")));
}

TEST(HeadlessExport, SizeNamesADocumentSize) {
    Expected<LaunchOptions> column = parseLaunchOptions({"--size", "column", "--export", "x.pdf"});
    ASSERT_TRUE(column.ok());
    EXPECT_EQ(column->size, QSize(454, 340));  // 16 cm wide, in points
    Expected<LaunchOptions> png = parseLaunchOptions({"--export", "x.png", "--size", "slide"});
    ASSERT_TRUE(png.ok());
    EXPECT_EQ(png->size, QSize(1280, 720));
    Expected<LaunchOptions> bad = parseLaunchOptions({"--size", "poster", "--export", "x.svg"});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().field, "--size");
    EXPECT_NE(bad.error().message.find("column, page"), std::string::npos) << bad.error().message;
    EXPECT_FALSE(parseLaunchOptions({"--size", "page", "--width", "500", "--export", "x.svg"}).ok());
}

// --- minors ----------------------------------------------------------------

TEST(Fields, FsdpAndQloraRowsShowOnlyWhereTheyApply) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));  // ZeRO-3, full fine-tuning
    auto shown = [&](const char* key) { return window->fieldBindings().widgetFor(QString::fromLatin1(key))->isVisibleTo(window.get()); };
    EXPECT_TRUE(shown("parallelism.reshard_after_forward"));
    EXPECT_TRUE(shown("parallelism.fsdp_ends"));
    EXPECT_FALSE(shown("training.qlora_backend"));
    window->document()->edit([](Scenario& s) { s.parallelism.zero_stage = 1; });
    QApplication::processEvents();
    EXPECT_FALSE(shown("parallelism.reshard_after_forward"));
    EXPECT_FALSE(shown("parallelism.fsdp_gradient_sync"));
    EXPECT_FALSE(shown("parallelism.fsdp_ends"));
    window->document()->edit([](Scenario& s) { s.training.finetuning = Finetuning::Qlora; });
    QApplication::processEvents();
    EXPECT_TRUE(shown("training.qlora_backend"));
}

TEST(Fields, TheGpuCountReadsWithTimesSigns) {
    auto window = openWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    auto* label = qobject_cast<QLabel*>(window->fieldBindings().widgetFor(QStringLiteral("parallelism.gpus")));
    ASSERT_NE(label, nullptr);
    EXPECT_TRUE(label->text().contains(QStringLiteral("8 DP × 1 TP"))) << label->text().toStdString();
}

TEST(Counting, LayersAndMicroBatchesAreCountedFromOne) {
    Scenario s = presetScenario("llama3.1-405b-3d");
    Expected<Estimate> e = estimate(s);
    Expected<std::vector<StageEstimate>> stages = estimateStages(s);
    ASSERT_TRUE(e.ok() && stages.ok());
    const ChartSpec spec = stagesChart(s, *e, *stages, Units::GiB);
    const int64_t per_stage = stages->front().num_layers;
    // The first stage holds layers 1..n of the model, as its people count them.
    EXPECT_TRUE(spec.categories[0].contains(QStringLiteral("L1-%1").arg(per_stage))) << spec.categories[0].toStdString();
}

TEST(FirstLaunch, ACurrentModelThatFitsWithThePresetListShowingIt) {
    Expected<Scenario> first = defaultScenario();
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(first->model.name, "meta-llama/Llama-3.1-8B");  // not 2019's GPT-2 on V100s
    EXPECT_EQ(first->hardware.gpu, "H100-80GB");
    auto window = openWindow(*first);
    auto* list = window->presetPicker()->findChild<QListWidget*>();
    ASSERT_NE(list, nullptr);
    EXPECT_GE(list->viewport()->height(), 11 * list->sizeHintForRow(0)) << "about twelve rows";
    ASSERT_NE(list->currentItem(), nullptr);
    EXPECT_TRUE(list->viewport()->rect().contains(list->visualItemRect(list->currentItem())))
        << "the loaded preset is in view, not cut off";
}

TEST(Compare, PinningWithSixPinsSaysSoNotFixTheMarkedField) {
    auto window = activeWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    for (int k = 0; k < CompareTab::kMaxPins; ++k) {
        window->document()->edit([k](Scenario& s) { s.training.micro_batch_size = k + 1; });
        ASSERT_TRUE(window->compareTab()->pin());
    }
    QAction* pin = nullptr;
    for (QAction* a : window->findChildren<QAction*>())
        if (a->text() == QStringLiteral("&Pin to Compare")) pin = a;
    ASSERT_NE(pin, nullptr);
    pin->trigger();
    const QString message = window->statusBar()->currentMessage();
    EXPECT_FALSE(message.contains("marked field")) << message.toStdString();
    EXPECT_TRUE(message.contains("6 pins")) << message.toStdString();
}

TEST(WheelOverInputs, AfterTabTheWheelScrollsTheColumnUnlessTheFieldWasClicked) {
    auto window = activeWindow(presetScenario("llama3.1-8b-fsdp-8xh100"));
    window->resize(1000, 700);
    QApplication::processEvents();
    auto* micro = fieldWidget<QSpinBox>(*window, "training.micro_batch_size");
    ASSERT_NE(micro, nullptr);
    const int before = micro->value();
    micro->setFocus(Qt::TabFocusReason);
    QApplication::processEvents();
    auto wheel = [&](QWidget* w) {
        const QPointF centre(w->width() / 2.0, w->height() / 2.0);
        QWheelEvent e(centre, w->mapToGlobal(centre), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
        QApplication::sendEvent(w, &e);
        QApplication::processEvents();
    };
    wheel(micro);
    EXPECT_EQ(micro->value(), before) << "Tab gave focus, the wheel scrolled past";
    QTest::mouseClick(micro->findChild<QLineEdit*>(), Qt::LeftButton);
    QApplication::processEvents();
    wheel(micro);
    EXPECT_NE(micro->value(), before) << "a clicked field takes the wheel";
}

TEST(Compare, ALongPinNameDoesNotTakeTheTablesWidth) {
    auto window = twoPinWindow();
    window->resize(1000, 700);
    CompareTab* compare = window->compareTab();
    ASSERT_TRUE(compare->renamePin(1, QStringLiteral("llama3.1-8b with AdamW 8-bit and selective recompute at 8k tokens")));
    QApplication::processEvents();
    QTableWidget* table = compare->table();
    // Elided: the column is as wide as its numbers need, not as the name.
    const int name_width = table->horizontalHeader()->fontMetrics().horizontalAdvance(compare->pins()[1].label);
    EXPECT_LT(table->horizontalHeader()->sectionSize(1), name_width * 2 / 3) << name_width;
    EXPECT_EQ(table->horizontalHeaderItem(1)->toolTip(), compare->pins()[1].label);
}

}  // namespace
}  // namespace trainmem::ui
