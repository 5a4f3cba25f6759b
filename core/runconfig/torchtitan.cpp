// torchtitan's job-config TOML, as torchtitan v0.2.2 reads it
// (torchtitan/config/job_config.py JobConfig, the last release before the
// switch to Python configs in commit 9810191bb), and its --section.option
// command-line flags, which override the file.
#include <cmath>

#include "core/training/names.h"
#include "core/runconfig/formats.h"

namespace trainmem::runconfig {
namespace {

const std::string kJobConfig = std::string(kTorchtitanRelease) + " torchtitan/config/job_config.py";

// The flavours that are a trainmem preset exactly (torchtitan/models/*/__init__.py).
std::string presetForFlavor(const std::string& name, const std::string& flavor) {
    if (name == "llama3") {
        if (flavor == "8B") return "llama-3.1-8b";
        if (flavor == "70B") return "llama-3.1-70b";
        if (flavor == "405B") return "llama-3.1-405b";
    }
    if (name == "qwen3") {
        if (flavor == "0.6B") return "qwen3-0.6b";
        if (flavor == "30B-A3B") return "qwen3-30b-a3b";
    }
    return {};
}

struct Reader {
    const ConfigDocument& doc;
    ImportContext& ctx;

    Expected<std::pair<int64_t, const ConfigValue*>> integer(const std::string& key, int64_t fallback) {
        const ConfigValue* v = doc.take(key);
        if (!v) return std::pair<int64_t, const ConfigValue*>{fallback, nullptr};
        auto n = asInteger(*v);
        if (!n) return n.error();
        return std::pair<int64_t, const ConfigValue*>{*n, v};
    }
    Expected<std::pair<std::string, const ConfigValue*>> text(const std::string& key, const std::string& fallback) {
        const ConfigValue* v = doc.take(key);
        if (!v) return std::pair<std::string, const ConfigValue*>{fallback, nullptr};
        auto t = asText(*v);
        if (!t) return t.error();
        return std::pair<std::string, const ConfigValue*>{*t, v};
    }
    Expected<std::pair<bool, const ConfigValue*>> boolean(const std::string& key, bool fallback) {
        const ConfigValue* v = doc.take(key);
        if (!v) return std::pair<bool, const ConfigValue*>{fallback, nullptr};
        auto b = asBoolean(*v);
        if (!b) return b.error();
        return std::pair<bool, const ConfigValue*>{*b, v};
    }
    // Records the value: read from the file, or torchtitan's default.
    Status put(const ConfigValue* from, const std::string& key, const std::string& tm_key, const std::string& value,
               const std::string& note = {}) {
        if (from) return ctx.rec.set(*from, tm_key, value, note);
        return ctx.rec.setDefault(key, tm_key, value, kJobConfig, note);
    }
};

#define TRY(decl, expr)                      \
    auto decl##_r = (expr);                  \
    if (!decl##_r) return decl##_r.error(); \
    auto decl = *decl##_r

}  // namespace

Status importTorchtitan(ConfigDocument& doc, ImportContext& ctx) {
    // --section.option=value flags (torchtitan's tyro CLI) override the file.
    for (const std::string& flag : ctx.options.overrides) {
        std::string body = flag;
        if (!body.starts_with("--")) return Error{flag, "a torchtitan flag is --section.option=value"};
        body = body.substr(2);
        const size_t eq = body.find('=');
        if (eq == std::string::npos || body.find('.') == std::string::npos || body.find('.') > eq)
            return Error{flag, "a torchtitan flag is --section.option=value (e.g. --parallelism.tensor_parallel_degree=2)"};
        ConfigValue v;
        v.key = body.substr(0, eq);
        v.value = yaml11Scalar(body.substr(eq + 1));
        // A TOML string value given as text: keep it text where torchtitan's field is a string.
        if (v.key == "activation_checkpoint.selective_ac_option" || v.key == "model.flavor") v.value = body.substr(eq + 1);
        v.file = "command line";
        doc.set(std::move(v));
    }
    Reader r{doc, ctx};
    if (Status st = startFramework(ctx, "torchtitan"); !st) return st;

    // Model.
    TRY(name, r.text("model.name", "llama3"));
    TRY(flavor, r.text("model.flavor", "debugmodel"));
    const std::string preset = presetForFlavor(name.first, flavor.first);
    if (!preset.empty())
        ctx.modelFromPreset(preset, flavor.second ? flavor.second : name.second,
                            "torchtitan's " + name.first + " flavour " + flavor.first);
    else
        ctx.modelUnknown("model.flavor", flavor.second ? flavor.second->line : 0,
                         "flavour " + name.first + " " + flavor.first + " is no trainmem preset: give --preset or --model-config");
    if (const ConfigValue* converters = doc.take("model.converters"); converters && !converters->value.empty())
        ctx.rec.notRepresentable(*converters,
                                 "torchao float8 / MX linear conversion: its fp8 weights and saved tensors are not "
                                 "those of training.precision = fp8-mixed (Transformer Engine); counted without it",
                                 "training.precision");

    // Parallel degrees (torchtitan/distributed/parallel_dims.py).
    TRY(replicate, r.integer("parallelism.data_parallel_replicate_degree", 1));
    TRY(shard, r.integer("parallelism.data_parallel_shard_degree", -1));
    TRY(tp, r.integer("parallelism.tensor_parallel_degree", 1));
    TRY(pp, r.integer("parallelism.pipeline_parallel_degree", 1));
    TRY(cp, r.integer("parallelism.context_parallel_degree", 1));
    TRY(ep, r.integer("parallelism.expert_parallel_degree", 1));
    for (auto* d : {&replicate, &tp, &pp, &cp, &ep})
        if (d->first < 1 && d->second)
            return valueError(*d->second, "must be at least 1 (torchtitan/distributed/parallel_dims.py: \"Parallelism "
                                          "degree should be >= 1, except for dp_shard\")");
    if (shard.first != -1 && shard.first < 1 && shard.second)
        return valueError(*shard.second, "must be -1 or at least 1 (parallel_dims.py: \"dp_shard must -1 or >=1.\")");
    int64_t dp_shard = shard.first;
    const int64_t others = replicate.first * tp.first * pp.first * cp.first;
    const auto gpus = ctx.options.gpus;
    if (dp_shard == -1) {
        if (!gpus) {
            ctx.rec.unknown(shard.second ? shard.second->file : "", "parallelism.data_parallel_shard_degree",
                            shard.second ? shard.second->line : 0, "parallelism.data",
                            "-1: the ranks left after replicate x tp x pp x cp (parallel_dims.py); give --gpus N");
            dp_shard = 1;
        } else {
            if (*gpus % others != 0 || *gpus / others < 1)
                return Error{"--gpus", std::to_string(*gpus) + " GPUs: dp_shard = -1 needs WORLD_SIZE divisible by "
                                           "dp_replicate * cp * tp * pp = " + std::to_string(others) +
                                           " (torchtitan/distributed/parallel_dims.py)"};
            dp_shard = *gpus / others;
        }
    } else if (gpus && dp_shard * others != *gpus) {
        return Error{"--gpus", "dp_replicate(" + std::to_string(replicate.first) + ") * dp_shard(" + std::to_string(dp_shard) +
                                   ") * cp(" + std::to_string(cp.first) + ") * tp(" + std::to_string(tp.first) + ") * pp(" +
                                   std::to_string(pp.first) + ") != WORLD_SIZE(" + std::to_string(*gpus) +
                                   ") (torchtitan/distributed/parallel_dims.py)"};
    }
    const int64_t dp = replicate.first * dp_shard;
    const bool fsdp = dp_shard > 1 || cp.first > 1;  // fully_shard over the dp_shard_cp mesh
    if (shard.second)
        ctx.rec.readOnly(*shard.second, "data_parallel_shard_degree = " + std::to_string(dp_shard), "parallelism.data");
    if (Status st = r.put(replicate.second, "parallelism.data_parallel_replicate_degree", "parallelism.data",
                          std::to_string(dp), "replicate x shard = " + std::to_string(replicate.first) + " x " + std::to_string(dp_shard));
        !st)
        return st;
    if (Status st = r.put(shard.second, "parallelism.data_parallel_shard_degree", "parallelism.zero_stage", fsdp ? "3" : "0",
                          fsdp ? "FSDP2 fully_shard over dp_shard x cp" : "no sharding: DDP or one GPU");
        !st)
        return st;
    if (fsdp && replicate.first > 1)
        if (Status st = ctx.rec.set(*(replicate.second ? replicate.second : shard.second), "parallelism.shard_group",
                                    std::to_string(dp_shard * cp.first), "HSDP: shard groups of dp_shard x cp ranks");
            !st)
            return st;
    if (Status st = r.put(tp.second, "parallelism.tensor_parallel_degree", "parallelism.tensor", std::to_string(tp.first)); !st) return st;
    if (tp.first > 1)
        if (Status st = r.put(tp.second, "parallelism.tensor_parallel_degree", "parallelism.sequence_parallel", "true",
                              "torchtitan's TP plan shards the norms' activations (SequenceParallel, models/llama3/infra/parallelize.py)");
            !st)
            return st;
    if (Status st = r.put(pp.second, "parallelism.pipeline_parallel_degree", "parallelism.pipeline", std::to_string(pp.first)); !st) return st;
    if (Status st = r.put(cp.second, "parallelism.context_parallel_degree", "parallelism.context", std::to_string(cp.first)); !st) return st;
    if (Status st = r.put(ep.second, "parallelism.expert_parallel_degree", "parallelism.expert", std::to_string(ep.first)); !st) return st;
    if (gpus)
        if (Status st = ctx.rec.setDefault("--gpus", "parallelism.gpus", std::to_string(*gpus), "trainmem's --gpus"); !st) return st;

    // Batch (torchtitan/train.py: global batch = local x dp x accumulation).
    TRY(local, r.integer("training.local_batch_size", 8));
    TRY(seq, r.integer("training.seq_len", 2048));
    TRY(global, r.integer("training.global_batch_size", -1));
    if (local.first < 1 && local.second) return valueError(*local.second, "must be at least 1");
    int64_t accumulation = 1;
    if (global.first > 0) {
        if (global.first % (local.first * dp) != 0)
            return valueError(*global.second, "global batch size must be multiple of local batch size times data-parallel degree (" +
                                                  std::to_string(global.first) + " % (" + std::to_string(local.first) + " * " +
                                                  std::to_string(dp) + ") != 0) (torchtitan/train.py)");
        accumulation = global.first / (local.first * dp);
    }
    if (Status st = r.put(global.second, "training.global_batch_size", "training.gradient_accumulation_steps",
                          std::to_string(accumulation), "global / (local x dp)");
        !st)
        return st;
    if (Status st = r.put(seq.second, "training.seq_len", "training.sequence_length", std::to_string(seq.first)); !st) return st;
    if (pp.first > 1) {
        TRY(pmb, r.integer("parallelism.pipeline_parallel_microbatch_size", 1));
        if (pmb.first < 1 || local.first % pmb.first != 0)
            return Error{pmb.second ? where(*pmb.second) : "parallelism.pipeline_parallel_microbatch_size",
                         "Batch size " + std::to_string(local.first) + " must be divisible by microbatch_size " +
                             std::to_string(pmb.first) + " (torchtitan/distributed/pipeline_parallel.py)"};
        if (Status st = r.put(pmb.second, "parallelism.pipeline_parallel_microbatch_size", "training.micro_batch_size",
                              std::to_string(pmb.first));
            !st)
            return st;
        if (Status st = r.put(local.second, "training.local_batch_size", "parallelism.microbatches",
                              std::to_string(local.first / pmb.first), "local_batch_size / pipeline_parallel_microbatch_size");
            !st)
            return st;
        TRY(schedule, r.text("parallelism.pipeline_parallel_schedule", "1F1B"));
        std::string name;
        if (schedule.first == "1F1B") name = "1f1b";
        else if (schedule.first == "Interleaved1F1B") name = "interleaved-1f1b";
        else if (schedule.first == "GPipe") name = "gpipe";
        if (!name.empty()) {
            if (Status st = r.put(schedule.second, "parallelism.pipeline_parallel_schedule", "parallelism.pipeline_schedule", name); !st)
                return st;
            if (name == "interleaved-1f1b") {
                TRY(per_stage, r.integer("parallelism.pipeline_parallel_layers_per_stage", 0));
                if (per_stage.second && ctx.rec.result().has_model) {
                    const int64_t layers = ctx.rec.result().scenario.model.num_layers;
                    const int64_t stages = layers / per_stage.first;
                    if (Status st = ctx.rec.set(*per_stage.second, "parallelism.virtual_stages",
                                                std::to_string(std::max<int64_t>(1, stages / pp.first)),
                                                "layers / layers_per_stage / pp");
                        !st)
                        return st;
                } else {
                    ctx.rec.unknown(schedule.second ? schedule.second->file : "", "parallelism.pipeline_parallel_layers_per_stage", 0,
                                    "parallelism.virtual_stages",
                                    "stages per rank of a looped schedule: set parallelism.virtual_stages");
                }
            }
        } else if (schedule.second) {
            ctx.rec.notRepresentable(*schedule.second, "schedule " + schedule.first +
                                                           " is not one of trainmem's (1f1b, interleaved-1f1b, gpipe); counted as 1f1b",
                                     "parallelism.pipeline_schedule");
        }
    } else {
        if (Status st = r.put(local.second, "training.local_batch_size", "training.micro_batch_size", std::to_string(local.first)); !st)
            return st;
    }

    // FSDP2 policies (torchtitan/distributed/fsdp.py get_fsdp_reshard_after_forward_policy).
    if (fsdp) {
        TRY(reshard, r.text("parallelism.fsdp_reshard_after_forward", "default"));
        bool value = true;
        if (reshard.first == "default") value = pp.first == 1;
        else if (reshard.first == "always") value = true;
        else if (reshard.first == "never") value = false;
        else return valueError(*reshard.second, "expected one of default, always, never (got \"" + reshard.first + "\")");
        if (Status st = r.put(reshard.second, "parallelism.fsdp_reshard_after_forward", "parallelism.reshard_after_forward",
                              value ? "true" : "false", reshard.first == "default" ? "default: true without PP, false with PP" : "");
            !st)
            return st;
        if (pp.first > 1)
            if (Status st = r.put(pp.second, "parallelism.pipeline_parallel_degree", "parallelism.fsdp_gradient_sync",
                                  "last-microbatch", "PyTorch pipelining with FSDP syncs gradients after the last micro-batch");
                !st)
                return st;
    }
    TRY(offload, r.boolean("training.enable_cpu_offload", false));
    if (offload.first) {
        if (!fsdp) return valueError(*offload.second, "CPU offload is FSDP's (CPUOffloadPolicy): needs data_parallel_shard_degree > 1");
        if (Status st = ctx.rec.set(*offload.second, "parallelism.offload_parameters", "true", "FSDP2 CPUOffloadPolicy"); !st) return st;
        if (Status st = ctx.rec.set(*offload.second, "parallelism.offload_optimizer", "true", "FSDP2 CPUOffloadPolicy"); !st) return st;
    } else if (offload.second) {
        ctx.rec.readOnly(*offload.second, "no CPU offload");
    }

    // Precision (job_config.py Training.dtype, mixed_precision_param).
    TRY(dtype, r.text("training.dtype", "float32"));
    TRY(param, r.text("training.mixed_precision_param", "bfloat16"));
    r.doc.take("training.mixed_precision_reduce");
    std::string precision;
    if (dtype.first == "bfloat16") precision = "pure-bf16";
    else if (dtype.first == "float32") precision = param.first == "bfloat16" ? "amp-bf16" : "fp32";
    else return valueError(*dtype.second, "expected bfloat16 or float32 (got \"" + dtype.first + "\")");
    if (param.first != "bfloat16" && param.first != "float32")
        return valueError(*param.second, "expected bfloat16 or float32 (got \"" + param.first + "\")");
    const ConfigValue* precision_from = dtype.second ? dtype.second : param.second;
    if (Status st = r.put(precision_from, "training.dtype", "training.precision", precision,
                          "dtype " + dtype.first + ", mixed_precision_param " + param.first);
        !st)
        return st;

    // Optimizer (torchtitan/components/optimizer.py build_optimizers: Adam, AdamW).
    TRY(opt, r.text("optimizer.name", "AdamW"));
    if (opt.first == "AdamW" || opt.first == "Adam") {
        if (Status st = r.put(opt.second, "optimizer.name", "training.optimizer", opt.first == "AdamW" ? "adamw" : "adam"); !st) return st;
    } else {
        return valueError(*opt.second, "torchtitan builds Adam or AdamW (torchtitan/components/optimizer.py; got \"" + opt.first + "\")");
    }
    TRY(impl, r.text("optimizer.implementation", "fused"));
    if (impl.first != "fused" && impl.first != "foreach" && impl.first != "for-loop")
        return valueError(*impl.second, "expected for-loop, foreach or fused (got \"" + impl.first + "\")");
    if (Status st = r.put(impl.second, "optimizer.implementation", "training.optimizer_impl", impl.first); !st) return st;
    TRY(early, r.boolean("optimizer.early_step_in_backward", false));
    if (Status st = r.put(early.second, "optimizer.early_step_in_backward", "training.optimizer_in_backward",
                          early.first ? "true" : "false");
        !st)
        return st;

    // Activation checkpointing (torchtitan/distributed/activation_checkpoint.py).
    TRY(mode, r.text("activation_checkpoint.mode", "selective"));
    const ConfigValue* option_value = doc.take("activation_checkpoint.selective_ac_option");
    std::string option = "2";
    if (option_value) {
        // TOML may give the layer count as an integer; torchtitan's field is a string.
        option = option_value->value.is_number_integer() ? std::to_string(option_value->value.get<int64_t>())
                                                          : option_value->value.is_string() ? option_value->value.get<std::string>() : "";
        if (option.empty()) return valueError(*option_value, "expected \"op\" or a positive integer as a string");
    }
    if (mode.first == "none") {
        if (Status st = r.put(mode.second, "activation_checkpoint.mode", "training.activation_checkpointing", "none"); !st) return st;
    } else if (mode.first == "full") {
        if (Status st = r.put(mode.second, "activation_checkpoint.mode", "training.activation_checkpointing", "full"); !st) return st;
    } else if (mode.first == "selective") {
        if (option == "op") {
            if (Status st = r.put(option_value ? option_value : mode.second, "activation_checkpoint.selective_ac_option",
                                  "training.activation_checkpointing", "op", "op-level SAC, torchtitan's save list");
                !st)
                return st;
        } else {
            int64_t every = 0;
            for (char c : option)
                every = std::isdigit(static_cast<unsigned char>(c)) && every < 1000000 ? every * 10 + (c - '0') : -1;
            if (every < 1)
                return Error{option_value ? where(*option_value) : "activation_checkpoint.selective_ac_option",
                             "expected \"op\" or a positive integer (activation_checkpoint.py; got \"" + option + "\")"};
            const ConfigValue* from = option_value ? option_value : mode.second;
            if (Status st = r.put(from, "activation_checkpoint.selective_ac_option", "training.activation_checkpointing",
                                  "torchtitan-layer", "layer-level SAC: every " + option + "-th block");
                !st)
                return st;
            if (Status st = r.put(from, "activation_checkpoint.selective_ac_option", "training.checkpoint_every", option); !st) return st;
        }
    } else if (mode.second) {
        ctx.rec.notRepresentable(*mode.second, "mode " + mode.first + " (the compiler's memory budget) is not modelled; counted without checkpointing",
                                 "training.activation_checkpointing");
        if (Status st = ctx.rec.set(*mode.second, "training.activation_checkpointing", "none", "not representable: see below"); !st)
            return st;
    }

    // Compile (job_config.py Compile: enable False, components model + loss).
    TRY(compile, r.boolean("compile.enable", false));
    doc.take("compile.components");
    if (Status st = r.put(compile.second, "compile.enable", "training.kernels", compile.first ? "compile" : "eager"); !st) return st;

    finishFramework(ctx, kTorchtitanRelease);
    ctx.rec.ignoreRest(doc, "no effect on memory in trainmem's model (" + std::string(kTorchtitanRelease) + ")");
    return ok();
}

Expected<std::string> exportTorchtitan(const Scenario& s) {
    const ParallelConfig& p = s.parallelism;
    const TrainingConfig& t = s.training;
    if (p.zero_stage == 1 || p.zero_stage == 2)
        return Error{"parallelism.zero_stage", "torchtitan shards with FSDP2 (ZeRO-3) or not at all: 0 or 3"};
    std::string flavor, name;
    if (s.model_preset == "llama-3.1-8b") name = "llama3", flavor = "8B";
    else if (s.model_preset == "llama-3.1-70b") name = "llama3", flavor = "70B";
    else if (s.model_preset == "llama-3.1-405b") name = "llama3", flavor = "405B";
    else if (s.model_preset == "qwen3-0.6b") name = "qwen3", flavor = "0.6B";
    else if (s.model_preset == "qwen3-30b-a3b") name = "qwen3", flavor = "30B-A3B";
    std::string precision_dtype, precision_param;
    switch (t.precision) {
        case Precision::AmpBf16: precision_dtype = "float32", precision_param = "bfloat16"; break;
        case Precision::Fp32: precision_dtype = "float32", precision_param = "float32"; break;
        case Precision::PureBf16: precision_dtype = "bfloat16", precision_param = "bfloat16"; break;
        default: return Error{"training.precision", "torchtitan trains amp-bf16, pure-bf16 or fp32"};
    }
    if (t.optimizer != OptimizerKind::AdamW && t.optimizer != OptimizerKind::Adam)
        return Error{"training.optimizer", "torchtitan builds adam or adamw"};
    std::string ac_mode, ac_option;
    switch (t.checkpointing) {
        case Checkpointing::None: ac_mode = "none"; break;
        case Checkpointing::Full: ac_mode = "full"; break;
        case Checkpointing::Op:
            if (t.checkpoint_save_ops != TrainingConfig{}.checkpoint_save_ops)
                return Error{"training.checkpoint_save_ops", "torchtitan's op policy has one save list (the default)"};
            ac_mode = "selective", ac_option = "op";
            break;
        case Checkpointing::TorchtitanLayer: ac_mode = "selective", ac_option = std::to_string(t.checkpoint_every); break;
        default: return Error{"training.activation_checkpointing", "torchtitan checkpoints none, full, op or torchtitan-layer"};
    }
    if (t.kernels != KernelProfile::Eager && t.kernels != KernelProfile::Compile)
        return Error{"training.kernels", "torchtitan runs eager or compiled blocks"};
    if (t.finetuning != Finetuning::Full) return Error{"training.finetuning", "torchtitan trains every weight (full)"};
    if (p.shard_group != 0 && p.shard_group != p.data * p.context && p.zero_stage == 3 &&
        (p.data * p.context) % p.shard_group != 0)
        return Error{"parallelism.shard_group", "must divide data x context"};
    int64_t shard = p.zero_stage == 3 ? (p.shard_group ? p.shard_group / p.context : p.data) : 1;
    int64_t replicate = p.data / std::max<int64_t>(1, shard);
    if (p.zero_stage == 3 && shard == 1 && p.context == 1)
        return Error{"parallelism.zero_stage", "torchtitan shards over data_parallel_shard_degree x cp: 3 needs more than one rank"};
    if (p.zero_stage == 0 && p.data > 1) shard = 1, replicate = p.data;
    if (p.pipeline > 1 && p.schedule == PipelineSchedule::Interleaved1F1B)
        return Error{"parallelism.pipeline_schedule", "export of looped schedules is not written yet: set it in the TOML"};
    const bool reshard_default = p.pipeline == 1;
    std::string out;
    out += "# torchtitan job config (" + std::string(kTorchtitanRelease) + " torchtitan/config/job_config.py), written by trainmem-cli export-run\n";
    out += "# from scenario \"" + s.name + "\"\n\n";
    out += "[model]\n";
    if (!name.empty()) out += "name = \"" + name + "\"\nflavor = \"" + flavor + "\"\n";
    else out += "# the model (" + (s.model_preset.empty() ? std::string("a config.json") : s.model_preset) + ") is no torchtitan flavour: set name and flavor\n";
    out += "\n[optimizer]\nname = \"" + std::string(t.optimizer == OptimizerKind::AdamW ? "AdamW" : "Adam") + "\"\n";
    out += "implementation = \"" + std::string(enumName(t.optimizer_impl)) + "\"\n";
    out += "early_step_in_backward = " + std::string(t.optimizer_in_backward ? "true" : "false") + "\n";
    const int64_t local = p.pipeline > 1 ? t.micro_batch_size * std::max<int64_t>(1, p.microbatches ? p.microbatches : t.gradient_accumulation_steps)
                                         : t.micro_batch_size;
    const int64_t accumulation = p.pipeline > 1 ? 1 : t.gradient_accumulation_steps;
    out += "\n[training]\nlocal_batch_size = " + std::to_string(local) + "\n";
    out += "global_batch_size = " + std::to_string(local * p.data * accumulation) + "\n";
    out += "seq_len = " + std::to_string(t.sequence_length) + "\n";
    out += "dtype = \"" + precision_dtype + "\"\nmixed_precision_param = \"" + precision_param + "\"\n";
    out += "enable_cpu_offload = " + std::string(p.offload_parameters ? "true" : "false") + "\n";
    out += "\n[parallelism]\n";
    out += "data_parallel_replicate_degree = " + std::to_string(replicate) + "\n";
    out += "data_parallel_shard_degree = " + std::to_string(shard) + "\n";
    out += "tensor_parallel_degree = " + std::to_string(p.tensor) + "\n";
    out += "pipeline_parallel_degree = " + std::to_string(p.pipeline) + "\n";
    out += "context_parallel_degree = " + std::to_string(p.context) + "\n";
    out += "expert_parallel_degree = " + std::to_string(p.expert) + "\n";
    if (p.zero_stage == 3 && p.reshard_after_forward != reshard_default)
        out += "fsdp_reshard_after_forward = \"" + std::string(p.reshard_after_forward ? "always" : "never") + "\"\n";
    if (p.pipeline > 1) {
        out += "pipeline_parallel_microbatch_size = " + std::to_string(t.micro_batch_size) + "\n";
        out += "pipeline_parallel_schedule = \"" + std::string(p.schedule == PipelineSchedule::GPipe ? "GPipe" : "1F1B") + "\"\n";
    }
    out += "\n[activation_checkpoint]\nmode = \"" + ac_mode + "\"\n";
    if (!ac_option.empty()) out += "selective_ac_option = \"" + ac_option + "\"\n";
    out += "\n[compile]\nenable = " + std::string(t.kernels == KernelProfile::Compile ? "true" : "false") + "\n";
    return out;
}

}  // namespace trainmem::runconfig
