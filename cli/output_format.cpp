#include "cli/output_format.h"

namespace trainmem::cli {

Expected<OutputFormat> outputFormat(const ArgumentList& args, const std::vector<std::string_view>& allowed) {
    auto name = choice(args, "--format", allowed, "table");
    if (!name) return name.error();
    if (*name == "json") return OutputFormat::Json;
    if (*name == "markdown") return OutputFormat::Markdown;
    if (*name == "csv") return OutputFormat::Csv;
    return OutputFormat::Table;
}

Expected<Units> outputUnits(const ArgumentList& args) {
    auto name = choice(args, "--units", {"gib", "gb"}, "gib");
    if (!name) return name.error();
    return *name == "gb" ? Units::GB : Units::GiB;
}

}  // namespace trainmem::cli
