// Issue 28, N06: trainmem-cli ignored write errors on stdout; every command
// in every format exited 0 with its answer lost (> /dev/full).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace trainmem::cli {
namespace {

namespace fs = std::filesystem;

std::string snapshotFile() { return std::string(TRAINMEM_TEST_DATA_DIR) + "/snapshots/training_step_p4.pickle"; }

// Every command that answers on stdout, each text format.
std::vector<std::vector<std::string>> answeringCommands() {
    std::vector<std::vector<std::string>> all;
    for (const char* format : {"table", "json", "markdown", "csv"})
        all.push_back({"estimate", "--preset", "llama-3.1-8b", "--format", format});
    for (const char* format : {"table", "json"}) {
        all.push_back({"snapshot", snapshotFile(), "--format", format});
        all.push_back({"fit", "--gpus", "8", "--preset", "llama-3.1-8b", "--format", format});
    }
    all.push_back({"compare", "--preset", "llama-2-7b", "--optimizers", "adamw,sgd"});
    all.push_back({"optimizers"});
    all.push_back({"presets"});
    all.push_back({"--version"});
    all.push_back({"--help"});
    all.push_back({"estimate", "--help"});
    return all;
}

std::string joined(const std::vector<std::string>& args) {
    std::string s;
    for (const std::string& a : args) s += (s.empty() ? "" : " ") + a;
    return s;
}

// A stream whose device is full after `room` bytes, as a file on a full disk.
class FullBuffer : public std::streambuf {
public:
    explicit FullBuffer(size_t room) : room_(room) {}

protected:
    int_type overflow(int_type c) override {
        if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
        if (room_ == 0) return traits_type::eof();
        --room_;
        return c;
    }

private:
    size_t room_;
};

TEST(CliOutputFailure, EveryCommandSaysItCannotWriteInProcess) {
    for (size_t room : {size_t{0}, size_t{10}}) {
        for (const auto& args : answeringCommands()) {
            SCOPED_TRACE(joined(args) + ", room " + std::to_string(room));
            FullBuffer full(room);
            std::ostream out(&full);
            std::ostringstream err;
            const int status = runCli(args, out, err);
            EXPECT_EQ(status, kExitOutput);
            EXPECT_NE(err.str().find("trainmem-cli: cannot write output"), std::string::npos) << err.str();
        }
    }
}

TEST(CliOutputFailure, TheBinaryExitsFourOnAFullDevice) {
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
    const fs::path err = fs::temp_directory_path() / ("trainmem-cli-full-" + std::to_string(::getpid()) + ".err");
    for (const auto& args : answeringCommands()) {
        SCOPED_TRACE(joined(args));
        std::string command = TRAINMEM_CLI_EXE;
        for (const std::string& a : args) command += " '" + a + "'";
        command += " > /dev/full 2> " + err.string();
        const int raw = std::system(command.c_str());
        ASSERT_TRUE(WIFEXITED(raw));
        EXPECT_EQ(WEXITSTATUS(raw), kExitOutput);
        std::ifstream in(err);
        std::string line;
        std::getline(in, line);
        EXPECT_EQ(line.rfind("trainmem-cli: cannot write output", 0), 0u) << line;
    }
    fs::remove(err);
}

TEST(CliOutputFailure, AWorkingStdoutStillExitsZero) {
    std::ostringstream out, err;
    EXPECT_EQ(runCli({"estimate", "--preset", "llama-3.1-8b", "--format", "csv"}, out, err), kExitOk);
    EXPECT_TRUE(err.str().empty()) << err.str();
    EXPECT_FALSE(out.str().empty());
}

}  // namespace
}  // namespace trainmem::cli
