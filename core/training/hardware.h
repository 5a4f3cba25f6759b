#pragma once
// GPU catalogue and the fixed costs that live beside the model's tensors.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/units.h"  // kGiB

namespace trainmem {

constexpr int64_t kMiB = int64_t{1} << 20;

struct GpuSpec {
    std::string_view name;          // "H100-80GB"
    int64_t memory_bytes;           // usable device memory as cudaMemGetInfo reports total
    int64_t cublas_workspace_bytes; // PyTorch's default cuBLAS workspace per handle and stream
    std::string_view description;
    // Rates for the step time (core/steptime/, docs/step-time.md §Hardware
    // rates), from the vendor's datasheet; 0 = not published for this part.
    // FLOP/s are dense (no structured sparsity), in TFLOP/s; bandwidths in
    // GB/s (10^9 B/s) as datasheets state them: NVLink and PCIe as the
    // two-way total, the network as one way per GPU.
    double dense_16bit_tflops = 0;  // bf16 / fp16 tensor cores, fp32 accumulate
    double dense_fp8_tflops = 0;    // fp8 tensor cores (0: none)
    double dense_fp32_tflops = 0;   // fp32 without TF32 (PyTorch's default for fp32 matmuls)
    double hbm_gb_s = 0;            // device memory bandwidth
    double scale_up_gb_s = 0;       // NVLink / Infinity Fabric (or PCIe where there is none), two-way total
    int64_t gpus_per_node = 0;      // GPUs behind one scale-up domain in the reference system
    double scale_out_gb_s = 0;      // network per GPU, one way (the reference system's NIC per GPU)
    double pcie_gb_s = 0;           // host link, two-way total
};

const std::vector<GpuSpec>& gpuCatalogue();
const GpuSpec* findGpu(std::string_view name);  // nullptr when unknown

// Named overhead settings; defaults and sources in docs/memory-model.md §Overheads.
struct Overheads {
    int64_t cuda_context_bytes = 500 * kMiB;      // CUDA context + kernels images, outside the allocator
    std::optional<int64_t> cublas_workspace_bytes; // nullopt = the GPU's default
    int64_t nccl_bytes_per_group = 600 * kMiB;     // NCCL buffers per communicator (group of size > 1)
    int64_t ddp_bucket_bytes = 25 * kMiB;          // DDP bucket_cap_mb
    bool ddp_gradient_as_bucket_view = false;      // false: DDP's buckets hold a second copy of the gradients
    int64_t fsdp_prefetch_units = 1;               // ZeRO-3/FSDP: units gathered ahead of the one computing
    double fragmentation = 0.10;                   // (reserved - allocated) / allocated at the peak
    bool operator==(const Overheads&) const = default;
};

struct HardwareConfig {
    std::string gpu = "H100-80GB";          // catalogue name, or "custom"
    std::optional<int64_t> memory_bytes;    // custom capacity (set from memory_gib); overrides the catalogue
    Overheads overheads;
    // Overrides of the catalogue's interconnect (docs/scenario-format.md):
    // GPUs per node, scale-up GB/s (two-way total), scale-out GB/s per GPU.
    std::optional<int64_t> gpus_per_node;
    std::optional<double> scale_up_gb_s;
    std::optional<double> scale_out_gb_s;

    bool operator==(const HardwareConfig&) const = default;
};

}  // namespace trainmem
