// The small whole-scenario helpers.
#include "core/scenario/scenario.h"

namespace trainmem {

Expected<int64_t> capacityBytes(const HardwareConfig& hardware) {
    if (hardware.memory_bytes) {
        if (*hardware.memory_bytes <= 0) return Error{"hardware.memory_gib", "must be a positive number of GiB"};
        return *hardware.memory_bytes;
    }
    if (hardware.gpu == "custom") return Error{"hardware.memory_gib", "a custom GPU needs its memory size in GiB"};
    if (const GpuSpec* gpu = findGpu(hardware.gpu)) return gpu->memory_bytes;
    return Error{"hardware.gpu", "unknown GPU \"" + hardware.gpu + "\"; see the GPU list in trainmem-cli estimate --help"};
}

Scenario scenarioForModel(const ModelConfig& model, std::string preset_name) {
    Scenario s;
    s.name = preset_name.empty() ? model.name : preset_name;
    s.model = model;
    s.model_preset = std::move(preset_name);
    return s;
}

}  // namespace trainmem
