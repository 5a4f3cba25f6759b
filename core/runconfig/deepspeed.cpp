// DeepSpeed's config JSON as DeepSpeed v0.19.5-27-gedaa72212 reads it
// (deepspeed/runtime/config.py, deepspeed/runtime/constants.py,
// deepspeed/runtime/zero/config.py, zero/offload_config.py). "auto" is the
// Hugging Face integration's placeholder: it is taken from the file that
// runs DeepSpeed (axolotl, torchtune's companion) or reported unknown.
#include "core/training/names.h"
#include "core/runconfig/formats.h"

namespace trainmem::runconfig {
namespace {

const std::string kConstants = std::string(kDeepspeedRelease) + " deepspeed/runtime/constants.py";
const std::string kZeroConfig = std::string(kDeepspeedRelease) + " deepspeed/runtime/zero/config.py";

bool isAuto(const ConfigValue* v) { return v && v->value.is_string() && v->value.get<std::string>() == "auto"; }

bool resolvedBy(const std::vector<std::string>& resolved, const std::string& key) {
    return std::find(resolved.begin(), resolved.end(), key) != resolved.end();
}

}  // namespace

Status importDeepspeed(ConfigDocument& doc, ImportContext& ctx, const std::vector<std::string>& resolved) {
    const bool main_file = resolved.empty() && ctx.file.string() == doc.file;
    if (main_file)
        if (Status st = startFramework(ctx, "deepspeed"); !st) return st;
    ImportRecorder& rec = ctx.rec;

    // "auto" in a key the main file resolved: read there; anywhere else: unknown.
    auto autoValue = [&](const ConfigValue* v, const std::string& tm_key) -> bool {
        if (!isAuto(v)) return false;
        if (resolvedBy(resolved, tm_key))
            rec.readOnly(*v, "\"auto\": the value of the file that runs DeepSpeed (above)", tm_key);
        else
            rec.unknown(v->file, v->key, v->line, tm_key, "\"auto\" is filled in by the Hugging Face integration from its "
                                                          "training arguments; none given here (give the companion or --set)");
        return true;
    };
    auto integerOf = [&](const ConfigValue* v) -> Expected<std::optional<int64_t>> {
        if (!v || v->value.is_null()) return std::optional<int64_t>{};
        auto n = asInteger(*v);
        if (!n) return n.error();
        if (*n < 1) return valueError(*v, "has to be greater than 0 (deepspeed/runtime/config.py _batch_assertion)");
        return std::optional<int64_t>{*n};
    };

    // World size: the data-parallel degree (DeepSpeed's own TP is autotp).
    int64_t tp = 1;
    if (const ConfigValue* autotp = doc.take("tensor_parallel.autotp_size")) {
        auto n = asInteger(*autotp);
        if (!n) return n.error();
        tp = std::max<int64_t>(1, *n);
        if (Status st = rec.set(*autotp, "parallelism.tensor", std::to_string(tp), "AutoTP"); !st) return st;
    }
    std::optional<int64_t> dp;
    if (ctx.options.gpus) {
        if (*ctx.options.gpus % tp != 0)
            return Error{"--gpus", std::to_string(*ctx.options.gpus) + " GPUs are not divisible by tensor_parallel.autotp_size " +
                                       std::to_string(tp)};
        dp = *ctx.options.gpus / tp;
        if (!resolvedBy(resolved, "parallelism.data")) {
            if (Status st = rec.setDefault("--gpus", "parallelism.data", std::to_string(*dp), "world size / autotp_size"); !st) return st;
            if (Status st = rec.setDefault("--gpus", "parallelism.gpus", std::to_string(*ctx.options.gpus), "trainmem's --gpus"); !st)
                return st;
        }
    } else if (resolvedBy(resolved, "parallelism.data") && rec.wasSet("parallelism.data")) {
        dp = rec.result().scenario.parallelism.data;  // the launcher config's world size (Accelerate's num_processes)
    } else if (!resolvedBy(resolved, "parallelism.data")) {
        rec.unknown(doc.file, "(world size)", 0, "parallelism.data", "DeepSpeed's world size is the launcher's: give --gpus N");
    }

    // Batch (runtime/config.py _set_batch_related_parameters, _batch_assertion).
    const ConfigValue* train = doc.take("train_batch_size");
    const ConfigValue* micro = doc.take("train_micro_batch_size_per_gpu");
    const ConfigValue* accum = doc.take("gradient_accumulation_steps");
    const bool train_auto = autoValue(train, "training.gradient_accumulation_steps");
    const bool micro_auto = autoValue(micro, "training.micro_batch_size");
    const bool accum_auto = autoValue(accum, "training.gradient_accumulation_steps");
    if (!train_auto && !micro_auto && !accum_auto) {
        auto t = integerOf(train);
        if (!t) return t.error();
        auto m = integerOf(micro);
        if (!m) return m.error();
        auto g = integerOf(accum);
        if (!g) return g.error();
        std::optional<int64_t> tb = *t, mb = *m, ga = *g;
        if (!tb && !mb)
            return Error{doc.file, "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided "
                                   "(deepspeed/runtime/config.py)"};
        if (dp) {
            if (tb && mb && !ga) {
                if (*tb % (*mb * *dp) != 0)
                    return valueError(*train, "train_batch_size " + std::to_string(*tb) + " is not micro_batch_per_gpu (" +
                                                  std::to_string(*mb) + ") x gradient_acc_step x world_size (" + std::to_string(*dp) +
                                                  ") (deepspeed/runtime/config.py)");
                ga = *tb / (*mb * *dp);
            } else if (tb && ga && !mb) {
                if (*tb % (*ga * *dp) != 0)
                    return valueError(*train, "train_batch_size " + std::to_string(*tb) + " is not divisible by gradient_accumulation_steps x "
                                                  "world_size = " + std::to_string(*ga * *dp) + " (deepspeed/runtime/config.py)");
                mb = *tb / (*ga * *dp);
            } else if (tb && !mb && !ga) {
                ga = 1;
                if (*tb % *dp != 0)
                    return valueError(*train, "train_batch_size " + std::to_string(*tb) + " is not divisible by the world size " +
                                                  std::to_string(*dp) + " (deepspeed/runtime/config.py)");
                mb = *tb / *dp;
            } else if (!ga) {
                ga = 1;
            }
            if (tb && *tb != *mb * *ga * *dp)
                return valueError(*train, "Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
                                          "gradient_acc_step * world_size " + std::to_string(*tb) + " != " + std::to_string(*mb) +
                                          " * " + std::to_string(*ga) + " * " + std::to_string(*dp) + " (deepspeed/runtime/config.py)");
        } else {
            // Without the world size, train_batch_size fixes neither of the others.
            if (!ga && mb && !tb) ga = 1;
            if (!ga && tb)
                rec.unknown(doc.file, "gradient_accumulation_steps", train->line, "training.gradient_accumulation_steps",
                            "train_batch_size / (micro x world size): give --gpus N");
            if (!mb) rec.unknown(doc.file, "train_micro_batch_size_per_gpu", 0, "training.micro_batch_size",
                                 "train_batch_size / (gradient_accumulation_steps x world size): give --gpus N");
        }
        if (mb) {
            const std::string note = micro ? "" : "from train_batch_size, gradient_accumulation_steps and the world size";
            if (micro) {
                if (Status st = rec.set(*micro, "training.micro_batch_size", std::to_string(*mb)); !st) return st;
            } else if (Status st = rec.set(*train, "training.micro_batch_size", std::to_string(*mb), note); !st) {
                return st;
            }
        }
        if (ga) {
            if (accum) {
                if (Status st = rec.set(*accum, "training.gradient_accumulation_steps", std::to_string(*ga)); !st) return st;
            } else if (train && mb) {
                if (Status st = rec.set(*train, "training.gradient_accumulation_steps", std::to_string(*ga),
                                        "train_batch_size / (micro x world size)");
                    !st)
                    return st;
            } else if (Status st = rec.setDefault("gradient_accumulation_steps", "training.gradient_accumulation_steps", "1",
                                                  std::string(kDeepspeedRelease) + " deepspeed/runtime/config.py _set_batch_related_parameters");
                       !st) {
                return st;
            }
        }
    }

    // Precision (constants.py: BFLOAT16_ENABLED_DEFAULT, FP16_ENABLED_DEFAULT False).
    const ConfigValue* bf16 = doc.take("bf16.enabled");
    if (!bf16) bf16 = doc.take("bfloat16.enabled");
    const ConfigValue* fp16 = doc.take("fp16.enabled");
    doc.takeUnder("fp16");
    doc.takeUnder("bf16");
    if (!autoValue(bf16, "training.precision") && !autoValue(fp16, "training.precision")) {
        bool b = false, f = false;
        if (bf16) {
            auto v = asBoolean(*bf16);
            if (!v) return v.error();
            b = *v;
        }
        if (fp16) {
            auto v = asBoolean(*fp16);
            if (!v) return v.error();
            f = *v;
        }
        if (b && f) return valueError(*fp16, "bf16 and fp16 modes cannot be simultaneously enabled (deepspeed/runtime/config.py)");
        if (b) {
            if (Status st = rec.set(*bf16, "training.precision", "mixed-bf16", "bf16 weights, fp32 master weights in the optimizer"); !st) return st;
        } else if (f) {
            if (Status st = rec.set(*fp16, "training.precision", "mixed-fp16", "fp16 weights, fp32 master weights"); !st) return st;
        } else if (!resolvedBy(resolved, "training.precision")) {
            if (Status st = rec.setDefault("bf16.enabled, fp16.enabled", "training.precision", "fp32", kConstants,
                                           "BFLOAT16_ENABLED_DEFAULT = FP16_ENABLED_DEFAULT = False");
                !st)
                return st;
        }
    }

    // ZeRO (zero/config.py: stage 0; offload_param / offload_optimizer device none).
    const ConfigValue* stage = doc.take("zero_optimization.stage");
    int64_t zero = 0;
    if (stage && !autoValue(stage, "parallelism.zero_stage")) {
        auto n = asInteger(*stage);
        if (!n) return n.error();
        if (*n < 0 || *n > 3) return valueError(*stage, "expected 0, 1, 2 or 3 (ZeroStageEnum)");
        zero = *n;
        if (Status st = rec.set(*stage, "parallelism.zero_stage", std::to_string(zero)); !st) return st;
    } else if (!stage) {
        if (Status st = rec.setDefault("zero_optimization.stage", "parallelism.zero_stage", "0", kZeroConfig, "ZeroStageEnum 0"); !st) return st;
    }
    auto offload = [&](const std::string& key, const std::string& tm_key) -> Status {
        const ConfigValue* device = doc.take(key + ".device");
        doc.takeUnder(key);
        if (!device || autoValue(device, tm_key)) return ok();
        auto d = asText(*device);
        if (!d) return d.error();
        if (*d == "none") return rec.set(*device, tm_key, "false");
        if (*d == "cpu") return rec.set(*device, tm_key, "true");
        if (*d == "nvme") {
            rec.notRepresentable(*device, "ZeRO-Infinity's NVMe offload: trainmem counts host memory, not NVMe; counted as cpu", tm_key);
            return rec.set(*device, tm_key, "true", "NVMe counted as CPU offload (not representable, see below)");
        }
        return valueError(*device, "expected none, cpu or nvme (zero/offload_config.py OffloadDeviceEnum; got \"" + *d + "\")");
    };
    if (Status st = offload("zero_optimization.offload_optimizer", "parallelism.offload_optimizer"); !st) return st;
    if (Status st = offload("zero_optimization.offload_param", "parallelism.offload_parameters"); !st) return st;
    if (const ConfigValue* v = doc.take("zero_optimization.cpu_offload")) {
        auto b = asBoolean(*v);
        if (!b) return b.error();
        if (Status st = rec.set(*v, "parallelism.offload_optimizer", *b ? "true" : "false", "deprecated cpu_offload = offload_optimizer cpu"); !st)
            return st;
    }
    for (const char* key : {"zero_optimization.stage3_param_persistence_threshold", "zero_optimization.zero_hpz_partition_size",
                            "zero_optimization.stage3_max_live_parameters"})
        if (const ConfigValue* v = doc.take(key))
            rec.notRepresentable(*v, std::string(key).ends_with("hpz_partition_size")
                                         ? "ZeRO++ hpZ's secondary partition of the weights is not modelled"
                                         : "ZeRO-3's parameter cache limits are not modelled (each unit gathered and released)");

    // Optimizer (engine.py _configure_basic_optimizer).
    const ConfigValue* type = doc.take("optimizer.type");
    doc.takeUnder("optimizer.params");
    if (type && !autoValue(type, "training.optimizer")) {
        auto t = asText(*type);
        if (!t) return t.error();
        std::string lowered = *t;
        std::transform(lowered.begin(), lowered.end(), lowered.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        if (lowered == "adam" || lowered == "adamw") {
            if (Status st = rec.set(*type, "training.optimizer", "adamw", "\"Optimizer name of Adam forces AdamW logic\" (engine.py)"); !st) return st;
            const ConfigValue* torch_adam = doc.find("optimizer.params.torch_adam");
            const bool torch = torch_adam && torch_adam->value.is_boolean() && torch_adam->value.get<bool>();
            if (Status st = rec.set(torch_adam ? *torch_adam : *type, "training.optimizer_impl", torch ? "foreach" : "fused",
                                    torch ? "torch.optim.AdamW" : "DeepSpeed's FusedAdam");
                !st)
                return st;
        } else if (lowered == "sgd") {
            if (Status st = rec.set(*type, "training.optimizer", "sgd-momentum", "torch.optim.SGD (momentum from its params)"); !st) return st;
        } else {
            rec.notRepresentable(*type, "optimizer " + *t + " (DeepSpeed's own: Lamb, OneBitAdam, ...) is not in trainmem's catalogue",
                                 "training.optimizer");
            rec.unknown(type->file, type->key, type->line, "training.optimizer", "set the nearest optimizer with --set");
        }
    } else if (!type && !resolvedBy(resolved, "training.optimizer")) {
        rec.unknown(doc.file, "optimizer", 0, "training.optimizer",
                    "no optimizer section: DeepSpeed steps the optimizer the client code passes to deepspeed.initialize");
    }

    // Activation checkpointing (runtime/activation_checkpointing/config.py).
    const ConfigValue* partition = doc.take("activation_checkpointing.partition_activations");
    const ConfigValue* cpu = doc.take("activation_checkpointing.cpu_checkpointing");
    doc.takeUnder("activation_checkpointing");
    bool any_ckpt = false;
    for (auto [v, key] : {std::pair{partition, "training.deepspeed_partition_activations"}, std::pair{cpu, "training.deepspeed_cpu_checkpointing"}}) {
        if (!v) continue;
        auto b = asBoolean(*v);
        if (!b) return b.error();
        any_ckpt = any_ckpt || *b;
        if (Status st = rec.set(*v, key, *b ? "true" : "false"); !st) return st;
    }
    if (any_ckpt && !resolvedBy(resolved, "training.activation_checkpointing"))
        rec.unknown(doc.file, "activation_checkpointing", partition ? partition->line : cpu->line, "training.activation_checkpointing",
                    "these act only where the model's code calls deepspeed.checkpointing.checkpoint: set full if it does");

    if (main_file) finishFramework(ctx, kDeepspeedRelease);
    rec.ignoreRest(doc, "no effect on memory in trainmem's model (" + std::string(kDeepspeedRelease) + ")");
    return ok();
}

Expected<std::string> exportDeepspeed(const Scenario& s) {
    const ParallelConfig& p = s.parallelism;
    const TrainingConfig& t = s.training;
    if (p.pipeline > 1 || p.context > 1 || p.expert > 1)
        return Error{"parallelism", "a DeepSpeed JSON carries data parallelism, ZeRO and AutoTP only (pipeline, context and expert "
                                    "degrees are the model code's)"};
    std::string precision;
    switch (t.precision) {
        case Precision::MixedBf16: precision = "bf16"; break;
        case Precision::MixedFp16: precision = "fp16"; break;
        case Precision::Fp32: break;
        default: return Error{"training.precision", "DeepSpeed trains fp32, mixed-bf16 or mixed-fp16"};
    }
    if (t.optimizer != OptimizerKind::AdamW) return Error{"training.optimizer", "export writes DeepSpeed's AdamW only"};
    if (t.optimizer_impl == OptimizerImpl::ForLoop) return Error{"training.optimizer_impl", "DeepSpeed's AdamW is fused or torch's"};
    nlohmann::ordered_json doc;
    doc["train_micro_batch_size_per_gpu"] = t.micro_batch_size;
    doc["gradient_accumulation_steps"] = t.gradient_accumulation_steps;
    doc["train_batch_size"] = t.micro_batch_size * t.gradient_accumulation_steps * p.data;
    if (precision == "bf16") doc["bf16"] = {{"enabled", true}};
    if (precision == "fp16") doc["fp16"] = {{"enabled", true}};
    nlohmann::ordered_json zero;
    zero["stage"] = p.zero_stage;
    if (p.offload_optimizer) zero["offload_optimizer"] = {{"device", "cpu"}};
    if (p.offload_parameters) zero["offload_param"] = {{"device", "cpu"}};
    doc["zero_optimization"] = zero;
    nlohmann::ordered_json opt;
    opt["type"] = "AdamW";
    opt["params"] = {{"lr", 1e-5}};
    if (t.optimizer_impl == OptimizerImpl::ForEach) opt["params"]["torch_adam"] = true;
    doc["optimizer"] = opt;
    if (p.tensor > 1) doc["tensor_parallel"] = {{"autotp_size", p.tensor}};
    if (t.deepspeed_partition_activations || t.deepspeed_cpu_checkpointing)
        doc["activation_checkpointing"] = {{"partition_activations", t.deepspeed_partition_activations},
                                           {"cpu_checkpointing", t.deepspeed_cpu_checkpointing}};
    return doc.dump(2) + "\n";
}

}  // namespace trainmem::runconfig
