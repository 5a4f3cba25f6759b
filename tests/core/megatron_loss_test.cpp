// Megatron-LM's vocab-parallel cross-entropy (training.loss = vocab_parallel)
// against Megatron's own code, read at core_v0.15.0rc7-2333-gd98e8a64dd, and
// against the CPU whole-step truth (validation/step_truth.py, which runs both
// Megatron code paths op for op: validation/step_truth_losses.py).
//
// megatron/core/tensor_parallel/cross_entropy.py, per rank with V/t vocab
// columns and T = b*s tokens:
//   calculate_logits_max: `vocab_parallel_logits.float()`  -> 4*T*V/t (a copy
//       of the 16-bit logits; the same tensor when they are fp32)
//   calculate_predicted_logits: `-=` in place, `torch.exp(..., out=exp_logits)`
//       in place; target_mask (bool, T), masked_target_1d (int64, T)
//   calculate_cross_entropy_loss: `exp_logits.div_(...)` in place
//   forward: `ctx.save_for_backward(exp_logits, target_mask, masked_target_1d)`
//   backward: `grad_input = softmax`, updated in place, returned in fp32
//       (autograd casts it to the logits' dtype beside it).
// megatron/core/fusions/fused_cross_entropy.py (--cross-entropy-loss-fusion,
// native): the same helpers, the same three saved tensors, and
// `grad_input.to(torch.bfloat16)` in its own backward.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/activations/activations.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "tests/core/truth_file.h"
#include "tests/core/preset_scenario.h"

namespace trainmem {
namespace {

Scenario llama8b(const std::vector<std::string>& settings) {
    return presetWith("llama-3.1-8b", settings, /*validated=*/false);
}

// Llama 3 8B as Megatron's example runs it (examples/llama/
// train_llama3_8b_h100_fp8.sh): 1 x 8192 tokens, --vocab-size 128256, bf16.
constexpr int64_t kT = 8192, kV = 128256, kH = 4096;

TEST(MegatronCrossEntropy, KeepsTheFp32SoftmaxAndTheTwoTargetTensors) {
    const Scenario s = llama8b({"training.precision=mixed-bf16", "training.sequence_length=8192",
                                "training.loss=vocab_parallel"});
    const EndActivations e = endActivations(s.model, s.training, s.parallelism);
    // save_for_backward: fp32 softmax T x V, bool mask T, int64 targets T.
    EXPECT_EQ(e.logits_saved, 4 * kT * kV + kT + 8 * kT);
    EXPECT_EQ(e.logits_saved, 4'202'766'336);
    // Forward's worst: the bf16 logits beside their fp32 copy (+ the targets).
    EXPECT_EQ(e.loss_peak, e.logits_saved + 2 * kT * kV);
    // Backward's worst: the fp32 gradient (the softmax buffer) and its bf16
    // cast, more than the head's matmul backward after it (bf16 gradient and
    // its input's gradient).
    EXPECT_EQ(e.loss_backward_peak, e.logits_saved + 2 * kT * kV);
    EXPECT_GT(e.loss_backward_peak, 2 * kT * kV + 2 * kT * kH);
}

TEST(MegatronCrossEntropy, Fp32LogitsAreTheirOwnSoftmax) {
    // .float() of fp32 logits is the tensor itself: no second buffer; the
    // gradient is that buffer, alive through the head's matmul backward with
    // the input gradient and the head's fp32 weight gradient.
    const Scenario s = llama8b({"training.precision=fp32", "training.sequence_length=8192",
                                "training.loss=vocab_parallel"});
    const EndActivations e = endActivations(s.model, s.training, s.parallelism);
    EXPECT_EQ(e.loss_peak, 4 * kT * kV + 9 * kT);
    EXPECT_EQ(e.loss_backward_peak, 4 * kT * kV + 4 * kT * kH + 4 * kV * kH);
}

TEST(MegatronCrossEntropy, TensorParallelRanksHoldTheirVocabColumns) {
    const Scenario s = llama8b({"training.precision=mixed-bf16", "training.sequence_length=8192",
                                "training.loss=vocab_parallel", "parallelism.tensor=8", "parallelism.gpus=8"});
    const EndActivations e = endActivations(s.model, s.training, s.parallelism);
    EXPECT_EQ(e.logits_saved, 4 * kT * (kV / 8) + 9 * kT);
}

TEST(MegatronCrossEntropy, TheMegatronProfilesStandardLossIsThisLoss) {
    // Scenario files written before the loss was a key keep their numbers.
    const Scenario old = llama8b({"training.precision=mixed-bf16", "training.kernels=megatron"});
    const Scenario now = llama8b({"training.precision=mixed-bf16", "training.kernels=megatron",
                                  "training.loss=vocab_parallel"});
    const EndActivations a = endActivations(old.model, old.training, old.parallelism);
    const EndActivations b = endActivations(now.model, now.training, now.parallelism);
    EXPECT_EQ(a.logits_saved, b.logits_saved);
    EXPECT_EQ(a.loss_peak, b.loss_peak);
    EXPECT_EQ(a.loss_backward_peak, b.loss_backward_peak);
}

TEST(MegatronFramework, OutOfTheBoxIsFp32WithTheVocabParallelLoss) {
    // megatron/training/arguments.py: params_dtype = torch.float unless
    // --fp16/--bf16; language_module.py's loss is the vocab-parallel one.
    Scenario s = llama8b({"training.framework=megatron-lm"});
    EXPECT_EQ(s.training.precision, Precision::Fp32);
    EXPECT_EQ(s.training.loss, LossImpl::VocabParallel);
    // The example preset's --bf16 and --grad-reduce-in-bf16 are its own keys.
    Expected<Scenario> example = loadPreset("llama3-8b-megatron-8xh100");
    ASSERT_TRUE(example.ok());
    EXPECT_EQ(example->training.precision, Precision::MixedBf16);
    EXPECT_EQ(example->training.loss, LossImpl::VocabParallel);
}

TEST(MegatronCrossEntropy, FusionChangesNoBytesMeasured) {
    // Each precision's fused and unfused runs of the CPU truth measured the
    // same peak, phase by phase: --cross-entropy-loss-fusion keeps what the
    // unfused loss keeps.
    const nlohmann::json doc = readTruthFile(truthFilePath(
        "TRAINMEM_STEP_TRUTH", std::string(TRAINMEM_VALIDATION_DIR) + "/step_truth/step_truth.json"));
    std::map<std::string, std::map<std::string, nlohmann::json>> by_precision;
    for (const nlohmann::json& c : doc.at("cases")) {
        const nlohmann::json& t = c.at("scenario").at("training");
        if (t.at("loss") != "vocab_parallel") continue;
        by_precision[t.at("precision").get<std::string>()][c.value("loss_variant", "fused")] = c.at("measured");
    }
    int pairs = 0;
    for (const auto& [precision, runs] : by_precision) {
        if (runs.size() != 2) continue;
        EXPECT_EQ(runs.at("fused").at("phase_peak_bytes"), runs.at("unfused").at("phase_peak_bytes")) << precision;
        ++pairs;
    }
    EXPECT_GE(pairs, 2);
}

}  // namespace
}  // namespace trainmem
