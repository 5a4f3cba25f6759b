// The modelled step time (core/steptime/, docs/step-time.md), held to
// published throughput (validation/throughput/published.json,
// docs/accuracy-throughput.md) and to what the papers it follows state.
#include <algorithm>
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/steptime/step_time.h"
#include "core/steptime/step_time_report.h"
#include "core/scenario/scenario_file.h"
#include "core/account/scenario_validate.h"
#include "preset_scenario.h"

namespace trainmem {
namespace {

struct PublishedRow {
    std::string name;
    Scenario scenario;
    double measured = 0;
    bool fitted = false;
};

std::vector<PublishedRow> publishedRows() {
    std::ifstream in(std::string(TRAINMEM_VALIDATION_DIR) + "/throughput/published.json");
    EXPECT_TRUE(in.good());
    const auto doc = nlohmann::json::parse(in);
    std::vector<PublishedRow> rows;
    for (const auto& r : doc["rows"])
        rows.push_back({r["source"].get<std::string>() + ": " + r["row"].get<std::string>(),
                        presetWith(r["preset"], r["set"].get<std::vector<std::string>>(), false),
                        r["measured_tokens_per_second_per_gpu"].get<double>(), !r["fit"].get<std::string>().empty()});
    return rows;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// docs/accuracy-throughput.md: the rows not used to fit a constant are
// within 10% at the median (the bound; vTrain reports 8-15%).
TEST(StepTimeAccuracy, PublishedTorchtitanRowsWithinTenPercentAtTheMedian) {
    std::vector<double> held_out, all;
    for (const PublishedRow& r : publishedRows()) {
        auto model = prepareStepTime(r.scenario);
        ASSERT_TRUE(model.ok()) << r.name << ": " << model.error().text();
        const double modelled = stepTime(*model, r.scenario).tokens_per_second_per_gpu;
        const double error = std::fabs(modelled - r.measured) / r.measured;
        all.push_back(error);
        if (!r.fitted) held_out.push_back(error);
        EXPECT_LT(error, 0.35) << r.name << ": modelled " << modelled << ", measured " << r.measured;
    }
    ASSERT_GE(held_out.size(), 10u);
    EXPECT_LE(median(held_out), 0.10);
    EXPECT_LE(median(all), 0.10);
}

// torchtitan's benchmark note: Llama 3.1 8B on 8 or 128 H100s without
// Float8 "achieves 33% to 39% MFU" (with or without torch.compile), counted
// against the SXM peak with its get_num_flop_per_token: the convention here.
TEST(StepTimeAccuracy, MfuOfTheEightBillionRowsIsWhatTorchtitanStates) {
    for (const PublishedRow& r : publishedRows()) {
        if (r.name.find("Table 1") == std::string::npos && r.name.find("Table 3") == std::string::npos) continue;
        if (r.name.find("Float8") != std::string::npos) continue;
        // Timed without validation, as the accuracy rows are (op-level
        // checkpointing under compile has no memory account).
        auto model = prepareStepTime(r.scenario);
        ASSERT_TRUE(model.ok()) << model.error().text();
        const StepTime t = stepTime(*model, r.scenario);
        EXPECT_GE(t.mfu, 0.33 - 0.005) << r.name;
        EXPECT_LE(t.mfu, 0.39 + 0.005) << r.name;
    }
}

Scenario pipeline405b(const std::string& schedule, int64_t virtual_stages) {
    return presetWith("llama3.1-70b-interleaved-3d",
                      {"parallelism.pipeline_schedule=" + schedule,
                       "parallelism.virtual_stages=" + std::to_string(virtual_stages)});
}

// Narayanan et al. 2021 §2.2.2: interleaving v chunks per rank divides the
// bubble by v; GPipe's bubble equals 1F1B's (§2.2.1).
TEST(StepTime, InterleavingDividesTheBubbleByTheChunks) {
    auto one = stepTime(pipeline405b("1f1b", 1));
    auto two = stepTime(pipeline405b("interleaved-1f1b", 2));
    auto gpipe = stepTime(pipeline405b("gpipe", 1));
    ASSERT_TRUE(one.ok()) << one.error().text();
    ASSERT_TRUE(two.ok()) << two.error().text();
    ASSERT_TRUE(gpipe.ok()) << gpipe.error().text();
    ASSERT_GT((*one)[TimeComponent::Bubble], 0);
    EXPECT_NEAR((*two)[TimeComponent::Bubble] / (*one)[TimeComponent::Bubble], 0.5, 0.05);
    EXPECT_NEAR((*gpipe)[TimeComponent::Bubble], (*one)[TimeComponent::Bubble], 1e-9);
}

TEST(StepTime, BreakdownSumsToTheStep) {
    auto t = stepTime(presetWith("llama3.1-405b-3d", {}));
    ASSERT_TRUE(t.ok()) << t.error().text();
    double sum = 0;
    for (double x : t->breakdown) sum += x;
    EXPECT_NEAR(sum, t->step_seconds, 1e-9 * t->step_seconds);
    EXPECT_GT(t->tokens_per_second_per_gpu, 0);
    EXPECT_GT(t->mfu, 0);
    EXPECT_LT(t->mfu, 1);
}

// A tensor-parallel group larger than a node crosses the network; the
// node size and the bandwidths are settings.
TEST(StepTime, TensorParallelAcrossNodesIsSlowerAndTheNodeSizeIsASetting) {
    const std::vector<std::string> tp8 = {"parallelism.data=1", "parallelism.tensor=8", "parallelism.zero_stage=0",
                                          "training.micro_batch_size=1", "training.activation_checkpointing=full"};
    std::vector<std::string> small_nodes = tp8;
    small_nodes.push_back("hardware.gpus_per_node=4");
    auto inside = stepTime(presetWith("llama3.1-8b-fsdp-8xh100", tp8));
    auto across = stepTime(presetWith("llama3.1-8b-fsdp-8xh100", small_nodes));
    ASSERT_TRUE(inside.ok() && across.ok());
    EXPECT_GT((*across)[TimeComponent::TensorParallel], 3 * (*inside)[TimeComponent::TensorParallel]);
    std::vector<std::string> faster = small_nodes;
    faster.push_back("hardware.scale_out_gb_s=400");
    auto fast = stepTime(presetWith("llama3.1-8b-fsdp-8xh100", faster));
    ASSERT_TRUE(fast.ok());
    EXPECT_LT((*fast)[TimeComponent::TensorParallel], (*across)[TimeComponent::TensorParallel]);
}

TEST(StepTime, RefusesWhatItCannotModelNamingTheSetting) {
    auto a10g = stepTime(presetWith("llama3.1-8b-fsdp-8xh100", {"hardware.gpu=A10G-24GB"}, false));
    ASSERT_FALSE(a10g.ok());
    EXPECT_EQ(a10g.error().field, "hardware.gpu");
    auto l40s = stepTime(presetWith("llama3.1-405b-3d", {"hardware.gpu=L40S-48GB"}, false));
    ASSERT_FALSE(l40s.ok());
    EXPECT_EQ(l40s.error().field, "hardware.scale_out_gb_s");
    Scenario s = presetWith("llama3.1-8b-fsdp-8xh100", {});
    for (const char* bad : {"hardware.gpus_per_node=0", "hardware.scale_up_gb_s=0", "hardware.scale_out_gb_s=-1"}) {
        Scenario t = s;
        ASSERT_TRUE(applySetting(t, bad).ok()) << bad;
        const Status st = validate(t);
        ASSERT_FALSE(st.ok()) << bad;
        EXPECT_EQ(st.error().field, std::string(bad).substr(0, std::string(bad).find('=')));
    }
}

// What a collective costs is its exposed part (in the step) plus the part
// hidden behind compute (StepTime::overlapped), so the two add up to the
// ring collective's time by NCCL's formulas (docs/step-time.md
// §Communication), from Llama-3.1-8B's published 8,030,261,248 parameters
// and the H100's 900 GB/s NVLink (450 one way, x 0.8 bus efficiency).
TEST(StepTime, ExposedAndOverlappedCommunicationAddUpToEachCollective) {
    const double n = 8030261248.0, bus = 450e9 * 0.8, ring = 7.0 / 8.0;
    // DDP: one all-reduce of the fp32 gradients per step, overlapped with
    // the last backward but for its last 25 MiB bucket.
    auto ddp = stepTime(presetWith("llama3.1-8b-fsdp-8xh100", {"parallelism.zero_stage=0"}, false));
    ASSERT_TRUE(ddp.ok()) << ddp.error().text();
    const double all_reduce = 2 * ring * n * 4 / bus;
    EXPECT_NEAR((*ddp)[TimeComponent::GradientReduce] + ddp->overlappedAt(TimeComponent::GradientReduce), all_reduce,
                1e-9 * all_reduce);
    EXPECT_NEAR((*ddp)[TimeComponent::GradientReduce], 25.0 * 1024 * 1024 / bus, 1e-12);
    // FSDP (ZeRO-3, resharding after forward, gradients reduce-scattered
    // every micro-batch): per micro-batch a bf16 all-gather in forward,
    // another in backward and an fp32 reduce-scatter; two micro-batches.
    auto fsdp = stepTime(presetWith("llama3.1-8b-fsdp-8xh100", {}));
    ASSERT_TRUE(fsdp.ok()) << fsdp.error().text();
    const double per_microbatch = ring * n * (2 + 2 + 4) / bus;
    EXPECT_NEAR((*fsdp)[TimeComponent::FsdpGather] + fsdp->overlappedAt(TimeComponent::FsdpGather),
                2 * per_microbatch, 1e-9 * per_microbatch);
    EXPECT_GT(fsdp->overlappedAt(TimeComponent::FsdpGather), (*fsdp)[TimeComponent::FsdpGather]);
    // Compute, the bubble and the optimizer step are not communication.
    for (TimeComponent c : {TimeComponent::Compute, TimeComponent::Recompute, TimeComponent::Bubble,
                            TimeComponent::Optimizer})
        EXPECT_EQ(fsdp->overlappedAt(c), 0) << timeComponentKey(c);
}

TEST(StepTime, ThroughputJsonStatesTheFlopConvention) {
    nlohmann::json doc;
    addThroughput(doc, presetWith("llama3.1-8b-fsdp-8xh100", {}));
    ASSERT_TRUE(doc["throughput"].is_object());
    EXPECT_GT(doc["throughput"]["step_seconds"].get<double>(), 0);
    EXPECT_NE(doc["throughput"]["mfu_convention"].get<std::string>().find("6 x"), std::string::npos);
    nlohmann::json none;
    addThroughput(none, presetWith("llama3.1-8b-fsdp-8xh100", {"hardware.gpu=A10G-24GB"}, false));
    EXPECT_TRUE(none["throughput"].is_null());
    EXPECT_EQ(none["throughput_error"]["field"], "hardware.gpu");
}

}  // namespace
}  // namespace trainmem
