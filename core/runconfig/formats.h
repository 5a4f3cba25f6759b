#pragma once
// The per-stack readers and writers behind run_config.h, one file each:
// torchtitan.cpp, torchtune.cpp, deepspeed.cpp, axolotl.cpp (with the
// Hugging Face optimizer names, hfOptimizer, and the DeepSpeed JSON it
// names, importNamedDeepspeed, shared with LLaMA-Factory), llamafactory.cpp,
// accelerate.cpp, litgpt.cpp, megatron.cpp (flags to a scenario and back), megatron_model.cpp
// (the model flags as a model), megatron_bridge.cpp (Megatron-Bridge's
// run_config.yaml as those flags) and
// megatron_script.cpp (readMegatronScript, readMegatronLog,
// megatronFlagsDocument). The steps they share are in formats.cpp.
#include <filesystem>
#include <string>

#include "core/runconfig/config_document.h"
#include "core/runconfig/run_config_options.h"
#include "core/runconfig/run_config_report.h"

namespace trainmem::runconfig {

struct ImportContext {
    const RunConfigOptions& options;
    ImportRecorder& rec;
    std::filesystem::path file;

    // The model: --preset/--model-config when given (it wins), else the
    // preset the file names, else reported unknown.
    void modelFromPreset(const std::string& preset, const ConfigValue* from, const std::string& why);
    void modelUnknown(const std::string& key, int line, const std::string& why);
    bool modelGiven() const { return options.model.has_value(); }
};

// Applies the stack's training.framework row first (its defaults are then
// reported where no key of the file set them: finishFramework).
Status startFramework(ImportContext& ctx, const std::string& framework);
void finishFramework(ImportContext& ctx, const std::string& release);

Status importTorchtitan(ConfigDocument& doc, ImportContext& ctx);
Status importTorchtune(ConfigDocument& doc, ImportContext& ctx);
// `resolved`: the keys whose "auto" the main file (axolotl, torchtune) has
// already set; for a DeepSpeed JSON on its own every "auto" is unknown.
Status importDeepspeed(ConfigDocument& doc, ImportContext& ctx, const std::vector<std::string>& resolved);
Status importAxolotl(ConfigDocument& doc, ImportContext& ctx);
Status importLlamaFactory(ConfigDocument& doc, ImportContext& ctx);
Status importAccelerate(ConfigDocument& doc, ImportContext& ctx);
Status importLitgpt(ConfigDocument& doc, ImportContext& ctx);
// A Hugging Face Trainer optimizer name (transformers' OptimizerNames, as
// axolotl and LLaMA-Factory pass them): trainmem's optimizer, implementation
// ("" = the stack's), paged; kind "" when trainmem has none.
struct HfOptimizer {
    std::string kind, impl;
    bool paged = false;
};
HfOptimizer hfOptimizer(const std::string& name);
// The DeepSpeed JSON an HF-Trainer-based config names (axolotl, LLaMA-Factory):
// resolved from the working directory or a companion of the same name, read
// with the main file's keys filling its "auto".
Status importNamedDeepspeed(const ConfigValue& key, ImportContext& ctx, const std::string& precision);
Status importMegatronFlags(ConfigDocument& doc, ImportContext& ctx);
// Megatron-Bridge's run_config.yaml, its keys given to importMegatronFlags as the flags they are.
Status importMegatronBridge(ConfigDocument& doc, ImportContext& ctx);
// The model Megatron-LM's model flags describe (megatron_model.cpp), when no
// model is given; `tensor_parallel` pads the vocabulary.
Status importMegatronModel(const ConfigDocument& doc, ImportContext& ctx, int64_t tensor_parallel);
// Megatron's flags as documents: a launch script's, the rank-0 arguments log's.
// `overrides`: NAME=value (the script's variable, as if edited) and --flag [value] (appended).
Expected<ConfigDocument> readMegatronScript(const std::filesystem::path& path, const std::vector<std::string>& overrides);
Expected<ConfigDocument> readMegatronLog(const std::filesystem::path& path);
Expected<ConfigDocument> megatronFlagsDocument(const std::vector<std::string>& words, const std::string& file);

Expected<std::string> exportTorchtitan(const Scenario& s);
Expected<std::string> exportTorchtune(const Scenario& s);
Expected<std::string> exportDeepspeed(const Scenario& s);
Expected<std::string> exportMegatron(const Scenario& s);
Expected<std::string> exportAccelerate(const Scenario& s);
Expected<std::string> exportLitgpt(const Scenario& s);

// Release strings cited in reports and docs/run-configs.md.
inline constexpr const char* kTorchtitanRelease = "torchtitan v0.2.2";
inline constexpr const char* kTorchtuneRelease = "torchtune v0.6.1";
inline constexpr const char* kDeepspeedRelease = "DeepSpeed v0.19.5-27-gedaa72212";
inline constexpr const char* kAxolotlRelease = "axolotl v0.18.0-9-g067b021c8";
inline constexpr const char* kLlamaFactoryRelease = "LLaMA-Factory v0.9.5-54-gff6d4d12e";
inline constexpr const char* kAccelerateRelease = "accelerate 16cb6eb8 (after v1.14.0)";
inline constexpr const char* kLitgptRelease = "LitGPT v0.5.13";
inline constexpr const char* kMegatronBridgeRelease = "Megatron-Bridge v0.6.0";
inline constexpr const char* kMegatronRelease = "Megatron-LM core_v0.15.0rc7-2333-gd98e8a64dd";

}  // namespace trainmem::runconfig
