#pragma once
// A scenario: model + training + parallelism + hardware, the one value every
// estimate starts from. Its file format is scenario_file.h.
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/training/hardware.h"
#include "core/model/model_config.h"
#include "core/training/parallel_config.h"
#include "core/training/training_config.h"

namespace trainmem {

constexpr int kScenarioFormatVersion = 2;  // 2: training.loss apart from training.kernels

struct Scenario {
    std::string name;
    std::string description;
    std::string model_preset;  // preset the model came from; empty when from a config.json
    ModelConfig model;
    TrainingConfig training;
    ParallelConfig parallelism;
    HardwareConfig hardware;
    std::vector<std::string> warnings;  // from import (unknown model_type, ...), not an error

    bool operator==(const Scenario&) const = default;
};

// Capacity of the chosen GPU (catalogue or custom memory).
Expected<int64_t> capacityBytes(const HardwareConfig& hardware);

// The scenario file format (JSON, files, --set): core/scenario/scenario_file.h.
// Whole-scenario checks, validate(Scenario): core/account/scenario_validate.h.

// A default scenario around a model: the defaults of TrainingConfig etc.
Scenario scenarioForModel(const ModelConfig& model, std::string preset_name = {});

}  // namespace trainmem
