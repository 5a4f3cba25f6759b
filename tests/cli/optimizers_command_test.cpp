// trainmem-cli optimizers: the optimizer catalogue, and the copy the GPU
// harness reads (validation/optimizers.json, validation/harness_plan.py).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/cli/cli_run.h"

namespace trainmem::cli {
namespace {

using nlohmann::json;

TEST(CliOptimizers, OptimizersJsonIsTheHarnessCatalogue) {
    // The harness takes its optimizer keys and implementations from this
    // file; regenerate it with `trainmem-cli optimizers --format json >
    // validation/optimizers.json` when core/training/optimizer_state.cpp changes.
    const CliRun r = run({"optimizers", "--format", "json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const std::filesystem::path committed =
        std::filesystem::path(TRAINMEM_TEST_DATA_DIR).parent_path().parent_path() / "validation" / "optimizers.json";
    std::ifstream in(committed);
    ASSERT_TRUE(in.good()) << committed;
    EXPECT_EQ(json::parse(r.out), json::parse(in)) << "validation/optimizers.json is stale: regenerate it";
}

TEST(CliOptimizers, ListsEachOptimizerWithTheImplementationsItHas) {
    const CliRun r = run({"optimizers", "--format", "json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const json list = json::parse(r.out);
    ASSERT_EQ(list.size(), 10u);
    for (const json& o : list) {
        if (o.at("key") == "lion") {  // lion-pytorch and the harness have no fused kernel
            EXPECT_EQ(o.at("implementations"), (json{"foreach", "for-loop"}));
        }
        if (o.at("key") == "adamw") {
            EXPECT_EQ(o.at("implementations"), (json{"foreach", "fused", "for-loop"}));
        }
    }
    // The estimator refuses what the list leaves out, under the same key.
    const CliRun fused_lion =
        run({"estimate", "--preset", "gpt2", "--set", "training.optimizer=lion", "--set", "training.optimizer_impl=fused"});
    EXPECT_EQ(fused_lion.status, 2);
    EXPECT_NE(fused_lion.err.find("training.optimizer_impl"), std::string::npos) << fused_lion.err;
    const CliRun table = run({"optimizers"});
    ASSERT_EQ(table.status, 0);
    EXPECT_NE(table.out.find("lion          Lion         m         foreach, for-loop"), std::string::npos) << table.out;
}

}  // namespace
}  // namespace trainmem::cli

namespace trainmem::cli {
namespace {

// Issue 27: a fused-AdamW scenario compared under Lion, which has no fused
// kernel (torch.optim has no fused Lion; the app's Optimizers tab falls back
// to foreach and says so): the CLI does the same instead of failing whole.
TEST(CompareOptimizers, LionWithoutAFusedKernelFallsBackToForeachAndSaysSo) {
    const CliRun table = run({"compare", "--preset", "llama3.1-8b-fsdp-8xh100", "--optimizers", "adamw,lion,sgd"});
    ASSERT_EQ(table.status, 0) << table.err;
    EXPECT_NE(table.out.find("lion: no fused kernel, compared with foreach"), std::string::npos) << table.out;
    const CliRun json_run = run({"compare", "--preset", "llama3.1-8b-fsdp-8xh100", "--optimizers", "adamw,lion", "--format", "json"});
    ASSERT_EQ(json_run.status, 0) << json_run.err;
    const nlohmann::json doc = nlohmann::json::parse(json_run.out);
    const nlohmann::json& lion = doc["variants"][1];
    EXPECT_EQ(lion["label"], "lion");
    EXPECT_NE(std::find(lion["settings"].begin(), lion["settings"].end(), "training.optimizer_impl=foreach"), lion["settings"].end());
    EXPECT_FALSE(doc["variants"][0].contains("note"));  // AdamW has its fused kernel
    // The Lion column is the scenario estimated with foreach Lion.
    const CliRun same = run({"estimate", "--preset", "llama3.1-8b-fsdp-8xh100", "--set", "training.optimizer=lion", "--set",
                             "training.optimizer_impl=foreach", "--format", "json"});
    ASSERT_EQ(same.status, 0) << same.err;
    EXPECT_EQ(nlohmann::json::parse(same.out)["peak"]["device_bytes"], lion["estimate"]["peak"]["device_bytes"]);
}

}  // namespace
}  // namespace trainmem::cli
