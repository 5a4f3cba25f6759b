// trainmem-cli estimate: one scenario's per-GPU memory at its peak.
#include "cli/command.h"
#include "cli/output_format.h"
#include "cli/run_config_source.h"
#include "core/steptime/step_time_report.h"
#include "cli/scenario_source.h"
#include "core/account/estimate.h"

namespace trainmem::cli {

namespace {

const char* const kHelp =
    "Usage: trainmem-cli estimate (--preset NAME | --model-config FILE | --scenario FILE | --run-config FILE)\n"
    "                             [--set KEY=VALUE]... [--format table|json|markdown|csv] [--units gib|gb]\n"
    "\n"
    "Estimates the memory of one GPU at the peak of a training step: the heaviest\n"
    "pipeline stage, by component, with allocated, reserved and device totals.\n"
    "\n";

const char* const kHelpTail =
    "\n"
    "Output:\n"
    "  --format table         aligned text (default)\n"
    "  --format json          every figure in bytes (integers), with the scenario echoed\n"
    "  --format markdown      a Markdown table\n"
    "  --format csv           component,bytes,share,formula\n"
    "  --units gib|gb         units of the text formats (default gib = 1024^3 bytes)\n"
    "\n"
    "Examples:\n"
    "  trainmem-cli estimate --preset llama3.1-8b-fsdp-8xh100\n"
    "  trainmem-cli estimate --model-config config.json --set training.micro_batch_size=4 --format json\n"
    "  trainmem-cli estimate --run-config llama3_8b.toml --gpus 8\n";

Status run(const std::vector<std::string>& raw, std::ostream& out) {
    std::vector<FlagSpec> flags = scenarioSourceFlags();
    for (const auto& f : runConfigFlags(true)) flags.push_back(f);
    flags.push_back({"--format"});
    flags.push_back({"--units"});
    auto args = ArgumentList::parse(raw, flags);
    if (!args) return args.error();
    auto format = outputFormat(*args, {"table", "json", "markdown", "csv"});
    if (!format) return format.error();
    auto units = outputUnits(*args);
    if (!units) return units.error();
    auto scenario = scenarioFromArguments(*args);
    if (!scenario) return scenario.error();
    auto result = estimate(*scenario);
    if (!result) return result.error();

    switch (*format) {
        case OutputFormat::Table:
            out << estimateToTable(*scenario, *result, *units) << "Step time:  " << throughputLine(*scenario) << "\n";
            break;
        case OutputFormat::Json: {
            nlohmann::json doc = estimateToJson(*scenario, *result);
            addThroughput(doc, *scenario);  // the modelled step time (docs/step-time.md)
            out << doc.dump(2) << "\n";
            break;
        }
        case OutputFormat::Markdown:
            out << estimateToMarkdown(*scenario, *result, *units) << "\n- Step time: " << throughputLine(*scenario)
                << "\n";
            break;
        case OutputFormat::Csv: out << estimateToCsv(*scenario, *result); break;
    }
    return ok();
}

}  // namespace

CliCommand estimateCommand() {
    static const std::string help = std::string(kHelp) + kScenarioSourceHelp + kRunConfigHelp + settingsHelp() + kHelpTail;
    return {"estimate", "per-GPU memory of one scenario, by component", help, run};
}

}  // namespace trainmem::cli
