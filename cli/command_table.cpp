#include "cli/command.h"

namespace trainmem::cli {

const std::vector<CliCommand>& cliCommands() {
    static const std::vector<CliCommand> commands = {
        estimateCommand(),
        presetsCommand(),
        optimizersCommand(),
        compareCommand(),
        validateCommand(),
        fitCommand(),
        snapshotCommand(),
        importCommand(),
        exportRunCommand(),
    };
    return commands;
}

const CliCommand* findCommand(std::string_view name) {
    for (const auto& command : cliCommands())
        if (command.name == name) return &command;
    return nullptr;
}

}  // namespace trainmem::cli
