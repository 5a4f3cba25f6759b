// Model states (weights, gradients, master weights, optimizer states) against
// the seeds' arithmetic and the ZeRO paper.
#include <gtest/gtest.h>

#include "core/account/estimate.h"
#include "tests/core/test_models.h"

namespace trainmem {
namespace {

using testing::gpt2_xl;
using testing::llama2_7b;
using testing::scenarioOf;

int64_t modelStatesTotal(const Estimate& e) {
    const ModelStates& m = e.peak.model_states;
    return m.weights + m.gradients + m.optimizer_states + m.master_weights;
}

// Seed figure: "7B params, FP32 Adam = 7B * (4+4+4+4) = 112 GB".
TEST(SeedArithmetic, Fp32AdamCostsSixteenBytesPerParameter) {
    Scenario s = scenarioOf(llama2_7b());
    s.training.precision = Precision::Fp32;
    s.training.optimizer = OptimizerKind::Adam;
    const Estimate e = estimateValidated(s);
    const int64_t psi = 6'738'415'616;  // Llama-2-7B as Hugging Face instantiates it
    EXPECT_EQ(e.parameters.total, psi);
    EXPECT_EQ(e.peak.model_states.weights, 4 * psi);
    EXPECT_EQ(e.peak.model_states.gradients, 4 * psi);
    EXPECT_EQ(e.peak.model_states.optimizer_states, 8 * psi);
    EXPECT_EQ(e.peak.model_states.master_weights, 0);
    EXPECT_EQ(modelStatesTotal(e), 16 * psi);
}

// ZeRO paper §3.1 / seed lecture notes: mixed precision Adam is
// 2 (fp16 weights) + 2 (fp16 grads) + 12 (fp32 master, m, v) = 16 psi;
// "for GPT-2 with 1.5B parameters, this equals 24GB".
TEST(SeedArithmetic, MixedPrecisionAdamIsSixteenPsiForGpt2_1_5B) {
    Scenario s = scenarioOf(gpt2_xl());
    s.training.precision = Precision::MixedFp16;
    s.training.optimizer = OptimizerKind::Adam;
    const Estimate e = estimateValidated(s);
    const int64_t psi = 1'557'611'200;
    EXPECT_EQ(e.parameters.total, psi);
    EXPECT_EQ(e.peak.model_states.weights, 2 * psi);
    EXPECT_EQ(e.peak.model_states.gradients, 2 * psi);
    EXPECT_EQ(e.peak.model_states.master_weights, 4 * psi);
    EXPECT_EQ(e.peak.model_states.optimizer_states, 8 * psi);
    EXPECT_NEAR(static_cast<double>(modelStatesTotal(e)) / 1e9, 24.9, 0.05);
}

// ZeRO paper Figure 1: Psi = 7.5B, N_d = 64, K = 12: baseline 120 GB,
// P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB per device. We measure
// bytes per parameter on a real model and scale to the paper's 7.5B.
TEST(ZeroSharding, ReproducesZeroPaperFigure1) {
    const double paper_gb[] = {120.0, 31.4, 16.6, 1.9};
    for (int stage = 0; stage <= 3; ++stage) {
        Scenario s = scenarioOf(llama2_7b());
        s.training.precision = Precision::MixedFp16;
        s.training.optimizer = OptimizerKind::Adam;
        s.parallelism.data = 64;
        s.parallelism.zero_stage = stage;
        const Estimate e = estimateValidated(s);
        const double per_param = static_cast<double>(modelStatesTotal(e)) / static_cast<double>(e.parameters.total);
        EXPECT_NEAR(per_param * 7.5, paper_gb[stage], 0.06) << "ZeRO stage " << stage;
    }
}

// Megatron-LM accumulates gradients in fp32 (main_grad): 2 + 4 + 12 = 18 B.
TEST(PrecisionRecipes, Fp32GradientsMakeMegatronEighteenBytes) {
    Scenario s = scenarioOf(llama2_7b());
    s.training.precision = Precision::MixedBf16;
    s.training.grad_dtype = DType::Fp32;
    const Estimate e = estimateValidated(s);
    EXPECT_EQ(modelStatesTotal(e), 18 * e.parameters.total);
}

// torchtune's pure bf16: 2 + 2 + 2x2 (bf16 Adam states) = 8 B; AMP keeps fp32
// weights and gradients: 4 + 4 + 8 = 16 B and no master copy.
TEST(PrecisionRecipes, PureBf16AndAutocastBytesPerParameter) {
    Scenario s = scenarioOf(llama2_7b());
    s.training.precision = Precision::PureBf16;
    EXPECT_EQ(modelStatesTotal(estimateValidated(s)), 8 * 6'738'415'616);
    s.training.precision = Precision::AmpBf16;
    const Estimate amp = estimateValidated(s);
    EXPECT_EQ(amp.peak.model_states.master_weights, 0);
    EXPECT_EQ(modelStatesTotal(amp), 16 * 6'738'415'616);
}

// Each optimizer's state per parameter, fp32 states (PyTorch's state dicts:
// SGD none; momentum_buffer; Adagrad state_sum; RMSprop square_avg; Adam
// exp_avg + exp_avg_sq; Lion exp_avg).
TEST(OptimizerStates, BytesPerParameterOfEachOptimizer) {
    const int64_t psi = 6'738'415'616;
    struct Row { OptimizerKind kind; int64_t bytes; };
    const Row rows[] = {{OptimizerKind::Sgd, 0},      {OptimizerKind::SgdMomentum, 4 * psi},
                        {OptimizerKind::Adagrad, 4 * psi}, {OptimizerKind::Rmsprop, 4 * psi},
                        {OptimizerKind::Adam, 8 * psi},    {OptimizerKind::AdamW, 8 * psi},
                        {OptimizerKind::Lion, 4 * psi}};
    for (const Row& r : rows) {
        Scenario s = scenarioOf(llama2_7b());
        s.training.precision = Precision::Fp32;
        s.training.optimizer = r.kind;
        EXPECT_EQ(estimateValidated(s).peak.model_states.optimizer_states, r.bytes) << optimizerName(r.kind);
    }
}

// Adafactor (beta1 = None): a row and a column accumulator per matrix, the
// full second moment for vectors. Llama-2-7B by hand: per block q,k,v,o are
// 4096x4096 (8192 each), gate/up 11008x4096 and down 4096x11008 (15104 each):
// 4*8192 + 3*15104 = 78,080 per block, x32 = 2,498,560; embedding and head
// 32000x4096: 36,096 each; norms 2*4096 per block + the final 4096 = 266,240.
TEST(OptimizerStates, AdafactorFactoredSecondMoment) {
    Scenario s = scenarioOf(llama2_7b());
    s.training.precision = Precision::Fp32;
    s.training.optimizer = OptimizerKind::Adafactor;
    const int64_t elems = 2'498'560 + 2 * 36'096 + 266'240;
    EXPECT_EQ(estimateValidated(s).peak.model_states.optimizer_states, 4 * elems);
}

// Muon keeps one momentum buffer for hidden 2-D matrices; embeddings, head and
// norms fall back to AdamW (two buffers). Llama-2-7B: embedding and head
// 131,072,000 each, norms 266,240, hidden matrices the rest.
TEST(OptimizerStates, MuonFallsBackToAdamWForEmbeddingsHeadAndNorms) {
    Scenario s = scenarioOf(llama2_7b());
    s.training.precision = Precision::Fp32;
    s.training.optimizer = OptimizerKind::Muon;
    const int64_t fallback = 2 * 131'072'000 + 266'240;
    const int64_t hidden = 6'738'415'616 - fallback;
    EXPECT_EQ(estimateValidated(s).peak.model_states.optimizer_states, 4 * hidden + 8 * fallback);
}

// bitsandbytes 8-bit AdamW: 1 byte per state plus an fp32 absmax per 256
// elements for tensors of >= 4096 elements; small tensors stay 32-bit.
TEST(OptimizerStates, EightBitAdamIsAboutTwoBytesPerParameter) {
    Scenario s = scenarioOf(llama2_7b());
    s.training.optimizer = OptimizerKind::AdamW8bit;
    const Estimate e = estimateValidated(s);
    const double per_param = static_cast<double>(e.peak.model_states.optimizer_states) / 6'738'415'616.0;
    EXPECT_NEAR(per_param, 2.0 * (1.0 + 4.0 / 256.0), 0.001);
}

TEST(Offload, OptimizerOffloadMovesMasterAndStatesToTheHost) {
    Scenario s = scenarioOf(llama2_7b());
    s.parallelism.data = 8;
    s.parallelism.zero_stage = 2;
    const Estimate on_gpu = estimateValidated(s);
    s.parallelism.offload_optimizer = true;
    const Estimate off = estimateValidated(s);
    EXPECT_EQ(off.peak.model_states.optimizer_states, 0);
    EXPECT_EQ(off.peak.model_states.master_weights, 0);
    // Host: fp32 master + Adam states + an fp32 gradient copy = 16 B per parameter of the shard.
    EXPECT_NEAR(static_cast<double>(off.host_bytes), 16.0 * 6'738'415'616.0 / 8.0, 8.0);
    EXPECT_LT(off.peak.allocated_bytes, on_gpu.peak.allocated_bytes);
}

}  // namespace
}  // namespace trainmem
