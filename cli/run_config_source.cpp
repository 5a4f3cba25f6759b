#include "cli/run_config_source.h"

#include <algorithm>
#include <charconv>

#include "core/scenario/scenario_source.h"
#include "core/scenario/scenario_file.h"

namespace trainmem::cli {

std::vector<FlagSpec> runConfigFlags(bool with_gpus) {
    std::vector<FlagSpec> flags = {{"--run-config"}, {"--companion", true, true}, {"--run-format"}, {"--override", true, true}};
    if (with_gpus) flags.push_back({"--gpus"});
    return flags;
}

const char* const kRunConfigHelp =
    "Run config (instead of --scenario; docs/run-configs.md):\n"
    "  --run-config FILE      a training stack's own file: torchtitan .toml, torchtune or axolotl .yaml,\n"
    "                         DeepSpeed .json, Megatron-LM launch script (.sh) or rank-0 log\n"
    "  --companion FILE       a file the run also reads (the DeepSpeed JSON an axolotl config names), repeatable\n"
    "  --gpus N               the world size, which the stacks take from the launcher\n"
    "  --run-format NAME      auto (default), torchtitan, torchtune, deepspeed, axolotl, llamafactory, accelerate, litgpt, megatron, megatron-log,\n"
    "                         megatron-bridge\n"
    "  --override TEXT        the stack's own override, repeatable: torchtitan --section.option=value,\n"
    "                         torchtune and LitGPT key=value, Megatron NAME=value (a script variable) or --flag value\n"
    "  --preset / --model-config give the model when the file names none trainmem has\n";

Expected<runconfig::RunConfigImport> importFromArguments(const ArgumentList& args, const std::string& file,
                                                         const std::vector<std::string>& companions) {
    runconfig::RunConfigOptions options;
    for (const auto& c : companions) options.companions.emplace_back(c);
    for (const auto& c : args.values("--companion")) options.companions.emplace_back(c);
    options.overrides = args.values("--override");
    if (auto gpus = args.value("--gpus")) {
        int64_t n = 0;
        auto [end, ec] = std::from_chars(gpus->data(), gpus->data() + gpus->size(), n);
        if (ec != std::errc() || end != gpus->data() + gpus->size() || n < 1)
            return Error{"--gpus", "expected a positive integer (got \"" + *gpus + "\")"};
        options.gpus = n;
    }
    if (args.has("--scenario")) return Error{"--scenario", "give either --scenario or a run config, not both"};
    ScenarioSource model_source;
    for (const char* flag : {"--preset", "--model-config"})
        if (auto value = args.value(flag))
            if (Status st = model_source.set(flag, *value); !st) return st.error();
    if (model_source.kind != ScenarioSource::Kind::None) {
        auto model = scenarioFromSource(model_source);
        if (!model) return model.error();
        options.model = *model;
    }
    const std::string format = args.value("--run-format").value_or("auto");
    return runconfig::importRunConfig(file, options, format);
}

Expected<Scenario> scenarioFromRunConfig(const ArgumentList& args) {
    auto imported = importFromArguments(args, *args.value("--run-config"), {});
    if (!imported) return imported.error();
    const std::vector<std::string> settings = args.values("--set");
    if (Status st = applySettings(imported->scenario, settings); !st) return st.error();
    // An unknown is settled by a --set of its key.
    auto& unknown = imported->report.unknown;
    unknown.erase(std::remove_if(unknown.begin(), unknown.end(),
                                 [&](const runconfig::ReportEntry& e) {
                                     return std::any_of(settings.begin(), settings.end(), [&](const std::string& s) {
                                         return s.starts_with(e.trainmem_key + "=");
                                     });
                                 }),
                  unknown.end());
    if (Status st = runconfig::requireComplete(*imported); !st) return st.error();
    return imported->scenario;
}

}  // namespace trainmem::cli
