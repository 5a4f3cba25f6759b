// trainmem-cli's contract: results on stdout with status 0; any bad input
// gives status 2 and exactly one line "trainmem-cli: ..." on stderr, nothing
// on stdout. Run in-process through runCli, plus the real binary twice.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "tests/cli/cli_run.h"

namespace trainmem::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;


std::string fixture(const std::string& name) {
    return (fs::path(TRAINMEM_TEST_DATA_DIR) / "scenarios" / name).string();
}

// Status 2, one line on stderr starting "trainmem-cli: ", nothing on stdout.
void expectRefused(const std::vector<std::string>& args, const std::string& expected_fragment) {
    const CliRun r = run(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    SCOPED_TRACE(joined);
    EXPECT_EQ(r.status, 2);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(r.err.rfind("trainmem-cli: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(expected_fragment), std::string::npos) << r.err;
}

// ---------------------------------------------------------------- help

TEST(Cli, VersionPrintsTheProjectVersionOnStdout) {
    const CliRun r = run({"--version"});
    EXPECT_EQ(r.status, 0);
    EXPECT_TRUE(r.err.empty()) << r.err;
    EXPECT_EQ(r.out, "trainmem-cli " TRAINMEM_VERSION "\n");
    // The version is the project's, as CMake's project() declares it: MAJOR.MINOR.PATCH.
    EXPECT_TRUE(std::regex_match(std::string(TRAINMEM_VERSION), std::regex(R"(\d+\.\d+\.\d+)"))) << TRAINMEM_VERSION;
}

TEST(CliHelp, UsageListsTheCommands) {
    const CliRun r = run({"--help"});
    EXPECT_EQ(r.status, 0);
    for (const char* command : {"estimate", "presets", "compare"}) EXPECT_NE(r.out.find(command), std::string::npos);
    EXPECT_EQ(run({"help", "compare"}).status, 0);
}

TEST(CliHelp, EachCommandHasItsHelp) {
    for (const char* command : {"estimate", "presets", "compare"}) {
        const CliRun r = run({command, "--help"});
        EXPECT_EQ(r.status, 0) << command;
        EXPECT_NE(r.out.find(std::string("Usage: trainmem-cli ") + command), std::string::npos) << r.out;
        EXPECT_TRUE(r.err.empty());
    }
}

TEST(CliHelp, NoArgumentsIsAUsageError) {
    const CliRun r = run({});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("Usage:"), std::string::npos);
}

// ---------------------------------------------------------------- estimate

TEST(CliEstimate, TableForAPreset) {
    const CliRun r = run({"estimate", "--preset", "llama3.1-8b-qlora-rtx4090"});
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char* text : {"Weights", "Activations", "Allocated (peak)", "RTX4090-24GB", "Example:"})
        EXPECT_NE(r.out.find(text), std::string::npos) << text;
}

TEST(CliEstimate, ModelSettingsDependingOnEachOtherWorkInEitherOrder) {
    // A toy GPT-2: 128 wide with 4 heads. Either key alone is an invalid model.
    for (const auto& [first, second] : {std::pair{"model.n_embd=128", "model.n_head=4"},
                                        std::pair{"model.n_head=4", "model.n_embd=128"}}) {
        const CliRun r = run({"estimate", "--preset", "gpt2", "--set", first, "--set", second, "--format=json"});
        ASSERT_EQ(r.status, 0) << first << ": " << r.err;
        EXPECT_EQ(json::parse(r.out)["scenario"]["model"]["n_embd"], 128);
    }
}

TEST(CliEstimate, JsonHasIntegerBytesAndASummingBreakdown) {
    const CliRun r = run({"estimate", "--preset", "llama-2-7b", "--set", "training.micro_batch_size=2", "--format=json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const json doc = json::parse(r.out);
    EXPECT_EQ(doc["scenario"]["training"]["micro_batch_size"], 2);
    EXPECT_EQ(doc["parameters"]["total"], 6'738'415'616);  // Llama-2-7B's published count
    int64_t sum = 0;
    for (const auto& [key, bytes] : doc["breakdown"].items()) {
        ASSERT_TRUE(bytes.is_number_integer()) << key;
        sum += bytes.get<int64_t>();
    }
    EXPECT_EQ(sum, doc["peak"]["allocated_bytes"].get<int64_t>());
}

TEST(CliEstimate, ModelConfigScenarioFileAndOtherFormats) {
    const std::string config = (fs::path(TRAINMEM_TEST_DATA_DIR) / "hf" / "llama_defaults.json").string();
    EXPECT_EQ(run({"estimate", "--model-config", config}).status, 0);
    const CliRun scenario = run({"estimate", "--scenario", fixture("inline-config.json"), "--format", "csv"});
    ASSERT_EQ(scenario.status, 0) << scenario.err;
    EXPECT_EQ(scenario.out.rfind("component,bytes,share,formula\n", 0), 0u);
    const CliRun markdown = run({"estimate", "--preset", "gpt2", "--format", "markdown", "--units", "gb"});
    ASSERT_EQ(markdown.status, 0) << markdown.err;
    EXPECT_NE(markdown.out.find("| Component |"), std::string::npos);
    EXPECT_NE(markdown.out.find(" GB |"), std::string::npos);
    // The worked example speaks the table's units (it was GB under a GiB table).
    const CliRun table = run({"estimate", "--preset", "llama3.1-8b-fsdp-8xh100"});
    ASSERT_EQ(table.status, 0) << table.err;
    const size_t example = table.out.find("Example:");
    ASSERT_NE(example, std::string::npos);
    const std::string line = table.out.substr(example, table.out.find('\n', example) - example);
    EXPECT_NE(line.find("119.7 GiB"), std::string::npos) << line;  // 8.03B x 16 B = 128.5 GB = 119.7 GiB
    EXPECT_EQ(line.find(" GB "), std::string::npos) << line;
}

TEST(CliEstimate, EveryScenarioPresetEstimates) {
    const json presets = json::parse(run({"presets", "--format", "json"}).out);
    int scenarios = 0;
    for (const auto& p : presets) {
        if (p["kind"] != "scenario") continue;
        ++scenarios;
        const CliRun r = run({"estimate", "--preset", p["name"].get<std::string>(), "--format", "json"});
        EXPECT_EQ(r.status, 0) << p["name"] << ": " << r.err;
    }
    EXPECT_GE(scenarios, 6);
}

// ---------------------------------------------------------------- bad input

TEST(CliErrors, BadValueIsOneLineNamingTheField) {
    const CliRun r = run({"estimate", "--preset", "llama-2-7b", "--set", "training.micro_batch_size=0"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "trainmem-cli: training.micro_batch_size: must be a positive integer (got 0)\n");
    EXPECT_TRUE(r.out.empty());
}

TEST(CliErrors, DegreesThatDoNotDivide) {
    expectRefused({"estimate", "--scenario", fixture("tensor-not-dividing-heads.json")},
                  "parallelism.tensor: 3 does not divide model.num_attention_heads (32)");
    expectRefused({"estimate", "--preset", "llama-3.1-8b", "--set", "parallelism.tensor=16"},
                  "model.num_key_value_heads (8)");
    expectRefused({"estimate", "--preset", "llama-2-7b", "--set", "parallelism.pipeline=64"}, "parallelism.pipeline:");
    expectRefused({"estimate", "--preset", "mixtral-8x7b", "--set", "parallelism.data=3", "--set",
                   "parallelism.expert=3"},
                  "parallelism.expert: 3 does not divide the number of experts (8)");
}

TEST(CliErrors, SizesNamesAndCounts) {
    expectRefused({"estimate", "--preset", "llama-2-7b", "--set", "training.sequence_length=-1"},
                  "training.sequence_length: must be a positive integer (got -1)");
    expectRefused({"estimate", "--preset", "llama-2-7b", "--set", "training.optimizer=adamx"},
                  "training.optimizer: unknown name \"adamx\"");
    expectRefused({"estimate", "--scenario", fixture("gpu-count-mismatch.json")}, "parallelism.gpus: 8 GPUs given");
    expectRefused({"estimate", "--preset", "no-such-model"}, "preset: unknown preset \"no-such-model\"");
}

TEST(CliErrors, FilesThatAreMissingUnreadableOrMalformed) {
    expectRefused({"estimate", "--scenario", fixture("nope.json")}, "nope.json: no such file");
    expectRefused({"estimate", "--scenario", fixture("")}, "is a directory");
    expectRefused({"estimate", "--scenario", fixture("malformed.json")}, "malformed JSON at line 4");
    expectRefused({"estimate", "--model-config", fixture("malformed.json")}, "malformed JSON at line 4");
    expectRefused({"estimate", "--scenario", fixture("missing-model-field.json")}, "model.hidden_size");
    expectRefused({"estimate", "--scenario", fixture("unknown-key.json")},
                  "training.micro_batch: unknown key (did you mean micro_batch_size?)");
    expectRefused({"estimate", "--scenario", fixture("wrong-type.json")}, "expected an integer");
    expectRefused({"estimate", "--scenario", fixture("future-version.json")}, "version");
}

TEST(CliErrors, CommandsFlagsAndArguments) {
    expectRefused({"estimat"}, "unknown command \"estimat\" (did you mean estimate?)");
    expectRefused({"estimate", "--preset", "gpt2", "--formt", "json"}, "--formt: unknown option (did you mean --format?)");
    expectRefused({"estimate", "--preset"}, "--preset: missing value");
    expectRefused({"estimate", "--preset", "gpt2", "--format", "xml"}, "--format: expected one of: table, json");
    expectRefused({"estimate", "--preset", "gpt2", "--units", "mib"}, "--units");
    expectRefused({"estimate"}, "no scenario");
    // core/scenario_source's words, as the app gives them (tests/ui/headless_export_test.cpp).
    expectRefused({"estimate", "--preset", "gpt2", "--scenario", fixture("minimal.json")},
                  "--scenario: give only one of --preset, --model-config and --scenario");
    expectRefused({"estimate", "--preset", "gpt2", "--preset", "gpt2"}, "--preset: given more than once");
    expectRefused({"estimate", "gpt2"}, "unexpected argument \"gpt2\"");
    expectRefused({"estimate", "--preset", "gpt2", "--set", "training.micro_batch_size"}, "key=value");
    expectRefused({"presets", "--format", "csv"}, "--format");
}

TEST(CliStages, PeopleReadStagesFromOneJsonKeepsTheIndex) {
    // GPT-2's 12 layers on 4 stages peak on the last (the head's) stage: the
    // app says "stage 4 of 4", and so do the CLI's table, compare and fit;
    // the JSON's peak.stage is the 0-based index.
    const std::vector<std::string> pp = {"--preset", "gpt2", "--set", "parallelism.pipeline=4",
                                         "--set", "training.gradient_accumulation_steps=8"};
    std::vector<std::string> args = {"estimate"};
    args.insert(args.end(), pp.begin(), pp.end());
    CliRun r = run(args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("Peak:       stage 4 of 4 (layers 10–12), during backward"), std::string::npos) << r.out;
    args.insert(args.end(), {"--format", "json"});
    r = run(args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(json::parse(r.out)["peak"]["stage"], 3);
    args = {"compare"};
    args.insert(args.end(), pp.begin(), pp.end());
    args.insert(args.end(), {"--optimizers", "adamw,sgd"});
    r = run(args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("stage 4, backward"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("stage 3,"), std::string::npos) << r.out;
}

TEST(CliWarnings, AFamilyWithoutActivationGroundTruthSaysSo) {
    // Llama 4's eager MoE runs every expert on every token; until its account
    // is held to autograd, every estimate of it says so (and others do not).
    CliRun r = run({"estimate", "--preset", "llama-4-scout", "--format", "json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const json warnings = json::parse(r.out)["warnings"];
    ASSERT_EQ(warnings.size(), 1u) << warnings.dump();
    EXPECT_NE(warnings[0].get<std::string>().find("runs every expert on every token"), std::string::npos);
    r = run({"estimate", "--preset", "gpt-oss-20b", "--format", "json"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(json::parse(r.out)["warnings"].size(), 0u) << r.out;
}

// ---------------------------------------------------------------- presets

TEST(CliPresets, ListsModelsAndScenariosWithDescriptions) {
    const CliRun table = run({"presets"});
    ASSERT_EQ(table.status, 0) << table.err;
    for (const char* name : {"llama3.1-8b-fsdp-8xh100", "llama3.1-8b-qlora-rtx4090", "mixtral-8x7b-tp-ep",
                             "llama3.1-405b-3d", "llama3.1-70b-long-context-cp", "gpt2-1.5b-zero-paper",
                             "llama2-7b-fp32-adam", "llama-3.1-8b"})
        EXPECT_NE(table.out.find(name), std::string::npos) << name;
    const json list = json::parse(run({"presets", "--format", "json"}).out);
    bool gpt2 = false;
    for (const auto& p : list) {
        EXPECT_FALSE(p["description"].get<std::string>().empty()) << p["name"];
        if (p["name"] == "gpt2") {
            gpt2 = true;
            EXPECT_EQ(p["kind"], "model");
            EXPECT_NE(p["description"].get<std::string>().find("124.44M"), std::string::npos) << p["description"];
        }
    }
    EXPECT_TRUE(gpt2);
}

// ---------------------------------------------------------------- compare

TEST(CliCompare, OptimizersSideBySide) {
    const CliRun r = run({"compare", "--preset", "llama-2-7b", "--optimizers", "adamw,sgd,adamw-8bit", "--format", "json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const json doc = json::parse(r.out);
    ASSERT_EQ(doc["variants"].size(), 3u);
    auto states = [&](int i) { return doc["variants"][i]["estimate"]["model_states"]["optimizer_states"].get<int64_t>(); };
    // Plain SGD keeps no state; 8-bit AdamW about a quarter of fp32 AdamW's 8 B per parameter.
    EXPECT_EQ(states(1), 0);
    EXPECT_LT(states(2), states(0) / 3);
    const CliRun table = run({"compare", "--preset", "llama-2-7b", "--optimizers", "adamw,sgd"});
    ASSERT_EQ(table.status, 0);
    EXPECT_NE(table.out.find("Optimizer states"), std::string::npos);
    EXPECT_NE(table.out.find("Fits"), std::string::npos);
}

TEST(CliCompare, VariantsWithListValues) {
    const CliRun r = run({"compare", "--preset", "llama-2-7b", "--variant", "", "--variant",
                       "training.finetuning=lora,training.lora_targets=q_proj,v_proj", "--format", "csv"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind("row,base,", 0), 0u) << r.out;
    expectRefused({"compare", "--preset", "llama-2-7b", "--variant", "training.optimizer=nope"},
                  "(variant \"training.optimizer=nope\")");
    expectRefused({"compare", "--preset", "llama-2-7b"}, "nothing to compare");
    expectRefused({"compare", "--preset", "llama-2-7b", "--optimizers", "adamw,adamx"}, "unknown optimizer \"adamx\"");
}

// ---------------------------------------------------------------- the binary

int runBinary(const std::string& arguments, const fs::path& err_file) {
    const std::string command = std::string(TRAINMEM_CLI_EXE) + " " + arguments + " > /dev/null 2> " + err_file.string();
    const int raw = std::system(command.c_str());
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

TEST(CliBinary, ExitStatusTwoWithOneLineOnBadInput) {
    const fs::path err = fs::temp_directory_path() / ("trainmem-cli-test-" + std::to_string(::getpid()) + ".err");
    EXPECT_EQ(runBinary("estimate --preset llama-2-7b --set parallelism.tensor=3", err), 2);
    std::ifstream in(err);
    std::string first, second;
    std::getline(in, first);
    EXPECT_EQ(first.rfind("trainmem-cli: parallelism.tensor: 3 does not divide", 0), 0u) << first;
    EXPECT_FALSE(std::getline(in, second)) << "more than one line: " << second;
    EXPECT_EQ(runBinary("frobnicate", err), 2);
    fs::remove(err);
}

TEST(CliBinary, ExitStatusZeroOnSuccess) {
    const fs::path err = fs::temp_directory_path() / ("trainmem-cli-test-ok-" + std::to_string(::getpid()) + ".err");
    EXPECT_EQ(runBinary("estimate --preset gpt2-1.5b-zero-paper --format json", err), 0);
    EXPECT_EQ(fs::file_size(err), 0u);
    fs::remove(err);
}

}  // namespace
}  // namespace trainmem::cli
