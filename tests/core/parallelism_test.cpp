// Effects of each parallel degree and pipeline schedule, and the invariants
// every estimate must satisfy.
#include <gtest/gtest.h>

#include "core/scenario/batch.h"
#include "core/account/estimate.h"
#include "core/training/pipeline.h"
#include "core/account/step_account.h"
#include "tests/core/test_models.h"

namespace trainmem {
namespace {

using testing::llama2_7b;
using testing::llama31_405b;
using testing::mixtral_8x7b;
using testing::scenarioOf;

// Korthikanti et al. 2022 §4.2.3: with 1F1B the first stage keeps p
// micro-batches in flight; with interleaving (v model chunks) that grows by
// (1 + (p-1)/(p v)).
TEST(PipelineSchedules, InFlightMicrobatchesMatchKorthikanti) {
    const int64_t p = 8, m = 64;
    for (int64_t i = 0; i < p; ++i)
        EXPECT_DOUBLE_EQ(inFlightMicrobatches(PipelineSchedule::OneFOneB, p, 1, m, i), static_cast<double>(p - i));
    for (int64_t v : {2, 4}) {
        const double paper = static_cast<double>(p) * (1.0 + static_cast<double>(p - 1) / static_cast<double>(p * v));
        EXPECT_DOUBLE_EQ(inFlightMicrobatches(PipelineSchedule::Interleaved1F1B, p, v, m, 0), paper) << "v=" << v;
    }
    EXPECT_DOUBLE_EQ(inFlightMicrobatches(PipelineSchedule::GPipe, p, 1, m, 3), static_cast<double>(m));
    // Fewer micro-batches than stages: at most m are in flight.
    EXPECT_DOUBLE_EQ(inFlightMicrobatches(PipelineSchedule::OneFOneB, p, 1, 3, 0), 3.0);
}

TEST(PipelineSchedules, LayersSplitEvenlyWithRemainderOnLastStages) {
    ModelConfig m = llama2_7b();
    m.num_layers = 30;
    ParallelConfig par;
    par.pipeline = 4;  // 30 = 7 + 7 + 8 + 8
    int64_t next = 0;
    const int64_t expected[] = {7, 7, 8, 8};
    for (int64_t i = 0; i < 4; ++i) {
        const PipelineStage st = pipelineStage(m, par, 8, i);
        EXPECT_EQ(st.first_layer, next);
        EXPECT_EQ(st.num_layers, expected[i]);
        next += st.num_layers;
    }
    EXPECT_EQ(next, 30);
}

// The first 1F1B stage holds p micro-batches of L/p blocks: L blocks' worth
// of one micro-batch, whatever p is (Korthikanti §4.2.3).
TEST(PipelineSchedules, FirstStageHoldsAllLayersWorthOfActivations) {
    Scenario s = scenarioOf(llama2_7b());
    s.training.sequence_length = 4096;
    s.training.gradient_accumulation_steps = 16;
    const int64_t single = accountStep(s, stepInputs(s), 0).forward[Component::Activations];
    s.parallelism.pipeline = 4;
    const StepInputs in = stepInputs(s);
    const StepAccount first = accountStep(s, in, 0);
    EXPECT_EQ(first.forward[Component::Activations], single);
    EXPECT_DOUBLE_EQ(first.stage.in_flight, 4.0);
    // Later stages hold fewer micro-batches: stage 3 a quarter of stage 0.
    const StepAccount last = accountStep(s, in, 3);
    EXPECT_EQ(last.forward[Component::Activations] * 4, single);
}

TEST(Sharding, MoreShardingNeverCostsMore) {
    Scenario s = scenarioOf(llama2_7b());
    s.parallelism.data = 8;
    int64_t previous = INT64_MAX;
    for (int stage = 0; stage <= 3; ++stage) {
        s.parallelism.zero_stage = stage;
        const int64_t now = estimateValidated(s).peak.allocated_bytes;
        EXPECT_LE(now, previous) << "ZeRO stage " << stage;
        previous = now;
    }
    // Hybrid sharding over groups of 4 sits between full sharding over 8 and none.
    s.parallelism.zero_stage = 3;
    const int64_t full = estimateValidated(s).peak.allocated_bytes;
    s.parallelism.shard_group = 4;
    const int64_t hybrid = estimateValidated(s).peak.allocated_bytes;
    EXPECT_GE(hybrid, full);
}

TEST(Sharding, TensorPipelineContextAndExpertDegreesEachReduceMemory) {
    Scenario base = scenarioOf(llama2_7b());
    base.training.sequence_length = 8192;
    const int64_t one = estimateValidated(base).peak.allocated_bytes;
    {
        Scenario s = base;
        s.parallelism.tensor = 4;
        s.parallelism.sequence_parallel = true;
        EXPECT_LT(estimateValidated(s).peak.allocated_bytes, one / 3);
    }
    {
        Scenario s = base;
        s.parallelism.pipeline = 4;
        s.training.gradient_accumulation_steps = 8;
        EXPECT_LT(estimateValidated(s).peak.allocated_bytes, one);
    }
    {
        Scenario s = base;
        s.parallelism.context = 4;
        s.parallelism.zero_stage = 1;
        Scenario no_cp = base;
        no_cp.parallelism.data = 4;
        no_cp.parallelism.zero_stage = 1;
        // Same model-state sharding (DP x CP), a quarter of the sequence per rank.
        EXPECT_LT(estimateValidated(s).peak.at_peak[Component::Activations],
                  estimateValidated(no_cp).peak.at_peak[Component::Activations]);
    }
    {
        Scenario s = scenarioOf(mixtral_8x7b());
        s.parallelism.data = 8;
        const int64_t no_ep = estimateValidated(s).peak.model_states.weights;
        s.parallelism.expert = 8;
        const int64_t ep = estimateValidated(s).peak.model_states.weights;
        EXPECT_LT(ep, no_ep / 4);  // experts are ~96% of Mixtral's weights
    }
}

// estimate() checks only the stages that can be heaviest; it must agree with
// the exhaustive per-stage account for every split and schedule.
TEST(PipelineSchedules, PeakIsTheHeaviestOfAllStages) {
    for (int64_t layers : {30, 32, 126})
        for (int64_t p : {2, 3, 5, 7, 8, 16})
            for (auto schedule : {PipelineSchedule::OneFOneB, PipelineSchedule::GPipe}) {
                ModelConfig m = llama2_7b();
                m.num_layers = layers;
                Scenario s = scenarioOf(m);
                s.parallelism.pipeline = p;
                s.parallelism.schedule = schedule;
                s.training.gradient_accumulation_steps = 24;
                auto stages = estimateStages(s);
                ASSERT_TRUE(stages.ok()) << stages.error().text();
                int64_t heaviest = 0;
                for (const StageEstimate& st : *stages) heaviest = std::max(heaviest, st.allocated_bytes);
                EXPECT_EQ(estimateValidated(s).peak.allocated_bytes, heaviest)
                    << "L=" << layers << " p=" << p << " " << scheduleName(schedule);
            }
}

TEST(Invariants, BreakdownSumsToPeakAndTotalsAreOrdered) {
    std::vector<Scenario> sweep;
    for (auto precision : {Precision::Fp32, Precision::AmpBf16, Precision::MixedBf16, Precision::PureBf16,
                           Precision::Fp8Mixed})
        for (auto ckpt : {Checkpointing::None, Checkpointing::Selective, Checkpointing::Full})
            for (int zero : {0, 1, 3}) {
                Scenario s = scenarioOf(llama2_7b());
                s.training.precision = precision;
                s.training.checkpointing = ckpt;
                s.parallelism.data = 4;
                s.parallelism.zero_stage = zero;
                sweep.push_back(s);
            }
    for (const Scenario& s : sweep) {
        const Estimate e = estimateValidated(s);
        int64_t sum = 0;
        for (Component c : allComponents()) {
            EXPECT_GE(e.peak.at_peak[c], 0);
            sum += e.peak.at_peak[c];
        }
        EXPECT_EQ(sum, e.peak.allocated_bytes);
        EXPECT_GE(e.peak.reserved_bytes, e.peak.allocated_bytes);
        EXPECT_GT(e.peak.device_bytes, e.peak.reserved_bytes);
        EXPECT_EQ(e.fits, e.peak.device_bytes <= e.capacity_bytes);
    }
}

TEST(Checkpointing, FullRecomputationCostsAThirdAndSavesActivations) {
    Scenario s = scenarioOf(llama2_7b());
    s.training.sequence_length = 4096;
    const Estimate none = estimateValidated(s);
    const int64_t saved_none = accountStep(s, stepInputs(s), 0).forward[Component::Activations];
    s.training.checkpointing = Checkpointing::Full;
    const Estimate full = estimateValidated(s);
    const int64_t saved_full = accountStep(s, stepInputs(s), 0).forward[Component::Activations];
    // Seed lecture notes: "33% recomputation overhead".
    EXPECT_NEAR(full.recompute_fraction, 1.0 / 3.0, 1e-9);
    EXPECT_EQ(none.recompute_fraction, 0.0);
    EXPECT_EQ(full.activations_without_recompute, none.activations_without_recompute);
    // Only each block's input is kept: far less than everything it saves.
    EXPECT_LT(saved_full * 8, saved_none);
    // Every second block: half the recompute, in between in memory.
    s.training.checkpointing = Checkpointing::EveryK;
    s.training.checkpoint_every = 2;
    const int64_t saved_half = accountStep(s, stepInputs(s), 0).forward[Component::Activations];
    EXPECT_NEAR(estimateValidated(s).recompute_fraction, 1.0 / 6.0, 1e-9);
    EXPECT_GT(saved_half, saved_full);
    EXPECT_LT(saved_half, saved_none);
}

TEST(Fits, SevenBillionFp32AdamDoesNotFitOneEightyGigabyteGpu) {
    Scenario s = scenarioOf(llama2_7b());
    s.training.precision = Precision::Fp32;
    s.training.optimizer = OptimizerKind::Adam;
    s.hardware.gpu = "A100-80GB";
    const Estimate e = estimateValidated(s);
    EXPECT_FALSE(e.fits);
    EXPECT_LT(e.headroom_bytes, 0);
    EXPECT_EQ(e.capacity_bytes, int64_t{81920} * kMiB);
}

TEST(Fits, Llama405bOn1024H100sWithThreeDParallelismFits) {
    Scenario s = scenarioOf(llama31_405b());
    s.training.sequence_length = 8192;
    s.training.checkpointing = Checkpointing::Full;
    s.parallelism.tensor = 8;
    s.parallelism.sequence_parallel = true;
    s.parallelism.pipeline = 16;
    s.parallelism.data = 8;
    s.parallelism.zero_stage = 1;
    s.parallelism.microbatches = 32;
    s.training.gradient_accumulation_steps = 32;
    const Estimate e = estimateValidated(s);
    EXPECT_EQ(e.total_gpus, 1024);
    EXPECT_TRUE(e.fits) << e.peak.device_bytes;
}

// Goyal et al. 2017, Table in the seed notes: base batch 256 at lr 0.1; 8k
// batch: linear rule 0.1*32, square-root rule 0.1*sqrt(32).
TEST(BatchHelper, LinearAndSquareRootScalingRules) {
    Scenario s = scenarioOf(llama2_7b());
    s.training.micro_batch_size = 32;
    s.training.gradient_accumulation_steps = 2;
    s.parallelism.data = 128;
    s.training.base_batch_size = 256;
    s.training.base_learning_rate = 0.1;
    s.training.warmup_steps = 500;
    const BatchPlan b = planBatch(s);
    EXPECT_EQ(b.effective_batch, 8192);
    EXPECT_EQ(b.tokens_per_step, 8192 * 2048);
    ASSERT_TRUE(b.lr_linear && b.lr_sqrt);
    EXPECT_NEAR(*b.lr_linear, 3.2, 1e-12);
    EXPECT_NEAR(*b.lr_sqrt, 0.565685424949238, 1e-12);
    EXPECT_DOUBLE_EQ(warmupLearningRate(3.2, 250, 500), 1.6);
    EXPECT_DOUBLE_EQ(warmupLearningRate(3.2, 900, 500), 3.2);
}

}  // namespace
}  // namespace trainmem
