// Which stack a file is, and the steps every format shares: the model, the
// stack's training.framework row, the report of what nobody set.
#include "core/runconfig/run_config.h"

#include <algorithm>
#include <cctype>

#include "core/scenario/frameworks.h"
#include "core/base/json_input.h"
#include "core/scenario/presets.h"
#include "core/account/scenario_validate.h"
#include "core/runconfig/formats.h"

namespace trainmem::runconfig {

namespace {

std::string lowered(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

bool hasKeyUnder(const ConfigDocument& doc, std::string_view suffix) {
    for (const auto& v : doc.values)
        if (v.key == suffix || v.key.ends_with("." + std::string(suffix))) return true;
    return false;
}

}  // namespace

const std::vector<std::string_view>& runConfigFormats() {
    static const std::vector<std::string_view> formats = {"auto", "torchtitan", "torchtune", "deepspeed", "axolotl",
                                                          "llamafactory", "accelerate", "litgpt", "megatron", "megatron-log",
                                                          "megatron-bridge"};
    return formats;
}

const std::vector<std::string_view>& exportTargets() {
    static const std::vector<std::string_view> targets = {"torchtitan", "torchtune", "deepspeed", "megatron", "accelerate", "litgpt"};
    return targets;
}

std::string presetForHubId(std::string_view hub_id) {
    const std::string wanted = lowered(hub_id);
    if (wanted.empty()) return {};
    for (const auto& info : listPresets()) {
        if (info.kind != PresetKind::Model) continue;
        auto config = readJsonFile(info.path);
        if (!config || !config->is_object()) continue;
        const auto it = config->find("_name_or_path");
        if (it != config->end() && it->is_string() && lowered(it->get<std::string>()) == wanted) return info.name;
    }
    return {};
}

Expected<RunConfigImport> importRunConfig(const std::filesystem::path& file, const RunConfigOptions& options,
                                          std::string_view format) {
    if (std::find(runConfigFormats().begin(), runConfigFormats().end(), format) == runConfigFormats().end())
        return Error{"--run-format", "unknown format \"" + describeText(format) + "\"; allowed: auto, torchtitan, torchtune, "
                                     "deepspeed, axolotl, llamafactory, accelerate, litgpt, megatron, megatron-log, megatron-bridge"};
    for (const auto& companion : options.companions) {
        std::error_code ec;
        if (!std::filesystem::exists(companion, ec))
            return Error{companion.string(), "companion file does not exist"};
    }
    if (options.gpus && (*options.gpus < 1 || *options.gpus > 65536 * 64))
        return Error{"--gpus", "must be between 1 and 4194304 (got " + std::to_string(*options.gpus) + ")"};

    const std::string ext = lowered(file.extension().string());
    std::string kind(format);
    Expected<ConfigDocument> doc = Error{};
    if (kind == "auto") {
        if (ext == ".toml") kind = "torchtitan";
        else if (ext == ".json") kind = "deepspeed";
        else if (ext == ".sh" || ext == ".bash") kind = "megatron";
        else if (ext == ".log" || ext == ".txt" || ext == ".out") kind = "megatron-log";
        else if (ext == ".yaml" || ext == ".yml") kind = "yaml";
        else
            return Error{file.string(), "cannot tell the stack from the name: give --run-format (torchtitan .toml, torchtune/axolotl "
                                        ".yaml, DeepSpeed .json, Megatron .sh or its log)"};
    }
    if (kind == "torchtitan") doc = readTomlDocument(file);
    else if (kind == "deepspeed") doc = readJsonDocument(file);
    else if (kind == "megatron") doc = readMegatronScript(file, options.overrides);
    else if (kind == "megatron-log") doc = readMegatronLog(file);
    else doc = readYamlDocument(file);
    if (!doc) return doc.error();
    if (kind == "yaml") {
        if (const ConfigValue* t = doc->find("_target_"); t && t->value.is_string() &&
                                                          t->value.get<std::string>().find("ConfigContainer") != std::string::npos)
            kind = "megatron-bridge";
        else if (hasKeyUnder(*doc, "_component_")) kind = "torchtune";
        else if (doc->find("base_model")) kind = "axolotl";
        else if (doc->find("model_name_or_path") || doc->find("finetuning_type") || doc->find("cutoff_len"))
            kind = "llamafactory";
        else if (doc->find("distributed_type") || doc->find("compute_environment"))
            kind = "accelerate";
        else if (doc->find("checkpoint_dir") || (doc->find("model_name") && std::any_of(doc->values.begin(), doc->values.end(), [](const ConfigValue& v) { return v.key.starts_with("train."); })))
            kind = "litgpt";
        else
            return Error{file.string(), "cannot tell the stack: no _component_ (torchtune), no base_model (axolotl), no "
                                        "model_name_or_path (LLaMA-Factory), no checkpoint_dir (LitGPT); give --run-format"};
    }

    RunConfigImport result;
    result.stack = kind;
    if (options.model) {
        result.scenario = *options.model;
        result.has_model = true;
    } else {
        result.scenario = Scenario{};
        result.scenario.hardware = HardwareConfig{};
    }
    ImportRecorder rec(result);
    ImportContext ctx{options, rec, file};
    Status st = ok();
    if (kind == "torchtitan") {
        result.format = "torchtitan job-config TOML (" + std::string(kTorchtitanRelease) + ")";
        st = importTorchtitan(*doc, ctx);
    } else if (kind == "torchtune") {
        result.format = "torchtune recipe YAML (" + std::string(kTorchtuneRelease) + ")";
        st = importTorchtune(*doc, ctx);
    } else if (kind == "deepspeed") {
        result.format = "DeepSpeed config JSON (" + std::string(kDeepspeedRelease) + ")";
        st = importDeepspeed(*doc, ctx, {});
    } else if (kind == "llamafactory") {
        result.format = "LLaMA-Factory YAML (" + std::string(kLlamaFactoryRelease) + ")";
        st = importLlamaFactory(*doc, ctx);
    } else if (kind == "accelerate") {
        result.format = "Accelerate config YAML (" + std::string(kAccelerateRelease) + ")";
        st = importAccelerate(*doc, ctx);
    } else if (kind == "litgpt") {
        result.format = "LitGPT YAML (" + std::string(kLitgptRelease) + ")";
        st = importLitgpt(*doc, ctx);
    } else if (kind == "megatron-bridge") {
        result.format = "Megatron-Bridge run_config.yaml (" + std::string(kMegatronBridgeRelease) + ", read as " + kMegatronRelease + " flags)";
        st = importMegatronBridge(*doc, ctx);
    } else if (kind == "axolotl") {
        result.format = "axolotl YAML (" + std::string(kAxolotlRelease) + ")";
        st = importAxolotl(*doc, ctx);
    } else {
        result.stack = "megatron";
        result.format = std::string(kind == "megatron" ? "Megatron-LM launch script flags (" : "Megatron-LM rank-0 arguments log (") +
                        kMegatronRelease + ")";
        st = importMegatronFlags(*doc, ctx);
    }
    if (!st) return st.error();
    if (!result.has_model && result.report.unknown.end() ==
                                 std::find_if(result.report.unknown.begin(), result.report.unknown.end(),
                                              [](const ReportEntry& e) { return e.trainmem_key == "model"; }))
        rec.unknown(file.string(), "(model)", 0, "model", "the file names no model trainmem has: give --preset or --model-config");
    if (result.scenario.name.empty()) result.scenario.name = file.stem().string();
    if (result.scenario.description.empty())
        result.scenario.description = "Imported from " + file.filename().string() + " (" + result.format + ")";
    return result;
}

Status requireComplete(const RunConfigImport& r) {
    if (r.report.unknown.empty()) return ok();
    // One line: the CLI's contract is one line per error.
    std::string text = "the run config leaves " + std::to_string(r.report.unknown.size()) + " value(s) unknown:";
    for (size_t i = 0; i < r.report.unknown.size(); ++i) {
        const ReportEntry& e = r.report.unknown[i];
        text += std::string(i ? ";" : "") + " " +
                (e.file.empty() ? std::string() : e.file + (e.line > 0 ? ":" + std::to_string(e.line) : "") + ": ");
        text += e.key + " -> " + e.trainmem_key + " (" + e.note + ")";
    }
    text += ". trainmem-cli import FILE shows the whole report; give --gpus, --preset/--model-config or --set KEY=VALUE";
    return Error{"", text};
}

Expected<std::string> exportRunConfig(const Scenario& s, std::string_view target) {
    // The writers multiply degrees and read sizes: only a valid scenario.
    if (Status st = validate(s); !st) return st.error();
    if (target == "torchtitan") return exportTorchtitan(s);
    if (target == "torchtune") return exportTorchtune(s);
    if (target == "deepspeed") return exportDeepspeed(s);
    if (target == "megatron") return exportMegatron(s);
    if (target == "accelerate") return exportAccelerate(s);
    if (target == "litgpt") return exportLitgpt(s);
    return Error{"--to", "unknown target \"" + describeText(target) + "\"; allowed: torchtitan, torchtune, deepspeed, megatron, accelerate, litgpt"};
}

}  // namespace trainmem::runconfig
