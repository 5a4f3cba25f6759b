#pragma once
// What a run-config import is given besides the file (run_config.h).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/scenario/scenario.h"

namespace trainmem::runconfig {

struct RunConfigOptions {
    // Files the run reads besides the main one (a DeepSpeed JSON beside a
    // torchtune or axolotl config, an Accelerate config, ...).
    std::vector<std::filesystem::path> companions;
    // Command-line overrides of the stack: torchtitan's --section.option=value,
    // torchtune's key=value, Megatron's extra flags.
    std::vector<std::string> overrides;
    std::optional<int64_t> gpus;  // the world size (--gpus N)
    // A model given on trainmem's command line (--preset / --model-config);
    // it wins over what the file names.
    std::optional<Scenario> model;
    // The folder relative companion paths resolve from where the stack
    // resolves them from its working directory (axolotl, LLaMA-Factory).
    std::filesystem::path working_directory = ".";
};

}  // namespace trainmem::runconfig
