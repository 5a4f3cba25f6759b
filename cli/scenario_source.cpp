#include "cli/scenario_source.h"

#include "cli/run_config_source.h"
#include "core/training/hardware.h"
#include "core/scenario/scenario_source.h"
#include "core/scenario/scenario_file.h"

namespace trainmem::cli {

std::vector<FlagSpec> scenarioSourceFlags() {
    return {{"--preset"}, {"--model-config"}, {"--scenario"}, {"--set", true, true}};
}

const char* const kScenarioSourceHelp =
    "Scenario (exactly one of):\n"
    "  --preset NAME          a model or scenario preset (list: trainmem-cli presets)\n"
    "  --model-config FILE    a Hugging Face config.json; training defaults around it\n"
    "  --scenario FILE        a trainmem scenario file (docs/scenario-format.md)\n"
    "  --set KEY=VALUE        change one setting, repeatable, applied in order:\n"
    "                         training.micro_batch_size=4, parallelism.tensor=8,\n"
    "                         hardware.gpu=A100-80GB, model.num_hidden_layers=40 (config.json keys)\n";

namespace {

// "  label  a, b, c," wrapped at 100 columns under the label's indent.
std::string wrappedList(const std::string& label, const std::vector<std::string>& items) {
    const std::string indent(label.size() + 2, ' ');
    std::string out = "  " + label;
    size_t column = out.size();
    for (size_t i = 0; i < items.size(); ++i) {
        const std::string item = items[i] + (i + 1 < items.size() ? "," : "");
        if (column + 1 + item.size() > 100) {
            out += "\n" + indent;
            column = indent.size();
        } else if (i > 0) {
            out += " ";
            ++column;
        }
        out += item;
        column += item.size();
    }
    return out + "\n";
}

}  // namespace

std::string settingsHelp() {
    std::string out = "\nKeys for --set (docs/scenario-format.md; model.* takes config.json keys):\n";
    for (const char* section : {"training", "parallelism", "hardware"}) {
        std::vector<std::string> keys;
        const std::string prefix = std::string(section) + ".";
        for (const auto& key : settingKeys())
            if (key.starts_with(prefix)) keys.push_back(key.substr(prefix.size()));
        out += wrappedList(prefix + std::string(13 - prefix.size(), ' '), keys);
    }
    std::vector<std::string> gpus;
    for (const auto& gpu : gpuCatalogue()) gpus.emplace_back(gpu.name);
    gpus.emplace_back("custom (with hardware.memory_gib)");
    out += "\nGPUs for hardware.gpu:\n" + wrappedList("", gpus);
    return out;
}

Expected<Scenario> scenarioFromArguments(const ArgumentList& args) {
    // A training stack's own file (commands that take runConfigFlags()).
    if (args.has("--run-config")) return scenarioFromRunConfig(args);
    // The app reads the same flags into the same ScenarioSource (core/scenario/scenario_source.h).
    ScenarioSource source;
    for (const char* flag : {"--preset", "--model-config", "--scenario"})
        if (auto value = args.value(flag))
            if (Status st = source.set(flag, *value); !st) return st.error();
    source.settings = args.values("--set");
    return scenarioFromSource(source);
}

}  // namespace trainmem::cli
