#pragma once
// --format and --units, shared by the commands that print estimates.
#include <string>
#include <vector>

#include "cli/arguments.h"
#include "core/report/report.h"

namespace trainmem::cli {

enum class OutputFormat { Table, Json, Markdown, Csv };

Expected<OutputFormat> outputFormat(const ArgumentList& args, const std::vector<std::string_view>& allowed);
Expected<Units> outputUnits(const ArgumentList& args);

}  // namespace trainmem::cli
