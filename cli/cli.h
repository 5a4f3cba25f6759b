#pragma once
// trainmem-cli as a library: the whole program behind one call, so tests run
// it in-process and app/cli_main.cpp stays a two-line main.
#include <ostream>
#include <string>
#include <vector>

namespace trainmem::cli {

// Exit statuses (docs/cli.md).
constexpr int kExitOk = 0;
constexpr int kExitNo = 1;        // the command's answer is "no" (validate: a bound is exceeded)
constexpr int kExitUsage = 2;     // bad input: flag, value, scenario or file; one line on `err`
constexpr int kExitInternal = 3;  // a bug in trainmem, never bad input
constexpr int kExitOutput = 4;    // standard output could not be written (a full disk, a closed pipe end)

// `args` are the arguments after the program name: {"estimate", "--preset", "gpt2"}.
int runCli(std::vector<std::string> args, std::ostream& out, std::ostream& err);

}  // namespace trainmem::cli
