// Accuracy against measured memory: the measurement reader and the error
// arithmetic on SYNTHETIC fixtures (tests/data/measurements/), the committed
// GPU cases (validation/cases/) loading through trainmem, and the issue's
// bounds applied to the committed measurements (validation/measurements/).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/base/json_input.h"
#include "core/report/accuracy.h"
#include "core/account/estimate.h"
#include "core/scenario/scenario_file.h"
#include "core/account/scenario_validate.h"

namespace trainmem {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(TRAINMEM_TEST_DATA_DIR) / "measurements";
const fs::path kValidation = fs::path(TRAINMEM_VALIDATION_DIR);

std::vector<fs::path> jsonFiles(const fs::path& dir) {
    std::vector<fs::path> files;
    if (!fs::is_directory(dir)) return files;
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.path().extension() == ".json") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
}

CaseAccuracy caseWithErrors(std::string name, double allocated_error, double reserved_error) {
    CaseAccuracy c;
    c.name = std::move(name);
    c.allocated_error = allocated_error;
    c.reserved_error = reserved_error;
    return c;
}

// ---------------------------------------------------------------- reader

TEST(MeasurementReader, ReadsEveryFieldOfAFile) {
    auto m = readMeasurementFile(kFixtures / "valid" / "synthetic-b.json");
    ASSERT_TRUE(m.ok()) << m.error().text();
    EXPECT_EQ(m->name, "synthetic-b");
    EXPECT_EQ(m->allocated_peak_bytes, 6'000'000'000);
    EXPECT_EQ(m->reserved_peak_bytes, 6'500'000'000);
    EXPECT_EQ(m->device_bytes, 7'000'000'000);
    EXPECT_EQ(m->peak_phase, "optimizer step");
    EXPECT_EQ(m->gpu, "SYNTHETIC (not a real device)");
    EXPECT_EQ(m->torch, "0.0.0+synthetic");
    EXPECT_EQ(m->steps, 3);
    EXPECT_EQ(m->implementation, "SYNTHETIC: attention sdpa, experts eager");
    EXPECT_EQ(m->scenario.model_preset, "gpt2");
    EXPECT_EQ(m->scenario.training.micro_batch_size, 4);
    EXPECT_EQ(m->scenario.training.precision, Precision::AmpBf16);
}

TEST(MeasurementReader, ReadsOnlyJsonFilesOfAFolderInNameOrder) {
    auto all = readMeasurementDirectory(kFixtures / "valid");
    ASSERT_TRUE(all.ok()) << all.error().text();
    ASSERT_EQ(all->size(), 2u);  // notes.txt is not a measurement
    EXPECT_EQ((*all)[0].name, "synthetic-a");
    EXPECT_EQ((*all)[1].name, "synthetic-b");
}

TEST(MeasurementReader, MissingFolderIsAnErrorNamingIt) {
    auto all = readMeasurementDirectory(kFixtures / "no-such-folder");
    ASSERT_FALSE(all.ok());
    EXPECT_NE(all.error().text().find("no-such-folder"), std::string::npos);
}

TEST(MeasurementReader, MalformedFilesNameTheFileAndTheKey) {
    struct Expectation {
        const char* file;
        const char* field;
        const char* words;  // part of the message
    };
    const Expectation cases[] = {
        {"synthetic-missing-reserved", "measured.reserved_peak_bytes", "required"},
        {"synthetic-allocated-as-text", "measured.allocated_peak_bytes", "integer"},
        {"synthetic-unknown-measured-key", "measured.allocated_bytes", "unknown key"},
        {"synthetic-unknown-phase", "measured.peak_phase", "evaluation"},
        {"synthetic-reserved-below-allocated", "measured.reserved_peak_bytes", "at least"},
        {"synthetic-zero-steps", "measured.steps", "positive"},
        {"synthetic-empty-implementation", "measured.implementation", "must not be empty"},
        {"synthetic-bad-optimizer", "scenario.training.optimizer", "adamx"},
        {"synthetic-missing-measured", "measured", "required"},
        {"synthetic-unknown-top-level-key", "measurement", "unknown key"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.file);
        const fs::path path = kFixtures / "malformed" / (std::string(c.file) + ".json");
        auto m = readMeasurementFile(path);
        ASSERT_FALSE(m.ok());
        EXPECT_EQ(m.error().field, c.field);
        EXPECT_NE(m.error().message.find(c.words), std::string::npos) << m.error().text();
        EXPECT_NE(m.error().text().find(path.string()), std::string::npos) << m.error().text();
    }
}

TEST(MeasurementReader, FileThatIsNotJsonNamesTheFile) {
    const fs::path path = kFixtures / "malformed" / "synthetic-not-json.json";
    auto m = readMeasurementFile(path);
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.error().text().find("synthetic-not-json.json"), std::string::npos) << m.error().text();
}

TEST(MeasurementReader, FolderWithOneBadFileIsAnError) {
    auto all = readMeasurementDirectory(kFixtures / "malformed");
    EXPECT_FALSE(all.ok());
}

// ---------------------------------------------------------------- arithmetic

TEST(ErrorArithmetic, RelativeErrorIsEstimatedMinusMeasuredOverMeasured) {
    EXPECT_DOUBLE_EQ(relativeError(110, 100), 0.10);   // over-estimate: positive
    EXPECT_DOUBLE_EQ(relativeError(95, 100), -0.05);   // under-estimate: negative
    EXPECT_DOUBLE_EQ(relativeError(100, 100), 0.0);
    EXPECT_DOUBLE_EQ(relativeError(3'221'225'472, 2'147'483'648), 0.5);  // 3 GiB against 2 GiB
}

TEST(ErrorArithmetic, MedianAndWorstOfAbsoluteErrors) {
    // |errors| 0.01, 0.04, 0.02, 0.03: sorted 0.01 0.02 0.03 0.04, median (0.02 + 0.03) / 2.
    const std::vector<CaseAccuracy> even = {caseWithErrors("a", 0.01, 0.0), caseWithErrors("b", -0.04, 0.0),
                                            caseWithErrors("c", 0.02, 0.0), caseWithErrors("d", -0.03, 0.0)};
    ErrorStatistics s = errorStatistics(even, false);
    EXPECT_DOUBLE_EQ(s.median_abs, 0.025);
    EXPECT_DOUBLE_EQ(s.worst_abs, 0.04);
    EXPECT_EQ(s.worst_case, "b");
    // Odd count: the middle value.
    const std::vector<CaseAccuracy> odd = {caseWithErrors("a", 0.0, 0.07), caseWithErrors("b", 0.0, -0.01),
                                           caseWithErrors("c", 0.0, 0.02)};
    s = errorStatistics(odd, true);
    EXPECT_DOUBLE_EQ(s.median_abs, 0.02);
    EXPECT_DOUBLE_EQ(s.worst_abs, 0.07);
    EXPECT_EQ(s.worst_case, "a");
}

TEST(ErrorArithmetic, BoundsAreFivePercentWorstThreeMedianTenReserved) {
    const AccuracyBounds bounds;
    // All within: worst 5% exactly is allowed, median 2%, reserved worst 9%.
    auto within = accuracyReport({caseWithErrors("a", 0.05, 0.09), caseWithErrors("b", -0.02, -0.01),
                                  caseWithErrors("c", 0.01, 0.0)});
    EXPECT_TRUE(boundViolations(within, bounds).empty());

    auto worst = accuracyReport({caseWithErrors("a", -0.06, 0.0), caseWithErrors("b", 0.0, 0.0),
                                 caseWithErrors("c", 0.0, 0.0)});
    auto v = boundViolations(worst, bounds);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_NE(v[0].find("allocated: worst"), std::string::npos) << v[0];
    EXPECT_NE(v[0].find("(a)"), std::string::npos) << v[0];

    // Median 3.5% with every case under 5%.
    auto median = accuracyReport({caseWithErrors("a", 0.035, 0.0), caseWithErrors("b", 0.04, 0.0),
                                  caseWithErrors("c", -0.01, 0.0)});
    v = boundViolations(median, bounds);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_NE(v[0].find("allocated: median"), std::string::npos) << v[0];

    auto reserved = accuracyReport({caseWithErrors("a", 0.0, 0.11)});
    v = boundViolations(reserved, bounds);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_NE(v[0].find("reserved: worst"), std::string::npos) << v[0];

    EXPECT_TRUE(boundViolations(accuracyReport({}), bounds).empty());
}

TEST(ErrorArithmetic, NonFiniteErrorNeverPasses) {
    auto r = accuracyReport({caseWithErrors("a", relativeError(1, 0), 0.0)});
    EXPECT_FALSE(boundViolations(r, AccuracyBounds{}).empty());
}

TEST(AccuracyTable, HasARowPerCaseAndTheSummaryRows) {
    CaseAccuracy c = caseWithErrors("llama-case", 0.0123, -0.045);
    c.measured_allocated = 2 * kGiB;
    c.estimated_allocated = 2 * kGiB + 25 * kMiB;
    c.measured_reserved = 3 * kGiB;
    c.measured_phase = "backward";
    c.estimated_phase = "optimizer step";
    const std::string table = accuracyTable(accuracyReport({c}));
    EXPECT_NE(table.find("llama-case"), std::string::npos) << table;
    EXPECT_NE(table.find("2048.0 MiB"), std::string::npos) << table;
    EXPECT_NE(table.find("2073.0 MiB"), std::string::npos) << table;
    EXPECT_NE(table.find("+1.23%"), std::string::npos) << table;
    EXPECT_NE(table.find("-4.50%"), std::string::npos) << table;
    EXPECT_NE(table.find("median |error|"), std::string::npos) << table;
    EXPECT_NE(table.find("worst |error|"), std::string::npos) << table;
}

TEST(CompareWithEstimate, ComparesTheEstimatorsPeakWithTheMeasuredCounters) {
    auto m = readMeasurementFile(kFixtures / "valid" / "synthetic-a.json");
    ASSERT_TRUE(m.ok()) << m.error().text();
    auto est = estimate(m->scenario);
    ASSERT_TRUE(est.ok()) << est.error().text();
    auto c = compareWithEstimate(*m);
    ASSERT_TRUE(c.ok()) << c.error().text();
    EXPECT_EQ(c->measured_allocated, 4'000'000'000);
    EXPECT_EQ(c->measured_reserved, 4'400'000'000);
    EXPECT_EQ(c->estimated_allocated, est->peak.allocated_bytes);
    EXPECT_EQ(c->estimated_reserved, est->peak.reserved_bytes);
    EXPECT_DOUBLE_EQ(c->allocated_error, (static_cast<double>(est->peak.allocated_bytes) - 4e9) / 4e9);
    EXPECT_DOUBLE_EQ(c->reserved_error, (static_cast<double>(est->peak.reserved_bytes) - 4.4e9) / 4.4e9);
    EXPECT_EQ(c->measured_phase, "backward");
    EXPECT_EQ(c->estimated_phase, std::string(phaseName(est->peak.peak_phase)));
}

// ---------------------------------------------------------------- GPU cases

// The keys validation/measure_gpu.py maps onto PyTorch. Every case spells
// them out, so what was measured never depends on a default of either side.
const std::vector<std::string> kMappedTrainingKeys = {
    "micro_batch_size", "sequence_length", "gradient_accumulation_steps", "precision", "grad_dtype",
    "optimizer", "optimizer_impl", "optimizer_state_dtype", "activation_checkpointing", "attention",
    "kernels", "loss", "finetuning"};

TEST(GpuCases, EveryCaseLoadsValidatesAndEstimates) {
    const auto files = jsonFiles(kValidation / "cases");
    EXPECT_GE(files.size(), 30u);
    for (const auto& file : files) {
        SCOPED_TRACE(file.filename().string());
        auto s = loadScenarioFile(file);
        ASSERT_TRUE(s.ok()) << s.error().text();
        auto valid = validate(*s);
        EXPECT_TRUE(valid.ok()) << valid.error().text();
        auto e = estimate(*s);
        ASSERT_TRUE(e.ok()) << e.error().text();
        EXPECT_EQ(e->total_gpus, 1);
        EXPECT_TRUE(e->fits) << "a case must fit one 80 GB H100";
    }
}

TEST(GpuCases, EveryCaseSpellsOutTheKeysTheHarnessMaps) {
    for (const auto& file : jsonFiles(kValidation / "cases")) {
        SCOPED_TRACE(file.filename().string());
        auto doc = readJsonFile(file);
        ASSERT_TRUE(doc.ok()) << doc.error().text();
        ASSERT_TRUE(doc->contains("training"));
        for (const auto& key : kMappedTrainingKeys) EXPECT_TRUE((*doc)["training"].contains(key)) << key;
        if ((*doc)["training"].value("finetuning", "") == "lora") {
            for (const char* key : {"lora_rank", "lora_targets", "lora_dropout"})
                EXPECT_TRUE((*doc)["training"].contains(key)) << key;
        }
    }
}

TEST(GpuCases, CoverTheFamiliesRecipesOptimizersAndSweeps) {
    std::set<std::string> families, precisions, optimizers, checkpointing, attention;
    std::set<int64_t> batches, sequences;
    bool lora = false;
    for (const auto& file : jsonFiles(kValidation / "cases")) {
        auto s = loadScenarioFile(file);
        ASSERT_TRUE(s.ok()) << s.error().text();
        families.insert(s->model.family);
        precisions.insert(std::string(precisionName(s->training.precision)));
        optimizers.insert(std::string(optimizerName(s->training.optimizer)) + "/" +
                          std::string(optimizerImplName(s->training.optimizer_impl)));
        checkpointing.insert(std::string(checkpointingName(s->training.checkpointing)));
        attention.insert(std::string(attentionName(s->training.attention)));
        batches.insert(s->training.micro_batch_size);
        sequences.insert(s->training.sequence_length);
        lora = lora || s->training.finetuning == Finetuning::Lora;
    }
    for (const char* f : {"llama", "gpt2", "qwen2", "mixtral"}) EXPECT_TRUE(families.count(f)) << f;
    for (const char* p : {"fp32", "amp-bf16", "pure-bf16", "mixed-bf16"}) EXPECT_TRUE(precisions.count(p)) << p;
    for (const char* o : {"sgd-momentum/foreach", "adamw/foreach", "adamw/fused", "adafactor/for-loop",
                          "lion/foreach"})
        EXPECT_TRUE(optimizers.count(o)) << o;
    EXPECT_TRUE(checkpointing.count("none") && checkpointing.count("full"));
    EXPECT_TRUE(attention.count("flash") && attention.count("eager"));
    for (int64_t b : {1, 2, 4, 8}) EXPECT_TRUE(batches.count(b)) << b;
    for (int64_t s : {256, 512, 1024, 2048, 4096}) EXPECT_TRUE(sequences.count(s)) << s;
    EXPECT_TRUE(lora);
}

// ---------------------------------------------------------------- the bound test

// The issue's bounds on real measurements: allocated within 5% on every case
// and 3% at the median, reserved within 10%. Skipped (not passed) until
// measurements are committed; fails as soon as they exist and the estimator
// misses a bound.
TEST(MeasuredAccuracy, EstimatesMeetTheIssueBounds) {
    const fs::path dir = kValidation / "measurements";
    if (jsonFiles(dir).empty())
        GTEST_SKIP() << "no measurements committed yet: run validation/measure_gpu.py --all on a GPU";
    auto measurements = readMeasurementDirectory(dir);
    ASSERT_TRUE(measurements.ok()) << measurements.error().text();
    std::vector<CaseAccuracy> cases;
    for (const auto& m : *measurements) {
        auto c = compareWithEstimate(m);
        ASSERT_TRUE(c.ok()) << c.error().text();
        cases.push_back(*c);
    }
    const AccuracyReport report = accuracyReport(std::move(cases));
    const auto violations = boundViolations(report, AccuracyBounds{});
    std::string text;
    for (const auto& v : violations) text += v + "\n";
    EXPECT_TRUE(violations.empty()) << text << accuracyTable(report);
}

TEST(MeasuredAccuracy, EveryMeasurementIsOfACommittedCase) {
    for (const auto& file : jsonFiles(kValidation / "measurements")) {
        SCOPED_TRACE(file.filename().string());
        const fs::path case_file = kValidation / "cases" / file.filename();
        ASSERT_TRUE(fs::exists(case_file)) << "no validation/cases/" << file.filename().string();
        auto measured = readJsonFile(file);
        auto committed = readJsonFile(case_file);
        ASSERT_TRUE(measured.ok() && committed.ok());
        EXPECT_EQ((*measured)["scenario"], *committed) << "the case changed since it was measured: measure it again";
    }
}

}  // namespace
}  // namespace trainmem
