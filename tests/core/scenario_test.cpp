// The scenario format: names, strict loading, defaults, saving, --set edits.
// Expected spellings and values are written out here from the documented
// format (docs/scenario-format.md), not read from the key table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "core/base/json_input.h"
#include "core/account/estimate.h"
#include "core/model/hf_config.h"
#include "core/training/names.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "tests/core/every_field_changed.h"
#include "core/scenario/scenario_file.h"
#include "core/account/scenario_validate.h"

namespace trainmem {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path fixture(const std::string& name) { return fs::path(TRAINMEM_TEST_DATA_DIR) / "scenarios" / name; }

Scenario llama2() {
    auto s = loadPreset("llama-2-7b");
    EXPECT_TRUE(s.ok()) << s.error().text();
    return *s;
}

Error loadError(const std::string& file) {
    auto s = loadScenarioFile(fixture(file));
    EXPECT_FALSE(s.ok()) << file << " loaded";
    return s.ok() ? Error{} : s.error();
}

Error settingError(std::string_view setting) {
    Scenario s = llama2();
    const Scenario before = s;
    Status st = applySetting(s, setting);
    EXPECT_FALSE(st.ok()) << setting << " was accepted";
    EXPECT_EQ(s, before) << "a refused setting changed the scenario";
    return st.ok() ? Error{} : st.error();
}

// ---------------------------------------------------------------- names

TEST(ScenarioNames, EnumSpellingsAreTheDocumentedOnes) {
    const std::vector<std::string_view> precisions = {"fp32",       "amp-bf16",  "amp-fp16", "mixed-bf16",
                                                      "mixed-fp16", "pure-bf16", "fp8-mixed"};
    ASSERT_EQ(allPrecisions().size(), precisions.size());
    for (size_t i = 0; i < precisions.size(); ++i) EXPECT_EQ(precisionName(allPrecisions()[i]), precisions[i]);
    const std::vector<std::string_view> optimizers = {"sgd",   "sgd-momentum", "adagrad", "rmsprop", "adam",
                                                      "adamw", "adamw-8bit",   "lion",    "muon",    "adafactor"};
    ASSERT_EQ(allOptimizers().size(), optimizers.size());
    for (size_t i = 0; i < optimizers.size(); ++i) EXPECT_EQ(optimizerName(allOptimizers()[i]), optimizers[i]);
    EXPECT_EQ(allowedNames<OptimizerImpl>(), "foreach, fused, for-loop");
    EXPECT_EQ(allowedNames<Checkpointing>(), "none, selective, full, every-k, op, megatron-block, torchtitan-layer, megatron-uniform");
    EXPECT_EQ(allowedNames<AttentionImpl>(), "flash, eager");
    EXPECT_EQ(allowedNames<KernelProfile>(), "eager, fused, megatron, compile");
    EXPECT_EQ(allowedNames<LossImpl>(), "standard, chunked, chunked_output, fused_linear, vocab_parallel");
    EXPECT_EQ(allowedNames<Finetuning>(), "full, lora, qlora");
    EXPECT_EQ(allowedNames<PipelineSchedule>(), "1f1b, interleaved-1f1b, gpipe");
    EXPECT_EQ(allowedNames<DType>(), "fp32, bf16, fp16, fp8, int8, nf4");
}

TEST(ScenarioNames, ParsingIsExactAndRoundTrips) {
    for (auto p : allPrecisions()) EXPECT_EQ(parsePrecision(precisionName(p)), p);
    for (auto o : allOptimizers()) EXPECT_EQ(parseOptimizer(optimizerName(o)), o);
    EXPECT_EQ(parseSchedule("interleaved-1f1b"), PipelineSchedule::Interleaved1F1B);
    EXPECT_EQ(parseDType("nf4"), DType::Nf4);
    EXPECT_FALSE(parsePrecision("BF16"));
    EXPECT_FALSE(parseOptimizer("AdamW"));
    EXPECT_FALSE(parseCheckpointing(""));
}

// ---------------------------------------------------------------- loading

TEST(ScenarioLoading, MissingKeysTakeTheDocumentedDefaults) {
    auto s = loadScenarioFile(fixture("minimal.json"));
    ASSERT_TRUE(s.ok()) << s.error().text();
    EXPECT_EQ(s->model_preset, "llama-2-7b");
    EXPECT_EQ(s->model.hidden_size, 4096);
    // docs/scenario-format.md, the defaults column:
    EXPECT_EQ(s->training.micro_batch_size, 1);
    EXPECT_EQ(s->training.sequence_length, 2048);
    EXPECT_EQ(s->training.precision, Precision::MixedBf16);
    EXPECT_EQ(s->training.optimizer, OptimizerKind::AdamW);
    EXPECT_FALSE(s->training.grad_dtype.has_value());
    EXPECT_EQ(s->parallelism.data, 1);
    EXPECT_EQ(s->parallelism.zero_stage, 0);
    EXPECT_EQ(s->hardware.gpu, "H100-80GB");
    EXPECT_EQ(s->hardware.overheads.cuda_context_bytes, 500 * kMiB);
    EXPECT_DOUBLE_EQ(s->hardware.overheads.fragmentation, 0.10);
}

TEST(ScenarioLoading, AnInlineConfigJsonIsImported) {
    auto s = loadScenarioFile(fixture("inline-config.json"));
    ASSERT_TRUE(s.ok()) << s.error().text();
    EXPECT_TRUE(s->model_preset.empty());
    EXPECT_EQ(s->model.num_layers, 32);
    EXPECT_EQ(s->model.ffn_hidden_size, 11008);
    EXPECT_EQ(s->training.micro_batch_size, 2);
    EXPECT_EQ(s->parallelism.zero_stage, 2);
    EXPECT_EQ(s->hardware.gpu, "A100-80GB");
}

TEST(ScenarioLoading, UnknownKeyIsNamedWithASuggestion) {
    const Error e = loadError("unknown-key.json");
    EXPECT_EQ(e.field, "training.micro_batch");
    EXPECT_NE(e.message.find("did you mean micro_batch_size"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("sequence_length"), std::string::npos) << "lists the allowed keys: " << e.message;

    auto top = scenarioFromJson(json{{"model", {{"preset", "llama-2-7b"}}}, {"trainig", json::object()}});
    ASSERT_FALSE(top.ok());
    EXPECT_EQ(top.error().field, "trainig");
    EXPECT_NE(top.error().message.find("did you mean training"), std::string::npos);
}

TEST(ScenarioLoading, WrongTypeNamesTheKeyAndTheExpectedType) {
    const Error e = loadError("wrong-type.json");
    EXPECT_EQ(e.field, "training.micro_batch_size");
    EXPECT_NE(e.message.find("expected an integer"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("\"4\""), std::string::npos) << e.message;

    auto section = scenarioFromJson(json{{"model", {{"preset", "llama-2-7b"}}}, {"parallelism", 8}});
    ASSERT_FALSE(section.ok());
    EXPECT_EQ(section.error().field, "parallelism");
    auto boolean = scenarioFromJson(json{{"model", {{"preset", "llama-2-7b"}}},
                                         {"parallelism", {{"sequence_parallel", "yes"}}}});
    ASSERT_FALSE(boolean.ok());
    EXPECT_EQ(boolean.error().field, "parallelism.sequence_parallel");
    EXPECT_NE(boolean.error().message.find("true or false"), std::string::npos);
    auto fractional = scenarioFromJson(json{{"model", {{"preset", "llama-2-7b"}}}, {"parallelism", {{"data", 2.5}}}});
    ASSERT_FALSE(fractional.ok());
    EXPECT_EQ(fractional.error().field, "parallelism.data");
}

TEST(ScenarioLoading, UnknownNameListsTheAllowedNames) {
    const Error e = loadError("unknown-enum.json");
    EXPECT_EQ(e.field, "training.precision");
    EXPECT_NE(e.message.find("bf16-mixed"), std::string::npos);
    EXPECT_NE(e.message.find("fp32, amp-bf16, amp-fp16, mixed-bf16, mixed-fp16, pure-bf16, fp8-mixed"),
              std::string::npos)
        << e.message;
}

TEST(ScenarioLoading, NewerFormatVersionIsRefused) {
    const Error e = loadError("future-version.json");
    EXPECT_EQ(e.field, "version");
    EXPECT_NE(e.message.find("newer"), std::string::npos);
    auto wrong_format = scenarioFromJson(json{{"format", "something-else"}, {"model", {{"preset", "llama-2-7b"}}}});
    ASSERT_FALSE(wrong_format.ok());
    EXPECT_EQ(wrong_format.error().field, "format");
}

// Version 1 had no loss apart from the kernel profile: kernels=fused meant
// Liger's fused linear cross-entropy whatever training.loss said. Such a file
// must keep its numbers; from version 2 the two keys are independent.
TEST(ScenarioLoading, VersionOneFusedKernelsMeanTheFusedLinearLoss) {
    const json training = {{"kernels", "fused"}, {"loss", "standard"}};
    auto v1 = scenarioFromJson(json{{"version", 1}, {"model", {{"preset", "llama-2-7b"}}}, {"training", training}});
    ASSERT_TRUE(v1.ok()) << v1.error().text();
    EXPECT_EQ(v1->training.loss, LossImpl::FusedLinear);
    auto v1_eager = scenarioFromJson(json{{"version", 1}, {"model", {{"preset", "llama-2-7b"}}},
                                          {"training", {{"kernels", "eager"}, {"loss", "chunked"}}}});
    ASSERT_TRUE(v1_eager.ok());
    EXPECT_EQ(v1_eager->training.loss, LossImpl::Chunked);
    auto v2 = scenarioFromJson(json{{"version", 2}, {"model", {{"preset", "llama-2-7b"}}}, {"training", training}});
    ASSERT_TRUE(v2.ok());
    EXPECT_EQ(v2->training.loss, LossImpl::Standard);
    EXPECT_EQ(v2->training.kernels, KernelProfile::Fused);
}

TEST(ScenarioLoading, ModelMustBeGivenAsAPresetOrAConfig) {
    auto missing = scenarioFromJson(json{{"name", "no model"}});
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().field, "model");
    auto both = scenarioFromJson(json{{"model", {{"preset", "llama-2-7b"}, {"hidden_size", 8}}}});
    ASSERT_FALSE(both.ok());
    EXPECT_EQ(both.error().field, "model.preset");
    const Error unknown = loadError("unknown-preset.json");
    EXPECT_EQ(unknown.field, "model.preset");
    EXPECT_NE(unknown.message.find("trainmem-cli presets"), std::string::npos) << unknown.message;
    EXPECT_NE(unknown.message.find("did you mean"), std::string::npos) << unknown.message;
}

TEST(ScenarioLoading, MissingRequiredModelFieldIsNamed) {
    const Error e = loadError("missing-model-field.json");
    EXPECT_EQ(e.field, "model.hidden_size") << e.text();
}

// ---------------------------------------------------------------- files

TEST(ScenarioFiles, MissingDirectoryAndMalformedFilesSayWhichAndWhy) {
    auto missing = readJsonFile(fixture("does-not-exist.json"));
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find("does-not-exist.json: no such file"), std::string::npos);
    auto directory = readJsonFile(fixture(""));
    ASSERT_FALSE(directory.ok());
    EXPECT_NE(directory.error().message.find("directory"), std::string::npos);
    // malformed.json has a trailing comma before the brace on line 4, column 38.
    auto malformed = readJsonFile(fixture("malformed.json"));
    ASSERT_FALSE(malformed.ok());
    EXPECT_NE(malformed.error().message.find("malformed.json: malformed JSON at line 4, column 38"), std::string::npos)
        << malformed.error().message;
}

class ScenarioSaving : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("trainmem-scenario-test-" + std::to_string(::getpid()));
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
};

TEST_F(ScenarioSaving, SaveThenLoadGivesTheSameScenario) {
    Scenario s = llama2();
    s.training.micro_batch_size = 3;
    const fs::path file = dir_ / "saved.json";
    ASSERT_TRUE(saveScenarioFile(s, file).ok());
    auto back = loadScenarioFile(file);
    ASSERT_TRUE(back.ok()) << back.error().text();
    EXPECT_EQ(*back, s);
    // Only the target is left: the temporary file was renamed over it.
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(ScenarioSaving, FailedSaveNamesThePathAndKeepsTheOldFile) {
    const fs::path nowhere = dir_ / "no-such-folder" / "s.json";
    Status st = saveScenarioFile(llama2(), nowhere);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find(nowhere.string()), std::string::npos);

    // A directory in the way of the rename: the save fails, the directory stays.
    const fs::path blocked = dir_ / "blocked.json";
    fs::create_directories(blocked / "inside");
    ASSERT_FALSE(saveScenarioFile(llama2(), blocked).ok());
    EXPECT_TRUE(fs::is_directory(blocked / "inside"));
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1) << "temporary file left";
}

TEST_F(ScenarioSaving, SavedFileListsEveryKeyInTheDocumentedOrder) {
    const fs::path file = dir_ / "order.json";
    ASSERT_TRUE(saveScenarioFile(llama2(), file).ok());
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::vector<std::string> order = {"\"format\"", "\"version\"",  "\"name\"",        "\"description\"",
                                            "\"model\"",  "\"training\"", "\"parallelism\"", "\"hardware\""};
    size_t at = 0;
    for (const auto& key : order) {
        const size_t found = text.find(key, at);
        ASSERT_NE(found, std::string::npos) << key << " missing or out of order";
        at = found;
    }
    EXPECT_NE(text.find("\"model\": {\n    \"preset\": \"llama-2-7b\""), std::string::npos) << text;
}

// ---------------------------------------------------------------- round trip

// A scenario in which every key differs from its default.
Scenario everyFieldChanged() {
    Scenario s = llama2();
    s.name = "changed";
    s.description = "every field differs from its default";
    testing::changeEveryField(s);
    return s;
}

TEST(ScenarioRoundTrip, EveryKeyIsSavedAndReadBack) {
    const Scenario changed = everyFieldChanged();
    const json doc = scenarioToJson(changed);
    // Every key of every section is written, and each differs from the default's.
    const json defaults = scenarioToJson(llama2());
    for (const char* section : {"training", "parallelism", "hardware"}) {
        ASSERT_EQ(doc[section].size(), defaults[section].size()) << section;
        for (const auto& [key, value] : defaults[section].items())
            EXPECT_NE(doc[section][key], value) << section << "." << key << " is not exercised by this test";
    }
    auto back = scenarioFromJson(doc);
    ASSERT_TRUE(back.ok()) << back.error().text();
    EXPECT_EQ(*back, changed);
    // Written in the units of the format.
    EXPECT_EQ(doc["hardware"]["memory_gib"], 96);
    EXPECT_EQ(doc["hardware"]["cuda_context_mib"], 700);
    EXPECT_EQ(doc["hardware"]["cublas_workspace_mib"], 8.125);
    EXPECT_EQ(doc["training"]["lora_targets"], json({"q_proj", "v_proj", "down_proj"}));
}

TEST(ScenarioRoundTrip, EveryPresetScenarioRoundTrips) {
    int scenarios = 0;
    for (const auto& preset : listPresets()) {
        auto s = loadPreset(preset.name);
        ASSERT_TRUE(s.ok()) << preset.name << ": " << s.error().text();
        auto back = scenarioFromJson(scenarioToJson(*s));
        ASSERT_TRUE(back.ok()) << preset.name << ": " << back.error().text();
        EXPECT_EQ(*back, *s) << preset.name;
        scenarios += preset.kind == PresetKind::Scenario;
    }
    EXPECT_GE(scenarios, 6);
}

TEST(ScenarioRoundTrip, AnEditedPresetModelIsSavedAsAConfig) {
    Scenario s = llama2();
    ASSERT_TRUE(applySetting(s, "model.num_hidden_layers=40").ok());
    EXPECT_TRUE(s.model_preset.empty()) << "the model is no longer the preset's";
    const json doc = scenarioToJson(s);
    EXPECT_FALSE(doc["model"].contains("preset"));
    EXPECT_EQ(doc["model"]["num_hidden_layers"], 40);
    auto back = scenarioFromJson(doc);
    ASSERT_TRUE(back.ok()) << back.error().text();
    EXPECT_EQ(back->model, s.model);
}

// ---------------------------------------------------------------- --set

TEST(ScenarioSettings, ValuesParseByTheKeysType) {
    Scenario s = llama2();
    ASSERT_TRUE(applySetting(s, "training.micro_batch_size=4").ok());
    ASSERT_TRUE(applySetting(s, "training.precision = pure-bf16").ok());
    ASSERT_TRUE(applySetting(s, "parallelism.sequence_parallel=yes").ok());
    ASSERT_TRUE(applySetting(s, "parallelism.offload_optimizer=0").ok());
    ASSERT_TRUE(applySetting(s, "training.lora_targets=q_proj, v_proj").ok());
    ASSERT_TRUE(applySetting(s, "training.lora_dropout=0.1").ok());
    ASSERT_TRUE(applySetting(s, "hardware.cuda_context_mib=1024").ok());
    ASSERT_TRUE(applySetting(s, "hardware.memory_gib=24").ok());
    EXPECT_EQ(s.training.micro_batch_size, 4);
    EXPECT_EQ(s.training.precision, Precision::PureBf16);
    EXPECT_TRUE(s.parallelism.sequence_parallel);
    EXPECT_FALSE(s.parallelism.offload_optimizer);
    EXPECT_EQ(s.training.lora_targets, (std::vector<std::string>{"q_proj", "v_proj"}));
    EXPECT_DOUBLE_EQ(s.training.lora_dropout, 0.1);
    EXPECT_EQ(s.hardware.overheads.cuda_context_bytes, int64_t{1} << 30);
    EXPECT_EQ(s.hardware.memory_bytes, int64_t{24} << 30);
}

TEST(ScenarioSettings, AutoClearsAnOverride) {
    Scenario s = llama2();
    ASSERT_TRUE(applySetting(s, "training.grad_dtype=fp32").ok());
    EXPECT_EQ(s.training.grad_dtype, DType::Fp32);
    ASSERT_TRUE(applySetting(s, "training.grad_dtype=auto").ok());
    EXPECT_FALSE(s.training.grad_dtype.has_value());
    ASSERT_TRUE(applySetting(s, "parallelism.gpus=1").ok());
    ASSERT_TRUE(applySetting(s, "parallelism.gpus=auto").ok());
    EXPECT_FALSE(s.parallelism.gpus.has_value());
}

TEST(ScenarioSettings, ModelKeysAreConfigJsonKeys) {
    Scenario s = llama2();
    ASSERT_TRUE(applySetting(s, "model.num_key_value_heads=8").ok());
    ASSERT_TRUE(applySetting(s, "model.vocab_size=128256").ok());
    EXPECT_EQ(s.model.num_kv_heads, 8);
    EXPECT_EQ(s.model.vocab_size, 128256);
    const Error e = settingError("model.num_hiden_layers=40");
    EXPECT_EQ(e.field, "model.num_hiden_layers");
    EXPECT_NE(e.message.find("did you mean model.num_hidden_layers"), std::string::npos) << e.message;
}

TEST(ScenarioSettings, RefusedSettingsNameTheKeyAndWhatIsAllowed) {
    Error e = settingError("training.micro_batch=4");
    EXPECT_EQ(e.field, "training.micro_batch");
    EXPECT_NE(e.message.find("did you mean training.micro_batch_size?"), std::string::npos) << e.message;
    e = settingError("training.micro_batch_size=four");
    EXPECT_EQ(e.field, "training.micro_batch_size");
    EXPECT_NE(e.message.find("expected an integer"), std::string::npos);
    e = settingError("training.optimizer=adamw8bit");
    EXPECT_EQ(e.field, "training.optimizer");
    EXPECT_NE(e.message.find("did you mean adamw-8bit?"), std::string::npos) << e.message;
    e = settingError("parallelism.sequence_parallel=maybe");
    EXPECT_NE(e.message.find("true or false"), std::string::npos);
    e = settingError("training.optimizer_state_dtype=fp16");
    EXPECT_NE(e.message.find("auto, fp32, bf16"), std::string::npos) << e.message;
    e = settingError("trainig.micro_batch_size=4");
    EXPECT_NE(e.message.find("did you mean training?"), std::string::npos) << e.message;
    e = settingError("micro_batch_size=4");
    EXPECT_NE(e.message.find("section.key=value"), std::string::npos) << e.message;
    e = settingError("training.micro_batch_size");
    EXPECT_NE(e.message.find("key=value"), std::string::npos) << e.message;
    e = settingError("parallelism.data=99999999999999999999");
    EXPECT_NE(e.message.find("too large"), std::string::npos) << e.message;
}

TEST(ScenarioSettings, EveryDocumentedKeyIsSettable) {
    const std::vector<std::string>& keys = settingKeys();
    EXPECT_EQ(keys.size(), 59u);  // 29 training + 18 parallelism + 12 hardware keys in the format
    for (const char* key : {"training.activation_checkpointing", "parallelism.pipeline_schedule",
                            "hardware.nccl_mib_per_group", "hardware.ddp_gradient_as_bucket_view"})
        EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << key;
}

// ---------------------------------------------------------------- helpers

TEST(ScenarioCapacity, CatalogueOrCustomMemory) {
    HardwareConfig h;
    h.gpu = "custom";
    EXPECT_EQ(capacityBytes(h).error().field, "hardware.memory_gib");
    h.memory_bytes = int64_t{24} << 30;
    EXPECT_EQ(*capacityBytes(h), int64_t{24} << 30);
    h.gpu = "no-such-gpu";
    h.memory_bytes.reset();
    EXPECT_EQ(capacityBytes(h).error().field, "hardware.gpu");
}

TEST(ScenarioForModel, UsesTheDefaultsAndRemembersThePreset) {
    auto model = loadModelPreset("gpt2");
    ASSERT_TRUE(model.ok()) << model.error().text();
    const Scenario s = scenarioForModel(*model, "gpt2");
    EXPECT_EQ(s.name, "gpt2");
    EXPECT_EQ(s.model_preset, "gpt2");
    EXPECT_EQ(s.training, TrainingConfig{});
    EXPECT_EQ(s.parallelism, ParallelConfig{});
    EXPECT_EQ(s.hardware, HardwareConfig{});
}

}  // namespace
}  // namespace trainmem

namespace trainmem {
namespace {

// Every key of every preset scenario replaced by values of every JSON type,
// and by extreme numbers: loading gives a value or an error naming that key,
// never an exception or a crash; whatever loads and validates also estimates.
TEST(ScenarioRobustness, EveryKeyWithEveryKindOfValueGivesAValueOrANamedError) {
    const std::vector<json> values = {nullptr, true, "x", "", -1, 0, 1, 3, 1.5, -0.5,
                                      json::array(), json::object(), 9223372036854775807LL,
                                      18446744073709551615ULL, 1e300, "auto", json::array({"q_proj"})};
    int checked = 0;
    for (const auto& preset : listPresets()) {
        if (preset.kind != PresetKind::Scenario) continue;
        auto base = loadPreset(preset.name);
        ASSERT_TRUE(base.ok());
        const json doc = scenarioToJson(*base);
        for (const char* section : {"training", "parallelism", "hardware"})
            for (const auto& [key, original] : doc[section].items())
                for (const auto& value : values) {
                    json mutated = doc;
                    mutated[section][key] = value;
                    const std::string path = std::string(section) + "." + key;
                    auto s = scenarioFromJson(mutated);
                    ++checked;
                    if (!s) {
                        EXPECT_EQ(s.error().field, path) << value.dump() << ": " << s.error().text();
                        continue;
                    }
                    if (validate(*s).ok()) {
                        EXPECT_TRUE(estimate(*s).ok()) << path << "=" << value.dump();
                    }
                }
    }
    EXPECT_GT(checked, 5000);
}

TEST(ScenarioRobustness, AmountsThatWouldOverflowBytesAreRefusedNamingTheKey) {
    // 2^32 GiB and 2^42 MiB are the largest amounts the file accepts: 4 EiB,
    // still far inside int64 bytes (8 EiB).
    for (const char* key : {"hardware.memory_gib", "hardware.cuda_context_mib", "hardware.nccl_mib_per_group"}) {
        Scenario s = llama2();
        Status st = applySetting(s, std::string(key) + "=1e30");
        ASSERT_FALSE(st.ok()) << key;
        EXPECT_EQ(st.error().field, key);
        EXPECT_NE(st.error().message.find("must be at most"), std::string::npos) << st.error().text();
        EXPECT_EQ(s, llama2()) << key << ": a refused setting must leave the scenario as it was";
    }
    Scenario s = llama2();
    ASSERT_TRUE(applySetting(s, "hardware.memory_gib=4294967296").ok());
    EXPECT_EQ(s.hardware.memory_bytes, int64_t{1} << 62);
    // null clears an optional amount: the GPU catalogue's capacity applies again.
    ASSERT_TRUE(applySetting(s, "hardware.memory_gib=null").ok());
    EXPECT_FALSE(s.hardware.memory_bytes.has_value());
}

TEST(ScenarioSettings, ModelKeysAreCheckedTogetherWhateverTheirOrder) {
    // GPT-2 small has 12 heads of 64: n_embd=128 alone leaves 12 heads that do
    // not divide it, n_head=4 alone 4 heads of 192. Both together are valid.
    auto gpt2 = loadPreset("gpt2");
    ASSERT_TRUE(gpt2.ok()) << gpt2.error().text();
    for (const auto& order : {std::vector<std::string>{"model.n_embd=128", "model.n_head=4"},
                              std::vector<std::string>{"model.n_head=4", "model.n_embd=128"}}) {
        Scenario s = *gpt2;
        Status st = applySettings(s, order);
        ASSERT_TRUE(st.ok()) << order.front() << ": " << st.error().text();
        EXPECT_EQ(s.model.hidden_size, 128);
        EXPECT_EQ(s.model.num_heads, 4);
        EXPECT_EQ(s.model.head_dim, 32);
        EXPECT_TRUE(s.model_preset.empty()) << "no longer the preset's numbers";
    }
    // One at a time, the first is refused, naming the key that does not divide.
    Scenario one = *gpt2;
    Status st = applySetting(one, "model.n_embd=128");
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().field, "model.n_head");
}

TEST(ScenarioSettings, ABatchIsAllOrNothingAndNamesTheBadKey) {
    const Scenario before = llama2();
    Scenario s = before;
    Status st = applySettings(s, {"training.micro_batch_size=8", "model.num_hidden_layers=0"});
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().field, "model.num_hidden_layers");
    EXPECT_EQ(s, before);
    st = applySettings(s, {"model.hidden_size=5120", "training.precision=fp64"});
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().field, "training.precision");
    EXPECT_EQ(s, before);
    // A misspelt model key in a batch is named, with the near miss.
    st = applySettings(s, {"model.hidden_size=5120", "model.num_hiden_layers=40"});
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().field, "model.num_hiden_layers");
    EXPECT_NE(st.error().message.find("did you mean model.num_hidden_layers"), std::string::npos)
        << st.error().text();
    EXPECT_EQ(s, before);
    // Text that is no setting at all.
    st = applySettings(s, {"training.micro_batch_size"});
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("key=value"), std::string::npos);
}

TEST(ScenarioRobustness, ArbitrarySettingTextIsAValueOrANamedError) {
    Scenario s = llama2();
    for (const char* text : {"", "=", "==", ".=", "training.=1", ".micro_batch_size=1", "model.=1", "model.x",
                             "training.micro_batch_size=1e3", "training.micro_batch_size= 7 ",
                             "training.lora_dropout=nan", "training.lora_dropout=inf", "hardware.memory_gib=1e30",
                             "model.hidden_size=[1,2]", "model.hidden_size={}", "model.hidden_size=-1",
                             "model.model_type=gpt2", "training.lora_targets=,,,"}) {
        Scenario copy = s;
        Status st = applySetting(copy, text);
        if (!st.ok()) {
            EXPECT_FALSE(st.error().message.empty()) << text;
        }
    }
}

}  // namespace
}  // namespace trainmem
