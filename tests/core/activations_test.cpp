// The activation account against Korthikanti et al. 2022 (arXiv 2205.05198,
// Table 2), against hand arithmetic over the ops of a Hugging Face block, and
// for the behaviour every setting must have (flash, GQA, dropout, SP, CP,
// chunked loss, LoRA, MoE). The CPU ground truth from autograd is
// activation_truth_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/activations/activations.h"
#include "tests/core/test_models.h"

namespace trainmem {
namespace {

// GPT-3 175B (Brown et al. 2020, Table 2.1; Korthikanti et al. 2022 Table 3):
// h = 12288, a = 96 heads, s = 2048, 4h MLP, dropout 0.1 everywhere.
ModelConfig gpt3_175b() {
    ModelConfig m;
    m.name = "GPT-3 175B";
    m.family = "gpt2";
    m.hidden_size = 12288;
    m.num_layers = 96;
    m.num_heads = 96;
    m.num_kv_heads = 96;
    m.head_dim = 128;
    m.ffn_hidden_size = 4 * 12288;
    m.vocab_size = 51200;
    m.max_position_embeddings = 2048;
    m.mlp = MlpKind::Plain;
    m.norm = NormKind::LayerNorm;
    m.hidden_act = "gelu";
    m.learned_positions = true;
    m.attention_dropout = 0.1;
    m.hidden_dropout = 0.1;
    m.embedding_dropout = 0.1;
    return m;
}

TrainingConfig megatronTraining(Checkpointing ckpt = Checkpointing::None) {
    TrainingConfig t;
    t.micro_batch_size = 1;
    t.sequence_length = 2048;
    t.precision = Precision::MixedFp16;
    t.kernels = KernelProfile::Megatron;
    t.attention = AttentionImpl::Eager;
    t.checkpointing = ckpt;
    return t;
}

ParallelConfig tensorParallel(int64_t t, bool sp) {
    ParallelConfig p;
    p.tensor = t;
    p.sequence_parallel = sp;
    return p;
}

// Korthikanti Table 2, in the paper's symbols: bytes per layer.
constexpr double s = 2048, b = 1, h = 12288, a = 96, t = 8;
constexpr double sbh = s * b * h;
constexpr double attn = 5 * a * s / h;  // the 5as/h term

TEST(KorthikantiTable2, NoParallelism) {
    const LayerActivations la = layerActivations(gpt3_175b(), megatronTraining(), tensorParallel(1, false), false);
    EXPECT_EQ(la.saved, static_cast<int64_t>(sbh * (34 + attn)));
}

TEST(KorthikantiTable2, TensorParallel) {
    const LayerActivations la = layerActivations(gpt3_175b(), megatronTraining(), tensorParallel(8, false), false);
    EXPECT_EQ(la.saved, static_cast<int64_t>(sbh * (10 + 24 / t + attn / t)));
}

TEST(KorthikantiTable2, TensorAndSequenceParallel) {
    const LayerActivations la = layerActivations(gpt3_175b(), megatronTraining(), tensorParallel(8, true), false);
    EXPECT_EQ(la.saved, static_cast<int64_t>(sbh * (34 / t + attn / t)));
}

TEST(KorthikantiTable2, TensorParallelWithSelectiveRecompute) {
    const LayerActivations la = layerActivations(gpt3_175b(), megatronTraining(Checkpointing::Selective),
                                                 tensorParallel(8, false), false);
    EXPECT_EQ(la.saved_selective, static_cast<int64_t>(sbh * (10 + 24 / t)));
}

TEST(KorthikantiTable2, TensorAndSequenceParallelWithSelectiveRecompute) {
    const LayerActivations la = layerActivations(gpt3_175b(), megatronTraining(Checkpointing::Selective),
                                                 tensorParallel(8, true), false);
    EXPECT_EQ(la.saved_selective, static_cast<int64_t>(sbh * 34 / t));
}

TEST(KorthikantiTable2, FullRecomputeKeepsTheBlockInput) {
    const TrainingConfig full = megatronTraining(Checkpointing::Full);
    EXPECT_EQ(layerActivations(gpt3_175b(), full, tensorParallel(1, false), false).checkpoint_input,
              static_cast<int64_t>(2 * sbh));
    EXPECT_EQ(layerActivations(gpt3_175b(), full, tensorParallel(8, false), false).checkpoint_input,
              static_cast<int64_t>(2 * sbh));
    // With sequence parallelism the kept input is the rank's slice of the sequence.
    EXPECT_EQ(layerActivations(gpt3_175b(), full, tensorParallel(8, true), false).checkpoint_input,
              static_cast<int64_t>(2 * sbh / t));
}

TEST(KorthikantiTable2, PaperSection4Point1Breakdown) {
    // Attention 11sbh + 5as^2b, MLP 19sbh, two LayerNorms 4sbh.
    int64_t attention = 0, mlp = 0, norms = 0;
    for (const SavedTensor& st : blockSavedTensors(gpt3_175b(), megatronTraining(), tensorParallel(1, false), false)) {
        if (st.op.find("layernorm") != std::string::npos)
            norms += st.bytes;
        else if (st.op.find("mlp") != std::string::npos || st.op.find("gate_proj") != std::string::npos ||
                 st.op.find("down_proj") != std::string::npos)
            mlp += st.bytes;
        else
            attention += st.bytes;
    }
    EXPECT_EQ(attention, static_cast<int64_t>(11 * sbh + 5 * a * s * s * b));
    EXPECT_EQ(mlp, static_cast<int64_t>(19 * sbh));
    EXPECT_EQ(norms, static_cast<int64_t>(4 * sbh));
}

TEST(KorthikantiSection4Point3, OutputLayerAndEmbeddingDropout) {
    // Output layer: 4sbh/t (LayerNorm and projection inputs) + 4sbv/t
    // (fp32 cross-entropy); the embedding keeps its dropout mask, sbh/t.
    // The paper leaves out what the cross-entropy saves beside its softmax:
    // Megatron's cross_entropy.py `ctx.save_for_backward(exp_logits,
    // target_mask, masked_target_1d)`, a bool and an int64 per token (9sb).
    const double v = 51200;
    const EndActivations e = endActivations(gpt3_175b(), megatronTraining(), tensorParallel(8, true));
    EXPECT_EQ(e.final_norm_saved + e.logits_saved, static_cast<int64_t>(4 * sbh / t * (1 + v / h) + 9 * s * b));
    EXPECT_EQ(e.embedding_saved, static_cast<int64_t>(sbh / t));
}

TEST(MegatronProfile, DropoutOffRemovesMasksAndTheDropoutOutput) {
    // p = 0: no masks (1 byte each: two sbh, one as^2b) and the softmax
    // output is what the value matmul keeps: 5as^2b becomes 2as^2b.
    ModelConfig m = gpt3_175b();
    m.attention_dropout = m.hidden_dropout = 0;
    const LayerActivations la = layerActivations(m, megatronTraining(), tensorParallel(1, false), false);
    EXPECT_EQ(la.saved, static_cast<int64_t>(sbh * (32 + 2 * a * s / h)));
}

// Llama-2-7B shapes (test_models.h): h 4096, 32 heads of 128, SwiGLU 11008, RMSNorm, no bias, no dropout.
using testing::llama2_7b;

TrainingConfig hfTraining(int64_t micro_batch, int64_t seq, AttentionImpl attention,
                          KernelProfile kernels = KernelProfile::Eager) {
    TrainingConfig t;
    t.micro_batch_size = micro_batch;
    t.sequence_length = seq;
    t.precision = Precision::MixedBf16;
    t.attention = attention;
    t.kernels = kernels;
    return t;
}

TEST(EagerProfile, LlamaBlockOpByOpInBf16) {
    // modeling_llama.py in bf16, written out op by op (bytes):
    //   each RMSNorm: fp32 upcast 4sbh + fp32 rstd 4bs + bf16 normalised 2sbh   x2
    //   q/k/v input 2sbh; rotary q 2sbh, key 2sbh, value copy 2sbh; o_proj input 2sbh;
    //   gate/up input 2sbh
    //   softmax fp32 output 4bHs^2 + its bf16 cast 2bHs^2
    //   gate output, SiLU output, up output, down_proj input: 2sbf each
    const double S = 1024, B = 2, H = 4096, F = 11008, NH = 32;
    const double expected = 2 * (4 * S * B * H + 4 * B * S + 2 * S * B * H) + 6 * 2 * S * B * H +
                            6 * B * NH * S * S + 4 * 2 * S * B * F;
    const LayerActivations la = layerActivations(llama2_7b(), hfTraining(2, 1024, AttentionImpl::Eager), {}, false);
    EXPECT_EQ(la.saved, static_cast<int64_t>(expected));
    // Selective recomputation drops exactly the 6bHs^2.
    EXPECT_EQ(la.saved - la.saved_selective, static_cast<int64_t>(6 * B * NH * S * S));
}

TEST(EagerProfile, AutocastKeepsAnFp32StreamAndOneCastPerLinear) {
    // torch.autocast with fp32 weights: the residual stream and the RMSNorm
    // tensors are fp32 (input 4sbh, no upcast; normalised 4sbh), and q, k, v,
    // gate and up each keep their own bf16 cast of the fp32 norm output
    // (autocast caches casts of leaf weights only): 5 x 2sbh.
    //   norms 2 x (4 + 4)sbh + 2 x 4bs; casts 10sbh; q, key, value, o_proj input 4 x 2sbh
    //   softmax 4bHs^2 + cast 2bHs^2; MLP 4 x 2sbf: 34sbh + 8sbf + 6bHs^2 + 8bs in all
    const double S = 1024, B = 2, H = 4096, F = 11008, NH = 32;
    TrainingConfig amp = hfTraining(2, 1024, AttentionImpl::Eager);
    amp.precision = Precision::AmpBf16;
    const LayerActivations la = layerActivations(llama2_7b(), amp, {}, false);
    EXPECT_EQ(la.saved, static_cast<int64_t>(34 * S * B * H + 8 * S * B * F + 6 * B * NH * S * S + 8 * B * S));
    EXPECT_EQ(la.checkpoint_input, static_cast<int64_t>(4 * S * B * H));  // the fp32 block input
}

TEST(FlashAttention, KeepsNoQuadraticTerm) {
    for (KernelProfile k : {KernelProfile::Eager, KernelProfile::Fused, KernelProfile::Megatron}) {
        const int64_t at2k = layerActivations(llama2_7b(), hfTraining(1, 2048, AttentionImpl::Flash, k), {}, false).saved;
        const int64_t at4k = layerActivations(llama2_7b(), hfTraining(1, 4096, AttentionImpl::Flash, k), {}, false).saved;
        // Everything is linear in s except the 16-byte rng state.
        EXPECT_EQ(at4k - 16, 2 * (at2k - 16)) << kernelProfileName(k);
        const int64_t eager2k = layerActivations(llama2_7b(), hfTraining(1, 2048, AttentionImpl::Eager, k), {}, false).saved;
        const int64_t eager4k = layerActivations(llama2_7b(), hfTraining(1, 4096, AttentionImpl::Eager, k), {}, false).saved;
        EXPECT_GT(eager4k, 2 * eager2k + 1) << kernelProfileName(k);
    }
}

TEST(FlashAttention, KeepsQueryKeyValueOutputAndLogsumexp) {
    // Fused profile: RMSNorm keeps its bf16 input + fp32 rstd; flash keeps
    // q, k, v, the output (also o_proj's input) and an fp32 logsumexp of
    // b*H*s; Liger SwiGLU keeps gate and up; down_proj its input.
    const double S = 4096, B = 1, H = 4096, F = 11008, NH = 32;
    const double norms = 2 * (2 * S * B * H + 4 * S * B);
    const double attention = 2 * S * B * H /* qkv input */ + 4 * 2 * S * B * H /* q k v out */ + 4 * B * NH * S + 16;
    const double mlp = 2 * S * B * H + 3 * 2 * S * B * F;
    const LayerActivations la =
        layerActivations(llama2_7b(), hfTraining(1, 4096, AttentionImpl::Flash, KernelProfile::Fused), {}, false);
    EXPECT_EQ(la.saved, static_cast<int64_t>(norms + attention + mlp));
    EXPECT_EQ(la.saved, la.saved_selective);  // nothing left for selective recomputation to drop
}

TEST(GroupedQueryAttention, NarrowsFlashKeysAndValues) {
    // Llama-3-8B-like: 32 query heads, 8 KV heads of 128. Flash keeps k and v
    // KV-wide: 2 tensors x 2 bytes x s*b*(32-8)*128 less than MHA.
    ModelConfig gqa = llama2_7b();
    gqa.num_kv_heads = 8;
    const TrainingConfig tr = hfTraining(1, 4096, AttentionImpl::Flash);
    const int64_t mha = layerActivations(llama2_7b(), tr, {}, false).saved;
    EXPECT_EQ(mha - layerActivations(gqa, tr, {}, false).saved, int64_t{2} * 2 * 4096 * (32 - 8) * 128);
}

TEST(GroupedQueryAttention, EagerRepeatKvKeepsFullWidthCopies) {
    // HF's repeat_kv materialises H-wide keys and values, which matmul keeps:
    // eager attention saves the same with 8 KV heads as with 32.
    ModelConfig gqa = llama2_7b();
    gqa.num_kv_heads = 8;
    const TrainingConfig tr = hfTraining(1, 2048, AttentionImpl::Eager);
    EXPECT_EQ(layerActivations(gqa, tr, {}, false).saved, layerActivations(llama2_7b(), tr, {}, false).saved);
}

TEST(SequenceParallel, DividesTheBlockByTheTensorDegree) {
    for (KernelProfile k : {KernelProfile::Eager, KernelProfile::Fused, KernelProfile::Megatron}) {
        const TrainingConfig tr = hfTraining(1, 4096, AttentionImpl::Flash, k);
        const int64_t one = layerActivations(llama2_7b(), tr, {}, false).saved;
        const int64_t tp4sp = layerActivations(llama2_7b(), tr, tensorParallel(4, true), false).saved;
        const int64_t tp4 = layerActivations(llama2_7b(), tr, tensorParallel(4, false), false).saved;
        // Only the 16-byte rng state of flash attention is not split.
        EXPECT_EQ(tp4sp - 16, (one - 16) / 4) << kernelProfileName(k);
        EXPECT_GT(tp4, tp4sp) << kernelProfileName(k);  // without SP the norms' tensors stay whole
    }
}

TEST(ContextParallel, DividesTheSequence) {
    // Flash: a rank keeps its s/c slice; the same as a sequence c times shorter.
    ParallelConfig cp;
    cp.context = 4;
    const int64_t ring = layerActivations(llama2_7b(), hfTraining(1, 8192, AttentionImpl::Flash), cp, false).saved;
    const int64_t shorter = layerActivations(llama2_7b(), hfTraining(1, 2048, AttentionImpl::Flash), {}, false).saved;
    EXPECT_EQ(ring, shorter);
    // Its backward also circulates K and V chunks (send + receive, with gradients).
    EXPECT_GT(layerActivations(llama2_7b(), hfTraining(1, 8192, AttentionImpl::Flash), cp, false).backward_working,
              layerActivations(llama2_7b(), hfTraining(1, 2048, AttentionImpl::Flash), {}, false).backward_working);
}

TEST(DropoutProbabilityZero, RemovesMasks) {
    // GPT-2 with eager attention: every dropout adds a 1-byte mask; attention
    // dropout also keeps its output (a second bHs^2 tensor in the compute dtype).
    ModelConfig with = gpt3_175b();
    with.hidden_size = 768;
    with.num_heads = with.num_kv_heads = 12;
    with.head_dim = 64;
    with.ffn_hidden_size = 3072;
    ModelConfig without = with;
    without.attention_dropout = without.hidden_dropout = 0;
    const TrainingConfig tr = hfTraining(4, 1024, AttentionImpl::Eager);
    const double S = 1024, B = 4, H = 768, NH = 12;
    EXPECT_EQ(layerActivations(with, tr, {}, false).saved - layerActivations(without, tr, {}, false).saved,
              static_cast<int64_t>(2 * S * B * H + (1 + 2) * B * NH * S * S));
}

TEST(ChunkedLoss, LowersTheLossPeak) {
    ModelConfig m = llama2_7b();
    m.vocab_size = 128256;
    TrainingConfig standard = hfTraining(1, 8192, AttentionImpl::Flash);
    TrainingConfig chunked = standard;
    chunked.loss = LossImpl::Chunked;
    chunked.loss_chunks = 8;
    const EndActivations a = endActivations(m, standard, {});
    const EndActivations c = endActivations(m, chunked, {});
    // Standard: bf16 logits 2sbV + fp32 copy 4sbV + fp32 log-softmax 4sbV
    // (+ the int64 labels: with b = 1, the padded s + 1 of them).
    const double SV = 8192.0 * 128256;
    EXPECT_EQ(a.loss_peak, static_cast<int64_t>(10 * SV + 8 * 8193));
    // Chunked: bf16 logits, fp32 logsumexp and labels, and one chunk's fp32 copy and log-softmax.
    EXPECT_EQ(c.loss_peak, static_cast<int64_t>(2 * SV + 12 * 8192 + 2 * 4 * SV / 8));
    EXPECT_LT(c.loss_peak, a.loss_peak);
    EXPECT_LT(c.loss_backward_peak, a.loss_backward_peak);
}

TEST(FusedLinearCrossEntropy, NeverMaterialisesTheLogits) {
    // Liger: chunk rows = next_pow2(ceil(bs / ceil(V/h))) = next_pow2(ceil(8192/32)) = 256.
    ModelConfig m = llama2_7b();
    m.vocab_size = 128256;
    TrainingConfig tr = hfTraining(1, 8192, AttentionImpl::Flash, KernelProfile::Fused);
    // The kernel profile alone no longer chooses the loss.
    EXPECT_EQ(endActivations(m, tr, {}).logits_saved, endActivations(m, hfTraining(1, 8192, AttentionImpl::Flash), {}).logits_saved);
    tr.loss = LossImpl::FusedLinear;
    const EndActivations e = endActivations(m, tr, {});
    const double grad_input = 2.0 * 8192 * 4096, grad_weight = 2.0 * 128256 * 4096;
    EXPECT_EQ(e.logits_saved, static_cast<int64_t>(grad_input + grad_weight));
    EXPECT_EQ(e.loss_peak, static_cast<int64_t>(grad_input + grad_weight + 2.0 * 256 * 128256 + 4 * 8192));
}

TEST(Lora, FrozenBaseKeepsNoInputsForWeightGradients) {
    TrainingConfig full = hfTraining(1, 2048, AttentionImpl::Flash);
    TrainingConfig lora = full;
    lora.finetuning = Finetuning::Lora;
    lora.lora_rank = 16;
    lora.lora_targets = {"q_proj", "v_proj"};
    const LayerActivations f = layerActivations(llama2_7b(), full, {}, false);
    const LayerActivations l = layerActivations(llama2_7b(), lora, {}, false);
    // Frozen: the norms' weight-gradient operands (2 x 2sbh), o_proj's input is
    // the flash output (kept anyway), gate/up input (2sbh), down_proj input
    // (2sbf). Added: two rank-16 intermediates (2 x 2*s*16). The q/v adapters
    // keep the norm output that the frozen q/k/v would otherwise have kept.
    const double S = 2048, H = 4096, F = 11008;
    EXPECT_EQ(f.saved - l.saved, static_cast<int64_t>(2 * 2 * S * H + 2 * S * H + 2 * S * F - 2 * 2 * S * 16));
    TrainingConfig lora_dropout = lora;
    lora_dropout.lora_dropout = 0.05;
    // With lora_dropout each adapter keeps its own dropped copy and mask instead.
    EXPECT_EQ(layerActivations(llama2_7b(), lora_dropout, {}, false).saved - l.saved,
              static_cast<int64_t>(2 * (2 * S * H + S * H) - 2 * S * H));
}

TEST(MixtureOfExperts, ExpertActivationsScaleWithTopK) {
    ModelConfig m = llama2_7b();
    m.family = "mixtral";
    m.num_kv_heads = 8;
    MoeConfig moe;
    moe.num_experts = 8;
    moe.experts_per_token = 2;
    moe.expert_ffn = 14336;
    m.moe = moe;
    const TrainingConfig tr = hfTraining(1, 4096, AttentionImpl::Flash, KernelProfile::Fused);
    const int64_t top2 = layerActivations(m, tr, {}, true).saved;
    m.moe->experts_per_token = 4;
    const int64_t top4 = layerActivations(m, tr, {}, true).saved;
    // Per extra token-slot: routed tokens h, gate + up + down input 3f,
    // expert output h (bf16), routing weight (bf16), top-k index (int64) and
    // probability (fp32).
    const double S = 4096, H = 4096, F = 14336;
    EXPECT_EQ(top4 - top2, static_cast<int64_t>(2 * S * (2 * (H + 3 * F + H + 1) + 8 + 4)));
    m.moe->capacity_factor = 1.25;
    EXPECT_GT(layerActivations(m, tr, {}, true).saved, top4);
}

TEST(Fp8, LinearInputsAreKeptInOneByte) {
    TrainingConfig bf16 = hfTraining(1, 4096, AttentionImpl::Flash, KernelProfile::Megatron);
    TrainingConfig fp8 = bf16;
    fp8.precision = Precision::Fp8Mixed;
    // Megatron block inputs of qkv, fc1 (sbh each), fc2 (sbf) drop from 2 to
    // 1 byte; o_proj keeps an fp8 copy (sbh) beside flash's bf16 output.
    const double S = 4096, H = 4096, F = 11008;
    EXPECT_EQ(layerActivations(llama2_7b(), bf16, {}, false).saved - layerActivations(llama2_7b(), fp8, {}, false).saved,
              static_cast<int64_t>(2 * S * H + S * F - S * H));
}

TEST(BlockListing, SumsToTheHotPathTotals) {
    for (KernelProfile k : {KernelProfile::Eager, KernelProfile::Fused, KernelProfile::Megatron}) {
        for (AttentionImpl at : {AttentionImpl::Eager, AttentionImpl::Flash}) {
            const TrainingConfig tr = hfTraining(2, 512, at, k);
            int64_t sum = 0, core = 0;
            for (const SavedTensor& st : blockSavedTensors(gpt3_175b(), tr, tensorParallel(2, true), false)) {
                EXPECT_GT(st.bytes, 0) << st.op << " " << st.tensor;
                sum += st.bytes;
                if (st.attention_core) core += st.bytes;
            }
            const LayerActivations la = layerActivations(gpt3_175b(), tr, tensorParallel(2, true), false);
            EXPECT_EQ(sum, la.saved);
            EXPECT_EQ(sum - core, la.saved_selective);
        }
    }
}

}  // namespace
}  // namespace trainmem
