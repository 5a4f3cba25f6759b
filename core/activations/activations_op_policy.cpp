// Op-level selective activation checkpointing (Checkpointing::Op): every
// block is checkpointed, and its forward keeps the outputs of the ops in the
// save list; backward replays the block, taking those outputs from the cache
// instead of recomputing them. Terms and sources: docs/memory-model.md
// §Op-level selective checkpointing.
#include <algorithm>

#include "core/activations/activation_shape.h"
#include "core/activations/activations.h"
#include "core/model/block_linears.h"

namespace trainmem {

bool checkpointsLayer(const TrainingConfig& t, int64_t layer, int64_t stage_first_layer) {
    const int64_t k = std::max<int64_t>(t.checkpoint_every, 1);
    switch (t.checkpointing) {
        case Checkpointing::None:
        case Checkpointing::Selective: return false;
        case Checkpointing::Full:
        case Checkpointing::Op:
        case Checkpointing::MegatronUniform: return true;
        case Checkpointing::EveryK: return layer % k == 0;
        case Checkpointing::MegatronBlock: return layer - stage_first_layer < k;
        case Checkpointing::TorchtitanLayer: return (layer - stage_first_layer + 1) % k == 0;
    }
    return false;
}


// Megatron-LM recompute_method = "uniform" (megatron/core/recompute.py at
// core_v0.15.0rc7-2333-gd98e8a64dd, the uniform branch of the checkpointed
// forward): from the stage's first layer, chunks of recompute_num_layers
// layers (the last one shorter), each run by one reentrant
// tensor_parallel.checkpoint over the whole chunk. The chunk keeps its input;
// its backward replays all its layers' forward at once, then runs their
// backward top down, each freeing its saved tensors.
namespace {
int64_t uniformGroupStart(const TrainingConfig& t, int64_t layer, int64_t stage_first_layer) {
    const int64_t k = std::max<int64_t>(t.checkpoint_every, 1);
    return stage_first_layer + (layer - stage_first_layer) / k * k;
}
}  // namespace

int64_t checkpointKeptBytes(const TrainingConfig& t, int64_t layer, int64_t stage_first_layer,
                            const LayerActivations& block) {
    if (!checkpointsLayer(t, layer, stage_first_layer)) return block.saved;
    if (t.checkpointing == Checkpointing::MegatronUniform && uniformGroupStart(t, layer, stage_first_layer) != layer)
        return 0;  // inside a chunk: the chunk's input is its first layer's
    return block.checkpoint_input;
}

double recomputedBytes(const TrainingConfig& t, const ModelConfig& model, const BlockKindActivations& blocks,
                       int64_t layer, int64_t stage_first_layer) {
    if (!checkpointsLayer(t, layer, stage_first_layer)) return 0;
    auto saved = [&](int64_t l) { return static_cast<double>(blocks.of(model, l).saved); };
    if (t.checkpointing != Checkpointing::MegatronUniform) return saved(layer);
    // The chunk's layers below this one still hold their replayed tensors.
    double sum = 0;
    for (int64_t l = uniformGroupStart(t, layer, stage_first_layer); l <= layer; ++l) sum += saved(l);
    return sum;
}

const std::vector<std::string_view>& checkpointSaveOpNames() {
    static const std::vector<std::string_view> names = {"mm", "mm-every-second", "attention", "reduce_scatter", "max"};
    return names;
}

namespace {

enum SaveOp : uint32_t { kMm = 1, kMmEverySecond = 2, kAttention = 4, kReduceScatter = 8, kMax = 16 };

uint32_t saveOpBits(const std::vector<std::string>& ops) {
    uint32_t bits = 0;
    for (const std::string& op : ops) {
        if (op == "mm") bits |= kMm;
        else if (op == "mm-every-second") bits |= kMmEverySecond;
        else if (op == "attention") bits |= kAttention;
        else if (op == "reduce_scatter") bits |= kReduceScatter;
        else if (op == "max") bits |= kMax;
    }
    return bits;
}

bool rowParallel(std::string_view module) {
    return module == "o_proj" || module == "c_proj" || module == "down_proj" || module == "w2";
}

}  // namespace

// Fills the op-policy fields of `out` (whose other fields are the block's
// full account). Dense blocks of the eager profile without adapters only:
// scenario_validate.cpp rejects the rest.
void accountOpPolicy(const ActivationShape& a, const ModelConfig& model, const TrainingConfig& training,
                     bool moe_layer, LayerActivations& out) {
    const uint32_t save = saveOpBits(training.checkpoint_save_ops);
    const double T = static_cast<double>(a.tokens);
    double kept = 0, matmul_flops = 0, replayed_flops = 0;
    int64_t mm_count = 0;
    for (const BlockLinear& l : blockLinears(model, moe_layer)) {
        const double params = static_cast<double>(l.in) * static_cast<double>(l.out) / static_cast<double>(a.tp);
        matmul_flops += params;
        // A linear with a bias runs as aten.addmm, which neither list names
        // and which does not count as a matmul for the every-second rule
        // (PyTorch 1.13's dispatch, seen by validation/step_truth_policies.py).
        bool keep = false;
        if (!l.bias) {
            ++mm_count;
            keep = (save & kMm) || ((save & kMmEverySecond) && mm_count % 2 == 1);
        }
        if (!keep) {
            replayed_flops += params;
            continue;
        }
        // Column-parallel outputs are split over tensor ranks; a row-parallel
        // matmul outputs the full width (a partial sum before its reduction).
        const double elements = T * static_cast<double>(rowParallel(l.module) ? l.out : (l.out + a.tp - 1) / a.tp);
        kept += elements * a.act_bytes;
    }
    if ((save & kAttention) && a.flash) {
        // The attention kernel's outputs: its output and fp32 logsumexp (the
        // flash kernel's saved tensors besides q, k and v).
        const double o = T * static_cast<double>(a.heads * a.v_head_dim) * a.act_bytes +
                         4.0 * static_cast<double>(a.b * a.heads * a.s);
        kept += o;
    }
    if ((save & kReduceScatter) && a.sp > 1) {
        // Sequence parallelism reduce-scatters the outputs of o_proj and the MLP.
        kept += 2.0 * static_cast<double>(a.hiddenTokens()) * a.act_bytes;
    }
    // "max": amax scalars of fp8 training, which the policy does not take
    // (scenario_validate.cpp): nothing to keep.
    // While the block runs backward it holds its input and what the replay
    // saved; the kept outputs autograd does not save again (q, k, the
    // output projections) are dropped once the replay has used them. So the
    // replay adds its saved bytes less everything kept, never less than
    // nothing (a list that keeps more than autograd saves frees at replay).
    out.op_kept = out.checkpoint_input + tensorBytes(1, kept);
    out.op_recompute = std::max<int64_t>(0, out.saved - tensorBytes(1, kept));
    out.op_recomputed_matmul_share = matmul_flops > 0 ? replayed_flops / matmul_flops : 0;
}

}  // namespace trainmem
