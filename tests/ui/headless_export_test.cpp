// trainmem --export: renders without a window, exits 0, or 2 with one line
// on stderr for bad input.
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QSvgRenderer>
#include <QTemporaryDir>

#include "core/scenario/scenario_source.h"
#include "ui/launch_options.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

using test::AppRun;
using test::runApp;

TEST(HeadlessExport, WritesThePngAtTheRequestedSizeAndExitsZero) {
    QTemporaryDir dir;
    const QString out = dir.filePath("stages.png");
    const AppRun r = runApp({"--preset", "llama3.1-405b-3d", "--view", "stages", "--width", "800", "--height", "500", "--export", out});
    EXPECT_EQ(r.status, 0) << r.err.toStdString();
    EXPECT_EQ(QImage(out).size(), QSize(800, 500));
}

TEST(HeadlessExport, AppliesSettingsAndWritesSvgAndPdf) {
    QTemporaryDir dir;
    const AppRun svg = runApp({"--preset", "llama-3.1-8b", "--set", "training.micro_batch_size=2", "--set",
                            "parallelism.data=8", "--view", "optimizers", "--export", dir.filePath("o.svg")});
    EXPECT_EQ(svg.status, 0) << svg.err.toStdString();
    EXPECT_TRUE(QSvgRenderer(dir.filePath("o.svg")).isValid());
    const AppRun pdf = runApp({"--scenario", TRAINMEM_PRESETS_DIR "/scenarios/mixtral-8x7b-tp-ep.json", "--export", dir.filePath("b.pdf")});
    EXPECT_EQ(pdf.status, 0) << pdf.err.toStdString();
    const AppRun config = runApp({"--model-config", TRAINMEM_TEST_DATA_DIR "/hf/qwen2_defaults.json", "--view", "compare",
                               "--export", dir.filePath("c.png")});
    EXPECT_EQ(config.status, 0) << config.err.toStdString();
    // A figure of one scenario says what it is, never the on-screen hint.
    const AppRun compare = runApp({"--preset", "llama3.1-8b-fsdp-8xh100", "--view", "compare", "--export", dir.filePath("c.svg")});
    ASSERT_EQ(compare.status, 0) << compare.err.toStdString();
    QFile figure(dir.filePath("c.svg"));
    ASSERT_TRUE(figure.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(figure.readAll());
    EXPECT_FALSE(text.contains("Pin another"));
    EXPECT_TRUE(text.contains("H100-80GB"));
}

TEST(HeadlessExport, BadInputExitsTwoWithOneLine) {
    QTemporaryDir dir;
    const QString out = dir.filePath("x.png");
    const QList<QStringList> bad = {
        {"--preset", "no-such-preset", "--export", out},
        {"--preset", "llama-3.1-8b", "--set", "training.micro_batch_size=0", "--export", out},
        {"--preset", "llama-3.1-8b", "--set", "parallelism.tensor=3", "--export", out},
        {"--preset", "llama-3.1-8b", "--export", dir.filePath("x.jpg")},
        {"--preset", "llama-3.1-8b", "--view", "pie", "--export", out},
        {"--preset", "llama-3.1-8b", "--width", "0", "--export", out},
        {"--frobnicate", "--export", out},
    };
    for (const QStringList& args : bad) {
        const AppRun r = runApp(args);
        EXPECT_EQ(r.status, 2) << args.join(' ').toStdString();
        EXPECT_EQ(r.err.count('\n'), 1) << args.join(' ').toStdString() << "\n" << r.err.toStdString();
        EXPECT_TRUE(r.err.startsWith("trainmem: ")) << r.err.toStdString();
    }
    EXPECT_FALSE(QFile::exists(out));
}

TEST(LaunchOptions, ParsesEveryOptionAndNamesTheBadOne) {
    Expected<LaunchOptions> o = parseLaunchOptions({"--preset", "gpt2", "--set", "training.micro_batch_size=4", "--export",
                                                    "a.svg", "--view", "stages", "--width=640", "--height", "480"});
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(o->source, LaunchOptions::Source::Preset);
    EXPECT_EQ(o->settings, QStringList{"training.micro_batch_size=4"});
    EXPECT_EQ(o->view, ChartView::Stages);
    EXPECT_EQ(o->size, QSize(640, 480));
    Expected<LaunchOptions> twice = parseLaunchOptions({"--preset", "gpt2", "--scenario", "a.json"});
    ASSERT_FALSE(twice.ok());
    EXPECT_EQ(twice.error().field, "--scenario");
    // The check is core's (ScenarioSource::set), the CLI's words exactly.
    ScenarioSource core_source;
    ASSERT_TRUE(core_source.set("--preset", "gpt2").ok());
    EXPECT_EQ(twice.error().message, core_source.set("--scenario", "a.json").error().message);
    EXPECT_EQ(parseLaunchOptions({"--height", "-5"}).error().field, "--height");
}

// --version answers on stdout and exits 0 before Qt exists: no display, no
// platform plugin, nothing else printed.
TEST(HeadlessExport, VersionNeedsNoDisplay) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("QT_QPA_PLATFORM");
    env.remove("DISPLAY");
    env.remove("WAYLAND_DISPLAY");
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(TRAINMEM_APP_EXE), {QStringLiteral("--version")});
    ASSERT_TRUE(p.waitForFinished(20000));
    EXPECT_EQ(p.exitCode(), 0);
    const QString out = QString::fromLocal8Bit(p.readAllStandardOutput());
    EXPECT_TRUE(out.startsWith(QStringLiteral("trainmem "))) << out.toStdString();
    EXPECT_EQ(out.count('\n'), 1) << out.toStdString();
    EXPECT_TRUE(p.readAllStandardError().isEmpty());
}

}  // namespace
}  // namespace trainmem::ui
