// The backward of the hybrid token mixers against PyTorch's profiler:
// validation/hybrid_backward_truth.py runs each mixer's torch path alone
// (validation/hf_hybrid.py) and records the peak of live bytes in its
// backward above what its forward left, the saved tensors freed on the way
// counted as freed. The account holds a block's saved tensors whole beside
// its backward_working (the two residual-stream gradients and the block's
// largest transient), so its backward_working must not be below the measured
// peak (the incoming gradient and the input's gradient included), and not
// far above it. Mamba-2's eager rows are held here; the Gated DeltaNet's and
// the short convolution's are compared in docs/hybrid-activations.md.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "core/activations/activations.h"
#include "tests/core/truth_case.h"
#include "tests/core/truth_file.h"

namespace trainmem {
namespace {

using nlohmann::json;

// The account keeps both operands' full-size gradients of the SSD's largest
// broadcast product; the measured peak is lower by what the backward freed
// before it (75-91% of the account on every measured shape).
constexpr double kMostAbove = 0.35;

std::string truthPath() {
    return truthFilePath("TRAINMEM_HYBRID_BACKWARD_TRUTH",
                         std::string(TRAINMEM_VALIDATION_DIR) + "/activations/hybrid_backward.json");
}

TEST(HybridBackwardTruth, Mamba2EagerBackwardHoldsTheMeasuredPeak) {
    const json doc = readTruthFile(truthPath());
    ASSERT_TRUE(doc.is_object() && doc.contains("cases")) << "cannot read " << truthPath();
    int cases = 0;
    for (const json& c : doc.at("cases")) {
        if (c.at("mixer") != "mamba2") continue;
        const std::string name = "mamba2 " + c.at("sizes").dump() + " b" + std::to_string(c.at("b").get<int>()) +
                                 " s" + std::to_string(c.at("s").get<int>()) + " " + c.at("dtype").get<std::string>();
        SCOPED_TRACE(name);
        const ModelConfig model = modelOf(c.at("model"));
        const TrainingConfig training = trainingOf(c.at("training"));
        ASSERT_EQ(model.layerKind(0).mixer, MixerKind::Mamba2);
        const LayerActivations la = layerActivations(model, training, ParallelConfig{}, model.layerKind(0));
        const json& m = c.at("measured");
        // The measured peak above the forward's leftovers, the incoming
        // gradient (allocated before the backward) added back.
        const int64_t measured = m.at("transient_bytes").get<int64_t>() + 2 * m.at("input_grad_bytes").get<int64_t>();
        EXPECT_GE(la.backward_working, measured) << "the account's backward is below the measured peak";
        EXPECT_LE(static_cast<double>(la.backward_working), (1.0 + kMostAbove) * static_cast<double>(measured))
            << "account " << la.backward_working << " B, measured " << measured << " B";
        ++cases;
    }
    EXPECT_GE(cases, 16);
}

}  // namespace
}  // namespace trainmem
