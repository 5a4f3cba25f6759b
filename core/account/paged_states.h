#pragma once
// Paged optimizer states (bitsandbytes PagedAdam, PagedAdamW,
// PagedAdamW8bit, PagedLion): the state buffers of every tensor with at
// least 1e5 elements live in CUDA managed (unified) memory, which PyTorch's
// caching allocator does not see: they count in the device total, not in
// allocated or reserved. Smaller tensors' states stay ordinary allocations.
// Terms and sources: docs/memory-model.md §Paged optimizers.
#include <cstdint>

#include "core/base/error.h"
#include "core/model/parameters.h"  // TensorGroup

namespace trainmem {

struct Scenario;

// The stage's matmul-weight groups the paging rule reads (StageParameters'
// dense, experts and embedding_head).
struct StageMatrices {
    const TensorGroup& dense;
    const TensorGroup& experts;
    const TensorGroup& embedding_head;
};

// bitsandbytes Optimizer8bit.get_state_buffer: paged when p.numel() >= 1e5.
constexpr int64_t kPagedMinElements = 100000;

// The optimizer-state bytes of this rank's stage that are paged (before the
// caller's rounding): the ZeRO share of the states of its tensors of at
// least kPagedMinElements elements. `dense_ranks` / `expert_ranks` are the
// ZeRO partition sizes of the two replication groups.
double pagedStateBytes(const Scenario& scenario, const StageMatrices& params, int64_t dense_ranks,
                       int64_t expert_ranks);

// training.optimizer_paged and its combinations (docs/scenario-format.md).
Status validateOptimizerPaging(const Scenario& scenario);

}  // namespace trainmem
