// The framework catalogue. Each value's source is in docs/frameworks.md; a
// row sets only what was read in the stack's code.
#include "core/scenario/frameworks.h"

#include <algorithm>

#include "core/training/names.h"

namespace trainmem {
namespace {

// torchtitan's op-level save list (core/activations/activations_op_policy.cpp).
std::vector<std::string> torchtitanSaveOps() { return {"mm-every-second", "attention", "reduce_scatter", "max"}; }

FrameworkSpec row(Framework id, std::string_view read) {
    FrameworkSpec r;
    r.id = id;
    r.read = read;
    return r;
}

std::vector<FrameworkSpec> buildCatalogue() {
    std::vector<FrameworkSpec> rows;
    rows.push_back(row(Framework::Custom, "sets nothing"));
    // transformers is not among the snapshots read: nothing is claimed.
    rows.push_back(row(Framework::HfTrainer, "not checked (transformers not read)"));

    FrameworkSpec titan = row(Framework::Torchtitan,
                              "torchtitan b5bcd76c6: trainer.py, config/configs.py, components/optimizer/optimizer.py, "
                              "components/loss.py, distributed/fsdp.py");
    titan.precision = Precision::AmpBf16;
    titan.optimizer_impl = OptimizerImpl::Fused;
    titan.checkpointing = Checkpointing::Op;
    titan.checkpoint_save_ops = torchtitanSaveOps();
    titan.loss = LossImpl::Standard;
    // distributed/fsdp.py apply_fsdp_to_decoder: the embedding its own unit,
    // [norm, output] one unit not resharded after forward.
    titan.fsdp_ends = FsdpEnds::OwnUnitsHeadKept;
    rows.push_back(titan);

    FrameworkSpec tune = row(Framework::Torchtune,
                             "torchtune bd2a0fc7c: recipes/configs/llama3_1/8B_full_single_device.yaml, "
                             "recipes/full_finetune_single_device.py, modules/loss/cross_entropy_loss.py");
    tune.precision = Precision::PureBf16;
    tune.optimizer = OptimizerKind::AdamW8bit;
    tune.optimizer_paged = true;  // bitsandbytes.optim.PagedAdamW8bit
    tune.optimizer_in_backward = true;
    tune.checkpointing = Checkpointing::Full;
    tune.loss = LossImpl::ChunkedOutput;
    tune.loss_chunks = 8;
    rows.push_back(tune);

    FrameworkSpec megatron = row(Framework::MegatronLm,
                                 "Megatron-LM d98e8a64dd: megatron/training/arguments.py, megatron/core/model_parallel_config.py, "
                                 "megatron/core/optimizer/__init__.py, megatron/core/transformer/transformer_config.py, "
                                 "megatron/core/models/common/language_module/language_module.py");
    // arguments.py: `args.params_dtype = torch.float` unless --fp16 or --bf16
    // (ModelParallelConfig: bf16 = False, fp16 = False).
    megatron.precision = Precision::Fp32;
    megatron.grad_dtype = DType::Fp32;
    megatron.optimizer = OptimizerKind::Adam;
    megatron.optimizer_impl = OptimizerImpl::Fused;
    megatron.checkpointing = Checkpointing::None;
    // compute_language_model_loss: vocab_parallel_cross_entropy, or with
    // --cross-entropy-loss-fusion (native) its fused copy; the same bytes.
    megatron.loss = LossImpl::VocabParallel;
    rows.push_back(megatron);

    FrameworkSpec deepspeed = row(Framework::Deepspeed,
                                  "DeepSpeed edaa72212 (v0.19.5-27): deepspeed/runtime/engine.py, "
                                  "deepspeed/runtime/constants.py, deepspeed/runtime/zero/parameter_offload.py");
    deepspeed.precision = Precision::Fp32;
    deepspeed.optimizer = OptimizerKind::AdamW;
    deepspeed.optimizer_impl = OptimizerImpl::Fused;
    // ZeRO-3 fetches and releases each module's own parameters in hooks it
    // registers on every module (zero/parameter_offload.py
    // _register_deepspeed_module, pre_sub_module_forward_function): the
    // embedding and the LM head are gathered as their own units.
    deepspeed.fsdp_ends = FsdpEnds::OwnUnits;
    rows.push_back(deepspeed);

    FrameworkSpec litgpt = row(Framework::Litgpt, "LitGPT v0.5.13: litgpt/finetune/full.py, litgpt/utils.py");
    litgpt.precision = Precision::AmpBf16;
    litgpt.optimizer = OptimizerKind::AdamW;
    litgpt.checkpointing = Checkpointing::None;
    litgpt.loss = LossImpl::Chunked;
    // FSDPStrategy(auto_wrap_policy={Block}): the blocks are the units, the
    // embedding, final norm and LM head stay in the root unit.
    litgpt.fsdp_ends = FsdpEnds::Root;
    rows.push_back(litgpt);
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

void applyFrameworkDefaults(Scenario& s, Framework framework) {
    applyFrameworkDefaults(s.training, framework);
    const FrameworkSpec& f = frameworkSpec(framework);
    if (f.fsdp_ends) s.parallelism.fsdp_ends = *f.fsdp_ends;
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
    if (f.optimizer_paged) t.optimizer_paged = *f.optimizer_paged;
}

std::vector<FrameworkValue> frameworkValues(const Scenario& s) {
    const TrainingConfig& t = s.training;
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
    add(out, "training.optimizer_paged", f.optimizer_paged, t.optimizer_paged);
    add(out, "parallelism.fsdp_ends", f.fsdp_ends, s.parallelism.fsdp_ends);
    return out;
}

}  // namespace trainmem
