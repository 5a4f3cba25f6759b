#include "core/base/byte_count.h"
#include "core/account/stage_parameters.h"

#include <algorithm>
#include <cmath>

#include "core/training/optimizer_state.h"
#include "core/account/paged_states.h"
#include "core/account/qlora_backend.h"

namespace trainmem {
namespace {

// Megatron-style tensor parallelism splits every matrix of attention, MLPs
// and experts over t ranks (column- or row-parallel) and the vocabulary of
// the embedding and head; norms (and the router) are replicated. Biases of
// row-parallel layers are replicated too; their share is negligible and is
// split here with the rest.
TensorGroup splitOver(const TensorGroup& g, int64_t t) {
    if (t <= 1) return g;
    TensorGroup r;
    r.params = g.params / t;
    r.matrix_params = g.matrix_params / t;
    r.factored_elems = g.factored_elems / t;
    r.largest_tensor = g.largest_tensor / t;
    return r;
}

TensorGroup scaled(const TensorGroup& g, int64_t n) {
    TensorGroup r;
    r.params = g.params * n;
    r.matrix_params = g.matrix_params * n;
    r.factored_elems = g.factored_elems * n;
    r.largest_tensor = g.largest_tensor;
    return r;
}

int64_t ceilDiv(int64_t a, int64_t b) { return b <= 1 ? a : (a + b - 1) / b; }
// Saturating: past 2^62 the estimate is "too large to represent" (byte_count.h).
int64_t roundBytes(double b) { return saturatedBytes(b); }

}  // namespace

int64_t denseShardRanks(const ParallelConfig& par) {
    const int64_t dp = par.data * par.context;  // Megatron and torchtitan shard over DP x CP
    return par.shard_group > 0 ? std::min(par.shard_group, dp) : dp;
}

int64_t expertShardRanks(const ParallelConfig& par) {
    const int64_t edp = std::max<int64_t>(1, par.data * par.context / std::max<int64_t>(par.expert, 1));
    return par.shard_group > 0 ? std::min(par.shard_group, edp) : edp;
}

StageParameters stageParameters(const Scenario& s, const ParameterLayout& lay, const PipelineStage& st) {
    LoraParameters lora;
    if (s.training.finetuning != Finetuning::Full)
        lora = loraParameters(s.model, s.training.lora_rank, s.training.lora_targets);
    return stageParameters(s, lay, lora, st);
}

StageParameters stageParameters(const Scenario& s, const ParameterLayout& lay, const LoraParameters& lora,
                                const PipelineStage& st) {
    const int64_t t = s.parallelism.tensor;
    const int64_t e = std::max<int64_t>(s.parallelism.expert, 1);
    StageParameters sp;

    auto blockDense = [&](const LayerParameters& lp) {
        TensorGroup g = splitOver(lp.attention, t);
        g += splitOver(lp.dense_mlp, t);
        g += splitOver(lp.shared_experts, t);
        g += lp.router;
        g += lp.norms;
        return g;
    };
    auto matmul = [&](const LayerParameters& lp) {
        return (lp.attention.matrix_params + lp.dense_mlp.matrix_params + lp.shared_experts.matrix_params) / t +
               lp.router.matrix_params;
    };
    // Matmul weights inside the blocks (what QLoRA quantises), then the head's
    // matmul, which uses the embedding matrix when tied (AMP casts it too).
    int64_t block_matmul = 0;
    int64_t adapter_params = 0;
    forEachStageBlockKind(lay, lora, st, [&](const LayerParameters& lp, int64_t lora_params, int64_t n) {
        const TensorGroup block = blockDense(lp);
        // Routed experts: E/e experts per rank, each split over t (expert TP = TP).
        const TensorGroup experts_rank = splitOver(lp.routed_experts, t * e);
        sp.dense += scaled(block, n);
        if (experts_rank.params > 0) sp.experts += scaled(experts_rank, n);
        block_matmul += n * (matmul(lp) + experts_rank.matrix_params);
        sp.largest_block = std::max(sp.largest_block, block.params + experts_rank.params);
        adapter_params += lora_params * n;
    });

    if (st.has_embedding) sp.embedding_head += splitOver(lay.embedding, t);
    if (st.has_lm_head) sp.embedding_head += splitOver(lay.lm_head, t);
    if (st.has_final_norm) sp.dense += lay.final_norm;
    sp.dense += sp.embedding_head;

    sp.matmul_params = block_matmul;
    if (st.has_lm_head)
        sp.matmul_params += (lay.lm_head.params > 0 ? lay.lm_head.params : lay.embedding.matrix_params) / t;

    if (s.training.finetuning != Finetuning::Full) {
        const int64_t all = sp.dense.params + sp.experts.params;
        sp.frozen_matmul = block_matmul;  // bitsandbytes skips lm_head; embeddings are not Linear
        sp.frozen_other = all - sp.frozen_matmul;
        // Adapters are split over TP with the layer they adapt.
        sp.adapters = adapter_params / t;
        TensorGroup adapters;
        adapters.params = sp.adapters;
        adapters.matrix_params = sp.adapters;
        adapters.factored_elems = 0;
        adapters.largest_tensor = 0;
        sp.dense = adapters;
        sp.experts = TensorGroup{};
        sp.embedding_head = TensorGroup{};
    }
    return sp;
}

StageModelStates stageModelStates(const Scenario& s, const StageParameters& sp) {
    const TrainingConfig& tr = s.training;
    const ParallelConfig& par = s.parallelism;
    const PrecisionPlan plan = planPrecision(tr);
    const int64_t zero = par.zero_stage;
    const int64_t nd = denseShardRanks(par);
    const int64_t ne = expertShardRanks(par);
    StageModelStates out;

    // Trainable parameters (all of them, or the LoRA adapters).
    const int64_t dense = sp.dense.params;
    const int64_t experts = sp.experts.params;
    auto sharded = [&](int64_t d, int64_t x, bool shard) {
        return shard ? ceilDiv(d, nd) + ceilDiv(x, ne) : d + x;
    };

    // Weights: trainable in the recipe's dtype; a frozen base in 16-bit
    // (NF4 for QLoRA's matmul weights).
    double weights = static_cast<double>(sharded(dense, experts, zero >= 3)) * bytesOf(plan.weights);
    if (tr.finetuning != Finetuning::Full) {
        const double base_dtype = bytesOf(plan.activations);
        const double matmul_bytes = tr.finetuning == Finetuning::Qlora ? qloraBaseBytesPerParam(tr.qlora_backend) : base_dtype;
        const int64_t shard = zero >= 3 ? nd : 1;
        weights += (static_cast<double>(sp.frozen_matmul) * matmul_bytes +
                    static_cast<double>(sp.frozen_other) * base_dtype) / static_cast<double>(shard);
    }
    const double grads = static_cast<double>(sharded(dense, experts, zero >= 2)) * bytesOf(plan.gradients);
    const int64_t trainable_local = sharded(dense, experts, zero >= 1);
    const double master = plan.master ? static_cast<double>(trainable_local) * bytesOf(*plan.master) : 0.0;

    // Optimizer states per group, then the ZeRO share.
    auto share = [&](double bytes, int64_t ranks) { return zero >= 1 ? bytes / static_cast<double>(ranks) : bytes; };
    TensorGroup body = sp.dense;
    body.params -= sp.embedding_head.params;
    body.matrix_params -= sp.embedding_head.matrix_params;
    body.factored_elems -= sp.embedding_head.factored_elems;
    const DType sd = plan.optimizer_states;
    double states = share(optimizerStateBytes(tr.optimizer, sd, body, false), nd) +
                    share(optimizerStateBytes(tr.optimizer, sd, sp.embedding_head, true), nd) +
                    share(optimizerStateBytes(tr.optimizer, sd, sp.experts, false), ne);

    if (tr.optimizer_paged) {  // outside the allocator (core/account/paged_states.h)
        const double paged = std::min(states, pagedStateBytes(s, {sp.dense, sp.experts, sp.embedding_head}, nd, ne));
        states -= paged;
        out.managed_bytes = par.offload_optimizer ? 0 : roundBytes(paged);
    }
    out.gpu.gradients = roundBytes(grads);
    out.trainable_local = trainable_local;
    out.largest_trainable = std::max(sp.dense.largest_tensor, sp.experts.largest_tensor);
    if (tr.finetuning != Finetuning::Full) out.largest_trainable = std::max<int64_t>(1, sp.adapters / std::max<int64_t>(1, s.model.num_layers));

    // Offload: ZeRO-Offload keeps fp32 master weights, optimizer states and
    // an fp32 gradient copy on the host and runs the step on the CPU;
    // parameter offload keeps the (sharded) weights there too.
    if (par.offload_optimizer) {
        out.host_bytes = addBytes(out.host_bytes, roundBytes(master + states + static_cast<double>(trainable_local) * 4.0));
        out.gpu.master_weights = 0;
        out.gpu.optimizer_states = 0;
    } else {
        out.gpu.master_weights = roundBytes(master);
        out.gpu.optimizer_states = roundBytes(states);
    }
    if (par.offload_parameters) {
        out.host_bytes = addBytes(out.host_bytes, roundBytes(weights));
        out.gpu.weights = 0;
    } else {
        out.gpu.weights = roundBytes(weights);
    }
    return out;
}

}  // namespace trainmem
