// The framework catalogue. Each value's source is in docs/frameworks.md; a
// row sets only what was read in the stack's code.
#include "core/frameworks.h"

#include <algorithm>

#include "core/names.h"

namespace trainmem {
namespace {

// torchtitan's op-level save list (core/activations_op_policy.cpp).
std::vector<std::string> torchtitanSaveOps() { return {"mm-every-second", "attention", "reduce_scatter", "max"}; }

std::vector<FrameworkSpec> buildCatalogue() {
    std::vector<FrameworkSpec> rows;
    rows.push_back({.id = Framework::Custom, .read = "sets nothing"});
    // transformers is not among the snapshots read: nothing is claimed.
    rows.push_back({.id = Framework::HfTrainer, .read = "not checked (transformers not read)"});
    rows.push_back({.id = Framework::Torchtitan,
                    .read = "torchtitan b5bcd76c6: trainer.py, config/configs.py, components/optimizer/optimizer.py, "
                            "components/loss.py",
                    .precision = Precision::AmpBf16,
                    .optimizer_impl = OptimizerImpl::Fused,
                    .checkpointing = Checkpointing::Op,
                    .checkpoint_save_ops = torchtitanSaveOps(),
                    .loss = LossImpl::Standard});
    rows.push_back({.id = Framework::Torchtune,
                    .read = "torchtune bd2a0fc7c: recipes/configs/llama3_1/8B_full_single_device.yaml, "
                            "recipes/full_finetune_single_device.py, modules/loss/cross_entropy_loss.py",
                    .precision = Precision::PureBf16,
                    .optimizer = OptimizerKind::AdamW8bit,
                    .optimizer_in_backward = true,
                    .checkpointing = Checkpointing::Full,
                    .loss = LossImpl::ChunkedOutput,
                    .loss_chunks = 8});
    rows.push_back({.id = Framework::MegatronLm,
                    .read = "Megatron-LM d98e8a64dd: megatron/training/arguments.py, megatron/core/optimizer/__init__.py, "
                            "megatron/core/transformer/transformer_config.py",
                    .grad_dtype = DType::Fp32,
                    .optimizer = OptimizerKind::Adam,
                    .optimizer_impl = OptimizerImpl::Fused,
                    .checkpointing = Checkpointing::None});
    rows.push_back({.id = Framework::Deepspeed,
                    .read = "DeepSpeed edaa72212 (v0.19.5-27): deepspeed/runtime/engine.py, deepspeed/runtime/constants.py",
                    .precision = Precision::Fp32,
                    .optimizer = OptimizerKind::AdamW,
                    .optimizer_impl = OptimizerImpl::Fused});
    rows.push_back({.id = Framework::Litgpt,
                    .read = "LitGPT v0.5.13: litgpt/finetune/full.py, litgpt/utils.py",
                    .precision = Precision::AmpBf16,
                    .optimizer = OptimizerKind::AdamW,
                    .checkpointing = Checkpointing::None,
                    .loss = LossImpl::Chunked});
    return rows;
}

template <class T>
void add(std::vector<FrameworkValue>& out, std::string key, const std::optional<T>& value, const T& now) {
    if (!value) return;
    FrameworkValue v;
    v.key = std::move(key);
    if constexpr (std::is_same_v<T, bool>)
        v.value = *value ? "true" : "false";
    else if constexpr (std::is_same_v<T, int64_t>)
        v.value = std::to_string(*value);
    else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
        for (const std::string& s : *value) v.value += (v.value.empty() ? "" : ",") + s;
    } else
        v.value = std::string(enumName(*value));
    v.overridden = !(*value == now);
    out.push_back(std::move(v));
}

}  // namespace

const std::vector<FrameworkSpec>& frameworkCatalogue() {
    static const std::vector<FrameworkSpec> rows = buildCatalogue();
    return rows;
}

const FrameworkSpec& frameworkSpec(Framework framework) {
    const auto& rows = frameworkCatalogue();
    const auto it = std::find_if(rows.begin(), rows.end(), [&](const FrameworkSpec& r) { return r.id == framework; });
    return it != rows.end() ? *it : rows.front();
}

void applyFrameworkDefaults(TrainingConfig& t, Framework framework) {
    const FrameworkSpec& f = frameworkSpec(framework);
    if (f.precision) t.precision = *f.precision;
    if (f.grad_dtype) t.grad_dtype = *f.grad_dtype;
    if (f.optimizer) t.optimizer = *f.optimizer;
    if (f.optimizer_impl) t.optimizer_impl = *f.optimizer_impl;
    if (f.optimizer_in_backward) t.optimizer_in_backward = *f.optimizer_in_backward;
    if (f.checkpointing) t.checkpointing = *f.checkpointing;
    if (f.checkpoint_save_ops) t.checkpoint_save_ops = *f.checkpoint_save_ops;
    if (f.loss) t.loss = *f.loss;
    if (f.loss_chunks) t.loss_chunks = *f.loss_chunks;
}

std::vector<FrameworkValue> frameworkValues(const TrainingConfig& t) {
    const FrameworkSpec& f = frameworkSpec(t.framework);
    std::vector<FrameworkValue> out;
    add(out, "training.precision", f.precision, t.precision);
    if (f.grad_dtype) add(out, "training.grad_dtype", f.grad_dtype, t.grad_dtype.value_or(DType::Fp32));
    if (f.grad_dtype && !t.grad_dtype) out.back().overridden = true;  // "auto" is not the framework's value
    add(out, "training.optimizer", f.optimizer, t.optimizer);
    add(out, "training.optimizer_impl", f.optimizer_impl, t.optimizer_impl);
    add(out, "training.optimizer_in_backward", f.optimizer_in_backward, t.optimizer_in_backward);
    add(out, "training.activation_checkpointing", f.checkpointing, t.checkpointing);
    add(out, "training.checkpoint_save_ops", f.checkpoint_save_ops, t.checkpoint_save_ops);
    add(out, "training.loss", f.loss, t.loss);
    add(out, "training.loss_chunks", f.loss_chunks, t.loss_chunks);
    return out;
}

}  // namespace trainmem
