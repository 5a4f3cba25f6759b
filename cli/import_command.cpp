// trainmem-cli import: a training stack's run config as a scenario, with the
// report of where every value came from (docs/run-configs.md).
#include <algorithm>

#include "cli/command.h"
#include "cli/run_config_source.h"
#include "cli/scenario_source.h"
#include "core/scenario/scenario_fields.h"
#include "core/scenario/scenario_file.h"
#include "core/account/scenario_validate.h"

namespace trainmem::cli {

namespace {

const char* const kHelp =
    "Usage: trainmem-cli import FILE [COMPANION...] [--gpus N] [--preset P | --model-config F]\n"
    "                           [--run-format NAME] [--override TEXT]... [--set KEY=VALUE]... [--format json|text]\n"
    "\n"
    "Reads a training stack's own run config as that stack reads it at a named release\n"
    "(docs/run-configs.md) and prints the scenario it derives, every key explicit, with a\n"
    "report: what was read (file, line, key, and the trainmem key), what came from the\n"
    "stack's defaults (with the stack's source), what stays unknown (set it with --gpus,\n"
    "--preset/--model-config or --set), what trainmem cannot represent, and what was\n"
    "ignored. Invalid runs are refused with the stack's own rule.\n"
    "\n"
    "Formats: torchtitan job-config TOML (v0.2.2), torchtune recipe YAML (v0.6.1),\n"
    "DeepSpeed JSON, axolotl and LLaMA-Factory YAML (with the DeepSpeed JSON they name), Megatron-LM launch\n"
    "scripts and rank-0 arguments logs.\n"
    "\n"
    "  COMPANION              another file the run reads (a DeepSpeed JSON)\n"
    "  --gpus N               the world size (the launcher's)\n"
    "  --preset / --model-config  the model, when the file names none trainmem has (wins over the file's)\n"
    "  --run-format NAME      auto (default), torchtitan, torchtune, deepspeed, axolotl, llamafactory, accelerate, litgpt, megatron, megatron-log,\n"
    "                         megatron-bridge\n"
    "  --override TEXT        the stack's override: torchtitan --section.option=value, torchtune and LitGPT key=value,\n"
    "                         Megatron NAME=value or --flag value (repeatable)\n"
    "  --set KEY=VALUE        a trainmem key after the import (settles an unknown)\n"
    "  --format text|json     json: {\"scenario\": ..., \"report\": {\"read\", \"defaults\", \"unknown\",\n"
    "                         \"not_representable\", \"ignored\"}}\n"
    "\n"
    "Exit status: 0 imported (unknowns are listed, not an error), 2 a bad file or a run the\n"
    "stack refuses.\n"
    "\n"
    "Examples:\n"
    "  trainmem-cli import llama3_8b.toml --gpus 8\n"
    "  trainmem-cli import axolotl.yaml zero3.json --gpus 4 --format json\n";

Status run(const std::vector<std::string>& raw, std::ostream& out) {
    // FILE and COMPANIONs are the words that are neither options nor their values.
    std::vector<FlagSpec> flags = runConfigFlags(true);
    for (const auto& f : scenarioSourceFlags()) flags.push_back(f);
    flags.push_back({"--format"});
    std::vector<std::string> positional, options;
    for (size_t i = 0; i < raw.size(); ++i) {
        const std::string& token = raw[i];
        if (!token.starts_with("--")) {
            positional.push_back(token);
            continue;
        }
        options.push_back(token);
        const std::string name = token.substr(0, token.find('='));
        const bool takes_value = std::any_of(flags.begin(), flags.end(), [&](const FlagSpec& f) { return f.name == name && f.takes_value; });
        if (takes_value && token.find('=') == std::string::npos && i + 1 < raw.size()) options.push_back(raw[++i]);
    }
    auto args = ArgumentList::parse(options, flags);
    if (!args) return args.error();
    if (args->has("--run-config")) positional.insert(positional.begin(), *args->value("--run-config"));
    if (positional.empty()) return Error{"", "no run config: trainmem-cli import FILE [COMPANION...] (see --help)"};
    auto format = choice(*args, "--format", {"text", "json"}, "text");
    if (!format) return format.error();
    auto imported = importFromArguments(*args, positional.front(), std::vector<std::string>(positional.begin() + 1, positional.end()));
    if (!imported) return imported.error();
    if (Status st = applySettings(imported->scenario, args->values("--set")); !st) return st.error();
    // With every value known, trainmem's own checks of the combination.
    if (imported->has_model && imported->report.unknown.empty())
        if (Status st = validate(imported->scenario); !st)
            return Error{st.error().field, st.error().message + " (the imported run; trainmem-cli import --format json shows how each "
                                                                "key was read)"};
    if (*format == "json") {
        out << runconfig::importToJson(*imported).dump(2) << "\n";
        return ok();
    }
    out << runconfig::reportToText(*imported) << "\nScenario:\n";
    nlohmann::ordered_json scenario = scenarioToOrderedJson(imported->scenario);
    if (!imported->has_model) scenario["model"] = nullptr;
    out << scenario.dump(2) << "\n";
    return ok();
}

}  // namespace

CliCommand importCommand() {
    return {"import", "a training stack's run config as a scenario, with what was read and defaulted", kHelp, run};
}

}  // namespace trainmem::cli
