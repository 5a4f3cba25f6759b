// trainmem-cli optimizers: the optimizer catalogue (core/training/optimizer_state.cpp)
// as this build reads it. The GPU harness (validation/harness_plan.py) takes
// its optimizer keys and implementations from this command's JSON
// (validation/optimizers.json), not from a list of its own.
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/output_format.h"
#include "core/training/names.h"
#include "core/training/optimizer_state.h"
#include "core/base/text_table.h"

namespace trainmem::cli {

namespace {

const char* const kHelp =
    "Usage: trainmem-cli optimizers [--format table|json]\n"
    "\n"
    "Lists the optimizers training.optimizer accepts: key, label, the state\n"
    "buffers each keeps per parameter, the implementations training.optimizer_impl\n"
    "may name for it (foreach, fused, for-loop), whether bitsandbytes has a paged\n"
    "form (training.optimizer_paged), and the source of its account.\n";

std::vector<std::string> implementations(const OptimizerSpec& o) {
    std::vector<std::string> names;
    for (const auto& impl : enumNames<OptimizerImpl>())
        if (optimizerHasImpl(o.kind, impl.value)) names.emplace_back(impl.name);
    return names;
}

Status run(const std::vector<std::string>& raw, std::ostream& out) {
    auto args = ArgumentList::parse(raw, {{"--format"}});
    if (!args) return args.error();
    auto format = outputFormat(*args, {"table", "json"});
    if (!format) return format.error();

    if (*format == OutputFormat::Json) {
        nlohmann::json list = nlohmann::json::array();
        for (const OptimizerSpec& o : optimizerCatalogue())
            list.push_back({{"key", o.key},
                            {"label", o.label},
                            {"state_buffers", o.buffer_names},
                            {"implementations", implementations(o)},
                            {"paged", o.has_paged},
                            {"source", o.source}});
        out << list.dump(2) << "\n";
        return ok();
    }
    TextTable table;
    table.header = {"Key", "Label", "States", "Implementations", "Paged"};
    for (const OptimizerSpec& o : optimizerCatalogue()) {
        std::string impls;
        for (const std::string& i : implementations(o)) impls += (impls.empty() ? "" : ", ") + i;
        table.rows.push_back({std::string(o.key), std::string(o.label),
                              o.buffer_names.empty() ? std::string("-") : std::string(o.buffer_names), impls,
                              o.has_paged ? std::string("yes") : std::string("-")});
    }
    out << renderPlain(table);
    return ok();
}

}  // namespace

CliCommand optimizersCommand() {
    return {"optimizers", "list the optimizers and their implementations", kHelp, run};
}

}  // namespace trainmem::cli
