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

    bool operator==(const HardwareConfig&) const = default;
};

}  // namespace trainmem
