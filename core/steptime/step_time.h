#pragma once
// How long one training step takes: a modelled step time per pipeline stage
// and for the step, from the FLOPs and bytes of every op of the blocks, the
// GPU's rates and the interconnect (docs/step-time.md states every formula,
// constant and source). It reads the scenario and the model's blocks; it sits
// above the memory account and the layout search (nothing below them
// includes it), so the search can rank the layouts that fit by it.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/model/parameters.h"
#include "core/scenario/scenario.h"

namespace trainmem {

// Where the time of a step goes (seconds on the slowest pipeline stage).
enum class TimeComponent {
    Compute,          // forward + backward of every micro-batch: matmuls, attention, memory-bound ops, head and loss
    Recompute,        // forward work repeated in backward by the checkpointing policy
    TensorParallel,   // exposed TP / SP all-reduce, all-gather, reduce-scatter
    ContextParallel,  // exposed CP ring exchange of keys and values
    ExpertParallel,   // exposed EP all-to-all (dispatch and combine)
    PipelineP2P,      // pipeline send / receive between stages
    FsdpGather,       // exposed ZeRO-3 / FSDP all-gathers and per-micro-batch reduce-scatters
    GradientReduce,   // exposed data-parallel gradient all-reduce / reduce-scatter (+ ZeRO-1/2 parameter all-gather)
    Bubble,           // pipeline fill and drain
    Optimizer,        // optimizer.step() as bytes moved through HBM
    Offload,          // exposed PCIe traffic of offloaded states, parameters or activations
};
constexpr int kTimeComponentCount = 11;
std::string_view timeComponentKey(TimeComponent);   // "exposed_tensor_parallel" (JSON)
std::string_view timeComponentName(TimeComponent);  // "Tensor parallel (exposed)"
constexpr std::array<TimeComponent, kTimeComponentCount> allTimeComponents() {
    return {TimeComponent::Compute,       TimeComponent::Recompute,   TimeComponent::TensorParallel,
            TimeComponent::ContextParallel, TimeComponent::ExpertParallel, TimeComponent::PipelineP2P,
            TimeComponent::FsdpGather,    TimeComponent::GradientReduce, TimeComponent::Bubble,
            TimeComponent::Optimizer,     TimeComponent::Offload};
}

// One micro-batch's forward and backward through one pipeline stage (seconds).
struct StageTime {
    int64_t stage = 0;
    int64_t num_layers = 0;
    double forward = 0;    // compute of the forward (blocks, and the ends this stage holds)
    double backward = 0;   // compute of the backward
    double recompute = 0;  // forward repeated in backward
    double exposed_communication = 0;  // per micro-batch: TP, CP, EP, PP, FSDP
    double total() const { return forward + backward + recompute + exposed_communication; }
};

struct StepTime {
    double step_seconds = 0;
    double tokens_per_second_per_gpu = 0;
    // Model FLOPs utilisation: model FLOPs per token (the convention below,
    // recomputation not counted) x tokens/s/GPU / the GPU's dense 16-bit peak.
    double mfu = 0;
    double model_flops_per_token = 0;  // 6 (N - N_embedding) + 12 L H d s (torchtitan's / PaLM's)
    std::array<double, kTimeComponentCount> breakdown{};  // sums to step_seconds
    double operator[](TimeComponent c) const { return breakdown[static_cast<size_t>(c)]; }
    // Communication hidden behind compute, per collective (0 for the other
    // parts): not in step_seconds. A collective's time is its exposed part
    // in `breakdown` plus this (the app shows both: docs/gui.md).
    std::array<double, kTimeComponentCount> overlapped{};
    double overlappedAt(TimeComponent c) const { return overlapped[static_cast<size_t>(c)]; }
    int64_t slowest_stage = 0;
    StageTime slowest;  // the slowest stage's micro-batch
};

// Calibration and achieved-rate constants (docs/step-time.md §Constants:
// which are fitted on which rows, which are assumed and why).
struct StepTimeConstants {
    double matmul_16bit = 0.0;   // share of the dense 16-bit peak a large GEMM reaches
    double matmul_fp8 = 0.0;     // share of the dense fp8 peak a large fp8 GEMM reaches
    double matmul_fp32 = 0.0;    // share of the fp32 peak
    double attention = 0.0;      // share of the 16-bit peak flash attention reaches
    double hbm = 0.0;            // share of the HBM bandwidth memory-bound kernels reach
    double scale_up = 0.0;       // NCCL bus bandwidth / one-way link bandwidth inside a node
    double scale_out = 0.0;      // the same across nodes
    double pcie = 0.0;           // share of the one-way PCIe bandwidth host copies reach
};
const StepTimeConstants& stepTimeConstants();

// Seconds one block of a kind costs one micro-batch on one GPU, forward
// (step_time.cpp's blockCost): compute and the communication it carries.
struct BlockTime {
    double linear_fwd = 0, attention_fwd = 0, elementwise_fwd = 0;
    double tp_fwd = 0, ep_fwd = 0, cp_fwd = 0;
    double cp_hidden_fwd = 0;  // the CP ring's time under the attention core (cp_fwd is what exceeds it)
};

// What the step time needs of a scenario that no layout changes: the GPU's
// rates (with the overrides), the model's blocks and parameters. Once per
// scenario; the search prepares it once and times every fitting layout.
struct StepTimeModel {
    double peak_flops = 0;        // FLOP/s of the recipe's matmul dtype, dense
    double peak_16bit_flops = 0;  // the MFU's denominator
    double hbm_bytes_per_s = 0;
    double scale_up_bytes_per_s = 0;   // one way, per GPU
    double scale_out_bytes_per_s = 0;  // one way, per GPU (0: unknown; refused when a group crosses nodes)
    double pcie_bytes_per_s = 0;       // one way
    int64_t gpus_per_node = 1;
    double matmul_efficiency = 0;      // of peak_flops
    double gemm_bytes = 2;             // bytes per matmul operand element
    StepTimeConstants constants;       // those it was prepared with
    PrecisionPlan plan;                // the recipe's dtypes
    ParameterLayout layout;
    ParameterCount parameters;
    double model_flops_per_token = 0;
    // Block costs depend on the layout only through the micro-batch, TP, CP,
    // EP and SP: the last ones made are kept here (slot by micro-batch and
    // SP), so a search timing every ZeRO stage, schedule and checkpointing
    // of the same blocks makes them once. A cache inside a const model: one
    // model serves one thread (the search prepares its own).
    struct BlockSlot {
        int64_t b = -1, s = 0, t = 0, c = 0, e = 0;
        bool sp = false;
        std::array<BlockTime, kLayerKinds> kinds{};  // by hybridKindIndex; a plain model's dense and MoE blocks
    };
    mutable std::array<BlockSlot, 16> block_cache{};
};
// Errors name the setting to give when the GPU has no published rate the
// scenario needs (a custom GPU, the A10G, an fp8 recipe on a GPU without fp8).
// `constants` other than stepTimeConstants() are for fitting them
// (validation/throughput/fit_constants.cpp).
Expected<StepTimeModel> prepareStepTime(const Scenario& scenario,
                                        const StepTimeConstants& constants = stepTimeConstants());

// The step time of the scenario's layout (the scenario prepared, with any
// layout written over it: applyLayout); allocation-free. A layout whose
// groups cross nodes on a GPU without a scale-out bandwidth gets
// step_seconds 0 (prepareStepTime's check covers the scenario's own layout;
// stepTimeError says why for another).
StepTime stepTime(const StepTimeModel& model, const Scenario& scenario);
// Prepares and times; the error names the missing setting.
Expected<StepTime> stepTime(const Scenario& scenario);
// Every pipeline stage's micro-batch (for the per-stage chart); O(stages).
std::vector<StageTime> stageTimes(const StepTimeModel& model, const Scenario& scenario);

// Why the layout is slow, when something other than compute takes 15% of
// the step or more: "bubble 45%, exposed tensor parallel 20%"; empty otherwise.
std::string slowReason(const StepTime& time);

}  // namespace trainmem
