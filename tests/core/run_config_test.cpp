// Importing training stacks' own run configs (core/runconfig/): each
// fixture in tests/data/run_configs/ is written from the stack's documented
// keys at a named release (cited in the file). The expected scenarios are
// the hand-written presets of presets/scenarios/ where one describes the
// same run, else the values the stack's source gives (cited per test).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/scenario/presets.h"
#include "core/scenario/model_presets.h"
#include "core/runconfig/run_config.h"
#include "core/scenario/scenario_fields.h"
#include "core/scenario/scenario_file.h"
#include "core/account/scenario_validate.h"

namespace trainmem::runconfig {
namespace {

namespace fs = std::filesystem;

std::string data(const std::string& name) { return (fs::path(TRAINMEM_TEST_DATA_DIR) / "run_configs" / name).string(); }

RunConfigOptions withGpus(int64_t gpus) {
    RunConfigOptions o;
    o.gpus = gpus;
    o.working_directory = fs::path(TRAINMEM_TEST_DATA_DIR) / "run_configs";
    return o;
}

RunConfigOptions withModel(const std::string& preset, std::optional<int64_t> gpus = std::nullopt) {
    RunConfigOptions o;
    o.gpus = gpus;
    auto s = loadPreset(preset);
    EXPECT_TRUE(s.ok()) << preset;
    o.model = *s;
    return o;
}

// A temporary file with `text`, removed at the end of the test.
struct TempFile {
    fs::path path;
    TempFile(const std::string& name, const std::string& text) {
        path = fs::temp_directory_path() / ("trainmem_runconfig_" + std::to_string(::getpid()) + "_" + name);
        std::ofstream(path) << text;
    }
    ~TempFile() { fs::remove(path); }
};

// Every scenario key, as saved, apart from the name and description.
nlohmann::json keys(const Scenario& s) {
    nlohmann::json j = scenarioToJson(s);
    j.erase("name");
    j.erase("description");
    return j;
}

bool hasEntry(const std::vector<ReportEntry>& entries, const std::string& key, const std::string& trainmem_key) {
    for (const auto& e : entries)
        if (e.key == key && e.trainmem_key == trainmem_key) return true;
    return false;
}

// --- the readers ---------------------------------------------------------

TEST(RunConfigYaml, ReadsIntegersAndBooleansAsPyYamlDoes) {
    // YAML 1.1 (PyYAML's resolver, which OmegaConf and axolotl use): 500_000
    // is an integer, yes/on are booleans; a quoted scalar is always text.
    auto doc = parseYamlDocument("a: 500_000\nb: yes\nc: \"500_000\"\nd: off\ne: 2e-5\nf: 0x10\ng: ~\nh: 1.5\n", "t.yaml");
    ASSERT_TRUE(doc.ok()) << doc.error().text();
    EXPECT_EQ(doc->find("a")->value, 500000);
    EXPECT_EQ(doc->find("b")->value, true);
    EXPECT_EQ(doc->find("c")->value, "500_000");
    EXPECT_EQ(doc->find("d")->value, false);
    EXPECT_DOUBLE_EQ(doc->find("e")->value.get<double>(), 2e-5);
    EXPECT_EQ(doc->find("f")->value, 16);
    EXPECT_TRUE(doc->find("g")->value.is_null());
    EXPECT_EQ(doc->find("h")->line, 8);
}

TEST(RunConfigYaml, SyntaxErrorsNameFileAndLine) {
    auto doc = parseYamlDocument("a: 1\nb: [1, 2\nc: 3\n", "bad.yaml");
    ASSERT_FALSE(doc.ok());
    EXPECT_NE(doc.error().text().find("bad.yaml:"), std::string::npos) << doc.error().text();
    EXPECT_NE(doc.error().text().find("YAML syntax error"), std::string::npos);
}

TEST(RunConfigToml, SyntaxErrorsNameFileAndLine) {
    auto doc = parseTomlDocument("[training]\nlocal_batch_size = 1\nseq_len = = 3\n", "bad.toml");
    ASSERT_FALSE(doc.ok());
    EXPECT_NE(doc.error().text().find("bad.toml:3"), std::string::npos) << doc.error().text();
}

// --- torchtitan ----------------------------------------------------------

TEST(RunConfigTorchtitan, TheLlama3ConfigIsTheHandWrittenPreset) {
    // presets/scenarios/llama3.1-8b-torchtitan-8xh100.json describes the same
    // run, hand-written from torchtitan's source; its loss is the later
    // ChunkedLossWrapper (b5bcd76c6), which v0.2.2 does not have.
    auto imported = importRunConfig(data("torchtitan_llama3_8b.toml"), withGpus(8));
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    EXPECT_TRUE(imported->report.unknown.empty());
    auto preset = loadPreset("llama3.1-8b-torchtitan-8xh100");
    ASSERT_TRUE(preset.ok());
    ASSERT_TRUE(applySetting(*preset, "training.loss=standard").ok());
    EXPECT_EQ(keys(imported->scenario), keys(*preset));
    EXPECT_TRUE(hasEntry(imported->report.read, "activation_checkpoint.selective_ac_option", "training.activation_checkpointing"));
    EXPECT_TRUE(hasEntry(imported->report.defaults, "optimizer.implementation", "training.optimizer_impl"));
}

TEST(RunConfigTorchtitan, ShardDegreeMinusOneWithoutTheWorldSizeIsUnknown) {
    RunConfigOptions o;
    auto imported = importRunConfig(data("torchtitan_llama3_8b.toml"), o);
    ASSERT_TRUE(imported.ok());
    EXPECT_TRUE(hasEntry(imported->report.unknown, "parallelism.data_parallel_shard_degree", "parallelism.data"));
    EXPECT_FALSE(requireComplete(*imported).ok());
}

TEST(RunConfigTorchtitan, CommandLineFlagsOverrideTheFile) {
    RunConfigOptions o = withGpus(8);
    o.overrides = {"--parallelism.tensor_parallel_degree=2", "--activation_checkpoint.selective_ac_option=2"};
    auto imported = importRunConfig(data("torchtitan_llama3_8b.toml"), o);
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    const Scenario& s = imported->scenario;
    EXPECT_EQ(s.parallelism.tensor, 2);
    EXPECT_EQ(s.parallelism.data, 4);  // -1: the ranks left, 8 / 2
    EXPECT_TRUE(s.parallelism.sequence_parallel);
    EXPECT_EQ(s.training.checkpointing, Checkpointing::TorchtitanLayer);
    EXPECT_EQ(s.training.checkpoint_every, 2);
}

TEST(RunConfigTorchtitan, DefaultsAreThoseOfItsLastTomlRelease) {
    // job_config.py at v0.2.2: local_batch_size 8, seq_len 2048, dtype
    // float32 with bfloat16 mixed precision, selective_ac_option "2".
    TempFile f("defaults.toml", "[model]\nname = \"llama3\"\nflavor = \"8B\"\n");
    auto imported = importRunConfig(f.path, withGpus(8));
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    const TrainingConfig& t = imported->scenario.training;
    EXPECT_EQ(t.micro_batch_size, 8);
    EXPECT_EQ(t.sequence_length, 2048);
    EXPECT_EQ(t.precision, Precision::AmpBf16);
    EXPECT_EQ(t.checkpointing, Checkpointing::TorchtitanLayer);
    EXPECT_EQ(t.checkpoint_every, 2);
}

TEST(RunConfigTorchtitan, RefusesWithTorchtitansOwnRules) {
    TempFile batch("batch.toml", "[training]\nlocal_batch_size = 2\nglobal_batch_size = 20\n");
    auto a = importRunConfig(batch.path, withGpus(8));
    ASSERT_FALSE(a.ok());
    EXPECT_NE(a.error().text().find(":3: training.global_batch_size"), std::string::npos) << a.error().text();
    EXPECT_NE(a.error().text().find("torchtitan/train.py"), std::string::npos);
    TempFile dims("dims.toml", "[parallelism]\ndata_parallel_shard_degree = 2\ntensor_parallel_degree = 2\n");
    auto b = importRunConfig(dims.path, withGpus(8));
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.error().text().find("!= WORLD_SIZE(8)"), std::string::npos) << b.error().text();
    TempFile type("type.toml", "[training]\nlocal_batch_size = \"one\"\n");
    auto c = importRunConfig(type.path, withGpus(8));
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().text().find(":2: training.local_batch_size: expected an integer"), std::string::npos) << c.error().text();
}

// --- torchtune -----------------------------------------------------------

TEST(RunConfigTorchtune, TheDistributedFullRecipe) {
    // recipes/full_finetune_distributed.py (v0.6.1): FSDP over the ranks,
    // custom_sharded_layers gives the ends their own units.
    auto imported = importRunConfig(data("torchtune_llama3_1_8b_full.yaml"), withGpus(8));
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    const Scenario& s = imported->scenario;
    EXPECT_EQ(s.model_preset, "llama-3.1-8b");
    EXPECT_EQ(s.training.micro_batch_size, 2);
    EXPECT_EQ(s.training.sequence_length, 4096);  // 4_096, YAML 1.1
    EXPECT_EQ(s.training.precision, Precision::PureBf16);
    EXPECT_EQ(s.training.optimizer, OptimizerKind::AdamW);
    EXPECT_FALSE(s.training.optimizer_paged);  // the framework row's PagedAdamW8bit is the single-device config's
    EXPECT_EQ(s.training.optimizer_impl, OptimizerImpl::Fused);
    EXPECT_FALSE(s.training.optimizer_in_backward);
    EXPECT_EQ(s.training.checkpointing, Checkpointing::Full);
    EXPECT_EQ(s.training.loss, LossImpl::ChunkedOutput);
    EXPECT_EQ(s.parallelism.zero_stage, 3);
    EXPECT_EQ(s.parallelism.data, 8);
    EXPECT_EQ(s.parallelism.fsdp_ends, FsdpEnds::OwnUnits);
    EXPECT_TRUE(imported->report.unknown.empty());
    EXPECT_TRUE(validate(s).ok());
}

TEST(RunConfigTorchtune, QloraBuilderAndItsArguments) {
    auto imported = importRunConfig(data("torchtune_llama3_1_8b_qlora_single_device.yaml"), RunConfigOptions{});
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    const TrainingConfig& t = imported->scenario.training;
    EXPECT_EQ(t.finetuning, Finetuning::Qlora);
    EXPECT_EQ(t.qlora_backend, QloraBackend::TorchaoNf4);
    EXPECT_EQ(t.lora_targets, (std::vector<std::string>{"q_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}));
    EXPECT_EQ(t.activation_offloading, ActivationOffloading::Torchtune);
    EXPECT_EQ(imported->scenario.parallelism.data, 1);
    EXPECT_TRUE(hasEntry(imported->report.defaults, "model.lora_dropout", "training.lora_dropout"));
}

TEST(RunConfigTorchtune, InterpolationAndTheRecipesRules) {
    TempFile missing("interp.yaml", "model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\nout: ${nowhere.dir}/x\n");
    auto a = importRunConfig(missing.path, withGpus(1));
    ASSERT_FALSE(a.ok());
    EXPECT_NE(a.error().text().find(":3: out"), std::string::npos) << a.error().text();
    TempFile in_bwd("bwd.yaml",
                    "model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\nbatch_size: 1\ngradient_accumulation_steps: 4\n"
                    "dtype: bf16\noptimizer:\n  _component_: torch.optim.AdamW\noptimizer_in_bwd: True\nloss:\n"
                    "  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss\n");
    auto b = importRunConfig(in_bwd.path, withGpus(1));
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.error().text().find("Gradient accumulation is not supported with optimizer in bwd"), std::string::npos) << b.error().text();
}

// --- DeepSpeed -----------------------------------------------------------

TEST(RunConfigDeepspeed, BatchSizesResolveAsDeepSpeedResolvesThem) {
    // train_batch_size = micro x accumulation x world (runtime/config.py):
    // 64 = 2 x 4 x 8.
    auto imported = importRunConfig(data("deepspeed_zero3_offload.json"), withModel("llama-3.1-8b", 8));
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    const Scenario& s = imported->scenario;
    EXPECT_EQ(s.training.micro_batch_size, 2);
    EXPECT_EQ(s.training.gradient_accumulation_steps, 4);
    EXPECT_EQ(s.training.precision, Precision::MixedBf16);
    EXPECT_EQ(s.parallelism.zero_stage, 3);
    EXPECT_TRUE(s.parallelism.offload_optimizer);
    EXPECT_FALSE(s.parallelism.offload_parameters);
    EXPECT_TRUE(imported->report.unknown.empty());
    // 64 is not 2 x k x 24 for any k.
    auto refused = importRunConfig(data("deepspeed_zero3_offload.json"), withModel("llama-3.1-8b", 24));
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().text().find("deepspeed/runtime/config.py"), std::string::npos) << refused.error().text();
}

TEST(RunConfigDeepspeed, AutoWithoutTheFileThatFillsItIsUnknownNeverGuessed) {
    auto imported = importRunConfig(data("deepspeed_zero2_auto.json"), withModel("llama-3.1-8b", 4));
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    const auto& u = imported->report.unknown;
    EXPECT_TRUE(hasEntry(u, "train_micro_batch_size_per_gpu", "training.micro_batch_size"));
    EXPECT_TRUE(hasEntry(u, "gradient_accumulation_steps", "training.gradient_accumulation_steps"));
    EXPECT_TRUE(hasEntry(u, "bf16.enabled", "training.precision"));
    EXPECT_TRUE(hasEntry(u, "optimizer", "training.optimizer"));
    EXPECT_FALSE(requireComplete(*imported).ok());
}

TEST(RunConfigDeepspeed, NvmeOffloadIsNotRepresentable) {
    TempFile f("nvme.json", R"({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3,
        "offload_param": {"device": "nvme", "nvme_path": "/local_nvme"}}, "optimizer": {"type": "AdamW"}})");
    auto imported = importRunConfig(f.path, withModel("llama-3.1-8b", 8));
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    EXPECT_TRUE(hasEntry(imported->report.not_representable, "zero_optimization.offload_param.device", "parallelism.offload_parameters"));
}

// --- axolotl -------------------------------------------------------------

TEST(RunConfigAxolotl, LoraWithTheDeepSpeedJsonItNames) {
    auto imported = importRunConfig(data("axolotl_llama3_1_8b_lora_zero2.yaml"), withGpus(4));
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    const Scenario& s = imported->scenario;
    EXPECT_EQ(s.model_preset, "llama-3.1-8b");  // base_model's Hub id is the preset's checkpoint
    EXPECT_EQ(s.training.finetuning, Finetuning::Lora);
    EXPECT_EQ(s.training.lora_rank, 32);
    EXPECT_EQ(s.training.lora_targets, std::vector<std::string>{"all-linear"});
    EXPECT_EQ(s.training.optimizer, OptimizerKind::AdamW8bit);
    EXPECT_EQ(s.training.loss, LossImpl::FusedLinear);
    EXPECT_EQ(s.training.micro_batch_size, 2);           // DeepSpeed's "auto" from axolotl's key
    EXPECT_EQ(s.training.gradient_accumulation_steps, 4);
    EXPECT_EQ(s.training.precision, Precision::MixedBf16);  // DeepSpeed's bf16 keeps fp32 masters
    EXPECT_EQ(s.parallelism.zero_stage, 2);
    EXPECT_EQ(s.parallelism.data, 4);
    EXPECT_TRUE(imported->report.unknown.empty());
}

TEST(RunConfigAxolotl, AMissingCompanionNamesTheKeyAndLine) {
    TempFile f("ax.yaml", "base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\ndeepspeed: no_such_zero3.json\n");
    auto imported = importRunConfig(f.path, withGpus(2));
    ASSERT_FALSE(imported.ok());
    EXPECT_NE(imported.error().text().find(":3: deepspeed"), std::string::npos) << imported.error().text();
    EXPECT_NE(imported.error().text().find("does not exist"), std::string::npos);
}

TEST(RunConfigAxolotl, CutCrossEntropyIsNotRepresentable) {
    TempFile f("cce.yaml", "base_model: meta-llama/Llama-3.1-8B\nplugins:\n  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\n"
                           "flash_attention: true\n");
    auto imported = importRunConfig(f.path, withGpus(1));
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    ASSERT_EQ(imported->report.not_representable.size(), 1u);
    EXPECT_EQ(imported->report.not_representable[0].trainmem_key, "training.loss");
}

// --- LLaMA-Factory -------------------------------------------------------

TEST(RunConfigLlamaFactory, LoraSftWithItsDefaultsAndDeepSpeed) {
    // finetuning_args.py: lora_target "all"; model_args.py:
    // disable_gradient_checkpointing False, so checkpointing is on.
    auto imported = importRunConfig(data("llamafactory_llama3_lora_sft.yaml"), withGpus(4));
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    const Scenario& s = imported->scenario;
    EXPECT_EQ(s.model_preset, "llama-3.1-8b");
    EXPECT_EQ(s.training.finetuning, Finetuning::Lora);
    EXPECT_EQ(s.training.lora_rank, 8);
    EXPECT_EQ(s.training.lora_targets, std::vector<std::string>{"all-linear"});
    EXPECT_EQ(s.training.checkpointing, Checkpointing::Full);
    EXPECT_TRUE(hasEntry(imported->report.defaults, "disable_gradient_checkpointing", "training.activation_checkpointing"));
    EXPECT_EQ(s.training.micro_batch_size, 1);
    EXPECT_EQ(s.training.gradient_accumulation_steps, 8);
    EXPECT_EQ(s.training.sequence_length, 2048);
    EXPECT_EQ(s.training.optimizer_impl, OptimizerImpl::ForEach);
    EXPECT_EQ(s.training.precision, Precision::MixedBf16);  // DeepSpeed's bf16 "auto" from bf16: true
    EXPECT_EQ(s.parallelism.zero_stage, 2);
    EXPECT_TRUE(imported->report.unknown.empty());
}

TEST(RunConfigLlamaFactory, TrainingArgumentsDefaultsComeFromTransformers) {
    // transformers' TrainingArguments: per_device_train_batch_size 8,
    // gradient_accumulation_steps 1, optim adamw_torch (adamw_torch_fused
    // with torch >= 2.8: the implementation is left unknown).
    TempFile f("lf_defaults.yaml", "model_name_or_path: meta-llama/Llama-3.1-8B\nstage: sft\nfinetuning_type: lora\nbf16: true\n"
                                   "flash_attn: fa2\n");
    auto imported = importRunConfig(f.path, withGpus(1));
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    const Scenario& s = imported->scenario;
    EXPECT_EQ(s.training.micro_batch_size, 8);
    EXPECT_EQ(s.training.gradient_accumulation_steps, 1);
    EXPECT_EQ(s.training.optimizer, OptimizerKind::AdamW);
    for (const char* key : {"per_device_train_batch_size", "gradient_accumulation_steps", "optim"}) {
        bool cited = false;
        for (const auto& e : imported->report.defaults)
            if (e.key == key && e.source.find("training_args.py") != std::string::npos) cited = true;
        EXPECT_TRUE(cited) << key;
    }
    ASSERT_EQ(imported->report.unknown.size(), 1u);
    EXPECT_EQ(imported->report.unknown[0].trainmem_key, "training.optimizer_impl");
}

// --- Accelerate ----------------------------------------------------------

TEST(RunConfigAccelerate, FsdpTwoSaysTheLayoutTheScriptSaysTheRest) {
    RunConfigOptions o = withModel("llama-3.1-8b");
    auto imported = importRunConfig(data("accelerate_fsdp2.yaml"), o);
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    const Scenario& s = imported->scenario;
    EXPECT_EQ(s.parallelism.data, 8);  // num_processes
    EXPECT_EQ(s.parallelism.zero_stage, 3);
    EXPECT_EQ(s.parallelism.fsdp_ends, FsdpEnds::Root);
    EXPECT_TRUE(s.parallelism.reshard_after_forward);
    EXPECT_EQ(s.training.precision, Precision::AmpBf16);
    EXPECT_EQ(s.training.checkpointing, Checkpointing::Full);
    // The batch, sequence and optimizer are the training script's.
    EXPECT_TRUE(hasEntry(imported->report.unknown, "(training script)", "training.micro_batch_size"));
    EXPECT_TRUE(hasEntry(imported->report.unknown, "(training script)", "training.optimizer"));
}

TEST(RunConfigAccelerate, TheDeepSpeedFileResolvesFromTheYamlsFolder) {
    // Read from another working directory: the JSON is found beside the YAML.
    auto imported = importRunConfig(data("accelerate_deepspeed.yaml"), withModel("llama-3.1-8b"));
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    const Scenario& s = imported->scenario;
    EXPECT_EQ(s.parallelism.zero_stage, 3);
    EXPECT_EQ(s.training.micro_batch_size, 2);
    EXPECT_EQ(s.training.gradient_accumulation_steps, 4);  // 64 = 2 x 4 x 8 processes
    EXPECT_EQ(s.training.precision, Precision::MixedBf16);
}

// --- Megatron-LM ---------------------------------------------------------

TEST(RunConfigMegatron, TheLaunchScriptIsTheHandWrittenPreset) {
    // presets/scenarios/llama3-8b-megatron-8xh100.json: Megatron-LM's Llama 3
    // 8B example with DTYPE=bf16, hand-written. The world size comes from
    // torchrun's --nproc_per_node x --nnodes in the script; the commented-out
    // --recompute-granularity is not read; --sequence-parallel at TP 1 is
    // switched off as Megatron does.
    auto imported = importRunConfig(data("megatron_llama3_8b.sh"), withModel("llama-3.1-8b"));
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    EXPECT_TRUE(imported->report.unknown.empty());
    auto preset = loadPreset("llama3-8b-megatron-8xh100");
    ASSERT_TRUE(preset.ok());
    EXPECT_EQ(keys(imported->scenario), keys(*preset));
}

TEST(RunConfigMegatron, TheScriptsBranchesAreFollowed) {
    RunConfigOptions o = withModel("llama-3.1-8b");
    o.overrides = {"DTYPE=fp8"};
    auto imported = importRunConfig(data("megatron_llama3_8b.sh"), o);
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    EXPECT_EQ(imported->scenario.training.precision, Precision::Fp8Mixed);
    EXPECT_TRUE(hasEntry(imported->report.not_representable, "--fp8-param-gather", "training.precision"));
}

TEST(RunConfigMegatron, TheRankZeroArgumentsLog) {
    auto imported = importRunConfig(data("megatron_arguments.log"), withModel("llama-3.1-70b"));
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    const Scenario& s = imported->scenario;
    EXPECT_EQ(s.parallelism.tensor, 4);
    EXPECT_EQ(s.parallelism.pipeline, 2);
    EXPECT_EQ(s.parallelism.data, 2);  // 16 / (4 x 2)
    EXPECT_EQ(s.training.gradient_accumulation_steps, 32);  // 64 / (1 x 2)
    EXPECT_EQ(s.training.checkpointing, Checkpointing::Full);  // full, uniform, 1 layer
    EXPECT_EQ(s.parallelism.zero_stage, 1);
    EXPECT_TRUE(validate(s).ok());
}

TEST(RunConfigMegatron, RefusesWithMegatronsOwnRules) {
    TempFile f("tp.sh", "torchrun --nproc_per_node 12 pretrain_gpt.py --tensor-model-parallel-size 8 --micro-batch-size 1\n");
    auto imported = importRunConfig(f.path, withModel("llama-3.1-8b"));
    ASSERT_FALSE(imported.ok());
    EXPECT_NE(imported.error().text().find("world size (12) is not divisible by total_model_size"), std::string::npos)
        << imported.error().text();
    // The model the flags describe must be the model given.
    auto other = importRunConfig(data("megatron_llama3_8b.sh"), withModel("llama-3.1-70b"));
    ASSERT_FALSE(other.ok());
    EXPECT_NE(other.error().text().find("--num-layers"), std::string::npos) << other.error().text();
}

// --- LitGPT --------------------------------------------------------------

TEST(RunConfigLitgpt, TheFullConfigIsTheHandWrittenPreset) {
    // presets/scenarios/llama3.1-8b-litgpt-full-4gpu.json was written by hand
    // from config_hub/finetune/llama-3.1-8b/full.yaml and finetune/full.py;
    // the fixture is that file unchanged. checkpoint_dir names the Hub's old
    // id meta-llama/Meta-Llama-3.1-8B (litgpt/config.py), the preset's new one.
    auto imported = importRunConfig(data("litgpt_llama3_1_8b_full.yaml"), RunConfigOptions{});
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    EXPECT_EQ(imported->stack, "litgpt");
    EXPECT_TRUE(imported->report.unknown.empty());
    auto preset = loadPreset("llama3.1-8b-litgpt-full-4gpu");
    ASSERT_TRUE(preset.ok());
    EXPECT_EQ(keys(imported->scenario), keys(*preset));
}

TEST(RunConfigLitgpt, LoraTakesSetupsDefaultsForWhatTheFileLeaves) {
    // config_hub lora.yaml: r 32, query and value, bf16-true, 1 device,
    // global 8 of micro 1 (args.py: 8 // 1 // 1 = 8 accumulation steps);
    // finetune/lora.py runs the head in chunks of 128 positions.
    auto imported = importRunConfig(data("litgpt_llama3_1_8b_lora.yaml"), RunConfigOptions{});
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    const Scenario& s = imported->scenario;
    EXPECT_EQ(s.model_preset, "llama-3.1-8b");
    EXPECT_EQ(s.training.finetuning, Finetuning::Lora);
    EXPECT_EQ(s.training.lora_rank, 32);
    EXPECT_EQ(s.training.lora_targets, (std::vector<std::string>{"q_proj", "v_proj"}));
    EXPECT_DOUBLE_EQ(s.training.lora_dropout, 0.05);
    EXPECT_EQ(s.training.precision, Precision::PureBf16);
    EXPECT_EQ(s.training.micro_batch_size, 1);
    EXPECT_EQ(s.training.gradient_accumulation_steps, 8);
    EXPECT_EQ(s.training.sequence_length, 512);
    EXPECT_EQ(s.training.checkpointing, Checkpointing::None);
    EXPECT_EQ(s.parallelism.zero_stage, 0);
    EXPECT_EQ(s.training.loss, LossImpl::Chunked);
    EXPECT_EQ(s.training.loss_chunks, 4);
    EXPECT_EQ(s.training.optimizer, OptimizerKind::AdamW);
    EXPECT_EQ(s.training.optimizer_impl, OptimizerImpl::ForEach);
    EXPECT_TRUE(imported->report.unknown.empty());
    EXPECT_TRUE(validate(s).ok());

    // Without the keys, lora.py setup()'s defaults, each with its source.
    TempFile f("lora_defaults.yaml", "checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\nlora_alpha: 16\ntrain:\n  max_seq_length: 256\n");
    auto bare = importRunConfig(f.path, RunConfigOptions{});
    ASSERT_TRUE(bare.ok()) << bare.error().text();
    EXPECT_EQ(bare->scenario.model_preset, "llama-3.2-1b");
    EXPECT_EQ(bare->scenario.training.lora_rank, 8);
    EXPECT_EQ(bare->scenario.training.gradient_accumulation_steps, 16);  // TrainArgs(global_batch_size=16, micro_batch_size=1)
    EXPECT_EQ(bare->scenario.training.precision, Precision::AmpBf16);   // get_default_supported_precision(training=True)
    EXPECT_TRUE(hasEntry(bare->report.defaults, "lora_r", "training.lora_rank"));
    EXPECT_TRUE(hasEntry(bare->report.defaults, "train.global_batch_size", "training.gradient_accumulation_steps"));
    EXPECT_TRUE(hasEntry(bare->report.defaults, "precision", "training.precision"));

    // litgpt finetune_lora --config lora.yaml --train.micro_batch_size 2: the flag wins (8 // 1 // 2 = 4 steps).
    RunConfigOptions o;
    o.overrides = {"--train.micro_batch_size=2"};
    auto flagged = importRunConfig(data("litgpt_llama3_1_8b_lora.yaml"), o);
    ASSERT_TRUE(flagged.ok()) << flagged.error().text();
    EXPECT_EQ(flagged->scenario.training.micro_batch_size, 2);
    EXPECT_EQ(flagged->scenario.training.gradient_accumulation_steps, 4);
}

TEST(RunConfigLitgpt, QloraIsPagedAdamWOnAFourBitBase) {
    auto imported = importRunConfig(data("litgpt_llama3_1_8b_qlora.yaml"), RunConfigOptions{});
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    const Scenario& s = imported->scenario;
    EXPECT_EQ(s.training.finetuning, Finetuning::Qlora);
    EXPECT_EQ(s.training.qlora_backend, QloraBackend::Bnb);
    EXPECT_EQ(s.training.optimizer, OptimizerKind::AdamW);  // utils.py instantiate_bnb_optimizer: PagedAdamW
    EXPECT_TRUE(s.training.optimizer_paged);
    // bnb.nf4 has no double quantisation, and Lightning quantises the head too.
    EXPECT_TRUE(hasEntry(imported->report.not_representable, "quantize", "training.qlora_backend"));
    EXPECT_TRUE(hasEntry(imported->report.not_representable, "quantize", "training.finetuning"));
    EXPECT_TRUE(validate(s).ok()) << validate(s).error().text();  // PagedAdamW's states are fp32 under bf16-true
}

TEST(RunConfigLitgpt, RefusesWithLitgptsOwnRules) {
    // finetune/lora.py: quantization on one device only, and never with a mixed precision.
    TempFile multi("q2.yaml", "checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\nprecision: bf16-true\nquantize: bnb.nf4\ndevices: 2\n");
    auto a = importRunConfig(multi.path, RunConfigOptions{});
    ASSERT_FALSE(a.ok());
    EXPECT_NE(a.error().text().find(":3: quantize"), std::string::npos) << a.error().text();
    EXPECT_NE(a.error().text().find("not supported for multi-GPU training"), std::string::npos);
    TempFile mixed("qm.yaml", "checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\nquantize: bnb.nf4-dq\n");
    auto b = importRunConfig(mixed.path, RunConfigOptions{});
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.error().text().find("Quantization and mixed precision is not supported"), std::string::npos) << b.error().text();
    // args.py: global // world // micro must be positive.
    TempFile small("gb.yaml", "checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\ndevices: 4\ntrain:\n  global_batch_size: 8\n  micro_batch_size: 4\n");
    auto c = importRunConfig(small.path, RunConfigOptions{});
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().text().find(":4: train.global_batch_size"), std::string::npos) << c.error().text();
    // Bad values name file, line and key.
    TempFile bad("dev.yaml", "checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\ndevices: two\n");
    auto d = importRunConfig(bad.path, RunConfigOptions{});
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.error().text().find(":2: devices"), std::string::npos) << d.error().text();
    // Sizes no run has are never overflowed (the loss chunks multiply them): the
    // scenario's validation refuses them by name, as estimate and fit do.
    TempFile huge("huge.yaml", "checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\ntrain:\n  global_batch_size: 9223372036854775807\n"
                               "  micro_batch_size: 4611686018427387904\n  max_seq_length: 4611686018427387904\n");
    auto h = importRunConfig(huge.path, RunConfigOptions{});
    ASSERT_TRUE(h.ok()) << h.error().text();
    ASSERT_FALSE(validate(h->scenario).ok());
    EXPECT_EQ(validate(h->scenario).error().field, "training.micro_batch_size");
    TempFile none("none.yaml", "checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\nlora_query: false\nlora_value: false\n");
    auto e = importRunConfig(none.path, RunConfigOptions{});
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().text().find("lora_query"), std::string::npos) << e.error().text();
}

TEST(RunConfigLitgpt, PretrainShardsHybridCompilesAndDoesNotCheckpoint) {
    // config_hub/pretrain/tinyllama.yaml: devices auto (the world is --gpus),
    // global 512 of micro 4: 512 // 8 // 4 = 16 steps; pretrain.py compiles
    // the model and passes fused=True; tiny-llama-1.1b is no trainmem preset.
    auto unknown = importRunConfig(data("litgpt_tinyllama_pretrain.yaml"), RunConfigOptions{});
    ASSERT_TRUE(unknown.ok()) << unknown.error().text();
    EXPECT_TRUE(hasEntry(unknown->report.unknown, "devices", "parallelism.data"));
    EXPECT_TRUE(hasEntry(unknown->report.unknown, "model_name", "model"));
    auto imported = importRunConfig(data("litgpt_tinyllama_pretrain.yaml"), withModel("llama-3.2-1b", 8));
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    const Scenario& s = imported->scenario;
    EXPECT_EQ(s.parallelism.data, 8);
    EXPECT_EQ(s.parallelism.zero_stage, 3);
    EXPECT_EQ(s.training.checkpointing, Checkpointing::None);
    EXPECT_EQ(s.training.kernels, KernelProfile::Compile);
    EXPECT_EQ(s.training.optimizer_impl, OptimizerImpl::Fused);
    EXPECT_EQ(s.training.precision, Precision::AmpBf16);
    EXPECT_EQ(s.training.gradient_accumulation_steps, 16);
    EXPECT_EQ(s.training.sequence_length, 2048);
    EXPECT_EQ(s.training.loss_chunks, 64);  // ceil(4 x 2048 / 128)
    EXPECT_TRUE(imported->report.unknown.empty());
    // model_name is a preset's config (litgpt/config.py Llama-3.2-1B), but a
    // model_config written out wins over it (pretrain.py setup()).
    TempFile named("pre.yaml", "model_name: Llama-3.2-1B\ndevices: 1\ntrain:\n  max_seq_length: 512\n");
    auto by_name = importRunConfig(named.path, RunConfigOptions{});
    ASSERT_TRUE(by_name.ok()) << by_name.error().text();
    EXPECT_EQ(by_name->scenario.model_preset, "llama-3.2-1b");
    TempFile written("pre_config.yaml", "model_name: Llama-3.2-1B\nmodel_config:\n  n_layer: 2\n  n_embd: 64\ndevices: 1\ntrain:\n  max_seq_length: 512\n");
    auto by_config = importRunConfig(written.path, RunConfigOptions{});
    ASSERT_TRUE(by_config.ok()) << by_config.error().text();
    EXPECT_FALSE(by_config->has_model);
    EXPECT_TRUE(hasEntry(by_config->report.unknown, "model_config", "model"));
}

// Megatron-LM's own examples, unchanged: their model flags build the model
// (megatron/training/arguments.py, transformer_config.py defaults), checked
// against the Hugging Face config.json of the model they train.
ModelConfig modelOf(const std::string& preset) {
    auto m = loadModelPreset(preset);
    EXPECT_TRUE(m.ok()) << preset;
    return m.ok() ? *m : ModelConfig{};
}

TEST(RunConfigMegatron, TheMixtralExamplesFlagsAreMixtral8x7b) {
    // examples/mixtral/train_mixtral_8x7b_distributed.sh: EP 8 x PP 4 needs 4
    // nodes (SLURM_NNODES); its Llama2Tokenizer's size is not in the flags.
    RunConfigOptions o;
    o.overrides = {"NNODES=4"};
    auto imported = importRunConfig(data("megatron_mixtral_8x7b.sh"), o);
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    ASSERT_TRUE(imported->has_model);
    EXPECT_TRUE(hasEntry(imported->report.unknown, "--tokenizer-model", "model.vocab_size"));
    EXPECT_TRUE(hasEntry(imported->report.defaults, "--moe-ffn-hidden-size", "model.intermediate_size (experts)"));
    Scenario s = imported->scenario;
    ASSERT_TRUE(applySetting(s, "model.vocab_size", "32000").ok());  // Mixtral's tokenizer, a multiple of 128
    ModelConfig expected = modelOf("mixtral-8x7b");
    expected.name = s.model.name;
    EXPECT_EQ(s.model, expected);
    EXPECT_TRUE(validate(s).ok());
}

TEST(RunConfigMegatron, TheLlama3ExamplesFlagsAreLlama3_8b) {
    // examples/llama/train_llama3_8b_h100_fp8.sh with its MOCK data:
    // NullTokenizer --vocab-size 128256 (a multiple of 128: unpadded). Llama
    // 3 8B is Llama 3.1 8B but for its context (8192, not 131072).
    auto imported = importRunConfig(data("megatron_llama3_8b_example.sh"), RunConfigOptions{});
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    ASSERT_TRUE(imported->has_model);
    EXPECT_TRUE(imported->report.unknown.empty());
    Scenario s = imported->scenario;
    EXPECT_EQ(s.model.max_position_embeddings, 8192);
    ASSERT_TRUE(applySetting(s, "model.max_position_embeddings", "131072").ok());
    ModelConfig expected = modelOf("llama-3.1-8b");
    expected.name = s.model.name;
    EXPECT_EQ(s.model, expected);
    // Megatron's own defaults where the flags say nothing: GPT-2's blocks, a
    // 4h MLP, every head its own group, tied embeddings, dropout 0.1.
    TempFile gpt("gpt.sh", "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 256 --num-attention-heads 8 "
                           "--num-query-groups 2 --max-position-embeddings 1024 --seq-length 1024 --micro-batch-size 1 "
                           "--tokenizer-type NullTokenizer --vocab-size 1000 --tensor-model-parallel-size 2\n");
    auto plain = importRunConfig(gpt.path, RunConfigOptions{});
    ASSERT_TRUE(plain.ok()) << plain.error().text();
    const ModelConfig& m = plain->scenario.model;
    EXPECT_EQ(m.family, "gpt2");
    EXPECT_EQ(m.ffn_hidden_size, 1024);
    EXPECT_EQ(m.num_kv_heads, 8);  // --num-query-groups without --group-query-attention is not read (argument_utils.py)
    EXPECT_TRUE(m.tied_embeddings);
    EXPECT_DOUBLE_EQ(m.hidden_dropout, 0.1);
    EXPECT_EQ(m.vocab_size, 1024);  // 1000 rounded up to 128 x tp 2 = 256
    TempFile huge("huge.sh", "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 4611686018427387904 "
                             "--num-attention-heads 8 --max-position-embeddings 1024 --seq-length 1024 --micro-batch-size 1\n");
    auto h = importRunConfig(huge.path, RunConfigOptions{});
    ASSERT_FALSE(h.ok());
    EXPECT_NE(h.error().text().find("--hidden-size"), std::string::npos) << h.error().text();
}

TEST(RunConfigMegatron, FlagsOfNoFamilyLeaveTheModelUnknown) {
    // The hand-written fixture has --swiglu without RMSNorm, rope or
    // --disable-bias-linear: SwiGLU with LayerNorm, learned positions and
    // biases is no family trainmem has.
    auto imported = importRunConfig(data("megatron_llama3_8b.sh"), RunConfigOptions{});
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    EXPECT_FALSE(imported->has_model);
    bool named = false;
    for (const auto& e : imported->report.unknown)
        if (e.trainmem_key == "model" && e.note.find("SwiGLU, LayerNorm, learned_absolute") != std::string::npos) named = true;
    EXPECT_TRUE(named);
}

// --- Megatron-Bridge -----------------------------------------------------

TEST(RunConfigMegatronBridge, TheRecipesRunConfigIsReadAsItsMegatronFlags) {
    // Llama 3.1 8B pretraining (llama31_8b_pretrain_2gpu_h100_bf16_config):
    // 2 GPUs at TP 1 x PP 1 x CP 2 leave one data-parallel rank, so 512
    // samples of micro-batch 1 are 512 accumulation steps.
    auto imported = importRunConfig(data("megatron_bridge_llama31_8b_run_config.yaml"), withGpus(2));
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    EXPECT_EQ(imported->stack, "megatron-bridge");
    EXPECT_TRUE(imported->report.unknown.empty());
    Scenario s = imported->scenario;
    EXPECT_EQ(s.parallelism.context, 2);
    EXPECT_EQ(s.parallelism.data, 1);
    EXPECT_EQ(s.parallelism.zero_stage, 1);  // ddp.use_distributed_optimizer
    EXPECT_EQ(s.training.gradient_accumulation_steps, 512);
    EXPECT_EQ(s.training.sequence_length, 8192);
    EXPECT_EQ(s.training.precision, Precision::MixedBf16);
    EXPECT_EQ(s.training.grad_dtype.value_or(DType::Fp32), DType::Fp32);  // ddp.grad_reduce_in_fp32
    EXPECT_EQ(s.training.kernels, KernelProfile::Megatron);
    // The report names the YAML key and line, not the flag it was read as.
    bool named = false;
    for (const auto& e : imported->report.read)
        if (e.key == "model.context_parallel_size" && e.line > 0 && e.trainmem_key == "parallelism.context") named = true;
    EXPECT_TRUE(named);
    // The model: Llama 3.1 8B's blocks with NullTokenizer's 32000 tokens and an 8192 context.
    EXPECT_EQ(s.model.vocab_size, 32000);
    ASSERT_TRUE(applySettings(s, {"model.vocab_size=128256", "model.max_position_embeddings=131072"}).ok());
    ModelConfig expected = modelOf("llama-3.1-8b");
    expected.name = s.model.name;
    EXPECT_EQ(s.model, expected);
}

TEST(RunConfigMegatronBridge, ALoraRunReadsItsAdapters) {
    // peft: megatron.bridge.peft.lora.LoRA (src/megatron/bridge/peft/lora.py): dim 32 by default;
    // linear_qkv adapts q, k and v, linear_fc1 gate and up.
    std::ifstream in(data("megatron_bridge_llama31_8b_run_config.yaml"));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = text.find("peft: null\n");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 11, "peft:\n  _target_: megatron.bridge.peft.lora.LoRA\n  dropout: 0.0\n  target_modules:\n  - linear_qkv\n  - linear_fc1\n");
    TempFile f("bridge_lora.yaml", text);
    auto imported = importRunConfig(f.path, withGpus(2));
    ASSERT_TRUE(imported.ok()) << imported.error().text();
    const Scenario& s = imported->scenario;
    EXPECT_EQ(s.training.finetuning, Finetuning::Lora);
    EXPECT_EQ(s.training.lora_rank, 32);
    EXPECT_EQ(s.training.lora_targets, (std::vector<std::string>{"q_proj", "k_proj", "v_proj", "gate_proj", "up_proj"}));
    EXPECT_TRUE(hasEntry(imported->report.defaults, "peft.dim", "training.lora_rank"));
    EXPECT_TRUE(validate(s).ok()) << validate(s).error().text();
}

TEST(RunConfigMegatronBridge, BadValuesNameTheYamlKeyAndLine) {
    TempFile f("bridge_bad.yaml", "_target_: megatron.bridge.training.config.ConfigContainer\nmodel:\n  tensor_model_parallel_size: 3\n"
                                  "  num_layers: 2\n  hidden_size: 64\n  num_attention_heads: 4\n  seq_length: 128\ntrain:\n"
                                  "  micro_batch_size: 1\n  global_batch_size: 8\n");
    auto imported = importRunConfig(f.path, withGpus(4));
    ASSERT_FALSE(imported.ok());
    EXPECT_NE(imported.error().text().find("model.tensor_model_parallel_size"), std::string::npos) << imported.error().text();
    EXPECT_NE(imported.error().text().find("world size (4) is not divisible"), std::string::npos) << imported.error().text();
}

// --- export-run round trips ----------------------------------------------

void expectRoundTrip(const Scenario& original, const std::string& target, const std::string& name, RunConfigOptions options) {
    auto text = exportRunConfig(original, target);
    ASSERT_TRUE(text.ok()) << target << ": " << text.error().text();
    TempFile f(name, *text);
    auto back = importRunConfig(f.path, options);
    ASSERT_TRUE(back.ok()) << target << ": " << back.error().text() << "\n" << *text;
    EXPECT_TRUE(back->report.unknown.empty()) << target;
    EXPECT_EQ(keys(back->scenario), keys(original)) << target << "\n" << *text;
}

TEST(RunConfigExport, TorchtitanRoundTrips) {
    auto s = importRunConfig(data("torchtitan_llama3_8b.toml"), withGpus(16));
    ASSERT_TRUE(s.ok());
    Scenario layout = s->scenario;  // a layout Find a Layout might choose
    ASSERT_TRUE(applySettings(layout, {"parallelism.tensor=2", "parallelism.data=8", "parallelism.sequence_parallel=true",
                                       "training.activation_checkpointing=torchtitan-layer", "training.checkpoint_every=2",
                                       "training.micro_batch_size=2", "training.gradient_accumulation_steps=2"})
                    .ok());
    expectRoundTrip(layout, "torchtitan", "rt.toml", withGpus(16));
}

TEST(RunConfigExport, TorchtuneRoundTrips) {
    auto s = importRunConfig(data("torchtune_llama3_1_8b_full.yaml"), withGpus(8));
    ASSERT_TRUE(s.ok());
    expectRoundTrip(s->scenario, "torchtune", "rt.yaml", withGpus(8));
    auto q = importRunConfig(data("torchtune_llama3_1_8b_qlora_single_device.yaml"), RunConfigOptions{});
    ASSERT_TRUE(q.ok());
    expectRoundTrip(q->scenario, "torchtune", "rt_single_device.yaml", RunConfigOptions{});
}

TEST(RunConfigExport, DeepspeedRoundTrips) {
    auto s = importRunConfig(data("deepspeed_zero3_offload.json"), withModel("llama-3.1-8b", 8));
    ASSERT_TRUE(s.ok());
    expectRoundTrip(s->scenario, "deepspeed", "rt.json", withModel("llama-3.1-8b", 8));
}

TEST(RunConfigExport, MegatronRoundTrips) {
    auto preset = loadPreset("llama3-8b-megatron-8xh100");
    ASSERT_TRUE(preset.ok());
    expectRoundTrip(*preset, "megatron", "rt.sh", withModel("llama-3.1-8b"));
    auto log = importRunConfig(data("megatron_arguments.log"), withModel("llama-3.1-70b"));
    ASSERT_TRUE(log.ok());
    expectRoundTrip(log->scenario, "megatron", "rt3d.sh", withModel("llama-3.1-70b"));
}

TEST(RunConfigExport, AccelerateRoundTrips) {
    // The Accelerate config holds the layout and precision; the rest is the
    // training script's, so the import starts from the scenario itself
    // (--scenario-like) and must give it back unchanged.
    auto preset = loadPreset("llama3.1-8b-fsdp-8xh100");
    ASSERT_TRUE(preset.ok());
    RunConfigOptions o;
    o.model = *preset;
    auto text = exportRunConfig(*preset, "accelerate");
    ASSERT_TRUE(text.ok()) << text.error().text();
    TempFile f("rt_accelerate.yaml", *text);
    auto back = importRunConfig(f.path, o);
    ASSERT_TRUE(back.ok()) << back.error().text() << "\n" << *text;
    EXPECT_EQ(keys(back->scenario), keys(*preset)) << *text;
}

TEST(RunConfigExport, LitgptRoundTrips) {
    auto preset = loadPreset("llama3.1-8b-litgpt-full-4gpu");
    ASSERT_TRUE(preset.ok());
    expectRoundTrip(*preset, "litgpt", "rt_litgpt.yaml", RunConfigOptions{});
    auto lora = importRunConfig(data("litgpt_llama3_1_8b_lora.yaml"), RunConfigOptions{});
    ASSERT_TRUE(lora.ok());
    expectRoundTrip(lora->scenario, "litgpt", "rt_litgpt_lora.yaml", RunConfigOptions{});
    auto qlora = importRunConfig(data("litgpt_llama3_1_8b_qlora.yaml"), RunConfigOptions{});
    ASSERT_TRUE(qlora.ok());
    expectRoundTrip(qlora->scenario, "litgpt", "rt_litgpt_qlora.yaml", RunConfigOptions{});
}

TEST(RunConfigExport, WhatTheStackCannotExpressIsRefused) {
    auto preset = loadPreset("llama3-8b-megatron-8xh100");  // ZeRO-1
    ASSERT_TRUE(preset.ok());
    auto text = exportRunConfig(*preset, "torchtitan");
    ASSERT_FALSE(text.ok());
    EXPECT_EQ(text.error().field, "parallelism.zero_stage");
}

}  // namespace
}  // namespace trainmem::runconfig

namespace trainmem::runconfig {
namespace {

TEST(RunConfigMegatron, ASelfDoublingArrayIsRefusedNotFollowed) {
    // Each line doubles A: 40 lines would be 2^40 words.
    std::string script = "A=(--x)\n";
    for (int i = 0; i < 40; ++i) script += "A+=(\"${A[@]}\")\n";
    script += "torchrun pretrain_gpt.py ${A[@]}\n";
    const fs::path path = fs::temp_directory_path() / "trainmem_runconfig_doubling.sh";
    std::ofstream(path) << script;
    RunConfigOptions o;
    auto imported = importRunConfig(path, o);
    fs::remove(path);
    ASSERT_FALSE(imported.ok());
    EXPECT_NE(imported.error().text().find("more than 100000 words"), std::string::npos) << imported.error().text();
}

}  // namespace
}  // namespace trainmem::runconfig
