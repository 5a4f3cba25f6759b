// trainmem-cli compare: one scenario under several variants, side by side.
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/output_format.h"
#include "cli/scenario_source.h"
#include "core/base/json_input.h"
#include "core/account/estimate.h"
#include "core/training/names.h"
#include "core/training/optimizer_state.h"
#include "core/base/text_table.h"
#include "core/scenario/scenario_file.h"

namespace trainmem::cli {

namespace {

const char* const kHelp =
    "Usage: trainmem-cli compare (--preset NAME | --model-config FILE | --scenario FILE) [--set KEY=VALUE]...\n"
    "                            (--optimizers NAME,NAME,... | --variant \"KEY=VALUE,KEY=VALUE\"...)\n"
    "                            [--format table|json|markdown|csv] [--units gib|gb]\n"
    "\n"
    "Estimates the scenario once per variant and prints the results side by side:\n"
    "peak, every component, and whether it fits.\n"
    "\n";

const char* const kHelpTail =
    "\n"
    "Variants (one of):\n"
    "  --optimizers LIST      one column per optimizer, e.g. adamw,adamw-8bit,sgd,lion,muon\n"
    "  --variant SETTINGS     one column per --variant: comma-separated KEY=VALUE settings\n"
    "                         applied over the scenario; \"\" is the scenario as it is.\n"
    "                         A piece without = continues the previous value:\n"
    "                         --variant \"training.finetuning=lora,training.lora_targets=q_proj,v_proj\"\n"
    "\n"
    "Output: --format table (default), json, markdown or csv (bytes); --units gib|gb.\n"
    "\n"
    "Example:\n"
    "  trainmem-cli compare --preset llama3.1-8b-fsdp-8xh100 --optimizers adamw,adamw-8bit,sgd\n";

struct Variant {
    std::string label;
    std::vector<std::string> settings;
    Scenario scenario;
    Estimate estimate;
    std::optional<OptimizerKind> optimizer = std::nullopt;  // an --optimizers column
    std::string note = {};  // "lion: no fused kernel, compared with foreach"
};

// "a=1,b=x,y,c=2" -> {"a=1", "b=x,y", "c=2"}: a piece without '=' belongs to
// the value before it (lora_targets lists).
std::vector<std::string> splitSettings(const std::string& text) {
    std::vector<std::string> settings;
    size_t start = 0;
    while (start <= text.size()) {
        size_t comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        std::string piece = text.substr(start, comma - start);
        if (piece.find('=') == std::string::npos && !settings.empty())
            settings.back() += "," + piece;
        else if (!piece.empty())
            settings.push_back(piece);
        start = comma + 1;
    }
    return settings;
}

std::vector<std::string> splitNames(const std::string& text) {
    std::vector<std::string> names;
    size_t start = 0;
    while (start <= text.size()) {
        size_t comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        if (comma > start) names.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return names;
}

Expected<std::vector<Variant>> variantList(const ArgumentList& args) {
    const bool by_optimizer = args.has("--optimizers");
    const auto variants = args.values("--variant");
    if (by_optimizer && !variants.empty()) return Error{"", "give either --optimizers or --variant, not both"};
    std::vector<Variant> list;
    if (by_optimizer) {
        for (const auto& name : splitNames(*args.value("--optimizers"))) {
            if (!parseOptimizer(name))
                return Error{"--optimizers", "unknown optimizer \"" + name + "\"; allowed: " + allowedNames<OptimizerKind>()};
            list.push_back({name, {"training.optimizer=" + name}, {}, {}, parseOptimizer(name)});
        }
        if (list.empty()) return Error{"--optimizers", "expected a comma-separated list of optimizers"};
        return list;
    }
    if (variants.empty())
        return Error{"", "nothing to compare: give --optimizers LIST or at least one --variant SETTINGS"};
    for (const auto& text : variants) list.push_back({text.empty() ? "base" : text, splitSettings(text), {}, {}});
    return list;
}

Status estimateVariants(const Scenario& base, std::vector<Variant>& variants) {
    for (auto& v : variants) {
        v.scenario = base;
        auto result = [&]() -> Expected<Estimate> {
            if (auto applied = applySettings(v.scenario, v.settings); !applied) return applied.error();
            // As the app's Optimizers tab: an optimizer without the scenario's
            // kernel (Lion has no fused one) runs with its default kernel,
            // and the output says so, rather than the whole comparison failing.
            if (v.optimizer) {
                const OptimizerImpl wanted = v.scenario.training.optimizer_impl;
                const OptimizerImpl used = comparisonImpl(*v.optimizer, wanted);
                if (used != wanted) {
                    v.scenario.training.optimizer_impl = used;
                    v.settings.push_back("training.optimizer_impl=" + std::string(optimizerImplName(used)));
                    v.note = v.label + ": no " + std::string(optimizerImplName(wanted)) + " kernel, compared with " +
                             std::string(optimizerImplName(used));
                }
            }
            return estimate(v.scenario);
        }();
        if (!result) {
            Error e = result.error();
            e.message += " (variant \"" + v.label + "\")";
            return e;
        }
        v.estimate = *result;
    }
    return ok();
}

// One row per figure; `bytes` gives each variant's value in bytes.
struct Row {
    std::string label;  // for people
    std::string key;    // for CSV
    std::function<int64_t(const Estimate&)> bytes;
};

std::vector<Row> comparisonRows(const std::vector<Variant>& variants) {
    std::vector<Row> rows = {
        {"Peak allocated", "allocated_bytes", [](const Estimate& e) { return e.peak.allocated_bytes; }},
        {"Reserved", "reserved_bytes", [](const Estimate& e) { return e.peak.reserved_bytes; }},
        {"Device", "device_bytes", [](const Estimate& e) { return e.peak.device_bytes; }},
    };
    for (Component c : allComponents()) {
        bool used = false;
        for (const auto& v : variants) used = used || v.estimate.peak.at_peak[c] != 0;
        if (used)
            rows.push_back({"  " + std::string(componentName(c)), std::string(componentKey(c)),
                            [c](const Estimate& e) { return e.peak.at_peak[c]; }});
    }
    rows.push_back({"Capacity", "capacity_bytes", [](const Estimate& e) { return e.capacity_bytes; }});
    rows.push_back({"Headroom", "headroom_bytes", [](const Estimate& e) { return e.headroom_bytes; }});
    bool offloaded = false;
    for (const auto& v : variants) offloaded = offloaded || v.estimate.host_bytes > 0;
    if (offloaded) rows.push_back({"Host (offload)", "host_bytes", [](const Estimate& e) { return e.host_bytes; }});
    return rows;
}

TextTable comparisonTable(const std::vector<Variant>& variants, Units units) {
    TextTable table;
    table.header = {""};
    table.align = {Align::Left};
    for (const auto& v : variants) {
        table.header.push_back(v.label);
        table.align.push_back(Align::Right);
    }
    for (const auto& row : comparisonRows(variants)) {
        std::vector<std::string> cells = {row.label};
        for (const auto& v : variants) cells.push_back(formatBytes(row.bytes(v.estimate), units));
        table.rows.push_back(std::move(cells));
    }
    std::vector<std::string> fits = {"Fits"};
    std::vector<std::string> peak = {"Peak at"};
    for (const auto& v : variants) {
        fits.push_back(v.estimate.fits ? "yes" : "NO");
        peak.push_back("stage " + std::to_string(v.estimate.peak.stage + 1) + ", " +  // from 1, as the app
                       std::string(phaseName(v.estimate.peak.peak_phase)));
    }
    table.rows.push_back(std::move(fits));
    table.rows.push_back(std::move(peak));
    return table;
}

std::string comparisonCsv(const std::vector<Variant>& variants) {
    std::string out = "row";
    for (const auto& v : variants) out += "," + csvCell(v.label);
    out += "\n";
    for (const auto& row : comparisonRows(variants)) {
        out += row.key;
        for (const auto& v : variants) out += "," + std::to_string(row.bytes(v.estimate));
        out += "\n";
    }
    out += "fits";
    for (const auto& v : variants) out += v.estimate.fits ? ",true" : ",false";
    return out + "\n";
}

Status run(const std::vector<std::string>& raw, std::ostream& out) {
    std::vector<FlagSpec> flags = scenarioSourceFlags();
    flags.push_back({"--optimizers"});
    flags.push_back({"--variant", true, true});
    flags.push_back({"--format"});
    flags.push_back({"--units"});
    auto args = ArgumentList::parse(raw, flags);
    if (!args) return args.error();
    auto format = outputFormat(*args, {"table", "json", "markdown", "csv"});
    if (!format) return format.error();
    auto units = outputUnits(*args);
    if (!units) return units.error();
    auto variants = variantList(*args);
    if (!variants) return variants.error();
    auto base = scenarioFromArguments(*args);
    if (!base) return base.error();
    if (auto estimated = estimateVariants(*base, *variants); !estimated) return estimated;

    switch (*format) {
        case OutputFormat::Table: {
            const Scenario& s = variants->front().scenario;
            out << printableText(s.name.empty() ? s.model.name : s.name) << " — " << variants->size() << " variants\n\n";
            out << renderPlain(comparisonTable(*variants, *units));
            for (const auto& v : *variants)
                if (!v.note.empty()) out << "\n" << v.note << " (training.optimizer_impl)\n";
            break;
        }
        case OutputFormat::Markdown:
            out << renderMarkdown(comparisonTable(*variants, *units));
            for (const auto& v : *variants)
                if (!v.note.empty()) out << "\n" << v.note << ".\n";
            break;
        case OutputFormat::Csv: out << comparisonCsv(*variants); break;
        case OutputFormat::Json: {
            nlohmann::json list = nlohmann::json::array();
            for (const auto& v : *variants) {
                nlohmann::json entry = {{"label", v.label}, {"settings", v.settings},
                                        {"estimate", estimateToJson(v.scenario, v.estimate)}};
                if (!v.note.empty()) entry["note"] = v.note;
                list.push_back(std::move(entry));
            }
            out << nlohmann::json{{"variants", list}}.dump(2) << "\n";
            break;
        }
    }
    return ok();
}

}  // namespace

CliCommand compareCommand() {
    static const std::string help = std::string(kHelp) + kScenarioSourceHelp + settingsHelp() + kHelpTail;
    return {"compare", "one scenario under several variants, side by side", help, run};
}

}  // namespace trainmem::cli
