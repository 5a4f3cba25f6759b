// Reports: human-readable numbers, the seed figure's worked example checked
// against the published arithmetic, and the machine-readable renderings'
// contract (keys, integer bytes, breakdown summing to the peak).
#include <gtest/gtest.h>

#include <sstream>

#include "core/account/estimate.h"
#include "core/scenario/presets.h"
#include "core/report/report.h"
#include "tests/core/test_models.h"
#include "core/scenario/scenario_file.h"

namespace trainmem {
namespace {

using nlohmann::json;

struct Loaded {
    Scenario scenario;
    Estimate estimate;
};

Loaded estimated(const std::string& preset) {
    auto s = loadPreset(preset);
    EXPECT_TRUE(s.ok()) << preset << ": " << s.error().text();
    if (!s) return {};
    auto e = estimate(*s);
    EXPECT_TRUE(e.ok()) << preset << ": " << e.error().text();
    if (!e) return {*s, {}};
    return {*s, *e};
}

TEST(FormatBytes, TwoDecimalsInBinaryOrDecimalUnits) {
    EXPECT_EQ(formatBytes(int64_t{80} << 30), "80.00 GiB");
    EXPECT_EQ(formatBytes(int64_t{1536} << 20), "1.50 GiB");
    EXPECT_EQ(formatBytes(-(int64_t{1} << 30)), "-1.00 GiB");
    EXPECT_EQ(formatBytes(80'000'000'000, Units::GB), "80.00 GB");
    EXPECT_EQ(formatBytes(int64_t{80} << 30, Units::GB), "85.90 GB");  // 85,899,345,920 B
    EXPECT_EQ(formatBytes(0), "0.00 GiB");
}

TEST(FormatCount, ThreeSignificantPlacesWithASuffix) {
    EXPECT_EQ(formatCount(8'030'261'248), "8.03B");    // Llama-3.1-8B
    EXPECT_EQ(formatCount(124'439'808), "124.44M");    // GPT-2
    EXPECT_EQ(formatCount(46'702'792'704), "46.70B");  // Mixtral-8x7B
    EXPECT_EQ(formatCount(405'853'388'800), "405.85B");
    EXPECT_EQ(formatCount(1'200'000'000'000), "1.20T");
    EXPECT_EQ(formatCount(1'500), "1.50K");
    EXPECT_EQ(formatCount(999), "999");
}

// The seed figure: "7B params, FP32 Adam = 7B * (4+4+4+4) = 112 GB".
// Llama-2-7B has 6,738,415,616 parameters: x 16 B = 107.81 GB.
TEST(WorkedExample, SeedFigureFp32Adam) {
    const Loaded r = estimated("llama2-7b-fp32-adam");
    EXPECT_EQ(workedExample(r.scenario, r.estimate),
              "6.74B params × (4+4+8) B = 107.8 GB for weights, gradients and optimizer states");
}

// ZeRO paper §3.1: mixed precision Adam holds 2 + 2 + 12 = 16 bytes per
// parameter. GPT-2 XL has 1,557,611,200: x 16 B = 24.92 GB ("24 GB").
TEST(WorkedExample, ZeroPaperSixteenPsi) {
    const Loaded r = estimated("gpt2-1.5b-zero-paper");
    EXPECT_EQ(workedExample(r.scenario, r.estimate),
              "1.56B params × (2+2+12) B = 24.9 GB for weights, gradients and optimizer states");
}

// Megatron-LM keeps fp32 main gradients: 2 + 4 + 12 = 18 bytes per parameter.
// Llama-3.1-8B's 8,030,261,248 parameters x 18 B = 144.54 GB; over 8 GPUs
// with ZeRO-3 each holds an eighth of the 16 + ... as the estimate reports.
TEST(WorkedExample, MegatronFp32GradientsAndShardedShare) {
    auto s = loadPreset("llama-3.1-8b");
    ASSERT_TRUE(s.ok()) << s.error().text();
    ASSERT_TRUE(applySetting(*s, "training.grad_dtype=fp32").ok());
    auto e = estimate(*s);
    ASSERT_TRUE(e.ok()) << e.error().text();
    EXPECT_EQ(workedExample(*s, *e), "8.03B params × (2+4+12) B = 144.5 GB for weights, gradients and optimizer states");
    ASSERT_TRUE(applySetting(*s, "parallelism.data=8").ok());
    ASSERT_TRUE(applySetting(*s, "parallelism.zero_stage=3").ok());
    e = estimate(*s);
    ASSERT_TRUE(e.ok());
    EXPECT_NE(workedExample(*s, *e).find("; this GPU holds 18.1 GB of model states"), std::string::npos)
        << workedExample(*s, *e);  // 144.54 GB / 8 = 18.07 GB
}

TEST(ExplainComponent, SaysWhatScalesAndWithWhichNumbers) {
    const Loaded r = estimated("llama2-7b-fp32-adam");
    const ComponentExplanation states = explainComponent(Component::OptimizerStates, r.scenario, r.estimate);
    EXPECT_EQ(states.label, "Optimizer states");
    EXPECT_EQ(states.scaling, "adam states: 2× params (m,v), fp32 (4 B each)");
    // One GPU, fp32 weights: 6,738,415,616 x 4 B = 26,953,662,464 B = 25.10 GiB.
    const ComponentExplanation weights = explainComponent(Component::Weights, r.scenario, r.estimate);
    EXPECT_EQ(weights.formula, "6.74B × 4 B = 25.10 GiB");
    EXPECT_EQ(weights.scaling, "1× params, fp32 (4 B each)");
    const ComponentExplanation grads = explainComponent(Component::Gradients, r.scenario, r.estimate);
    EXPECT_EQ(grads.formula, "6.74B × 4 B = 25.10 GiB");
}

TEST(ExplainComponent, CountsMicroBatchesInFlightInTheRightNumber) {
    // One GPU holds one micro-batch's activations at its peak...
    const Loaded one = estimated("llama2-7b-fp32-adam");
    const std::string single = explainComponent(Component::Activations, one.scenario, one.estimate).formula;
    EXPECT_NE(single.find("32 layers × 1 micro-batch in flight × (b="), std::string::npos) << single;
    // ...the first stage of 1F1B one per stage (Narayanan et al. 2021: p micro-batches in flight).
    const Loaded pipelined = estimated("llama3.1-405b-3d");
    ASSERT_GT(pipelined.estimate.peak.in_flight_microbatches, 1);
    const std::string many = explainComponent(Component::Activations, pipelined.scenario, pipelined.estimate).formula;
    EXPECT_NE(many.find(" micro-batches in flight × (b="), std::string::npos) << many;
}

// Interleaved 1F1B keeps chunks of different micro-batches: Megatron-LM's
// warm-up on the first rank is (p - 1) x 2 + (v - 1) x p chunks, plus the one
// computing (megatron/core/pipeline_parallel/schedules.py): 23 chunks of 1/5
// of the stage for p = 4, v = 5, which the formula says in words rather than
// as a bare "4.6 micro-batches" (issue 27).
TEST(ExplainComponent, SaysWhatAFractionOfMicroBatchesInFlightIs) {
    const Loaded r = estimated("llama3.1-70b-interleaved-3d");
    ASSERT_EQ(r.estimate.peak.stage, 0);
    const std::string f = explainComponent(Component::Activations, r.scenario, r.estimate).formula;
    EXPECT_NE(f.find("23 chunks (1/5 of the stage each, interleaved) in flight = 4.6 micro-batches' worth"), std::string::npos)
        << f;
}

// Only the last stage has logits; the first keeps the embedding's small
// saved tensors under Logits and loss (with PyTorch's kernels: the token
// ids and rotary tables), which must not read b x s x V.
TEST(ExplainComponent, LogitsAreExplainedOnlyWhereTheHeadIs) {
    Loaded r = estimated("llama3.1-405b-3d");
    r.scenario.training.kernels = KernelProfile::Fused;
    auto estimated_fused = estimate(r.scenario);
    ASSERT_TRUE(estimated_fused.ok()) << estimated_fused.error().text();
    r.estimate = *estimated_fused;
    auto stages = estimateStages(r.scenario);
    ASSERT_TRUE(stages.ok()) << stages.error().text();
    ASSERT_EQ(stages->size(), 16u);
    Estimate first = r.estimate, last = r.estimate;
    first.peak = stages->front();
    last.peak = stages->back();
    ASSERT_GT(first.peak.at_peak[Component::LogitsLoss], 0);
    const ComponentExplanation head = explainComponent(Component::LogitsLoss, r.scenario, last);
    EXPECT_NE(head.formula.find("b × s × V"), std::string::npos) << head.formula;
    const ComponentExplanation embedding = explainComponent(Component::LogitsLoss, r.scenario, first);
    EXPECT_EQ(embedding.formula.find("× V"), std::string::npos) << embedding.formula;
    EXPECT_NE(embedding.scaling.find("no logits on this stage (the head and loss are on stage 16)"), std::string::npos)
        << embedding.scaling;
}

TEST(ExplainComponent, NamesTheShardingOfEachState) {
    const Loaded r = estimated("llama3.1-8b-fsdp-8xh100");
    EXPECT_NE(explainComponent(Component::Weights, r.scenario, r.estimate).scaling.find("÷ 8 (ZeRO-3)"),
              std::string::npos);
    EXPECT_NE(explainComponent(Component::OptimizerStates, r.scenario, r.estimate).scaling.find("adamw states"),
              std::string::npos);
}

TEST(EstimateJson, HoldsEveryRequiredKeyWithIntegerBytes) {
    for (const auto& preset : listPresets()) {
        if (preset.kind != PresetKind::Scenario) continue;
        const Loaded r = estimated(preset.name);
        const json doc = estimateToJson(r.scenario, r.estimate);
        SCOPED_TRACE(preset.name);
        for (const char* key : {"total", "trainable", "active"})
            EXPECT_TRUE(doc["parameters"][key].is_number_integer()) << key;
        for (const char* key : {"weights", "gradients", "optimizer_states", "master_weights"})
            EXPECT_TRUE(doc["model_states"][key].is_number_integer()) << key;
        for (const char* key : {"allocated_bytes", "exact_allocated_bytes", "reserved_bytes", "device_bytes", "stage"})
            EXPECT_TRUE(doc["peak"][key].is_number_integer()) << key;
        EXPECT_TRUE(doc["peak"]["phase"].is_string());
        for (const char* key : {"host_bytes", "capacity_bytes", "headroom_bytes", "effective_batch", "total_gpus"})
            EXPECT_TRUE(doc[key].is_number_integer()) << key;
        EXPECT_TRUE(doc["fits"].is_boolean());
        EXPECT_TRUE(doc["recompute_fraction"].is_number());
        EXPECT_TRUE(doc["warnings"].is_array());
        EXPECT_EQ(doc["scenario"]["name"], preset.name);

        ASSERT_EQ(doc["breakdown"].size(), size_t(kComponentCount));
        int64_t sum = 0;
        for (const auto& [key, bytes] : doc["breakdown"].items()) {
            ASSERT_TRUE(bytes.is_number_integer()) << key;
            sum += bytes.get<int64_t>();
        }
        EXPECT_EQ(sum, doc["peak"]["allocated_bytes"].get<int64_t>());
    }
}

TEST(EstimateCsv, OneRowPerComponentSummingToThePeak) {
    const Loaded r = estimated("mixtral-8x7b-tp-ep");
    std::istringstream csv(estimateToCsv(r.scenario, r.estimate));
    std::string line;
    std::getline(csv, line);
    EXPECT_EQ(line, "component,bytes,share,formula");
    int rows = 0;
    int64_t sum = 0;
    while (std::getline(csv, line)) {
        ++rows;
        const size_t first = line.find(',');
        const size_t second = line.find(',', first + 1);
        sum += std::stoll(line.substr(first + 1, second - first - 1));
    }
    EXPECT_EQ(rows, kComponentCount);
    EXPECT_EQ(sum, r.estimate.peak.allocated_bytes);
}

TEST(EstimateText, TableAndMarkdownShowTheComponentsAndTheVerdict) {
    const Loaded r = estimated("llama2-7b-fp32-adam");
    const std::string table = estimateToTable(r.scenario, r.estimate);
    for (const char* text : {"Weights", "Gradients", "Optimizer states", "Allocated (peak)", "Reserved", "Device",
                             "Capacity", "does NOT fit", "6.74B params × (4+4+8) B"})
        EXPECT_NE(table.find(text), std::string::npos) << text << "\n" << table;
    const std::string markdown = estimateToMarkdown(r.scenario, r.estimate, Units::GB);
    EXPECT_NE(markdown.find("| Component | Memory | Share | How it scales |"), std::string::npos) << markdown;
    EXPECT_NE(markdown.find(" GB |"), std::string::npos);
}

}  // namespace
}  // namespace trainmem

namespace trainmem {
namespace {

// The seed notes' table (Goyal et al. 2017): base batch 256 at lr 0.1 scaled
// to 8k sequences is 3.2 by the linear rule, 0.1 x sqrt(32) by the square root.
TEST(BatchReport, JsonCarriesTheScaledLearningRates) {
    Scenario s = scenarioForModel(testing::llama2_7b());
    s.training.micro_batch_size = 32;
    s.training.gradient_accumulation_steps = 2;
    s.parallelism.data = 128;
    s.training.base_batch_size = 256;
    s.training.base_learning_rate = 0.1;
    s.training.warmup_steps = 500;
    const Expected<Estimate> e = estimate(s);
    ASSERT_TRUE(e.ok()) << e.error().text();
    const nlohmann::json j = estimateToJson(s, *e);
    EXPECT_EQ(j["batch"]["effective_batch"], 8192);
    EXPECT_NEAR(j["batch"]["lr_linear"].get<double>(), 3.2, 1e-12);
    EXPECT_NEAR(j["batch"]["lr_sqrt"].get<double>(), 0.565685424949238, 1e-12);
    EXPECT_EQ(j["batch"]["warmup_steps"], 500);
    EXPECT_NE(estimateToTable(s, *e).find("3.2 (linear rule)"), std::string::npos);
}

}  // namespace
}  // namespace trainmem
