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
    // Rates: docs/step-time.md §Hardware rates cites each row's datasheet.
    //  name, capacity, workspace, description,
    //  16-bit, fp8, fp32 TFLOP/s (dense), HBM GB/s, scale-up GB/s, GPUs per node, scale-out GB/s, PCIe GB/s
    static const std::vector<GpuSpec> catalogue = {
        {"A100-40GB", 40536 * kMiB, kWorkspacePreHopper, "NVIDIA A100 SXM4 40 GB",
         312, 0, 19.5, 1555, 600, 8, 25, 64},
        {"A100-80GB", 81920 * kMiB, kWorkspacePreHopper, "NVIDIA A100 80 GB",
         312, 0, 19.5, 2039, 600, 8, 25, 64},
        {"H100-80GB", 81559 * kMiB, kWorkspaceHopper, "NVIDIA H100 SXM5 80 GB HBM3",
         989.4, 1978.9, 66.9, 3350, 900, 8, 50, 128},
        // The HBM2e H100 of Meta's Grand Teton hosts (torchtitan's benchmarks):
        // capacity is 96 GiB less the 361 MiB an 80 GB H100's driver total is
        // below 80 GiB (no public driver total; docs/step-time.md).
        {"H100-96GB", 97943 * kMiB, kWorkspaceHopper, "NVIDIA H100 SXM 96 GB HBM2e",
         989.4, 1978.9, 66.9, 2400, 900, 8, 50, 128},
        // China-market H100: same SXM5 board and memory, NVLink cut to 400 GB/s.
        {"H800-80GB", 81559 * kMiB, kWorkspaceHopper, "NVIDIA H800 SXM5 80 GB HBM3",
         989.4, 1978.9, 66.9, 3350, 400, 8, 50, 128},
        {"H200-141GB", 143771 * kMiB, kWorkspaceHopper, "NVIDIA H200 141 GB HBM3e",
         989.4, 1978.9, 66.9, 4800, 900, 8, 50, 128},
        {"B200-192GB", 183359 * kMiB, kWorkspaceHopper, "NVIDIA B200 (180 GB usable)",
         2250, 4500, 0, 8000, 1800, 8, 50, 128},
        {"MI300X-192GB", 196592 * kMiB, kWorkspaceHopper, "AMD Instinct MI300X 192 GB",
         1307.4, 2614.9, 163.4, 5300, 896, 8, 50, 128},
        {"L40S-48GB", 46068 * kMiB, kWorkspacePreHopper, "NVIDIA L40S 48 GB",
         362.05, 733, 91.6, 864, 64, 8, 0, 64},
        {"A10G-24GB", 23028 * kMiB, kWorkspacePreHopper, "NVIDIA A10G 24 GB",
         0, 0, 0, 0, 0, 0, 0, 0},
        {"L4-24GB", 23034 * kMiB, kWorkspacePreHopper, "NVIDIA L4 24 GB",
         121, 242.5, 30.3, 300, 64, 8, 0, 64},
        {"RTX4090-24GB", 24564 * kMiB, kWorkspacePreHopper, "NVIDIA GeForce RTX 4090 24 GB",
         165.2, 330.3, 82.6, 1008, 64, 1, 0, 64},
        {"V100-16GB", 16160 * kMiB, kWorkspacePreHopper, "NVIDIA V100 SXM2 16 GB",
         125, 0, 15.7, 900, 300, 8, 6.25, 32},
        {"V100-32GB", 32510 * kMiB, kWorkspacePreHopper, "NVIDIA V100 SXM2 32 GB",
         125, 0, 15.7, 900, 300, 8, 6.25, 32},
    };
    return catalogue;
}

const GpuSpec* findGpu(std::string_view name) {
    for (const GpuSpec& g : gpuCatalogue())
        if (g.name == name) return &g;
    return nullptr;
}

}  // namespace trainmem
