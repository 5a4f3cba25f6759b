// Llama 4's NoPE blocks in the estimate, against autograd: a small
// llama4_text config (4 layers, NoPE every 2nd) through the importer; the
// whole model's saved activations (one stage, nothing recomputed) must be
// the SUM of what validation/saved_tensors.py measured block by block
// (rotary and NoPE blocks apart: validation/activations/saved_tensors.json),
// plus the measured embedding (with the shared rotary table) and head. The
// measured numbers are composed here, never trainmem's formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/account/estimate.h"
#include "core/model/hf_config.h"
#include "core/training/pipeline.h"
#include "core/account/step_account.h"
#include "tests/core/truth_file.h"

namespace trainmem {
namespace {

using nlohmann::json;

const json& truth() {
    static const json doc = readTruthFile(truthFilePath(
        "TRAINMEM_ACTIVATION_TRUTH", std::string(TRAINMEM_VALIDATION_DIR) + "/activations/saved_tensors.json"));
    return doc;
}

// The measured Llama 4 cases without checkpointing (each block's saved
// bytes are then everything it keeps).
template <class F>
int forEachLlama4Case(F&& visit) {
    int n = 0;
    if (!truth().is_object() || !truth().contains("cases")) return 0;
    for (const json& c : truth().at("cases")) {
        if (c.at("model").at("model_type") != "llama4_text" || c.at("training").at("checkpointing") != "none")
            continue;
        ++n;
        visit(c);
    }
    return n;
}

Scenario scenarioOf(const json& c) {
    Scenario s;
    const Expected<ImportedModel> imported = importHuggingFaceConfig(c.at("model"));
    EXPECT_TRUE(imported.ok()) << (imported.ok() ? "" : imported.error().text());
    if (imported.ok()) s.model = imported->model;
    const json& t = c.at("training");
    s.training.micro_batch_size = t.at("micro_batch_size");
    s.training.sequence_length = t.at("sequence_length");
    s.training.precision = parsePrecision(t.at("precision").get<std::string>()).value();
    s.training.attention = parseAttention(t.at("attention").get<std::string>()).value();
    s.training.kernels = parseKernelProfile(t.at("kernels").get<std::string>()).value();
    s.training.checkpointing = Checkpointing::None;
    s.training.loss = parseLoss(t.at("loss").get<std::string>()).value();
    s.training.finetuning = parseFinetuning(t.at("finetuning").get<std::string>()).value();
    return s;
}

int64_t measuredBlocks(const json& c, int64_t first, int64_t count) {
    int64_t sum = 0;
    const json& blocks = c.at("measured").at("block_bytes");
    for (int64_t l = first; l < first + count; ++l) sum += blocks.at(static_cast<size_t>(l)).get<int64_t>();
    return sum;
}

TEST(NopeBlocks, TheMeasuredCasesHoldRotaryAndNopeBlocksThatDiffer) {
    // Without both kinds (and a difference) the tests below could not fail.
    const int cases = forEachLlama4Case([](const json& c) {
        const Scenario s = scenarioOf(c);
        EXPECT_EQ(s.model.no_rope_layer_interval, 2) << c.at("name");
        const json& blocks = c.at("measured").at("block_bytes");
        ASSERT_EQ(blocks.size(), 4u) << c.at("name");
        EXPECT_NE(blocks.at(0).get<int64_t>(), blocks.at(1).get<int64_t>()) << c.at("name");
    });
    EXPECT_GE(cases, 4);
}

TEST(NopeBlocks, WholeModelActivationsAreTheSumOfTheMeasuredBlocksAndEnds) {
    forEachLlama4Case([](const json& c) {
        const Scenario s = scenarioOf(c);
        const json& m = c.at("measured");
        const int64_t layers = static_cast<int64_t>(m.at("block_bytes").size());
        ASSERT_EQ(s.model.num_layers, layers);
        const int64_t blocks = measuredBlocks(c, 0, layers);

        const Expected<Estimate> e = estimate(s);
        ASSERT_TRUE(e.ok()) << e.error().text();
        EXPECT_EQ(e->activations_without_recompute, blocks) << c.at("name");

        // The one stage's account: its blocks and its ends, as measured.
        const StepAccount a = accountStep(s, stepInputs(s), 0);
        EXPECT_EQ(static_cast<int64_t>(a.activations_no_recompute), blocks) << c.at("name");
        EXPECT_EQ(static_cast<int64_t>(a.activations_one_microbatch), blocks) << c.at("name");
        const int64_t ends = m.at("embedding_bytes").get<int64_t>() + m.at("shared_bytes").get<int64_t>() +
                             m.at("head_bytes").get<int64_t>();
        EXPECT_EQ(static_cast<int64_t>(a.activations_no_recompute + a.embedding_saved + a.head_saved), blocks + ends)
            << c.at("name");
    });
}

TEST(NopeBlocks, BlockByBlockPoliciesCountEachLayersKind) {
    // Every-k (k = 2): layers 0 and 2 (rotary) are checkpointed, 1 and 3
    // (NoPE) keep everything; what nothing recomputed would keep is still
    // the measured sum, and what is kept holds the NoPE blocks' own bytes.
    forEachLlama4Case([](const json& c) {
        Scenario s = scenarioOf(c);
        s.training.checkpointing = Checkpointing::EveryK;
        s.training.checkpoint_every = 2;
        const json& blocks = c.at("measured").at("block_bytes");
        const StepAccount a = accountStep(s, stepInputs(s), 0);
        EXPECT_EQ(static_cast<int64_t>(a.activations_no_recompute), measuredBlocks(c, 0, 4)) << c.at("name");
        // The largest replay is a rotary block's measured bytes.
        EXPECT_EQ(static_cast<int64_t>(a.recompute_block), blocks.at(0).get<int64_t>()) << c.at("name");
        // Kept: two checkpointed inputs (b x s x h in the compute dtype) and two whole NoPE blocks.
        const int64_t nope_kept = blocks.at(1).get<int64_t>() + blocks.at(3).get<int64_t>();
        EXPECT_GT(static_cast<int64_t>(a.activations_one_microbatch), nope_kept) << c.at("name");
        EXPECT_LT(static_cast<int64_t>(a.activations_one_microbatch), nope_kept + blocks.at(0).get<int64_t>())
            << c.at("name");
    });
}

TEST(NopeBlocks, EachPipelineStageHoldsItsOwnLayersMeasuredBytes) {
    // Two stages of a rotary and a NoPE block each; and four stages of one
    // block each, rotary and NoPE alternating.
    forEachLlama4Case([](const json& c) {
        for (int64_t p : {2, 4}) {
            Scenario s = scenarioOf(c);
            s.parallelism.pipeline = p;
            s.training.gradient_accumulation_steps = p;
            const StepInputs in = stepInputs(s);
            for (int64_t i = 0; i < p; ++i) {
                const StepAccount a = accountStep(s, in, i);
                const int64_t per_stage = 4 / p;
                EXPECT_EQ(static_cast<int64_t>(a.activations_one_microbatch), measuredBlocks(c, i * per_stage, per_stage))
                    << c.at("name") << " p=" << p << " stage " << i;
            }
        }
    });
}

// A Llama 4 layout with both patterns non-trivial: NoPE every 4th layer,
// MoE every 2nd after a dense first one (moe_layers), 30 layers.
ModelConfig mixedLlama4(int64_t layers) {
    json config = {{"model_type", "llama4_text"}, {"hidden_size", 64}, {"num_hidden_layers", layers},
                   {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 16},
                   {"intermediate_size", 48}, {"intermediate_size_mlp", 160}, {"vocab_size", 96},
                   {"max_position_embeddings", 64}, {"num_local_experts", 4}, {"num_experts_per_tok", 1},
                   {"no_rope_layer_interval", 4}, {"attention_chunk_size", 8}};
    std::vector<int64_t> moe;
    for (int64_t l = 1; l < layers; l += 2) moe.push_back(l);
    config["moe_layers"] = moe;
    const Expected<ImportedModel> imported = importHuggingFaceConfig(config);
    EXPECT_TRUE(imported.ok()) << (imported.ok() ? "" : imported.error().text());
    return imported.ok() ? imported->model : ModelConfig{};
}

TEST(NopeBlocks, StageCountsAreThoseOfTheLayersOneByOne) {
    // The arithmetic counts against ModelConfig's per-layer predicates.
    for (int64_t layers : {4, 30, 48}) {
        const ModelConfig m = mixedLlama4(layers);
        ASSERT_GT(m.no_rope_layer_interval, 0);
        ASSERT_TRUE(m.isMoe());
        for (int64_t first = 0; first < layers; ++first)
            for (int64_t count = 0; first + count <= layers; ++count) {
                int64_t nope = 0, nope_moe = 0;
                for (int64_t l = first; l < first + count; ++l) {
                    nope += m.isRopeLayer(l) ? 0 : 1;
                    nope_moe += (!m.isRopeLayer(l) && m.isMoeLayer(l)) ? 1 : 0;
                }
                EXPECT_EQ(nopeLayersIn(m, first, count), nope) << layers << " " << first << " " << count;
                EXPECT_EQ(nopeMoeLayersIn(m, first, count), nope_moe) << layers << " " << first << " " << count;
            }
    }
}

TEST(NopeBlocks, PeakIsTheHeaviestOfAllStages) {
    // estimate() visits only the stages that can be the heaviest; with NoPE
    // blocks among MoE and dense ones it must still agree with every stage.
    for (int64_t layers : {30, 48})
        for (int64_t p : {2, 3, 5, 7, 8})
            for (Checkpointing ckpt : {Checkpointing::None, Checkpointing::Full, Checkpointing::EveryK}) {
                Scenario s;
                s.model = mixedLlama4(layers);
                s.training.micro_batch_size = 2;
                s.training.sequence_length = 16;
                s.training.checkpointing = ckpt;
                s.training.checkpoint_every = 3;
                s.training.gradient_accumulation_steps = 12;
                s.parallelism.pipeline = p;
                const auto stages = estimateStages(s);
                ASSERT_TRUE(stages.ok()) << stages.error().text();
                int64_t heaviest = 0;
                for (const StageEstimate& st : *stages) heaviest = std::max(heaviest, st.allocated_bytes);
                EXPECT_EQ(estimateValidated(s).peak.allocated_bytes, heaviest)
                    << "L=" << layers << " p=" << p << " " << checkpointingName(ckpt);
            }
}

}  // namespace
}  // namespace trainmem
