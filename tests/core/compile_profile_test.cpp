// The `compile` kernel profile against what AOTAutograd's min-cut partitioner
// (the one torch.compile uses) saves for backward: validation/compile_truth.py
// runs each block through functorch.compile.aot_module with
// min_cut_rematerialization_partition (compiler="inductor"), PyTorch /
// functorch 1.13 on the CPU, and records CompiledFunction's saved tensors
// (validation/activations/compile_saved_tensors.json). Every block must
// match layerActivations(kernels = compile) to the byte, except the cases of
// kTieBreaks, where the partitioner's min cut took a different one of two
// cuts the rules cannot tell apart; those are held within their stated
// difference, always on the side of counting more.
// TRAINMEM_COMPILE_TRUTH names another file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/activations/activations.h"
#include "core/model/hf_config.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "core/training/training_config.h"
#include "tests/core/truth_case.h"
#include "tests/core/truth_file.h"
#include "core/scenario/scenario_file.h"
#include "core/account/scenario_validate.h"

namespace trainmem {
namespace {

using nlohmann::json;

std::string truthPath() {
    return truthFilePath("TRAINMEM_COMPILE_TRUTH",
                         std::string(TRAINMEM_VALIDATION_DIR) + "/activations/compile_saved_tensors.json");
}

const json& truth() {
    static const json doc = readTruthFile(truthPath());
    return doc;
}

// Where the measured cut differs from the modelled one, by how much (model
// minus measurement, bytes per block) and why. Everything else is exact.
struct TieBreak {
    int64_t over_bytes;  // per block; a sliding layer's extra is in sliding_under
    const char* why;
};
const std::map<std::string, TieBreak>& tieBreaks() {
    static const std::map<std::string, TieBreak> k{
        // Biased q/k/v (addmm): the norm output reaches the matmuls through a
        // recomputable view, so the min cut recomputes it from the block
        // input and rstd; the model keeps it, as every other family's graph does.
        {"qwen2 fp32 eager compile no-ckpt", {12288, "q/k/v input recomputed (biased addmm)"}},
        {"qwen2 bf16 eager compile no-ckpt", {6144, "q/k/v input recomputed (biased addmm)"}},
        // AMP: the cut saved the 16-bit logits (and recomputed the fp32
        // softmax from them) instead of the fp32 softmax output; which of the
        // two it takes depends on the partitioner's distance-weighted costs.
        {"qwen2 amp eager compile no-ckpt", {6144 + 6144, "16-bit scores instead of the fp32 softmax; q/k/v input"}},
        {"mistral amp eager compile no-ckpt", {8192, "16-bit scores instead of the fp32 softmax"}},
        {"mistral amp eager compile no-ckpt b3-s24", {27648, "16-bit scores instead of the fp32 softmax"}},
    };
    return k;
}


TEST(CompileProfile, FileCoversDenseFamiliesAndPrecisions) {
    const json& doc = truth();
    ASSERT_TRUE(doc.is_object() && doc.contains("cases")) << "cannot read " << truthPath();
    EXPECT_EQ(doc.at("generator"), "validation/compile_truth.py");
    EXPECT_EQ(doc.at("torch").get<std::string>().substr(0, 4), "1.13");
    std::set<std::string> families, precisions;
    for (const json& c : doc.at("cases")) {
        EXPECT_EQ(c.at("training").at("kernels"), "compile");
        families.insert(c.at("model").at("model_type").get<std::string>());
        precisions.insert(c.at("training").at("precision").get<std::string>());
    }
    // Llama-style dense, GQA (mistral, qwen2, gemma), LayerNorm / gelu_new
    // (gpt2), post-norm (olmo2), sandwich norms (gemma2/3), q/k norms (qwen3),
    // fused projections (phi3).
    for (const char* f : {"llama", "mistral", "qwen2", "qwen3", "olmo2", "gemma", "gemma2", "gemma3_text", "phi3",
                          "gpt2", "granite", "smollm3"})
        EXPECT_TRUE(families.count(f)) << f;
    EXPECT_EQ(precisions, (std::set<std::string>{"amp-bf16", "fp32", "mixed-bf16"}));
}

TEST(CompileProfile, EveryBlockMatchesThePartitioner) {
    const json& doc = truth();
    ASSERT_TRUE(doc.is_object() && doc.contains("cases")) << "cannot read " << truthPath();
    int exact = 0;
    for (const json& c : doc.at("cases")) {
        const std::string name = c.at("name");
        SCOPED_TRACE(name);
        const ModelConfig model = modelOf(c.at("model"));
        const TrainingConfig training = trainingOf(c.at("training"));
        const auto tie = tieBreaks().find(name);
        const auto& blocks = c.at("measured").at("block_bytes");
        int64_t smallest = blocks.at(0).get<int64_t>();
        for (const json& b : blocks) smallest = std::min(smallest, b.get<int64_t>());
        for (size_t i = 0; i < blocks.size(); ++i) {
            const auto layer = static_cast<int64_t>(i);
            const int64_t model_bytes =
                layerActivations(model, training, {}, model.isMoeLayer(layer), model.isRopeLayer(layer)).saved;
            const int64_t measured = blocks.at(i).get<int64_t>();
            // Gemma 2's sliding layers derive their window mask inside the
            // block; the compiled graph keeps its b x s x s bool (not modelled).
            const int64_t window_mask = measured - smallest;
            const int64_t over = tie == tieBreaks().end() ? 0 : tie->second.over_bytes;
            EXPECT_EQ(model_bytes, measured - window_mask + over)
                << "block " << i << (tie == tieBreaks().end() ? "" : std::string(": ") + tie->second.why);
            if (tie == tieBreaks().end() && window_mask == 0) ++exact;
        }
    }
    EXPECT_GE(exact, 60);
}

// The profile changes only what the blocks keep: every tensor it lists is one
// the eager HF blocks also compute, so it never keeps more than eager does.
TEST(CompileProfile, NeverKeepsMoreThanEagerForTheMeasuredCases) {
    const json& doc = truth();
    ASSERT_TRUE(doc.is_object() && doc.contains("cases"));
    for (const json& c : doc.at("cases")) {
        SCOPED_TRACE(c.at("name").get<std::string>());
        const ModelConfig model = modelOf(c.at("model"));
        TrainingConfig compiled = trainingOf(c.at("training"));
        TrainingConfig eager = compiled;
        eager.kernels = KernelProfile::Eager;
        EXPECT_LE(layerActivations(model, compiled, {}, false).saved, layerActivations(model, eager, {}, false).saved);
    }
}

// Every model preset (MoE, MLA, sandwich, post-norm, gpt-oss, Llama 4 included,
// most of them not measurable here): the rules only drop tensors eager keeps
// (the normalised tensors, per-Linear AMP casts, the activation output) or
// keep a 16-bit tensor for an fp32 one, so no block keeps more than eager,
// in any precision, with either attention.
TEST(CompileProfile, NoPresetBlockKeepsMoreThanEager) {
    int models = 0;
    for (const PresetInfo& info : listPresets()) {
        if (info.kind != PresetKind::Model) continue;
        const Expected<ModelConfig> model = loadModelPreset(info.name);
        ASSERT_TRUE(model.ok()) << info.name;
        ++models;
        for (Precision p : {Precision::Fp32, Precision::MixedBf16, Precision::AmpBf16, Precision::Fp8Mixed})
            for (AttentionImpl att : {AttentionImpl::Eager, AttentionImpl::Flash}) {
                TrainingConfig eager;
                eager.micro_batch_size = 1;
                eager.sequence_length = 512;
                eager.precision = p;
                eager.attention = att;
                TrainingConfig compiled = eager;
                compiled.kernels = KernelProfile::Compile;
                for (bool moe : {false, true}) {
                    if (moe && !model->isMoe()) continue;
                    const int64_t c = layerActivations(*model, compiled, {}, moe).saved;
                    const int64_t e = layerActivations(*model, eager, {}, moe).saved;
                    EXPECT_GT(c, 0) << info.name;
                    EXPECT_LE(c, e) << info.name << " " << precisionName(p) << " " << attentionName(att)
                                    << (moe ? " MoE" : " dense");
                }
            }
    }
    EXPECT_GE(models, 10);
}

// Flash / SDPA attention under compile: the attention kernel is a
// compute-intensive op of the partitioner (PyTorch 2.x get_default_op_list:
// _scaled_dot_product_flash_attention, _efficient_attention,
// _flash_attention_forward), never recomputed, so it keeps what the flash
// account says; not measurable with PyTorch 1.13 (no such op).
TEST(CompileProfile, FlashAttentionKeepsTheKernelsTensors) {
    const json& doc = truth();
    ASSERT_TRUE(doc.is_object() && doc.contains("cases"));
    const ModelConfig model = modelOf(doc.at("cases").at(0).at("model"));
    TrainingConfig compiled = trainingOf(doc.at("cases").at(0).at("training"));
    compiled.attention = AttentionImpl::Flash;
    TrainingConfig eager = compiled;
    eager.kernels = KernelProfile::Eager;
    const auto flashBytes = [&](const TrainingConfig& t) {
        int64_t sum = 0, rows = 0;
        for (const SavedTensor& st : blockSavedTensors(model, t, {}, false))
            if (st.op == "flash attention") sum += st.bytes, ++rows;
        EXPECT_EQ(rows, 6);  // q, k, v, output, logsumexp, rng state
        return sum;
    };
    EXPECT_EQ(flashBytes(compiled), flashBytes(eager));
    EXPECT_LT(layerActivations(model, compiled, {}, false).saved, layerActivations(model, eager, {}, false).saved);
}

TEST(CompileProfile, ParsesAndNames) {
    EXPECT_EQ(parseKernelProfile("compile"), KernelProfile::Compile);
    EXPECT_EQ(kernelProfileName(KernelProfile::Compile), "compile");
}

// torchtitan's op-level policy under compile is read by the partitioner,
// which is not modelled: refused, and the message says that (not "fused").
TEST(CompileProfile, OpLevelCheckpointingUnderCompileIsRefusedForItsOwnReason) {
    Expected<Scenario> s = loadPreset("llama-3.1-8b");
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(applySettings(*s, {"training.kernels=compile", "training.activation_checkpointing=op"}).ok());
    const Status v = validate(*s);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.error().field, "training.activation_checkpointing");
    EXPECT_NE(v.error().message.find("partitioner"), std::string::npos) << v.error().message;
    EXPECT_EQ(v.error().message.find("fused"), std::string::npos) << v.error().message;
}

}  // namespace
}  // namespace trainmem
