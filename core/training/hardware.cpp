// GPU catalogue. Capacities are the totals the driver reports (nvidia-smi's
// "MiB" column, which equals torch.cuda.get_device_properties().total_memory),
// not the marketing size: an "80GB" H100 reports 81,559 MiB.
#include "core/training/hardware.h"

namespace trainmem {
namespace {

// PyTorch's default cuBLAS workspace per handle and stream: ":4096:2:16:8"
// = 2 x 4 MiB + 8 x 16 KiB = 8,519,680 B before Hopper; 32 MiB from Hopper on
// (aten/src/ATen/cuda/CublasHandlePool.cpp, getChosenWorkspaceSize).
constexpr int64_t kWorkspacePreHopper = 8519680;
constexpr int64_t kWorkspaceHopper = 32 * kMiB;

}  // namespace

const std::vector<GpuSpec>& gpuCatalogue() {
    static const std::vector<GpuSpec> catalogue = {
        {"A100-40GB", 40536 * kMiB, kWorkspacePreHopper, "NVIDIA A100 SXM4 40 GB"},
        {"A100-80GB", 81920 * kMiB, kWorkspacePreHopper, "NVIDIA A100 80 GB"},
        {"H100-80GB", 81559 * kMiB, kWorkspaceHopper, "NVIDIA H100 SXM5 80 GB HBM3"},
        {"H200-141GB", 143771 * kMiB, kWorkspaceHopper, "NVIDIA H200 141 GB HBM3e"},
        {"B200-192GB", 183359 * kMiB, kWorkspaceHopper, "NVIDIA B200 (180 GB usable)"},
        {"MI300X-192GB", 196592 * kMiB, kWorkspaceHopper, "AMD Instinct MI300X 192 GB"},
        {"L40S-48GB", 46068 * kMiB, kWorkspacePreHopper, "NVIDIA L40S 48 GB"},
        {"A10G-24GB", 23028 * kMiB, kWorkspacePreHopper, "NVIDIA A10G 24 GB"},
        {"L4-24GB", 23034 * kMiB, kWorkspacePreHopper, "NVIDIA L4 24 GB"},
        {"RTX4090-24GB", 24564 * kMiB, kWorkspacePreHopper, "NVIDIA GeForce RTX 4090 24 GB"},
        {"V100-16GB", 16160 * kMiB, kWorkspacePreHopper, "NVIDIA V100 SXM2 16 GB"},
        {"V100-32GB", 32510 * kMiB, kWorkspacePreHopper, "NVIDIA V100 SXM2 32 GB"},
    };
    return catalogue;
}

const GpuSpec* findGpu(std::string_view name) {
    for (const GpuSpec& g : gpuCatalogue())
        if (g.name == name) return &g;
    return nullptr;
}

}  // namespace trainmem
