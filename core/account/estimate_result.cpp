// Display names and stable keys of the estimate's components and warnings.
#include "core/account/estimate_result.h"

namespace trainmem {

std::string_view componentName(Component c) {
    switch (c) {
        case Component::Weights: return "Weights";
        case Component::Gradients: return "Gradients";
        case Component::MasterWeights: return "Master weights";
        case Component::OptimizerStates: return "Optimizer states";
        case Component::WeightCopies: return "Weight copies";
        case Component::GatheredWeights: return "Gathered weights";
        case Component::CommBuffers: return "Communication buffers";
        case Component::Activations: return "Activations";
        case Component::LogitsLoss: return "Logits and loss";
        case Component::OptimizerTransient: return "Optimizer step temporaries";
        case Component::Workspace: return "cuBLAS workspace";
    }
    return "";
}

std::string_view componentKey(Component c) {
    switch (c) {
        case Component::Weights: return "weights";
        case Component::Gradients: return "gradients";
        case Component::MasterWeights: return "master_weights";
        case Component::OptimizerStates: return "optimizer_states";
        case Component::WeightCopies: return "weight_copies";
        case Component::GatheredWeights: return "gathered_weights";
        case Component::CommBuffers: return "comm_buffers";
        case Component::Activations: return "activations";
        case Component::LogitsLoss: return "logits_loss";
        case Component::OptimizerTransient: return "optimizer_transient";
        case Component::Workspace: return "workspace";
    }
    return "";
}

std::vector<std::string_view> warningTexts(uint32_t w) {
    std::vector<std::string_view> out;
    if (w & kWarnTinyHeadroom) out.push_back("less than 5% of the GPU is left: fragmentation can still run out of memory");
    if (w & kWarnUnevenPipeline) out.push_back("layers do not divide evenly over pipeline stages: the last stages hold one more block");
    if (w & kWarnPipelineBubble) out.push_back("fewer micro-batches than pipeline stages: most of the pipeline idles");
    if (w & kWarnFp16WithoutScaler) out.push_back("fp16 optimizer states lose precision: keep them in fp32");
    if (w & kWarnOffloadNeedsZero) out.push_back("offload without ZeRO sharding: every rank keeps a full host copy");
    if (w & kWarnHostMemory) out.push_back("offload needs more than 256 GiB of host memory per GPU");
    if (w & kWarnManagedPagedOut)
        out.push_back("the paged optimizer states (CUDA managed memory) do not all fit beside the rest: the CUDA "
                      "driver keeps the part that does not (managed_host_bytes) in host memory and pages it in as "
                      "the optimizer steps each tensor; it fits, with host-to-device traffic every step");
    return out;
}

std::string_view phaseName(Phase p) {
    switch (p) {
        case Phase::Forward: return "forward";
        case Phase::Loss: return "loss";
        case Phase::Backward: return "backward";
        case Phase::OptimizerStep: return "optimizer step";
    }
    return "forward";
}

}  // namespace trainmem
