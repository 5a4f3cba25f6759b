#pragma once
// Runs trainmem-cli in-process and keeps what it printed, for the CLI tests.
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli.h"

namespace trainmem::cli {

struct CliRun {
    int status;
    std::string out;
    std::string err;
};

inline CliRun run(std::vector<std::string> args) {
    std::ostringstream out, err;
    const int status = runCli(std::move(args), out, err);
    return {status, out.str(), err.str()};
}

}  // namespace trainmem::cli
