// Dispatch to the command table, help, and the one-line error contract:
// every failure is "trainmem-cli: FIELD: MESSAGE" on stderr with status 2.
#include <cerrno>
#include <exception>
#include <system_error>

#include "cli/cli.h"
#include "cli/command.h"
#include "core/base/json_input.h"
#include "core/scenario/scenario_fields.h"

namespace trainmem::cli {

namespace {

void printUsage(std::ostream& out) {
    out << "Usage: trainmem-cli COMMAND [OPTIONS]\n"
           "\n"
           "Estimates the GPU memory of training a transformer.\n"
           "\n"
           "Commands:\n";
    size_t width = 0;
    for (const auto& c : cliCommands()) width = std::max(width, c.name.size());
    for (const auto& c : cliCommands())
        out << "  " << c.name << std::string(width - c.name.size() + 2, ' ') << c.summary << "\n";
    out << "\nRun trainmem-cli COMMAND --help for a command's options; trainmem-cli --version prints the version.\n";
}

// Errors are one line whatever a message holds.
// One line, with every control character escaped: messages quote names and
// values from files and the command line, which must not drive the terminal.
std::string oneLine(const std::string& text) {
    std::string line;
    for (char c : text) line += (c == '\n' || c == '\r') ? ' ' : c;
    return printableText(line);
}

int fail(std::ostream& err, const std::string& text) {
    err << "trainmem-cli: " << oneLine(text) << "\n";
    return kExitUsage;
}

bool wantsHelp(const std::vector<std::string>& args) {
    for (const auto& a : args)
        if (a == "--help" || a == "-h") return true;
    return false;
}

int runCommand(std::vector<std::string> args, std::ostream& out, std::ostream& err) {
    try {
        if (args.empty()) {
            printUsage(err);
            return kExitUsage;
        }
        const std::string name = args.front();
        if (name == "--version") {
            out << "trainmem-cli " << TRAINMEM_VERSION << "\n";
            return kExitOk;
        }
        if (name == "--help" || name == "-h" || name == "help") {
            if (name == "help" && args.size() > 1) {
                if (const CliCommand* c = findCommand(args[1])) {
                    out << c->help;
                    return kExitOk;
                }
                return fail(err, "unknown command \"" + args[1] + "\"");
            }
            printUsage(out);
            return kExitOk;
        }
        const CliCommand* command = findCommand(name);
        if (!command) {
            std::vector<std::string_view> names;
            for (const auto& c : cliCommands()) names.push_back(c.name);
            std::string hint;
            if (auto near = closestName(name, names); !near.empty()) hint = " (did you mean " + std::string(near) + "?)";
            return fail(err, "unknown command \"" + name + "\"" + hint + "; commands: " + joinNames(names) +
                                 "; see trainmem-cli --help");
        }
        args.erase(args.begin());
        if (wantsHelp(args)) {
            out << command->help;
            return kExitOk;
        }
        if (command->run_with_exit_status) {
            auto status = command->run_with_exit_status(args, out);
            if (!status) return fail(err, status.error().text());
            return *status;
        }
        if (auto status = command->run(args, out); !status) return fail(err, status.error().text());
        return kExitOk;
    } catch (const std::exception& e) {
        err << "trainmem-cli: internal error: " << oneLine(e.what()) << "\n";
        return kExitInternal;
    } catch (...) {
        err << "trainmem-cli: internal error\n";
        return kExitInternal;
    }
}

}  // namespace

int runCli(std::vector<std::string> args, std::ostream& out, std::ostream& err) {
    errno = 0;
    const int status = runCommand(std::move(args), out, err);
    // An answer that did not reach its reader is no answer: stdout on a full
    // disk (> /dev/full) or a closed descriptor exits non-zero, in every
    // command and format (issue 28, N06). With std::cout synced to stdio,
    // flush() fails when fflush(stdout) does, errno telling why.
    out.flush();
    if (!out.good()) {
        // errno from the failed write, when it is one a write gives (later
        // calls may have set it for their own reasons).
        const int error = errno == ENOSPC || errno == EIO || errno == EDQUOT || errno == EFBIG || errno == EPIPE ||
                                  errno == EBADF || errno == EROFS
                              ? errno
                              : 0;
        err << "trainmem-cli: cannot write output" << (error != 0 ? " (" + std::generic_category().message(error) + ")" : "")
            << "; the answer is incomplete\n";
        return kExitOutput;
    }
    return status;
}

}  // namespace trainmem::cli
