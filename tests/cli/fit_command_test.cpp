// trainmem-cli fit: its JSON reproduces through --set, its batch arithmetic
// holds, and bad flags are one line naming the flag with status 2.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "tests/cli/cli_run.h"
#include "core/account/estimate.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario_file.h"

namespace trainmem::cli {
namespace {

using nlohmann::json;


json fitJson(std::vector<std::string> args) {
    args.insert(args.begin(), "fit");
    args.push_back("--format");
    args.push_back("json");
    const CliRun r = run(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

void expectRefused(std::vector<std::string> args, const std::string& flag) {
    args.insert(args.begin(), "fit");
    const CliRun r = run(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    SCOPED_TRACE(joined);
    EXPECT_EQ(r.status, 2);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("trainmem-cli: " + flag + ": ", 0), 0u) << r.err;
}

// Each listed row carries the same "throughput" object as estimate's, and
// the top row's settings, given to estimate, give the same step time; a
// global batch smaller than the GPU count is said.
TEST(FitCommand, RowsCarryEstimatesThroughputAndASmallBatchIsSaid) {
    const json doc = fitJson({"--preset", "llama-2-7b", "--gpus", "16", "--gpu", "A100-80GB", "--global-batch", "8"});
    ASSERT_FALSE(doc.is_discarded());
    ASSERT_FALSE(doc["layouts"].empty());
    EXPECT_NE(doc["note"].get<std::string>().find("smaller than the 16 GPUs"), std::string::npos) << doc["note"];
    const json& top = doc["layouts"][0];
    ASSERT_TRUE(top["throughput"].is_object());
    std::vector<std::string> args = {"estimate", "--preset", "llama-2-7b", "--format", "json"};
    for (const auto& [key, value] : top["settings"].items()) {
        args.push_back("--set");
        args.push_back(key + "=" + value.get<std::string>());
    }
    const CliRun r = run(args);
    ASSERT_EQ(r.status, 0) << r.err;
    const json est = json::parse(r.out);
    EXPECT_DOUBLE_EQ(est["throughput"]["tokens_per_second_per_gpu"].get<double>(),
                     top["throughput"]["tokens_per_second_per_gpu"].get<double>());
    EXPECT_DOUBLE_EQ(est["throughput"]["step_seconds"].get<double>(), top["throughput"]["step_seconds"].get<double>());
    for (size_t i = 0; i + 1 < doc["layouts"].size(); ++i)
        EXPECT_GE(doc["layouts"][i]["throughput"]["tokens_per_second_per_gpu"].get<double>(),
                  doc["layouts"][i + 1]["throughput"]["tokens_per_second_per_gpu"].get<double>()) << i;
}

// The top layout's settings, applied to the same preset with applySetting,
// give the same peak as the search reported.
TEST(FitCommand, TopLayoutSettingsReproduceItsPeak) {
    const json doc = fitJson({"--preset", "llama-2-7b", "--gpus", "8", "--gpu", "A100-80GB"});
    ASSERT_FALSE(doc.is_discarded());
    ASSERT_FALSE(doc["layouts"].empty());
    const json& top = doc["layouts"][0];
    EXPECT_EQ(top["rank"], 1);
    EXPECT_TRUE(top["fits"].get<bool>());

    auto scenario = loadPreset("llama-2-7b");
    ASSERT_TRUE(scenario.ok()) << scenario.error().text();
    for (const auto& [key, value] : top["settings"].items()) {
        const Status applied = applySetting(*scenario, key, value.get<std::string>());
        ASSERT_TRUE(applied.ok()) << applied.error().text();
    }
    const auto e = estimate(*scenario);
    ASSERT_TRUE(e.ok()) << e.error().text();
    EXPECT_EQ(e->peak.device_bytes, top["peak"]["device_bytes"].get<int64_t>());
    EXPECT_EQ(e->peak.allocated_bytes, top["peak"]["allocated_bytes"].get<int64_t>());
    EXPECT_EQ(e->peak.stage, top["peak"]["stage"].get<int64_t>());
    EXPECT_EQ(std::string(phaseName(e->peak.peak_phase)), top["peak"]["phase"].get<std::string>());
    EXPECT_EQ(e->headroom_bytes, top["headroom_bytes"].get<int64_t>());
    EXPECT_GT(doc["largest_micro_batch"].get<int64_t>(), 0);
}

// Every listed layout, run through `trainmem-cli estimate --set ...` as a
// user would paste it, gives the same device total.
TEST(FitCommand, EveryListedLayoutReproducesThroughEstimate) {
    const json doc = fitJson({"--preset", "mistral-7b-v0.1", "--gpus", "16", "--global-batch", "256", "--top", "8",
                              "--set", "training.sequence_length=4096"});
    ASSERT_EQ(doc["layouts"].size(), 8u);
    for (const json& layout : doc["layouts"]) {
        std::vector<std::string> args = {"estimate", "--preset", "mistral-7b-v0.1", "--set",
                                         "training.sequence_length=4096", "--format", "json"};
        for (const auto& [key, value] : layout["settings"].items()) {
            args.push_back("--set");
            args.push_back(key + "=" + value.get<std::string>());
        }
        const CliRun r = run(args);
        ASSERT_EQ(r.status, 0) << r.err;
        const json e = json::parse(r.out);
        EXPECT_EQ(e["peak"]["device_bytes"], layout["peak"]["device_bytes"]) << layout["layout"];
        EXPECT_EQ(e["effective_batch"], 256);
    }
}

TEST(FitCommand, GlobalBatchIsEveryLayoutsEffectiveBatch) {
    const json doc = fitJson({"--preset", "llama-2-7b", "--gpus", "32", "--global-batch", "1024", "--top", "50"});
    ASSERT_FALSE(doc["layouts"].empty());
    for (const json& layout : doc["layouts"]) {
        EXPECT_EQ(layout["effective_batch"], 1024);
        const auto& s = layout["settings"];
        const int64_t micro = std::stoll(s["training.micro_batch_size"].get<std::string>());
        const int64_t steps = std::stoll(s["training.gradient_accumulation_steps"].get<std::string>());
        const int64_t data = std::stoll(s["parallelism.data"].get<std::string>());
        EXPECT_EQ(micro * steps * data, 1024);
    }
}

// 405B parameters cannot fit 8 GPUs of 80 GB: nothing is listed, and the
// closest misses say by how much and what dominates.
TEST(FitCommand, NothingFitsListsTheClosestMissesWithReasons) {
    const json doc = fitJson({"--preset", "llama-3.1-405b", "--gpus", "8", "--rejected", "3"});
    EXPECT_EQ(doc["fitting"], 0);
    EXPECT_TRUE(doc["layouts"].empty());
    EXPECT_TRUE(doc["largest_micro_batch"].is_null());
    ASSERT_EQ(doc["rejected"].size(), 3u);
    for (const json& miss : doc["rejected"]) {
        EXPECT_FALSE(miss["fits"].get<bool>());
        EXPECT_GT(miss["over_bytes"].get<int64_t>(), 0);
        EXPECT_EQ(miss["reason"].get<std::string>().rfind("over by ", 0), 0u) << miss["reason"];
    }
}

TEST(FitCommand, TableListsRankedLayoutsAndHowToReproduceTheFirst) {
    const CliRun r = run({"fit", "--preset", "llama-2-7b", "--gpus", "8", "--top", "3"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("layouts enumerated"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Headroom"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("trainmem-cli estimate --preset llama-2-7b --set parallelism.gpus=8"), std::string::npos)
        << r.out;
}

TEST(FitCommand, BadFlagsAreOneLineNamingTheFlag) {
    expectRefused({"--preset", "llama-2-7b"}, "--gpus");
    expectRefused({"--preset", "llama-2-7b", "--gpus", "0"}, "--gpus");
    expectRefused({"--preset", "llama-2-7b", "--gpus", "-8"}, "--gpus");
    expectRefused({"--preset", "llama-2-7b", "--gpus", "eight"}, "--gpus");
    expectRefused({"--preset", "llama-2-7b", "--gpus", "8x"}, "--gpus");
    expectRefused({"--preset", "llama-2-7b", "--gpus", "99999999999"}, "--gpus");
    expectRefused({"--preset", "llama-2-7b", "--gpus", "8", "--gpu", "H100-90GB"}, "--gpu");
    expectRefused({"--preset", "llama-2-7b", "--gpus", "8", "--global-batch", "0"}, "--global-batch");
    expectRefused({"--preset", "llama-2-7b", "--gpus", "8", "--top", "many"}, "--top");
    expectRefused({"--preset", "llama-2-7b", "--gpus", "8", "--max-micro-batch", "0"}, "--max-micro-batch");
    expectRefused({"--preset", "llama-2-7b", "--gpus", "8", "--format", "csv"}, "--format");
    expectRefused({"--preset", "llama-2-7b", "--gpus", "8", "--set", "training.sequence_length=0"},
                  "training.sequence_length");
}

}  // namespace
}  // namespace trainmem::cli

namespace trainmem::cli {
namespace {

// Issue 27: the same question as the app's Find a Layout gets the same
// answer. The preset trains micro-batch 1 x data 4 x 32 accumulation steps
// = 128 sequences per step (presets/scenarios/llama3.1-70b-interleaved-3d.json);
// the CLI kept the 32 steps, so its #1 (data 8) trained 256.
TEST(FitCommand, ByDefaultEveryLayoutTrainsTheScenariosGlobalBatchAsTheAppDoes) {
    const json doc = fitJson({"--preset", "llama3.1-70b-interleaved-3d", "--gpus", "64", "--top", "30"});
    ASSERT_FALSE(doc["layouts"].empty());
    EXPECT_EQ(doc["global_batch"], 128);
    for (const json& layout : doc["layouts"]) EXPECT_EQ(layout["effective_batch"], 128) << layout["layout"];
}

TEST(FitCommand, KeepAccumulationIsAskedForAndNotWithAGlobalBatch) {
    const json doc = fitJson({"--preset", "llama3.1-70b-interleaved-3d", "--gpus", "64", "--top", "30", "--keep-accumulation"});
    ASSERT_FALSE(doc["layouts"].empty());
    EXPECT_TRUE(doc["global_batch"].is_null());
    bool other = false;
    for (const json& layout : doc["layouts"]) other = other || layout["effective_batch"] != 128;
    EXPECT_TRUE(other) << "keeping 32 steps, a layout with another data degree trains another batch";
    expectRefused({"--preset", "llama-2-7b", "--gpus", "8", "--keep-accumulation", "--global-batch", "64"}, "--keep-accumulation");
}

}  // namespace
}  // namespace trainmem::cli
