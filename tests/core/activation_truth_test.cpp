// The activation account against autograd: validation/saved_tensors.py
// records every tensor PyTorch saves for backward in small Hugging Face-style
// blocks (CPU, one forward pass) and writes validation/activations/
// saved_tensors.json. Each case's measured bytes per block, for the embedding
// and for the head must match layerActivations / endActivations within 1%.
// TRAINMEM_ACTIVATION_TRUTH names another file (CTest's activation_ground_truth
// points it at freshly generated output).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/activations/activations.h"
#include "core/model/hf_config.h"
#include "core/training/training_config.h"
#include "tests/core/truth_case.h"
#include "tests/core/truth_file.h"

namespace trainmem {
namespace {

using nlohmann::json;

constexpr double kTolerance = 0.01;

std::string truthPath() {
    return truthFilePath("TRAINMEM_ACTIVATION_TRUTH",
                         std::string(TRAINMEM_VALIDATION_DIR) + "/activations/saved_tensors.json");
}

const json& truth() {
    static const json doc = readTruthFile(truthPath());
    return doc;
}

double relativeError(int64_t estimate, int64_t measured) {
    return std::abs(static_cast<double>(estimate - measured)) / std::max<double>(1.0, static_cast<double>(measured));
}

TEST(ActivationGroundTruth, FileCoversTheGrid) {
    const json& doc = truth();
    ASSERT_TRUE(doc.is_object() && doc.contains("cases")) << "cannot read " << truthPath();
    std::set<std::string> families, precisions, attentions, checkpointing, finetuning;
    for (const json& c : doc.at("cases")) {
        families.insert(c.at("model").at("model_type").get<std::string>());
        precisions.insert(c.at("training").at("precision").get<std::string>());
        attentions.insert(c.at("training").at("attention").get<std::string>());
        checkpointing.insert(c.at("training").at("checkpointing").get<std::string>());
        finetuning.insert(c.at("training").at("finetuning").get<std::string>());
    }
    EXPECT_EQ(families, (std::set<std::string>{"deepseek_v2", "deepseek_v3", "deepseek_v32", "gemma", "gemma2", "gemma3_text", "glm4_moe", "gpt2", "gpt_oss", "llama", "llama4_text", "granite", "mistral", "mixtral", "olmo2", "phi3", "qwen2",
                                         "qwen2_moe", "qwen3", "qwen3_moe", "smollm3",
                                         // the hybrids (issue 23)
                                         "granitemoehybrid", "lfm2", "nemotron_h", "qwen3_5_text", "qwen3_next"}));
    EXPECT_EQ(precisions, (std::set<std::string>{"amp-bf16", "fp32", "mixed-bf16"}));
    EXPECT_EQ(attentions.size(), 2u);
    EXPECT_EQ(checkpointing.size(), 2u);
    EXPECT_EQ(finetuning.size(), 2u);
}

TEST(ActivationGroundTruth, EveryBlockAndEndWithinOnePercent) {
    const json& doc = truth();
    ASSERT_TRUE(doc.is_object() && doc.contains("cases")) << "cannot read " << truthPath();
    double worst = 0;
    std::string worst_what;
    for (const json& c : doc.at("cases")) {
        const std::string name = c.at("name");
        SCOPED_TRACE(name);
        const ModelConfig model = modelOf(c.at("model"));
        const TrainingConfig training = trainingOf(c.at("training"));
        const ParallelConfig parallel;
        const json& measured = c.at("measured");
        const auto check = [&](const std::string& what, int64_t estimate, int64_t truth_bytes) {
            const double err = relativeError(estimate, truth_bytes);
            EXPECT_LE(err, kTolerance) << what << ": estimate " << estimate << " B, autograd " << truth_bytes << " B";
            if (err > worst) {
                worst = err;
                worst_what = name + ", " + what;
            }
        };
        const bool recompute = training.checkpointing == Checkpointing::Full;
        int64_t i = 0;
        for (const json& block : measured.at("block_bytes")) {
            const LayerActivations la =
                layerActivations(model, training, parallel, model.layerKind(i), model.isRopeLayer(i));
            check("block " + std::to_string(i), recompute ? la.checkpoint_input : la.saved, block.get<int64_t>());
            ++i;
        }
        const EndActivations ends = endActivations(model, training, parallel);
        // The tensors every block shares (rotary cos/sin, the checkpointed
        // causal mask) are accounted with the embedding.
        check("embedding", ends.embedding_saved,
              measured.at("embedding_bytes").get<int64_t>() + measured.at("shared_bytes").get<int64_t>());
        check("head", ends.final_norm_saved + ends.logits_saved, measured.at("head_bytes").get<int64_t>());
    }
    std::printf("activation ground truth: %zu cases, largest relative error %.4f%% (%s)\n",
                doc.at("cases").size(), 100 * worst, worst_what.c_str());
}

}  // namespace
}  // namespace trainmem
