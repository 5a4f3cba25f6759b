// The modelled step time (docs/step-time.md): every formula below is stated
// there with its source; the constants are in stepTimeConstants().
#include "core/steptime/step_time.h"
#include "core/steptime/mixer_flops.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "core/training/optimizer_state.h"
#include "core/training/pipeline.h"
#include "core/account/scenario_validate.h"
#include "core/account/stage_parameters.h"
#include "core/model/block_linears.h"

namespace trainmem {

namespace {

constexpr double kGB = 1.0e9;
constexpr double kTera = 1.0e12;

// Bytes a memory-bound op moves per element of its tensor, forward, for
// 16-bit activations (docs/step-time.md §Memory-bound ops: each kernel of the
// op as the framework's code runs it, reads + writes).
struct ElementwiseBytes {
    double rms_norm, layer_norm, residual, gated_act, plain_act, rotary;
};
constexpr ElementwiseBytes kEagerBytes{36, 4, 6, 10, 4, 14};
constexpr ElementwiseBytes kFusedBytes{4, 4, 6, 6, 4, 4};
// Bytes per logit of the loss, forward and backward together (§Head and loss).
double lossBytesPerLogit(LossImpl loss) {
    switch (loss) {
        case LossImpl::Standard:
        case LossImpl::Chunked:
        case LossImpl::ChunkedOutput: return 32;
        case LossImpl::VocabParallel: return 16;
        case LossImpl::FusedLinear: return 8;
    }
    return 32;
}

int64_t ceilTo(int64_t x, int64_t q) { return (x + q - 1) / q * q; }

// One matmul [M x K] x [K x N], `count` times: tile quantization (cuBLAS
// tiles of 128 x 128 outputs, K in steps of 64) and the roofline against HBM.
double gemmSeconds(double m, int64_t n, int64_t k, double count, double peak, double hbm, double elem_bytes) {
    if (m <= 0 || n <= 0 || k <= 0 || count <= 0) return 0;
    const double mm = static_cast<double>(ceilTo(static_cast<int64_t>(std::ceil(m)), 128));
    const double flops = 2.0 * mm * static_cast<double>(ceilTo(n, 128)) * static_cast<double>(ceilTo(k, 64));
    const double bytes = (m * static_cast<double>(k) + static_cast<double>(k) * static_cast<double>(n) +
                          m * static_cast<double>(n)) * elem_bytes;
    return count * std::max(flops / peak, bytes / hbm);
}

// Ring collectives of `bytes` (the whole tensor) over n ranks at `bw` B/s.
double allReduce(double bytes, int64_t n, double bw) {
    return n <= 1 ? 0.0 : 2.0 * static_cast<double>(n - 1) / static_cast<double>(n) * bytes / bw;
}
double allGather(double bytes, int64_t n, double bw) {  // also reduce-scatter and all-to-all
    return n <= 1 ? 0.0 : static_cast<double>(n - 1) / static_cast<double>(n) * bytes / bw;
}

// Ranks are laid out TP innermost, then CP, then DP, then PP (Megatron-LM's
// default order "tp-cp-ep-dp-pp"): a group of `size` ranks `stride` apart
// stays inside a node when it spans at most one node.
double groupBandwidth(const StepTimeModel& m, int64_t stride, int64_t size) {
    if (size <= 1) return m.scale_up_bytes_per_s;
    return stride * size <= m.gpus_per_node ? m.scale_up_bytes_per_s : m.scale_out_bytes_per_s;
}

struct Parts {
    double forward = 0, backward = 0, recompute = 0;
    double tp = 0, cp = 0, ep = 0, pp = 0, fsdp = 0, offload = 0;
    double cp_hidden = 0, fsdp_hidden = 0, offload_hidden = 0;  // overlapped with compute: not in the time
    double perMicrobatch() const { return forward + backward + recompute + tp + cp + ep + pp + fsdp + offload; }
};

using BlockCost = BlockTime;

struct LayoutView {
    int64_t b, s, t, c, d, p, v, e, m;
    double tokens;  // per micro-batch per GPU (b s / c)
    bool sp;
};

BlockCost blockCost(const StepTimeModel& mdl, const Scenario& sc, const LayoutView& L, LayerKind kind) {
    const bool moe = kind.ffn == FfnKind::Moe && sc.model.isMoe();
    const ModelConfig& md = sc.model;
    const StepTimeConstants& k = mdl.constants;
    const double peak = mdl.peak_flops * mdl.matmul_efficiency;
    const double hbm = mdl.hbm_bytes_per_s * k.hbm;
    const double eb = mdl.gemm_bytes;
    const double T = L.tokens;
    const int64_t t = L.t, h = md.hidden_size;
    BlockCost c;
    auto col = [&](int64_t in, int64_t out, double tokens = -1, double count = 1) {
        c.linear_fwd += gemmSeconds(tokens < 0 ? T : tokens, out / t, in, count, peak, hbm, eb);
    };
    auto row = [&](int64_t in, int64_t out, double tokens = -1, double count = 1) {
        c.linear_fwd += gemmSeconds(tokens < 0 ? T : tokens, out, in / t, count, peak, hbm, eb);
    };
    auto replicated = [&](int64_t in, int64_t out) { c.linear_fwd += gemmSeconds(T, out, in, 1, peak, hbm, eb); };
    const bool attention = kind.mixer == MixerKind::Attention;
    // Attention projections.
    double qk_dim = static_cast<double>(md.head_dim), v_dim = static_cast<double>(md.head_dim);
    if (!attention) {
        // A hybrid's mixer (mixer_flops.h): its input projections are
        // column-parallel, out_proj row-parallel; the chunked core is linear
        // in the sequence and runs at attention's share of the peak.
        for (const BlockLinear& l : blockLinears(md, LayerKind{kind.mixer, FfnKind::None})) {
            if (l.module == "out_proj")
                row(l.in, l.out);
            else
                col(l.in, l.out);
        }
        c.attention_fwd = T * mixerCoreFlopsPerToken(md, kind.mixer) / static_cast<double>(t) /
                          (mdl.peak_16bit_flops * k.attention);
    } else if (md.mla) {
        const MlaConfig& a = *md.mla;
        const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
        if (a.q_lora_rank > 0) {
            replicated(h, a.q_lora_rank);
            col(a.q_lora_rank, md.num_heads * qk);
        } else {
            col(h, md.num_heads * qk);
        }
        replicated(h, a.kv_lora_rank + a.qk_rope_head_dim);
        col(a.kv_lora_rank, md.num_heads * (a.qk_nope_head_dim + a.v_head_dim));
        row(md.num_heads * a.v_head_dim, h);
        qk_dim = static_cast<double>(qk);
        v_dim = static_cast<double>(a.v_head_dim);
    } else {
        // Qwen3-Next's gated attention: q_proj also makes the output gate.
        const int64_t q = md.num_heads * md.head_dim * (md.attention_output_gate ? 2 : 1);
        col(h, q + 2 * md.num_kv_heads * md.head_dim);
        row(md.num_heads * md.head_dim, h);
    }
    if (attention) {
        // Causal attention core: QK^T and PV over the lower triangle; with CP
        // each rank holds s/c queries against all s keys (load-balanced ring).
        const double core_flops = static_cast<double>(L.b) * (static_cast<double>(L.s) / L.c) *
                                  static_cast<double>(L.s) * (static_cast<double>(md.num_heads) / t) * (qk_dim + v_dim);
        c.attention_fwd = core_flops / (mdl.peak_16bit_flops * k.attention);
    }
    // MLP or experts.
    const bool gated = md.mlp == MlpKind::Gated;
    const int64_t mats_in = gated ? 2 : 1;
    double act_width = 0;
    const bool ffn = kind.ffn != FfnKind::None;
    if (!ffn) {
        // Nemotron-H's mixer-only layers.
    } else if (!moe) {
        col(h, mats_in * md.ffn_hidden_size);
        row(md.ffn_hidden_size, h);
        act_width = static_cast<double>(md.ffn_hidden_size) / t;
    } else {
        const MoeConfig& x = *md.moe;
        replicated(h, x.num_experts);
        const double local = static_cast<double>(x.num_experts) / L.e;
        const double factor = x.capacity_factor > 0 ? x.capacity_factor : 1.0;
        const double per_expert = T * x.experts_per_token * L.e / x.num_experts * factor;
        col(h, mats_in * x.expert_ffn, per_expert, local);
        row(x.expert_ffn, h, per_expert, local);
        act_width = T * x.experts_per_token * static_cast<double>(x.expert_ffn) / t / T * factor;
        const int64_t shared = x.shared_expert_ffn > 0 ? x.shared_expert_ffn : x.shared_experts * x.expert_ffn;
        if (shared > 0) {
            col(h, mats_in * shared);
            row(shared, h);
            act_width += static_cast<double>(shared) / t;
        }
        // Dispatch and combine of every routed token copy (all-to-all).
        if (L.e > 1) {
            const double bytes = T * x.experts_per_token * static_cast<double>(h) * eb;
            c.ep_fwd = 2.0 * allGather(bytes, L.e, groupBandwidth(mdl, L.t * L.c, L.e));
        }
    }
    // Memory-bound ops, per token.
    const bool eager = sc.training.kernels == KernelProfile::Eager;
    const ElementwiseBytes& w = eager ? kEagerBytes : kFusedBytes;
    const double act_scale = bytesOf(mdl.plan.activations) / 2.0;
    const double hidden = static_cast<double>(h) / (L.sp ? t : 1);
    const double norm = md.norm == NormKind::RMSNorm ? w.rms_norm : w.layer_norm;
    // A hybrid's single-half layers have one norm and one residual add.
    const double halves = (kind.mixer != MixerKind::None ? 1.0 : 0.0) + (ffn ? 1.0 : 0.0);
    double per_token = static_cast<double>(md.norms_per_block) / 2.0 * halves * norm * hidden +
                       halves * w.residual * hidden + (gated ? w.gated_act : w.plain_act) * act_width;
    if (attention) per_token += w.rotary * static_cast<double>(md.num_heads + md.num_kv_heads) * qk_dim / t;
    if (moe) per_token += 4.0 * static_cast<double>(md.moe->experts_per_token) * static_cast<double>(h);  // permute
    c.elementwise_fwd = per_token * act_scale * T / hbm;
    // TP (+SP): two all-reduces (or all-gather + reduce-scatter pairs) of
    // the block's [T, h] activations per pass.
    if (t > 1) c.tp_fwd = halves * allReduce(T * static_cast<double>(h) * eb, t, groupBandwidth(mdl, 1, t));
    // CP ring: each rank passes its keys and values on c - 1 times,
    // overlapped with the attention core; what exceeds it is exposed.
    if (L.c > 1 && attention) {
        const double kv_bytes = 2.0 * T * static_cast<double>(std::max<int64_t>(md.num_kv_heads / t, 1)) *
                                qk_dim * eb;
        const double ring = static_cast<double>(L.c - 1) * kv_bytes / groupBandwidth(mdl, L.t, L.c);
        c.cp_fwd = std::max(0.0, ring - c.attention_fwd);
        c.cp_hidden_fwd = std::min(ring, c.attention_fwd);
    }
    return c;
}

LayoutView viewOf(const Scenario& sc) {
    const ParallelConfig& par = sc.parallelism;
    LayoutView L{};
    L.b = sc.training.micro_batch_size;
    L.s = sc.training.sequence_length;
    L.t = std::max<int64_t>(par.tensor, 1);
    L.c = std::max<int64_t>(par.context, 1);
    L.d = std::max<int64_t>(par.data, 1);
    L.p = std::max<int64_t>(par.pipeline, 1);
    L.v = par.schedule == PipelineSchedule::Interleaved1F1B ? std::max<int64_t>(par.virtual_stages, 1) : 1;
    L.e = std::max<int64_t>(par.expert, 1);
    L.m = par.microbatches > 0 ? par.microbatches : std::max<int64_t>(sc.training.gradient_accumulation_steps, 1);
    L.tokens = static_cast<double>(L.b) * static_cast<double>(L.s) / static_cast<double>(L.c);
    L.sp = par.sequence_parallel;
    return L;
}

// Share of a block's forward the checkpointing policy repeats in backward:
// {linear share, attention share, elementwise share}.
struct RecomputeShare {
    double linear = 0, attention = 0, elementwise = 0;
};
RecomputeShare recomputeShare(const Scenario& sc, int64_t layers) {
    const TrainingConfig& tr = sc.training;
    const double k = static_cast<double>(std::max<int64_t>(tr.checkpoint_every, 1));
    auto blocks = [](double x) { return RecomputeShare{x, x, x}; };
    switch (tr.checkpointing) {
        case Checkpointing::None: return {};
        case Checkpointing::Selective: return {0, 1, 0};  // the attention core (Korthikanti et al. 2022 §4.3)
        case Checkpointing::Full:
        case Checkpointing::MegatronUniform: return blocks(1);
        case Checkpointing::EveryK:
        case Checkpointing::TorchtitanLayer: return blocks(1.0 / k);
        case Checkpointing::MegatronBlock:
            return blocks(layers > 0 ? std::min(k, static_cast<double>(layers)) / static_cast<double>(layers) : 0);
        case Checkpointing::Op: {
            RecomputeShare r{1, 1, 1};
            for (const std::string& op : tr.checkpoint_save_ops) {
                if (op == "mm") r.linear = 0;
                if (op == "mm-every-second") r.linear = std::min(r.linear, 0.5);
                if (op == "attention") r.attention = 0;
            }
            return r;
        }
    }
    return {};
}

int64_t shardRanks(const ParallelConfig& par) {
    const int64_t dc = std::max<int64_t>(par.data, 1) * std::max<int64_t>(par.context, 1);
    return par.shard_group > 0 ? std::min(par.shard_group, dc) : dc;
}

// Parameters of a stage per GPU (TP-split matrices, local experts), and
// how many of them the optimizer updates.
struct StageParams {
    double total = 0, trainable = 0;
};
StageParams stageParams(const StepTimeModel& mdl, const Scenario& sc, const PipelineStage& st, const LayoutView& L) {
    const ParameterLayout& pl = mdl.layout;
    auto layerParams = [&](const LayerParameters& lp) {
        return static_cast<double>(lp.attention.params + lp.dense_mlp.params + lp.shared_experts.params) / L.t +
               static_cast<double>(lp.routed_experts.params) / L.t / L.e +
               static_cast<double>(lp.router.params + lp.norms.params);
    };
    StageParams p;
    forEachStageBlockKind(pl, LoraParameters{}, st, [&](const LayerParameters& lp, int64_t, int64_t n) {
        p.total += static_cast<double>(n) * layerParams(lp);
    });
    if (st.has_embedding) p.total += static_cast<double>(pl.embedding.params) / L.t;
    if (st.has_lm_head) p.total += static_cast<double>(pl.lm_head.params) / L.t + static_cast<double>(pl.final_norm.params);
    p.trainable = sc.training.finetuning == Finetuning::Full
                      ? p.total
                      : static_cast<double>(mdl.parameters.lora) * static_cast<double>(st.num_layers) /
                            static_cast<double>(std::max<int64_t>(sc.model.num_layers, 1)) / L.t;
    return p;
}

// Each kind of block costs the same on every stage: made once per layout,
// for the kinds the model has (dense and MoE blocks, or a hybrid's kinds).
using BlockCosts = std::array<BlockCost, kLayerKinds>;
constexpr size_t kDenseBlock = hybridKindIndex(LayerKind{MixerKind::Attention, FfnKind::Dense});
constexpr size_t kMoeBlock = hybridKindIndex(LayerKind{MixerKind::Attention, FfnKind::Moe});
BlockCosts blockCosts(const StepTimeModel& mdl, const Scenario& sc, const LayoutView& L) {
    StepTimeModel::BlockSlot& slot = mdl.block_cache[static_cast<size_t>((L.b * 2 + (L.sp ? 1 : 0)) % 16)];
    if (slot.b != L.b || slot.s != L.s || slot.t != L.t || slot.c != L.c || slot.e != L.e || slot.sp != L.sp) {
        slot.kinds = {};
        if (mdl.layout.hybrid) {
            for (size_t i = 0; i < kLayerKinds; ++i)
                if (mdl.layout.hybrid_count[i] > 0) slot.kinds[i] = blockCost(mdl, sc, L, hybridKindAt(i));
        } else {
            slot.kinds[kDenseBlock] = blockCost(mdl, sc, L, LayerKind{});
            if (sc.model.isMoe()) slot.kinds[kMoeBlock] = blockCost(mdl, sc, L, LayerKind{MixerKind::Attention, FfnKind::Moe});
        }
        slot.b = L.b;
        slot.s = L.s;
        slot.t = L.t;
        slot.c = L.c;
        slot.e = L.e;
        slot.sp = L.sp;
    }
    return slot.kinds;
}

Parts stageParts(const StepTimeModel& mdl, const Scenario& sc, const LayoutView& L, const BlockCosts& blocks,
                 const PipelineStage& st) {
    const StepTimeConstants& k = mdl.constants;
    const ParallelConfig& par = sc.parallelism;
    const bool full_ft = sc.training.finetuning == Finetuning::Full;
    const double bwd_linear = full_ft ? 2.0 : 1.0;  // frozen weights: the input gradient only
    const double n_moe = static_cast<double>(st.num_moe_layers);
    const double n_dense = static_cast<double>(st.num_layers - st.num_moe_layers);
    Parts out;
    const RecomputeShare rs = recomputeShare(sc, st.num_layers);
    auto add = [&](const BlockCost& c, double n) {
        if (n <= 0) return;
        out.forward += n * (c.linear_fwd + c.attention_fwd + c.elementwise_fwd);
        // Backward: two matmuls per forward matmul; flash attention's
        // backward 2.5x its forward; memory-bound ops 2x their bytes.
        out.backward += n * (bwd_linear * c.linear_fwd + 2.5 * c.attention_fwd + 2.0 * c.elementwise_fwd);
        out.recompute += n * (rs.linear * c.linear_fwd + rs.attention * c.attention_fwd + rs.elementwise * c.elementwise_fwd);
        const double tp_recompute = rs.linear > 0 ? rs.linear : 0.0;  // a replayed block gathers again
        out.tp += n * c.tp_fwd * (2.0 + tp_recompute);
        out.ep += n * c.ep_fwd * (2.0 + tp_recompute);
        out.cp += n * c.cp_fwd * (1.0 + 2.0);  // backward passes keys/values and their gradients
        out.cp_hidden += n * c.cp_hidden_fwd * (1.0 + 2.0);
    };
    if (mdl.layout.hybrid) {
        for (size_t i = 0; i < kLayerKinds; ++i) add(blocks[i], static_cast<double>(st.hybrid_layers[i]));
    } else {
        add(blocks[kDenseBlock], n_dense);
        add(blocks[kMoeBlock], n_moe);
    }
    // Interleaving: the stage's blocks are v chunks; the chunk costs are the
    // same in sum, but each chunk boundary is one more send (below).
    const ModelConfig& md = sc.model;
    const double hbm = mdl.hbm_bytes_per_s * k.hbm;
    if (st.has_lm_head) {
        const double head = gemmSeconds(L.tokens, md.vocab_size / L.t, md.hidden_size, 1,
                                        mdl.peak_16bit_flops * k.matmul_16bit, hbm, 2.0);
        const double loss = L.tokens * static_cast<double>(md.vocab_size) / L.t * lossBytesPerLogit(sc.training.loss) / hbm;
        out.forward += head + loss * 0.5;
        out.backward += 2.0 * head + loss * 0.5;
    }
    // Pipeline send/receive of the boundary activations, forward and backward.
    if (L.p > 1) {
        const double bytes = L.tokens * static_cast<double>(md.hidden_size) / (L.sp ? L.t : 1) * mdl.gemm_bytes;
        const int64_t stride = L.t * L.c * L.d;
        out.pp = 2.0 * static_cast<double>(L.v) * bytes / groupBandwidth(mdl, stride, L.p);
    }
    // ZeRO-3 / FSDP: the stage's units gathered in forward, again in
    // backward (reshard_after_forward), gradients reduce-scattered after each
    // micro-batch's backward (every-microbatch sync); prefetch hides what
    // the pass's compute covers, the first unit's gather is exposed.
    const StageParams sp = stageParams(mdl, sc, st, L);
    const int64_t n_shard = shardRanks(par);
    const double units = static_cast<double>(std::max<int64_t>(st.num_layers, 1));
    if (par.zero_stage == 3 && n_shard > 1) {
        const PrecisionPlan& plan = mdl.plan;
        const double bw = groupBandwidth(mdl, L.t, n_shard);
        const double gather = allGather(sp.total * bytesOf(plan.activations), n_shard, bw);
        const double scatter = par.fsdp_gradient_sync == FsdpGradientSync::EveryMicrobatch
                                   ? allGather(sp.trainable * bytesOf(plan.gradients), n_shard, bw)
                                   : 0.0;
        const double fwd_comm = gather;
        const double bwd_comm = (par.reshard_after_forward ? gather : 0.0) + scatter;
        const double fwd_exposed = std::max(0.0, fwd_comm - out.forward) + fwd_comm / units;
        const double bwd_exposed = std::max(0.0, bwd_comm - out.backward - out.recompute) + bwd_comm / units;
        out.fsdp = fwd_exposed + bwd_exposed;
        out.fsdp_hidden = std::max(0.0, fwd_comm - fwd_exposed) + std::max(0.0, bwd_comm - bwd_exposed);
    }
    // Parameters offloaded to the host come over PCIe in both passes.
    if (par.offload_parameters && mdl.pcie_bytes_per_s > 0) {
        const double fetch = sp.total / static_cast<double>(std::max<int64_t>(n_shard, 1)) *
                             bytesOf(mdl.plan.weights) / mdl.pcie_bytes_per_s;
        out.offload += std::max(0.0, fetch - out.forward) + std::max(0.0, fetch - out.backward);
        out.offload_hidden += std::min(fetch, out.forward) + std::min(fetch, out.backward);
    }
    // torchtune's activation offloading: each block's input to the host in
    // forward and back in backward, on side streams.
    if (sc.training.activation_offloading != ActivationOffloading::None && mdl.pcie_bytes_per_s > 0) {
        const double bytes = static_cast<double>(st.num_layers) * L.tokens * static_cast<double>(md.hidden_size) *
                             bytesOf(mdl.plan.activations);
        const double copy = bytes / mdl.pcie_bytes_per_s;
        out.offload += std::max(0.0, copy - out.forward) + std::max(0.0, copy - out.backward);
        out.offload_hidden += std::min(copy, out.forward) + std::min(copy, out.backward);
    }
    return out;
}

// The stages that can be the slowest: the first (embedding), the last (head
// and, with an uneven split, the most blocks), the first with an extra block.
template <class F>
void forEachCandidate(const Scenario& sc, const LayoutView& L, F&& f) {
    const int64_t p = L.p;
    const int64_t extra = sc.model.num_layers % p;
    int64_t done[3] = {-1, -1, -1};
    const int64_t candidates[3] = {0, p - 1, extra > 0 ? p - extra : 0};
    for (int i = 0; i < 3; ++i) {
        const int64_t idx = candidates[i];
        if (idx == done[0] || idx == done[1]) continue;
        done[i] = idx;
        f(pipelineStage(sc.model, sc.parallelism, L.m, idx));
    }
}

}  // namespace

const StepTimeConstants& stepTimeConstants() {
    // docs/step-time.md §Constants: matmul_16bit, matmul_fp8 and attention
    // fitted on three rows of torchtitan's benchmark tables
    // (validation/throughput/fit_constants.cpp); the others assumed, each
    // with its reason.
    static const StepTimeConstants constants{
        .matmul_16bit = 0.519,
        .matmul_fp8 = 0.389,
        .matmul_fp32 = 0.90,
        .attention = 0.240,
        .hbm = 0.80,
        .scale_up = 0.80,
        .scale_out = 0.80,
        .pcie = 0.80,
    };
    return constants;
}

std::string_view timeComponentKey(TimeComponent c) {
    switch (c) {
        case TimeComponent::Compute: return "compute";
        case TimeComponent::Recompute: return "recompute";
        case TimeComponent::TensorParallel: return "exposed_tensor_parallel";
        case TimeComponent::ContextParallel: return "exposed_context_parallel";
        case TimeComponent::ExpertParallel: return "exposed_expert_parallel";
        case TimeComponent::PipelineP2P: return "exposed_pipeline_p2p";
        case TimeComponent::FsdpGather: return "exposed_fsdp";
        case TimeComponent::GradientReduce: return "exposed_gradient_reduce";
        case TimeComponent::Bubble: return "bubble";
        case TimeComponent::Optimizer: return "optimizer";
        case TimeComponent::Offload: return "offload";
    }
    return "";
}

std::string_view timeComponentName(TimeComponent c) {
    switch (c) {
        case TimeComponent::Compute: return "Compute";
        case TimeComponent::Recompute: return "Recompute";
        case TimeComponent::TensorParallel: return "Tensor parallel (exposed)";
        case TimeComponent::ContextParallel: return "Context parallel (exposed)";
        case TimeComponent::ExpertParallel: return "Expert all-to-all (exposed)";
        case TimeComponent::PipelineP2P: return "Pipeline send/receive";
        case TimeComponent::FsdpGather: return "FSDP gathers (exposed)";
        case TimeComponent::GradientReduce: return "Gradient reduction (exposed)";
        case TimeComponent::Bubble: return "Pipeline bubble";
        case TimeComponent::Optimizer: return "Optimizer step";
        case TimeComponent::Offload: return "Offload (PCIe)";
    }
    return "";
}

Expected<StepTimeModel> prepareStepTime(const Scenario& sc, const StepTimeConstants& k) {
    const HardwareConfig& hw = sc.hardware;
    const GpuSpec* gpu = hw.gpu == "custom" ? nullptr : findGpu(hw.gpu);
    StepTimeModel m;
    m.constants = k;
    if (!gpu || gpu->dense_16bit_tflops <= 0 || gpu->hbm_gb_s <= 0)
        return Error{"hardware.gpu", "no published compute rates for \"" + hw.gpu +
                                         "\": the step time needs a GPU of the catalogue with its datasheet's "
                                         "rates (docs/step-time.md §Hardware rates)"};
    const PrecisionPlan plan = planPrecision(sc.training);
    m.plan = plan;
    m.peak_16bit_flops = gpu->dense_16bit_tflops * kTera;
    if (sc.training.precision == Precision::Fp8Mixed) {
        if (gpu->dense_fp8_tflops <= 0)
            return Error{"training.precision", "fp8 needs fp8 tensor cores; " + hw.gpu + " has none"};
        m.peak_flops = gpu->dense_fp8_tflops * kTera;
        m.matmul_efficiency = k.matmul_fp8;
        m.gemm_bytes = 1.5;  // fp8 operands, 16-bit output
    } else if (plan.activations == DType::Fp32) {
        if (gpu->dense_fp32_tflops <= 0)
            return Error{"training.precision", "no published fp32 rate for " + hw.gpu};
        m.peak_flops = gpu->dense_fp32_tflops * kTera;
        m.matmul_efficiency = k.matmul_fp32;
        m.gemm_bytes = 4;
    } else {
        m.peak_flops = m.peak_16bit_flops;
        m.matmul_efficiency = k.matmul_16bit;
        m.gemm_bytes = 2;
    }
    m.hbm_bytes_per_s = gpu->hbm_gb_s * kGB;
    m.gpus_per_node = hw.gpus_per_node.value_or(gpu->gpus_per_node);
    // Datasheets give NVLink and PCIe as the two-way total: one way is half.
    m.scale_up_bytes_per_s = hw.scale_up_gb_s.value_or(gpu->scale_up_gb_s) * kGB / 2.0 * k.scale_up;
    m.scale_out_bytes_per_s = hw.scale_out_gb_s.value_or(gpu->scale_out_gb_s) * kGB * k.scale_out;
    m.pcie_bytes_per_s = gpu->pcie_gb_s * kGB / 2.0 * k.pcie;
    if (m.gpus_per_node < 1) m.gpus_per_node = 1;
    if (sc.parallelism.totalGpus() > m.gpus_per_node && m.scale_out_bytes_per_s <= 0)
        return Error{"hardware.scale_out_gb_s", std::to_string(sc.parallelism.totalGpus()) + " GPUs span more than one node of " +
                                                    std::to_string(m.gpus_per_node) + " and " + hw.gpu +
                                                    " has no reference network: give the scale-out GB/s per GPU"};
    if (m.scale_up_bytes_per_s <= 0)
        return Error{"hardware.scale_up_gb_s", "no scale-up bandwidth for " + hw.gpu};
    m.layout = parameterLayout(sc.model);
    m.parameters = countParameters(sc.model, m.layout, sc.training.finetuning == Finetuning::Full ? 0 : sc.training.lora_rank,
                                   sc.training.lora_targets);
    // Model FLOPs per token: 6 x (active parameters less the token embedding)
    // + 12 L H d s (attention, not halved for causality): torchtitan's
    // get_num_flop_per_token, PaLM's Appendix B.
    const ModelConfig& md = sc.model;
    double head_dim = static_cast<double>(md.head_dim);
    if (md.mla) head_dim = (md.mla->qk_nope_head_dim + md.mla->qk_rope_head_dim + md.mla->v_head_dim) / 2.0;
    const double non_embedding = static_cast<double>(m.parameters.active - m.parameters.embedding) +
                                 (md.tied_embeddings ? static_cast<double>(md.hidden_size) * md.vocab_size : 0.0);
    // Attention's core in every attention layer (a hybrid's other layers
    // add their chunked cores, linear in the sequence: mixer_flops.h).
    double attention_layers = static_cast<double>(md.num_layers), mixer_cores = 0;
    if (md.isHybrid()) {
        attention_layers = 0;
        for (const LayerKind& kind : md.layer_kinds) {
            if (kind.mixer == MixerKind::Attention) attention_layers += 1;
            mixer_cores += 3.0 * mixerCoreFlopsPerToken(md, kind.mixer);
        }
    }
    m.model_flops_per_token = 6.0 * non_embedding + mixer_cores + 12.0 * attention_layers * md.num_heads * head_dim *
                                                                      static_cast<double>(sc.training.sequence_length);
    return m;
}

StepTime stepTime(const StepTimeModel& mdl, const Scenario& sc) {
    const StepTimeConstants& k = mdl.constants;
    const ParallelConfig& par = sc.parallelism;
    const LayoutView L = viewOf(sc);
    StepTime out;
    out.model_flops_per_token = mdl.model_flops_per_token;
    // A group crossing nodes on a GPU without a network: no time.
    if (par.totalGpus() > mdl.gpus_per_node && mdl.scale_out_bytes_per_s <= 0) return out;
    Parts worst;
    PipelineStage worst_stage;
    double worst_time = -1;
    const BlockCosts blocks = blockCosts(mdl, sc, L);
    forEachCandidate(sc, L, [&](const PipelineStage& st) {
        const Parts parts = stageParts(mdl, sc, L, blocks, st);
        if (parts.perMicrobatch() > worst_time) {
            worst_time = parts.perMicrobatch();
            worst = parts;
            worst_stage = st;
        }
    });
    const double m = static_cast<double>(L.m);
    auto& br = out.breakdown;
    auto at = [&](TimeComponent c) -> double& { return br[static_cast<size_t>(c)]; };
    at(TimeComponent::Compute) = m * (worst.forward + worst.backward);
    at(TimeComponent::Recompute) = m * worst.recompute;
    at(TimeComponent::TensorParallel) = m * worst.tp;
    at(TimeComponent::ContextParallel) = m * worst.cp;
    at(TimeComponent::ExpertParallel) = m * worst.ep;
    at(TimeComponent::PipelineP2P) = m * worst.pp;
    at(TimeComponent::FsdpGather) = m * worst.fsdp;
    at(TimeComponent::Offload) = m * worst.offload;
    auto hidden = [&](TimeComponent c) -> double& { return out.overlapped[static_cast<size_t>(c)]; };
    hidden(TimeComponent::ContextParallel) = m * worst.cp_hidden;
    hidden(TimeComponent::FsdpGather) = m * worst.fsdp_hidden;
    hidden(TimeComponent::Offload) = m * worst.offload_hidden;
    // Pipeline fill and drain: (p - 1) / v micro-batch times of a stage
    // (Narayanan et al. 2021 §2.2; GPipe and 1F1B alike). Interleaving
    // gains only with at least p micro-batches (the paper's premise;
    // Megatron-LM's interleaved schedule asserts m is a multiple of p):
    // with fewer, each micro-batch still crosses every stage, as in 1F1B.
    if (L.p > 1) {
        const double chunks = L.m >= L.p ? static_cast<double>(L.v) : 1.0;
        at(TimeComponent::Bubble) = static_cast<double>(L.p - 1) / chunks * worst_time;
    }

    // Once per step: the data-parallel gradient reduction, overlapped with
    // the last micro-batch's backward except the last bucket.
    const StageParams sp = stageParams(mdl, sc, worst_stage, L);
    const PrecisionPlan& plan = mdl.plan;
    const int64_t dc = L.d * L.c;
    const int64_t n_shard = shardRanks(par);
    const double grad_bytes = sp.trainable * bytesOf(plan.gradients);
    const double bw_dp = groupBandwidth(mdl, L.t, dc);
    double overlapped = 0, exposed = 0;
    if (dc > 1) {
        if (par.zero_stage == 0) {
            overlapped = allReduce(grad_bytes, dc, bw_dp);
        } else if (par.zero_stage < 3) {
            overlapped = allGather(grad_bytes, dc, bw_dp);
            exposed = allGather(sp.trainable * bytesOf(plan.weights), dc, bw_dp);  // updated parameters gathered back
        } else {
            if (par.fsdp_gradient_sync == FsdpGradientSync::LastMicrobatch)
                overlapped = allGather(grad_bytes, n_shard, groupBandwidth(mdl, L.t, n_shard));
            if (n_shard < dc) {  // HSDP: the shard's gradients all-reduced across replicas
                const int64_t replicas = dc / n_shard;
                overlapped += allReduce(grad_bytes / n_shard, replicas, groupBandwidth(mdl, L.t * n_shard, replicas));
            }
        }
        const double bucket = std::min(overlapped, static_cast<double>(sc.hardware.overheads.ddp_bucket_bytes) /
                                                       std::max(bw_dp, 1.0));
        const double reduce_exposed = std::max(0.0, overlapped - worst.backward - worst.recompute) + bucket;
        at(TimeComponent::GradientReduce) = reduce_exposed + exposed;
        hidden(TimeComponent::GradientReduce) = std::max(0.0, overlapped - reduce_exposed);
    }
    // The optimizer step: every byte of the trainable shard's weights,
    // master weights and states read and written, the gradients read.
    const double shard = par.zero_stage >= 1 ? static_cast<double>(dc) : 1.0;
    const double state_bytes = optimizerBuffersPerParam(sc.training.optimizer) * bytesOf(plan.optimizer_states);
    const double per_param = 2.0 * (bytesOf(plan.weights) + (plan.master ? bytesOf(*plan.master) : 0.0) + state_bytes) +
                             bytesOf(plan.gradients);
    if (par.offload_optimizer) {
        // ZeRO-Offload: gradients down, updated parameters up (the host's
        // Adam is not modelled: docs/step-time.md).
        if (mdl.pcie_bytes_per_s > 0)
            at(TimeComponent::Offload) +=
                sp.trainable / shard * (bytesOf(plan.gradients) + bytesOf(plan.weights)) / mdl.pcie_bytes_per_s;
    } else if (!sc.training.optimizer_in_backward) {
        at(TimeComponent::Optimizer) = sp.trainable / shard * per_param / (mdl.hbm_bytes_per_s * k.hbm);
    } else {
        at(TimeComponent::Compute) += sp.trainable / shard * per_param / (mdl.hbm_bytes_per_s * k.hbm);
    }
    for (double x : br) out.step_seconds += x;
    out.slowest_stage = worst_stage.index;
    out.slowest = {worst_stage.index, worst_stage.num_layers, worst.forward, worst.backward, worst.recompute,
                   worst.tp + worst.cp + worst.ep + worst.pp + worst.fsdp + worst.offload};
    if (out.step_seconds > 0) {
        const double tokens = static_cast<double>(L.b) * m * static_cast<double>(L.d) * static_cast<double>(L.s);
        out.tokens_per_second_per_gpu = tokens / out.step_seconds / static_cast<double>(par.totalGpus());
        out.mfu = out.tokens_per_second_per_gpu * mdl.model_flops_per_token / mdl.peak_16bit_flops;
    }
    return out;
}

Expected<StepTime> stepTime(const Scenario& sc) {
    if (Status st = validate(sc); !st) return st.error();
    auto model = prepareStepTime(sc);
    if (!model) return model.error();
    return stepTime(*model, sc);
}

std::vector<StageTime> stageTimes(const StepTimeModel& mdl, const Scenario& sc) {
    const LayoutView L = viewOf(sc);
    std::vector<StageTime> out;
    const BlockCosts blocks = blockCosts(mdl, sc, L);
    for (int64_t i = 0; i < L.p; ++i) {
        const PipelineStage st = pipelineStage(sc.model, sc.parallelism, L.m, i);
        const Parts p = stageParts(mdl, sc, L, blocks, st);
        out.push_back({i, st.num_layers, p.forward, p.backward, p.recompute,
                       p.tp + p.cp + p.ep + p.pp + p.fsdp + p.offload});
    }
    return out;
}

std::string slowReason(const StepTime& time) {
    if (time.step_seconds <= 0) return {};
    std::string out;
    for (TimeComponent c : allTimeComponents()) {
        if (c == TimeComponent::Compute) continue;
        const double share = time[c] / time.step_seconds;
        if (share < 0.15) continue;
        if (!out.empty()) out += ", ";
        std::string name(timeComponentName(c));
        if (name.size() > 1 && std::islower(static_cast<unsigned char>(name[1])))  // "FSDP" stays
            name[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[0])));
        out += name + " " + std::to_string(static_cast<int>(std::lround(share * 100))) + "%";
    }
    return out;
}

}  // namespace trainmem
