// trainmem-cli export-run: a scenario as a training stack's own file or flags.
#include <fstream>

#include "cli/command.h"
#include "cli/run_config_source.h"
#include "cli/scenario_source.h"
#include "core/scenario/scenario_fields.h"
#include "core/account/scenario_validate.h"

namespace trainmem::cli {

namespace {

const char* const kHelp =
    "Usage: trainmem-cli export-run --to torchtitan|torchtune|deepspeed|megatron|accelerate|litgpt\n"
    "                               (--preset NAME | --model-config FILE | --scenario FILE | --run-config FILE)\n"
    "                               [--set KEY=VALUE]... [--output FILE]\n"
    "\n"
    "Writes the scenario as the stack's run config: a torchtitan job-config TOML, a\n"
    "torchtune recipe YAML, a DeepSpeed JSON, a Megatron-LM launch line, an Accelerate\n"
    "config or a LitGPT YAML. trainmem-cli import reads it back to the same scenario. What the stack cannot express (ZeRO-2 in\n"
    "torchtitan, LoRA in Megatron-LM) is an error naming the key.\n"
    "\n"
    "  --output FILE          write there instead of standard output\n"
    "\n";

Status run(const std::vector<std::string>& raw, std::ostream& out) {
    std::vector<FlagSpec> flags = scenarioSourceFlags();
    for (const auto& f : runConfigFlags(true)) flags.push_back(f);
    flags.push_back({"--to"});
    flags.push_back({"--output"});
    auto args = ArgumentList::parse(raw, flags);
    if (!args) return args.error();
    std::vector<std::string_view> targets(runconfig::exportTargets().begin(), runconfig::exportTargets().end());
    if (!args->has("--to")) return Error{"--to", "required: one of " + joinNames(targets)};
    auto target = choice(*args, "--to", targets, "");
    if (!target) return target.error();
    auto scenario = scenarioFromArguments(*args);
    if (!scenario) return scenario.error();
    if (Status st = validate(*scenario); !st) return st.error();
    auto text = runconfig::exportRunConfig(*scenario, *target);
    if (!text) return text.error();
    if (auto path = args->value("--output")) {
        std::ofstream file(*path, std::ios::binary | std::ios::trunc);
        if (!file) return Error{"--output", "cannot open " + *path + " for writing"};
        file << *text;
        file.close();
        if (!file) return Error{"--output", "writing " + *path + " failed (disk full?)"};
        return ok();
    }
    out << *text;
    return ok();
}

}  // namespace

CliCommand exportRunCommand() {
    static const std::string help = std::string(kHelp) + kScenarioSourceHelp + kRunConfigHelp;
    return {"export-run", "a scenario as a torchtitan, torchtune, DeepSpeed, Megatron-LM or Accelerate run config", help, run};
}

}  // namespace trainmem::cli
