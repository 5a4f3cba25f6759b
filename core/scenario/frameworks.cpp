// The framework catalogue. Each value's source is in docs/frameworks.md; a
// row sets only what was read in the stack's code.
#include "core/scenario/frameworks.h"

#include <algorithm>

#include "core/training/hardware.h"
#include "core/base/json_input.h"
#include "core/training/names.h"

namespace trainmem {
namespace {

// torchtitan's op-level save list (core/activations/activations_op_policy.cpp).
std::vector<std::string> torchtitanSaveOps() { return {"mm-every-second", "attention", "reduce_scatter", "max"}; }

FrameworkSpec row(Framework id, std::string_view release, std::string_view date, std::string_view read) {
    FrameworkSpec r;
    r.id = id;
    r.release = release;
    r.date = date;
    r.read = read;
    return r;
}

// torchtitan with pipeline parallelism: its "default" reshard policy keeps
// the blocks gathered from forward to backward when PP is on
// (distributed/fsdp.py get_fsdp_reshard_after_forward_policy: `return not
// pp_enabled`; the same branch in parallelisms/parallelize_llama.py
// apply_fsdp at 3f20451bc and models/llama3/infra/parallelize.py at v0.1.0 to
// v0.2.2), and PyTorch's pipelining reduces and reshards only after the last
// micro-batch (torch/distributed/pipelining/stage.py
// backward_maybe_with_nosync).
void torchtitanLayout(const ParallelConfig& p, FrameworkSpec& r) {
    const bool pp = p.pipeline > 1;
    r.reshard_after_forward = !pp;
    r.fsdp_gradient_sync = pp ? FsdpGradientSync::LastMicrobatch : FsdpGradientSync::EveryMicrobatch;
}
// 3f20451bc: mixed precision only through FSDP's MixedPrecisionPolicy
// (config_manager.py --training.mixed_precision_param: "only takes effect
// when data_parallel_shard_degree > 1"); AMP for one device and DDP came
// with 0b44d4c43 (2025-06-16).
void torchtitanDec2024Layout(const ParallelConfig& p, FrameworkSpec& r) {
    torchtitanLayout(p, r);
    r.precision = p.zero_stage >= 3 ? Precision::AmpBf16 : Precision::Fp32;
}
// finetune/full.py: `if devices * num_nodes > 1: FSDPStrategy(auto_wrap_policy=
// {Block}, activation_checkpointing_policy={Block}, ...)`, else "auto" (no
// checkpointing).
// The layout is applied before validation, so the degrees may be anything a
// file holds: "more than one GPU" is asked of each degree, never of their
// product (which can overflow).
void litgptLayout(const ParallelConfig& p, FrameworkSpec& r) {
    const bool several = p.data > 1 || p.tensor > 1 || p.pipeline > 1 || p.context > 1;
    r.checkpointing = several ? Checkpointing::Full : Checkpointing::None;
}

// torchtitan releases, oldest first. What changed between them (commits in
// pytorch/torchtitan): #881 6e4988550 (2025-02-24) fused AdamW by default;
// 0b44d4c43 (2025-06-16) AMP on one device and DDP; #1094 83e694105
// (2025-07-28) the embedding and [norm, output] as units of their own;
// #2357 114151ad4 (2026-03-23) `selective` means the op-level policy (before:
// selective_ac_option = "2", every second block).
void addTorchtitan(std::vector<FrameworkSpec>& rows) {
    FrameworkSpec dec = row(Framework::Torchtitan, "3f20451bc", "2024-12-26",
                            "torchtitan 3f20451bc: torchtitan/config_manager.py, torchtitan/optimizer.py, "
                            "torchtitan/parallelisms/parallelize_llama.py, train.py");
    dec.optimizer = OptimizerKind::AdamW;            // --optimizer.name default "AdamW"
    dec.optimizer_impl = OptimizerImpl::ForEach;     // optimizer.py: "foreach": not fused (--optimizer.fused off)
    dec.checkpointing = Checkpointing::TorchtitanLayer;  // mode "selective", selective_ac_option "2"
    dec.checkpoint_every = 2;
    dec.loss = LossImpl::Standard;                   // train.py loss_fn: cross_entropy(pred...float(), labels)
    dec.fsdp_ends = FsdpEnds::Root;                  // apply_fsdp: fully_shard(model) holds the ends
    dec.by_layout = torchtitanDec2024Layout;
    rows.push_back(dec);

    FrameworkSpec v010 = row(Framework::Torchtitan, "v0.1.0", "2025-06-17",
                             "torchtitan v0.1.0: torchtitan/config_manager.py, torchtitan/components/optimizer.py, "
                             "torchtitan/models/llama3/infra/parallelize.py, torchtitan/train.py");
    v010.precision = Precision::AmpBf16;
    v010.optimizer = OptimizerKind::AdamW;
    v010.optimizer_impl = OptimizerImpl::Fused;      // Optimizer.implementation = "fused"
    v010.checkpointing = Checkpointing::TorchtitanLayer;
    v010.checkpoint_every = 2;
    v010.loss = LossImpl::Standard;
    v010.fsdp_ends = FsdpEnds::Root;                 // apply_fsdp: fully_shard(model, ...)
    v010.by_layout = torchtitanLayout;
    rows.push_back(v010);

    // v0.2.0 to v0.2.2: job_config.py (implementation "fused", mode
    // "selective", selective_ac_option "2"), parallelize.py apply_fsdp
    // (tok_embeddings and [norm, output] units, the latter resharded only
    // with "always").
    for (auto [release, date] : {std::pair<std::string_view, std::string_view>{"v0.2.0", "2025-10-17"},
                                 {"v0.2.1", "2025-12-26"},
                                 {"v0.2.2", "2026-02-20"}}) {
        FrameworkSpec v = v010;
        v.release = release;
        v.date = date;
        v.read = "torchtitan v0.2.x: torchtitan/config/job_config.py, torchtitan/components/optimizer.py, "
                 "torchtitan/models/llama3/infra/parallelize.py";
        v.fsdp_ends = FsdpEnds::OwnUnitsHeadKept;
        rows.push_back(v);
    }

    FrameworkSpec titan = row(Framework::Torchtitan, "b5bcd76c6", "2026-08-21",
                              "torchtitan b5bcd76c6: trainer.py, config/configs.py, components/optimizer/optimizer.py, "
                              "components/loss.py, distributed/fsdp.py");
    titan.precision = Precision::AmpBf16;
    titan.optimizer = OptimizerKind::AdamW;
    titan.optimizer_impl = OptimizerImpl::Fused;
    titan.checkpointing = Checkpointing::Op;
    titan.checkpoint_save_ops = torchtitanSaveOps();
    titan.loss = LossImpl::Standard;
    // distributed/fsdp.py apply_fsdp_to_decoder: the embedding its own unit,
    // [norm, output] one unit not resharded after forward.
    titan.fsdp_ends = FsdpEnds::OwnUnitsHeadKept;
    titan.by_layout = torchtitanLayout;
    rows.push_back(titan);
}

// Every release of every framework: each framework's rows oldest first, the
// frameworks in enum order.
std::vector<FrameworkSpec> buildReleases() {
    std::vector<FrameworkSpec> rows;
    rows.push_back(row(Framework::Custom, "", "", "sets nothing"));

    // transformers (huggingface/transformers 00349ae87, src/transformers/
    // training_args.py) and PEFT (huggingface/peft v0.20.0-47-g5d602fdbf).
    FrameworkSpec hf = row(Framework::HfTrainer, "00349ae87", "",
                           "transformers 00349ae87: src/transformers/training_args.py; PEFT 5d602fdbf: "
                           "src/peft/tuners/lora/config.py, src/peft/utils/constants.py");
    hf.precision = Precision::Fp32;                 // bf16 = False, fp16 = False: the weights' own dtype (fp32 loaded)
    hf.optimizer = OptimizerKind::AdamW;            // optim "adamw_torch_fused" with torch >= 2.8 ("adamw_torch" before)
    hf.optimizer_impl = OptimizerImpl::Fused;
    hf.checkpointing = Checkpointing::None;         // gradient_checkpointing = False
    hf.loss = LossImpl::Standard;                   // the model's own loss: logits.float() + cross_entropy
    hf.lora_rank = 8;                               // LoraConfig r = 8
    hf.lora_targets = std::vector<std::string>{"q_proj", "v_proj"};  // llama's entry of the target mapping
    hf.ddp_bucket_mib = 25;                         // ddp_bucket_cap_mb = None: PyTorch's 25 MB
    rows.push_back(hf);

    addTorchtitan(rows);

    FrameworkSpec tune = row(Framework::Torchtune, "bd2a0fc7c", "",
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

    FrameworkSpec megatron = row(Framework::MegatronLm, "d98e8a64dd", "",
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

    FrameworkSpec deepspeed = row(Framework::Deepspeed, "edaa72212", "",
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

    FrameworkSpec litgpt = row(Framework::Litgpt, "v0.5.13", "", "LitGPT v0.5.13: litgpt/finetune/full.py, litgpt/utils.py");
    litgpt.precision = Precision::AmpBf16;
    litgpt.optimizer = OptimizerKind::AdamW;
    litgpt.checkpointing = Checkpointing::None;  // one GPU; FSDP: litgptLayout
    litgpt.loss = LossImpl::Chunked;
    // FSDPStrategy(auto_wrap_policy={Block}): the blocks are the units, the
    // embedding, final norm and LM head stay in the root unit.
    litgpt.fsdp_ends = FsdpEnds::Root;
    litgpt.by_layout = litgptLayout;
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

const std::vector<FrameworkSpec>& allReleases() {
    static const std::vector<FrameworkSpec> rows = buildReleases();
    return rows;
}

bool isDate(std::string_view text) {
    auto digits = [&](size_t from, size_t n) {
        for (size_t i = from; i < from + n; ++i)
            if (i >= text.size() || text[i] < '0' || text[i] > '9') return false;
        return true;
    };
    if (text.size() == 7) return digits(0, 4) && text[4] == '-' && digits(5, 2);
    return text.size() == 10 && digits(0, 4) && text[4] == '-' && digits(5, 2) && text[7] == '-' && digits(8, 2);
}

void setTraining(TrainingConfig& t, const FrameworkSpec& f) {
    if (f.precision) t.precision = *f.precision;
    if (f.grad_dtype) t.grad_dtype = *f.grad_dtype;
    if (f.optimizer) t.optimizer = *f.optimizer;
    if (f.optimizer_impl) t.optimizer_impl = *f.optimizer_impl;
    if (f.optimizer_in_backward) t.optimizer_in_backward = *f.optimizer_in_backward;
    if (f.checkpointing) t.checkpointing = *f.checkpointing;
    if (f.checkpoint_every) t.checkpoint_every = *f.checkpoint_every;
    if (f.checkpoint_save_ops) t.checkpoint_save_ops = *f.checkpoint_save_ops;
    if (f.loss) t.loss = *f.loss;
    if (f.loss_chunks) t.loss_chunks = *f.loss_chunks;
    if (f.optimizer_paged) t.optimizer_paged = *f.optimizer_paged;
    if (f.lora_rank) t.lora_rank = *f.lora_rank;
    if (f.lora_targets) t.lora_targets = *f.lora_targets;
}

FrameworkSpec refined(const FrameworkSpec& f, const ParallelConfig& p) {
    FrameworkSpec r = f;
    if (r.by_layout) r.by_layout(p, r);
    return r;
}

}  // namespace

const std::vector<FrameworkSpec>& frameworkCatalogue() {
    static const std::vector<FrameworkSpec> rows = [] {
        std::vector<FrameworkSpec> newest;
        for (const auto& entry : enumNames<Framework>()) newest.push_back(frameworkSpec(entry.value));
        return newest;
    }();
    return rows;
}

std::vector<const FrameworkSpec*> frameworkReleases(Framework framework) {
    std::vector<const FrameworkSpec*> out;
    for (const FrameworkSpec& r : allReleases())
        if (r.id == framework) out.push_back(&r);
    return out;
}

const FrameworkSpec& frameworkSpec(Framework framework, std::string_view release) {
    const std::vector<const FrameworkSpec*> rows = frameworkReleases(framework);
    if (rows.empty()) return allReleases().front();
    for (const FrameworkSpec* r : rows)
        if (!release.empty() && r->release == release) return *r;
    return *rows.back();
}

Expected<const FrameworkSpec*> findFrameworkRelease(Framework framework, std::string_view wanted) {
    const std::vector<const FrameworkSpec*> rows = frameworkReleases(framework);
    const std::string name(enumName(framework));
    std::string list;
    for (const FrameworkSpec* r : rows)
        if (!r->release.empty())
            list += (list.empty() ? "" : ", ") + std::string(r->release) +
                    (r->date.empty() ? std::string() : " (" + std::string(r->date) + ")");
    if (framework == Framework::Custom)
        return Error{"training.framework", "custom has no releases; write training.framework = custom"};
    for (const FrameworkSpec* r : rows)
        if (r->release == wanted) return r;
    if (isDate(wanted)) {
        // "2025-07" stands for any day of that month: the newest release of the month or before.
        const std::string last = wanted.size() == 7 ? std::string(wanted) + "-31" : std::string(wanted);
        const FrameworkSpec* best = nullptr;
        for (const FrameworkSpec* r : rows)
            if (!r->date.empty() && std::string(r->date) <= last) best = r;
        if (best) return best;
        return Error{"training.framework", "no release of " + name + " read on or before " + describeText(wanted) +
                                               "; releases read: " + list};
    }
    return Error{"training.framework", "unknown release \"" + describeText(wanted) + "\" of " + name +
                                           "; name one of the releases read (" + list +
                                           ") or a date YYYY-MM-DD (the newest release on or before it)"};
}

FrameworkSpec frameworkSpecFor(const Scenario& s) {
    return refined(frameworkSpec(s.training.framework, s.training.framework_release), s.parallelism);
}

void applyFrameworkDefaults(Scenario& s, Framework framework, std::string_view release) {
    const FrameworkSpec& base = frameworkSpec(framework, release);
    const FrameworkSpec f = refined(base, s.parallelism);
    s.training.framework = framework;
    // The newest release is written as the bare name.
    s.training.framework_release = &base == &frameworkSpec(framework) ? std::string() : std::string(base.release);
    setTraining(s.training, f);
    if (f.ddp_bucket_mib) s.hardware.overheads.ddp_bucket_bytes = *f.ddp_bucket_mib * kMiB;
    if (f.fsdp_ends) s.parallelism.fsdp_ends = *f.fsdp_ends;
    if (f.reshard_after_forward) s.parallelism.reshard_after_forward = *f.reshard_after_forward;
    if (f.fsdp_gradient_sync) s.parallelism.fsdp_gradient_sync = *f.fsdp_gradient_sync;
}

void applyFrameworkDefaults(TrainingConfig& t, Framework framework) {
    t.framework = framework;
    t.framework_release.clear();
    setTraining(t, frameworkSpec(framework));
}

void applyFrameworkLayoutDefaults(Scenario& s, const std::function<bool(std::string_view)>& given) {
    const FrameworkSpec& base = frameworkSpec(s.training.framework, s.training.framework_release);
    if (!base.by_layout) return;
    FrameworkSpec layout;  // only what the layout sets
    base.by_layout(s.parallelism, layout);
    if (layout.precision && !given("training.precision")) s.training.precision = *layout.precision;
    if (layout.checkpointing && !given("training.activation_checkpointing"))
        s.training.checkpointing = *layout.checkpointing;
    if (layout.reshard_after_forward && !given("parallelism.reshard_after_forward"))
        s.parallelism.reshard_after_forward = *layout.reshard_after_forward;
    if (layout.fsdp_gradient_sync && !given("parallelism.fsdp_gradient_sync"))
        s.parallelism.fsdp_gradient_sync = *layout.fsdp_gradient_sync;
}

std::vector<FrameworkValue> frameworkValues(const Scenario& s) {
    const TrainingConfig& t = s.training;
    const FrameworkSpec f = frameworkSpecFor(s);
    std::vector<FrameworkValue> out;
    add(out, "training.precision", f.precision, t.precision);
    if (f.grad_dtype) add(out, "training.grad_dtype", f.grad_dtype, t.grad_dtype.value_or(DType::Fp32));
    if (f.grad_dtype && !t.grad_dtype) out.back().overridden = true;  // "auto" is not the framework's value
    add(out, "training.optimizer", f.optimizer, t.optimizer);
    add(out, "training.optimizer_impl", f.optimizer_impl, t.optimizer_impl);
    add(out, "training.optimizer_in_backward", f.optimizer_in_backward, t.optimizer_in_backward);
    add(out, "training.activation_checkpointing", f.checkpointing, t.checkpointing);
    add(out, "training.checkpoint_every", f.checkpoint_every, t.checkpoint_every);
    add(out, "training.checkpoint_save_ops", f.checkpoint_save_ops, t.checkpoint_save_ops);
    add(out, "training.loss", f.loss, t.loss);
    add(out, "training.loss_chunks", f.loss_chunks, t.loss_chunks);
    add(out, "training.optimizer_paged", f.optimizer_paged, t.optimizer_paged);
    add(out, "training.lora_rank", f.lora_rank, t.lora_rank);
    add(out, "training.lora_targets", f.lora_targets, t.lora_targets);
    const std::optional<int64_t> bucket_bytes =
        f.ddp_bucket_mib ? std::optional<int64_t>(*f.ddp_bucket_mib * kMiB) : std::nullopt;
    add(out, "hardware.ddp_bucket_mib", bucket_bytes, s.hardware.overheads.ddp_bucket_bytes);
    if (f.ddp_bucket_mib) out.back().value = std::to_string(*f.ddp_bucket_mib);
    add(out, "parallelism.fsdp_ends", f.fsdp_ends, s.parallelism.fsdp_ends);
    add(out, "parallelism.reshard_after_forward", f.reshard_after_forward, s.parallelism.reshard_after_forward);
    add(out, "parallelism.fsdp_gradient_sync", f.fsdp_gradient_sync, s.parallelism.fsdp_gradient_sync);
    return out;
}

}  // namespace trainmem
