#pragma once
// The estimate's result types: per-GPU memory at the peak of one training
// step, by component, for the heaviest pipeline stage, plus what every stage
// needs. Names and keys in estimate_result.cpp.
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/model/parameters.h"

namespace trainmem {

enum class Phase { Forward, Loss, Backward, OptimizerStep };
std::string_view phaseName(Phase);

// What the allocator holds at the peak. Everything here is inside PyTorch's
// caching allocator (torch.cuda.memory_allocated); CUDA context and NCCL
// buffers are not, and only appear in the device total.
enum class Component {
    Weights,             // parameters resident on this GPU (16-bit, fp32, or NF4 base for QLoRA)
    Gradients,           // .grad / main_grad of the trainable parameters
    MasterWeights,       // fp32 master copy (mixed precision)
    OptimizerStates,     // momentum, variance, ...
    WeightCopies,        // autocast's 16-bit weight casts, fp8 weight caches, QLoRA dequantised weight
    GatheredWeights,     // ZeRO-3/FSDP all-gathered units (current + prefetched)
    CommBuffers,         // DDP buckets, reduce-scatter and all-to-all buffers inside the allocator
    Activations,         // saved for backward by the transformer blocks (all in-flight micro-batches)
    LogitsLoss,          // embedding/final-norm outputs, logits, cross-entropy's fp32 copies and their gradients
    OptimizerTransient,  // temporaries of optimizer.step()
    Workspace,           // cuBLAS workspace
};
constexpr int kComponentCount = 11;
std::string_view componentName(Component);     // "Optimizer states"
std::string_view componentKey(Component);      // "optimizer_states" (JSON, CSV)
constexpr std::array<Component, kComponentCount> allComponents() {
    return {Component::Weights, Component::Gradients, Component::MasterWeights, Component::OptimizerStates,
            Component::WeightCopies, Component::GatheredWeights, Component::CommBuffers, Component::Activations,
            Component::LogitsLoss, Component::OptimizerTransient, Component::Workspace};
}

struct MemoryBreakdown {
    std::array<int64_t, kComponentCount> bytes{};
    int64_t& operator[](Component c) { return bytes[static_cast<size_t>(c)]; }
    int64_t operator[](Component c) const { return bytes[static_cast<size_t>(c)]; }
    int64_t total() const;  // defined in layout_account.cpp, beside the inline sum the account uses
    bool operator==(const MemoryBreakdown&) const = default;
};

// Model states per GPU on a stage (bytes).
struct ModelStates {
    int64_t weights = 0;
    int64_t gradients = 0;
    int64_t optimizer_states = 0;
    int64_t master_weights = 0;
    bool operator==(const ModelStates&) const = default;
};

struct StageEstimate {
    int64_t stage = 0;            // pipeline rank, 0-based
    int64_t first_layer = 0;      // transformer blocks [first_layer, first_layer + num_layers)
    int64_t num_layers = 0;
    double in_flight_microbatches = 1;  // activation multiplier from the pipeline schedule
    ModelStates model_states;
    Phase peak_phase = Phase::Forward;
    MemoryBreakdown at_peak;      // sums to allocated_bytes
    int64_t allocated_bytes = 0;  // comparable to torch.cuda.max_memory_allocated
    // The allocated peak in exact requested bytes, without what only a CUDA
    // run holds (the cuBLAS workspace): comparable to the live bytes PyTorch's
    // profiler records on the CPU (validation/step_truth.py). Also the worst
    // moment of each phase, indexed by Phase (Loss is 0 on stages without the head).
    int64_t exact_allocated_bytes = 0;
    std::array<int64_t, 4> exact_phase_bytes{};
    int64_t reserved_bytes = 0;   // comparable to torch.cuda.max_memory_reserved
    int64_t device_bytes = 0;     // comparable to nvidia-smi
    int64_t managed_bytes = 0;    // paged optimizer states (CUDA managed memory), in device_bytes only
    // A count reached kTooLargeBytes (byte_count.h): the numbers above are
    // saturated, not real; estimate() and estimateStages() refuse it.
    bool too_large = false;
    bool operator==(const StageEstimate&) const = default;
};

enum Warning : uint32_t {
    kWarnNone = 0,
    kWarnTinyHeadroom = 1u << 0,        // fits with less than 5% to spare
    kWarnUnevenPipeline = 1u << 1,      // layers do not divide evenly over stages
    kWarnPipelineBubble = 1u << 2,      // fewer micro-batches than stages
    kWarnFp16WithoutScaler = 1u << 3,   // pure fp16 states
    kWarnOffloadNeedsZero = 1u << 4,    // offload used without ZeRO sharding
    kWarnHostMemory = 1u << 5,          // offload needs a lot of host memory
    kWarnManagedPagedOut = 1u << 6,     // paged optimizer states do not all fit: the driver keeps some on the host
};
std::vector<std::string_view> warningTexts(uint32_t warnings);

struct Estimate {
    ParameterCount parameters;     // whole model
    StageEstimate peak;            // the heaviest stage at its peak phase
    int64_t num_stages = 1;
    int64_t total_gpus = 1;
    int64_t effective_batch = 1;   // sequences per optimizer step (micro x accumulation x data)
    int64_t host_bytes = 0;        // per GPU rank, for offloaded states/parameters (and paged-out managed pages)
    // Paged optimizer states (CUDA managed memory) that do not fit on the
    // device beside everything else: the driver evicts them to host memory and
    // pages them back as bitsandbytes touches them (core/account/paged_states.h). They
    // count in host_bytes; peak.device_bytes holds the resident rest.
    int64_t managed_host_bytes = 0;
    int64_t capacity_bytes = 0;
    // device_bytes <= capacity_bytes (never when too_large); paged optimizer
    // states count only as far as they fit: the rest pages to the host.
    bool fits = false;
    bool too_large = false;        // some stage is too large to represent (StageEstimate::too_large)
    int64_t headroom_bytes = 0;    // capacity - device (negative when it does not fit)
    int64_t activations_without_recompute = 0;  // heaviest stage's activations if nothing were recomputed
    double recompute_fraction = 0; // extra forward compute as a fraction of one step's fwd+bwd compute
    uint32_t warnings = kWarnNone;
    bool operator==(const Estimate&) const = default;
};

}  // namespace trainmem
