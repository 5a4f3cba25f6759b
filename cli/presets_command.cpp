// trainmem-cli presets: the model and scenario presets this build can load.
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/output_format.h"
#include "core/base/json_input.h"
#include "core/scenario/presets.h"
#include "core/base/text_table.h"

namespace trainmem::cli {

namespace {

const char* const kHelp =
    "Usage: trainmem-cli presets [--format table|json]\n"
    "\n"
    "Lists the presets: models (Hugging Face config.json files) and scenarios\n"
    "(whole training setups). Use a name with --preset. The folder is\n"
    "$TRAINMEM_PRESETS when set, else the installed or source tree's presets/.\n";

std::string_view kindName(PresetKind kind) { return kind == PresetKind::Model ? "model" : "scenario"; }

// The table shows at most 100 columns of a description; JSON has it all.
std::string summary(const std::string& description) {
    std::string text = description;
    if (text.size() > 100) {
        text.resize(97);
        while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80) text.pop_back();
        if (!text.empty()) text.pop_back();  // the lead byte of a cut UTF-8 sequence, or one ASCII char
        text += "...";
    }
    return text;
}

Status run(const std::vector<std::string>& raw, std::ostream& out) {
    auto args = ArgumentList::parse(raw, {{"--format"}});
    if (!args) return args.error();
    auto format = outputFormat(*args, {"table", "json"});
    if (!format) return format.error();

    const auto presets = listPresets();
    if (*format == OutputFormat::Json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& p : presets)
            list.push_back({{"name", p.name}, {"kind", kindName(p.kind)}, {"description", p.description},
                            {"path", p.path.string()}});
        out << list.dump(2) << "\n";
        return ok();
    }
    TextTable table;
    table.header = {"Name", "Kind", "Description"};
    for (const auto& p : presets) table.rows.push_back({printableText(p.name), std::string(kindName(p.kind)), printableText(summary(p.description))});
    out << renderPlain(table);
    out << "\n" << presets.size() << " presets in " << presetsDirectory().string() << "\n";
    return ok();
}

}  // namespace

CliCommand presetsCommand() { return {"presets", "list the model and scenario presets", kHelp, run}; }

}  // namespace trainmem::cli
