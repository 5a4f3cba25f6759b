#pragma once
// The command table. A command is a name, its help text and a function from
// its arguments to output; a new command (validate, snapshot, fit) is one
// more file defining a CliCommand and one line in command_table.cpp.
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"

namespace trainmem::cli {

struct CliCommand {
    std::string_view name;     // "estimate"
    std::string_view summary;  // one line for the command list
    std::string_view help;     // the full --help text
    // Writes its result to `out`; a returned error becomes one line on stderr and exit status 2.
    std::function<Status(const std::vector<std::string>& args, std::ostream& out)> run;
    // For commands whose success has more than one answer (validate: 1 when a
    // bound is exceeded). When set, runCli calls it instead of `run` and exits
    // with the status it returns; an error is still one line and status 2.
    std::function<Expected<int>(const std::vector<std::string>& args, std::ostream& out)> run_with_exit_status = nullptr;
};

const std::vector<CliCommand>& cliCommands();
const CliCommand* findCommand(std::string_view name);

CliCommand estimateCommand();
CliCommand presetsCommand();
CliCommand optimizersCommand();
CliCommand compareCommand();
CliCommand validateCommand();
CliCommand fitCommand();
CliCommand snapshotCommand();
CliCommand importCommand();
CliCommand exportRunCommand();

}  // namespace trainmem::cli
