#include "core/training/optimizer_state.h"

#include <algorithm>
#include <array>

namespace trainmem {
namespace {

// bitsandbytes 8-bit optimizers: one byte per state element plus one fp32
// absmax per block of 256 (blockwise quantization, Dettmers et al. 2022);
// tensors under min_8bit_size = 4096 elements keep fp32 states, which in a
// transformer means the norms and biases (our vector parameters).
constexpr double k8bitBytesPerState = 1.0 + 4.0 / 256.0;

// has_paged: bitsandbytes/optim/__init__.py exports PagedAdam, PagedAdamW,
// PagedAdamW8bit and PagedLion (core/account/paged_states.h).
// In OptimizerKind order (checked below); the size follows the rows, so a
// new optimizer is its enumerator and its row. Colours marked "seed" follow
// the seed figures (/work/shared/seeds/optimizer-memory-per-parameter.svg).
constexpr OptimizerSpec kOptimizers[] = {
    {OptimizerKind::Sgd, "sgd", "SGD", 0x95a5a6, 0, "", StateLayout::PerParameter, StepTemporary::None,
     true, true, true, false, "plain SGD keeps no state", "torch.optim.SGD, momentum=0"},
    {OptimizerKind::SgdMomentum, "sgd-momentum", "SGD+M", 0x3498db /* seed */, 1, "momentum",
     StateLayout::PerParameter, StepTemporary::None,  // weight_decay = 0 default: momentum updates in place
     true, true, true, false, "", "torch.optim.SGD momentum_buffer"},
    {OptimizerKind::Adagrad, "adagrad", "Adagrad", 0x9b59b6 /* seed */, 1, "G", StateLayout::PerParameter,
     StepTemporary::OneUnit,  // std = _foreach_sqrt(state_sums)
     true, true, true, false, "", "torch.optim.Adagrad state_sum"},
    {OptimizerKind::Rmsprop, "rmsprop", "RMSprop", 0xe67e22 /* seed */, 1, "s", StateLayout::PerParameter,
     StepTemporary::OneUnit,  // avg = _foreach_sqrt(square_avgs)
     true, true, true, false, "", "torch.optim.RMSprop square_avg (no momentum, not centered: the defaults)"},
    {OptimizerKind::Adam, "adam", "Adam", 0xe74c3c /* seed: Adam(W) */, 2, "m,v", StateLayout::PerParameter,
     StepTemporary::OneUnit,  // _multi_tensor_adam: exp_avg_sq_sqrt = _foreach_sqrt(exp_avg_sqs)
     true, true, true, true, "", "torch.optim.Adam exp_avg, exp_avg_sq"},
    {OptimizerKind::AdamW, "adamw", "AdamW", 0xc0392b, 2, "m,v", StateLayout::PerParameter, StepTemporary::OneUnit,
     true, true, true, true, "", "torch.optim.AdamW exp_avg, exp_avg_sq"},
    {OptimizerKind::AdamW8bit, "adamw-8bit", "AdamW 8-bit", 0xf1948a, 2, "m8,v8", StateLayout::Blockwise8bit,
     StepTemporary::None,  // bitsandbytes' kernel updates in registers
     true, true, true, true, "2× params (m, v) in 8 bits + one fp32 scale per 256",
     "bitsandbytes AdamW8bit (Dettmers et al. 2022)"},
    // Lion is not in torch.optim; the implementations used (lion-pytorch and
    // the harness's) have foreach and per-tensor forms and no fused kernel.
    {OptimizerKind::Lion, "lion", "Lion", 0xf39c12 /* seed */, 1, "m", StateLayout::PerParameter,
     StepTemporary::OneUnit,  // update = sign(lerp(m, g)): one temporary
     true, false, true, true, "", "Chen et al. 2023, exp_avg"},
    {OptimizerKind::Muon, "muon", "Muon", 0x27ae60 /* seed */, 1, "momentum", StateLayout::MuonHidden,
     StepTemporary::NewtonSchulz, true, true, true, false, "", "Jordan et al. 2024; Moonlight (AdamW for the rest)"},
    {OptimizerKind::Adafactor, "adafactor", "Adafactor", 0x16a085, 0, "row,col", StateLayout::Factored,
     StepTemporary::PerTensorFp32x2,  // HF Adafactor loops per tensor
     true, true, true, false, "", "Shazeer & Stern 2018; transformers Adafactor, beta1=None"},
};

constexpr bool rowsInKindOrder() {
    for (size_t i = 0; i < std::size(kOptimizers); ++i)
        if (static_cast<size_t>(kOptimizers[i].kind) != i) return false;
    return true;
}
static_assert(rowsInKindOrder(), "kOptimizers: one row per OptimizerKind, in enumerator order");

double perElement(double states, DType dtype, int64_t n) { return states * bytesOf(dtype) * static_cast<double>(n); }

}  // namespace

const OptimizerSpec& optimizerSpec(OptimizerKind kind) {
    for (const OptimizerSpec& o : kOptimizers)
        if (o.kind == kind) return o;
    return kOptimizers[0];
}

std::span<const OptimizerSpec> optimizerCatalogue() { return kOptimizers; }

bool optimizerHasImpl(OptimizerKind kind, OptimizerImpl impl) {
    const OptimizerSpec& o = optimizerSpec(kind);
    switch (impl) {
        case OptimizerImpl::ForEach: return o.has_foreach;
        case OptimizerImpl::Fused: return o.has_fused;
        case OptimizerImpl::ForLoop: return o.has_for_loop;
    }
    return false;
}

OptimizerImpl comparisonImpl(OptimizerKind kind, OptimizerImpl preferred) {
    if (optimizerHasImpl(kind, preferred)) return preferred;
    return optimizerHasImpl(kind, OptimizerImpl::ForEach) ? OptimizerImpl::ForEach : OptimizerImpl::ForLoop;
}

double optimizerStateBytes(OptimizerKind kind, DType dt, const TensorGroup& g, bool embedding_or_head) {
    const OptimizerSpec& o = optimizerSpec(kind);
    const int64_t vectors = g.params - g.matrix_params;
    switch (o.layout) {
        case StateLayout::PerParameter: return perElement(o.buffers, dt, g.params);
        case StateLayout::Blockwise8bit:
            return o.buffers * k8bitBytesPerState * static_cast<double>(g.matrix_params) +
                   perElement(o.buffers, DType::Fp32, vectors);
        case StateLayout::MuonHidden:
            // Muon: one momentum buffer for 2-D hidden matrices; embeddings,
            // head, norms and biases use AdamW (two buffers).
            if (embedding_or_head) return perElement(2, dt, g.params);
            return perElement(o.buffers, dt, g.matrix_params) + perElement(2, dt, vectors);
        case StateLayout::Factored:
            return perElement(1, dt, g.factored_elems) + perElement(1, dt, vectors);
    }
    return 0;
}

double optimizerBuffersPerParam(OptimizerKind kind) { return optimizerSpec(kind).buffers; }

const char* optimizerBufferNames(OptimizerKind kind) { return optimizerSpec(kind).buffer_names.data(); }

double optimizerStepTransientBytes(OptimizerKind kind, OptimizerImpl impl, DType dt, int64_t params,
                                   int64_t largest) {
    // Fused kernels update in registers: nothing shard-sized is allocated.
    if (impl == OptimizerImpl::Fused) return 0;
    // The unit of allocation: the whole shard with foreach (torch._foreach_*
    // ops return new tensor lists for every parameter at once), one tensor
    // with the per-tensor loop.
    const double unit = bytesOf(dt) * static_cast<double>(impl == OptimizerImpl::ForEach ? params : largest);
    switch (optimizerSpec(kind).step) {
        case StepTemporary::None: return 0;
        case StepTemporary::OneUnit: return unit;
        case StepTemporary::NewtonSchulz: return 4.0 * 2.0 * static_cast<double>(largest);
        case StepTemporary::PerTensorFp32x2: return 2.0 * 4.0 * static_cast<double>(largest);
    }
    return 0;
}

}  // namespace trainmem
