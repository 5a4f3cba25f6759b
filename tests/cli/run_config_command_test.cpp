// trainmem-cli import, export-run, and --run-config in estimate and fit
// (docs/run-configs.md), in-process.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/cli/cli_run.h"

namespace trainmem::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string data(const std::string& name) { return (fs::path(TRAINMEM_TEST_DATA_DIR) / "run_configs" / name).string(); }

void expectOneLineError(const CliRun& r) {
    EXPECT_EQ(r.status, 2);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(r.err.rfind("trainmem-cli: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(ImportCommand, JsonHasTheScenarioAndEveryReportCategory) {
    const CliRun r = run({"import", data("torchtitan_llama3_8b.toml"), "--gpus", "8", "--format", "json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const json doc = json::parse(r.out);
    EXPECT_EQ(doc["scenario"]["model"]["preset"], "llama-3.1-8b");
    EXPECT_EQ(doc["scenario"]["parallelism"]["data"], 8);
    for (const char* category : {"read", "defaults", "unknown", "not_representable", "ignored"})
        ASSERT_TRUE(doc["report"][category].is_array()) << category;
    bool found = false;
    for (const auto& e : doc["report"]["read"])
        if (e["key"] == "training.seq_len") {
            found = true;
            EXPECT_EQ(e["line"], 28);
            EXPECT_EQ(e["trainmem_key"], "training.sequence_length");
            EXPECT_EQ(e["file"], data("torchtitan_llama3_8b.toml"));
        }
    EXPECT_TRUE(found);
    for (const auto& e : doc["report"]["defaults"]) EXPECT_TRUE(e.contains("source")) << e.dump();
}

TEST(ImportCommand, WithoutAModelTheModelIsNullAndUnknown) {
    const CliRun r = run({"import", data("deepspeed_zero3_offload.json"), "--gpus", "8", "--format", "json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const json doc = json::parse(r.out);
    EXPECT_TRUE(doc["scenario"]["model"].is_null());
    EXPECT_EQ(doc["scenario"]["training"]["micro_batch_size"], 2);
    EXPECT_EQ(doc["report"]["unknown"][0]["trainmem_key"], "model");
}

TEST(ImportCommand, CompanionFilesAreGivenAfterTheFile) {
    const CliRun r = run({"import", data("axolotl_llama3_1_8b_lora_zero2.yaml"), data("deepspeed_zero2_auto.json"), "--gpus", "4",
                          "--format", "json"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(json::parse(r.out)["scenario"]["parallelism"]["zero_stage"], 2);
}

TEST(ImportCommand, BadFilesGetFileAndLine) {
    const CliRun r = run({"import", data("torchtitan_llama3_8b.toml"), "--gpus", "eight"});
    expectOneLineError(r);
    EXPECT_NE(r.err.find("--gpus"), std::string::npos) << r.err;
    const CliRun rule = run({"import", data("torchtitan_llama3_8b.toml"), "--gpus", "8",
                             "--override", "--training.global_batch_size=12"});
    expectOneLineError(rule);
    EXPECT_NE(rule.err.find("torchtitan/train.py"), std::string::npos) << rule.err;
    const CliRun missing = run({"import", data("no_such_file.toml")});
    expectOneLineError(missing);
    EXPECT_NE(missing.err.find("no_such_file.toml"), std::string::npos);
    const CliRun companion = run({"import", data("axolotl_llama3_1_8b_lora_zero2.yaml"), data("nowhere.json")});
    expectOneLineError(companion);
    EXPECT_NE(companion.err.find("companion file does not exist"), std::string::npos) << companion.err;
}

TEST(RunConfigFlag, EstimateRefusesWhileAValueIsUnknown) {
    const CliRun r = run({"estimate", "--run-config", data("deepspeed_zero2_auto.json"), "--preset", "llama-3.1-8b", "--gpus", "4"});
    expectOneLineError(r);
    EXPECT_NE(r.err.find("train_micro_batch_size_per_gpu -> training.micro_batch_size"), std::string::npos) << r.err;
    const CliRun settled = run({"estimate", "--run-config", data("deepspeed_zero2_auto.json"), "--preset", "llama-3.1-8b", "--gpus", "4",
                                "--set", "training.micro_batch_size=1", "--set", "training.gradient_accumulation_steps=8",
                                "--set", "training.precision=mixed-bf16", "--set", "training.optimizer=adamw"});
    EXPECT_EQ(settled.status, 0) << settled.err;
}

TEST(RunConfigFlag, EstimateOfTheRunConfigIsTheEstimateOfItsScenario) {
    const CliRun a = run({"estimate", "--run-config", data("megatron_llama3_8b.sh"), "--preset", "llama-3.1-8b", "--format", "json"});
    ASSERT_EQ(a.status, 0) << a.err;
    const CliRun b = run({"estimate", "--preset", "llama3-8b-megatron-8xh100", "--format", "json"});
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_EQ(json::parse(a.out)["peak"], json::parse(b.out)["peak"]);
    EXPECT_EQ(json::parse(a.out)["breakdown"], json::parse(b.out)["breakdown"]);
}

TEST(RunConfigFlag, FitSearchesFromTheRunConfig) {
    const CliRun r = run({"fit", "--run-config", data("torchtitan_llama3_8b.toml"), "--gpus", "8", "--format", "json"});
    EXPECT_EQ(r.status, 0) << r.err;
}

TEST(ExportRunCommand, WritesTheStacksFlags) {
    const CliRun r = run({"export-run", "--to", "megatron", "--preset", "llama3-8b-megatron-8xh100"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("--use-distributed-optimizer"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--grad-reduce-in-bf16"), std::string::npos);
    expectOneLineError(run({"export-run", "--to", "torchtitan", "--preset", "llama3-8b-megatron-8xh100"}));
    expectOneLineError(run({"export-run", "--to", "megatron", "--preset", "llama3-8b-megatron-8xh100", "--output", "/no/such/dir/x.sh"}));
    expectOneLineError(run({"export-run", "--to", "litgpt", "--preset", "llama3-8b-megatron-8xh100"}));  // TP and ZeRO-1
    // LitGPT names Llama 3.1 by the Hub's old id (litgpt/config.py).
    const CliRun litgpt = run({"export-run", "--to", "litgpt", "--preset", "llama3.1-8b-litgpt-full-4gpu"});
    ASSERT_EQ(litgpt.status, 0) << litgpt.err;
    EXPECT_NE(litgpt.out.find("checkpoint_dir: checkpoints/meta-llama/Meta-Llama-3.1-8B\n"), std::string::npos) << litgpt.out;
    EXPECT_NE(litgpt.out.find("devices: 4\n"), std::string::npos) << litgpt.out;
}

TEST(ImportCommand, MegatronBridgeRunConfigWithItsWorldSize) {
    const CliRun r = run({"import", data("megatron_bridge_llama31_8b_run_config.yaml"), "--gpus", "2", "--format", "json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const json doc = json::parse(r.out);
    EXPECT_EQ(doc["stack"], "megatron-bridge");
    EXPECT_EQ(doc["scenario"]["parallelism"]["context"], 2);
    EXPECT_EQ(doc["scenario"]["model"]["vocab_size"], 32000) << doc["scenario"]["model"].dump();
}

}  // namespace
}  // namespace trainmem::cli
