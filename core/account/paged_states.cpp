// Paged optimizer states. Sources (docs/memory-model.md §Paged optimizers):
// bitsandbytes bitsandbytes/optim/optimizer.py (bitsandbytes-foundation
// 60a0d8a5084f) Optimizer8bit.get_state_buffer: `if not self.is_paged or
// p.numel() < 1e5: torch.zeros_like(...)` else `F.get_paged(...)` (CUDA
// managed memory, cudaMallocManaged); Optimizer2State / Optimizer1State
// init_state: 32-bit states in torch.float32, 8-bit states in uint8 with
// blockwise absmax; bitsandbytes/optim/__init__.py exports PagedAdam,
// PagedAdamW, PagedAdamW8bit and PagedLion.
#include "core/account/paged_states.h"

#include <algorithm>
#include <string>

#include "core/model/block_linears.h"
#include "core/model/hf_families.h"
#include "core/training/optimizer_state.h"
#include "core/scenario/scenario.h"
#include "core/training/names.h"

namespace trainmem {
namespace {

// Of a block's trainable matrix elements on one rank, the share in tensors
// bitsandbytes pages: {non-expert part, routed experts}. Full training
// counts the block's weight matrices (one tensor per Linear, routed experts
// one per expert unless the family stores them as one fused parameter);
// LoRA counts the adapters A (r x in) and B (out x r) of the adapted Linears.
struct Shares {
    double body = 0;
    double experts = 0;
};

Shares pagedShares(const Scenario& s) {
    const ModelConfig& m = s.model;
    const TrainingConfig& tr = s.training;
    const int64_t t = s.parallelism.tensor;
    const int64_t e = std::max<int64_t>(s.parallelism.expert, 1);
    const bool lora = tr.finetuning != Finetuning::Full;
    const bool fused_experts = m.isMoe() && familyOf(m.family).experts_are_parameters;
    double all[2] = {0, 0}, paged[2] = {0, 0};
    auto tensor = [&](int slot, int64_t elements, int64_t count) {
        all[slot] += static_cast<double>(elements) * static_cast<double>(count);
        if (elements >= kPagedMinElements) paged[slot] += static_cast<double>(elements) * static_cast<double>(count);
    };
    for (const BlockLinear& l : blockLinears(m, m.isMoe())) {
        const int slot = l.part == BlockPart::RoutedExperts ? 1 : 0;
        const int64_t split = l.part == BlockPart::Router ? 1 : (slot == 1 ? t * e : t);
        if (lora) {
            if (!loraAdapts(l, tr.lora_targets)) continue;
            const int64_t copies = slot == 1 ? std::max<int64_t>(1, l.copies / e) : l.copies;
            tensor(slot, tr.lora_rank * l.in / split, copies);
            tensor(slot, l.out * tr.lora_rank / split, copies);
        } else if (slot == 1 && fused_experts) {
            tensor(slot, l.copies * l.in * l.out / split, 1);
        } else {
            tensor(slot, l.in * l.out / (slot == 1 ? t : split), slot == 1 ? std::max<int64_t>(1, l.copies / e) : l.copies);
        }
    }
    // Dense blocks of a MoE model (first_dense_layers) page like its MoE
    // blocks' attention: the share is a per-element one.
    Shares out;
    out.body = all[0] > 0 ? paged[0] / all[0] : 0.0;
    out.experts = all[1] > 0 ? paged[1] / all[1] : 0.0;
    return out;
}

double stateBytes(const Scenario& s, double elements) {
    TensorGroup g;
    g.params = static_cast<int64_t>(elements);
    g.matrix_params = g.params;
    return optimizerStateBytes(s.training.optimizer, planPrecision(s.training).optimizer_states, g, false);
}

}  // namespace

double pagedStateBytes(const Scenario& s, const StageMatrices& sp, int64_t dense_ranks, int64_t expert_ranks) {
    if (!s.training.optimizer_paged) return 0;
    const Shares share = pagedShares(s);
    // Embedding and head matrices (vocabulary x hidden / t) are far above 1e5.
    auto large = [](int64_t elements) { return elements >= kPagedMinElements ? static_cast<double>(elements) : 0.0; };
    const double body = static_cast<double>(sp.dense.matrix_params - sp.embedding_head.matrix_params) * share.body;
    const double ends = large(sp.embedding_head.matrix_params);
    const double experts = static_cast<double>(sp.experts.matrix_params) * share.experts;
    const bool sharded = s.parallelism.zero_stage >= 1;
    const double nd = sharded ? static_cast<double>(dense_ranks) : 1.0;
    const double ne = sharded ? static_cast<double>(expert_ranks) : 1.0;
    return stateBytes(s, body + ends) / nd + stateBytes(s, experts) / ne;
}

Status validateOptimizerPaging(const Scenario& s) {
    const TrainingConfig& t = s.training;
    if (!t.optimizer_paged) return ok();
    constexpr const char* field = "training.optimizer_paged";
    const OptimizerSpec& o = optimizerSpec(t.optimizer);
    if (!o.has_paged) {
        std::string names;
        for (const OptimizerSpec& c : optimizerCatalogue())
            if (c.has_paged) names += (names.empty() ? "" : ", ") + std::string(c.key);
        return Error{field, "bitsandbytes has no paged " + std::string(o.label) + " (training.optimizer = " +
                                std::string(o.key) + "); paged optimizers: " + names};
    }
    if (s.parallelism.offload_optimizer)
        return Error{field, "paged states live in CUDA managed memory on the GPU; with parallelism.offload_optimizer "
                            "the optimizer states are on the host already: set one of them to false"};
    if (o.layout == StateLayout::PerParameter && planPrecision(t).optimizer_states != DType::Fp32)
        return Error{field, "bitsandbytes' 32-bit paged optimizers keep fp32 states; the recipe's optimizer states are " +
                                std::string(dtypeName(planPrecision(t).optimizer_states)) +
                                ": set training.optimizer_state_dtype to fp32"};
    return ok();
}

}  // namespace trainmem
